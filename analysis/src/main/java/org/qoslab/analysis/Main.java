package org.qoslab.analysis;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.qoslab.common.Json;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code qoslab-analysis}: statistics over trial times. {@code stats} for any CSV (a campaign's
 * trials.csv); {@code thesis} for the thesis's Appendix A data, side by side with Tables 3 and 5.
 */
@Command(name = "qoslab-analysis", mixinStandardHelpOptions = true, version = "qoslab-analysis 0.1.0",
        subcommands = {Main.StatsCmd.class, Main.ThesisCmd.class, Main.CallsCmd.class},
        description = "Trial statistics (Commons Math, Commons Statistics): descriptives, normality, outliers, Welch t, "
                + "Mann-Whitney U, effect sizes, bootstrap intervals, Holm, TOST, MDE, recovery.")
public final class Main implements Runnable {
    @Override public void run() { CommandLine.usage(this, System.err); }

    public static void main(String[] args) { System.exit(new CommandLine(new Main()).execute(args)); }

    /** Published Table 3 (machines -> mean, sigma) and Table 5 values (thesis, Chapters IV and V). */
    static final Map<String, double[]> PUBLISHED = new LinkedHashMap<>();
    static {
        PUBLISHED.put("machines=2", new double[] {73.79, 29.09});
        PUBLISHED.put("machines=3", new double[] {50.78, 18.08});
        PUBLISHED.put("machines=4", new double[] {38.10, 8.82});
        PUBLISHED.put("machines=6", new double[] {27.12, 6.01});
        PUBLISHED.put("machines=8", new double[] {21.45, 3.28});
        PUBLISHED.put("no congestion, no QoS", new double[] {38.10, 8.82});
        PUBLISHED.put("congestion, no QoS", new double[] {57.90, 11.83});
        PUBLISHED.put("no congestion, QoS", new double[] {40.05, 9.37});
        PUBLISHED.put("congestion, QoS", new double[] {44.07, 8.91});
    }

    /**
     * Statistics of conditions, comparisons and recovery as the stats.json map (schema in
     * analysis/README.md). Holm's correction runs over this map's comparisons (one family for the
     * Welch p-values, one for the Mann-Whitney p-values).
     *
     * @throws IllegalArgumentException for a condition name that is not in {@code data}
     */
    static Map<String, Object> analyse(Map<String, double[]> data, List<String[]> compare, List<String[]> recovery,
                                       Map<String, double[]> published, TrialStats.Settings s) {
        if (s.baseline() != null && !data.containsKey(s.baseline()))
            throw new IllegalArgumentException("--baseline " + s.baseline() + ": no such condition (have " + data.keySet() + ")");
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("settings", settings(s));
        Map<String, Object> conds = new LinkedHashMap<>();
        for (Map.Entry<String, double[]> e : data.entrySet()) {
            Map<String, Object> d = TrialStats.describe(e.getValue(), s);
            double[] pub = published.get(e.getKey());
            if (pub != null) {
                d.put("published_mean", pub[0]);
                d.put("published_sd", pub[1]);
                d.put("mean_matches_published", Math.abs((double) d.get("mean") - pub[0]) < 0.005 + 1e-9);
                d.put("sd_matches_published", Math.abs((double) d.get("sd") - pub[1]) < 0.005 + 1e-9);
            }
            conds.put(e.getKey(), d);
        }
        out.put("conditions", conds);
        out.put("comparisons", comparisons(data, compare, s));
        List<Object> recs = new ArrayList<>();
        for (String[] r3 : recovery) {
            for (String r : r3)
                if (!data.containsKey(r)) throw new IllegalArgumentException("--recovery: no condition " + r);
            recs.add(recovery(data.get(r3[0]), data.get(r3[1]), data.get(r3[2]), r3, s));
        }
        out.put("recovery", recs);
        return out;
    }

    static Map<String, Object> settings(TrialStats.Settings s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("confidence_level", s.level());
        m.put("alpha", s.alpha());
        m.put("power", s.power());
        m.put("bootstrap_method", Bootstrap.METHOD);
        m.put("bootstrap_resamples", s.resamples());
        m.put("bootstrap_seed", s.seed());
        m.put("bootstrap_rng", Bootstrap.RNG);
        m.put("tost_margin_rel", s.marginRel());
        m.put("baseline", s.baseline());
        return m;
    }

    /** Every comparison, then the Holm-adjusted p-values across them. */
    static List<Object> comparisons(Map<String, double[]> data, List<String[]> compare, TrialStats.Settings s) {
        List<Map<String, Object>> comps = new ArrayList<>();
        for (String[] c : compare) {
            if (!data.containsKey(c[0]) || !data.containsKey(c[1]))
                throw new IllegalArgumentException("--compare " + c[0] + "|" + c[1] + ": no such condition (have " + data.keySet() + ")");
            String ref = s.baseline() != null ? s.baseline() : c[0];
            double margin = s.marginRel() * TrialStats.mean(data.get(ref));
            Map<String, Object> m = TrialStats.compare(c[0], data.get(c[0]), c[1], data.get(c[1]), s, margin);
            @SuppressWarnings("unchecked") Map<String, Object> tost = (Map<String, Object>) m.get("tost");
            if (tost != null) { // null when neither condition varies (TrialStats.compareConstant)
                tost.put("reference", ref);
                tost.put("margin_rel", s.marginRel());
            }
            comps.add(m);
        }
        for (String key : List.of("welch_t_p", "mann_whitney_p")) {
            List<Double> p = new ArrayList<>();
            for (Map<String, Object> m : comps) p.add((Double) m.get(key));
            List<Double> adj = Effects.holm(p);
            for (int i = 0; i < comps.size(); i++) comps.get(i).put(key + "_holm", adj.get(i));
        }
        return new ArrayList<>(comps);
    }

    /** Recovery ratio from the three means with its BCa bootstrap interval (three samples resampled independently). */
    static Map<String, Object> recovery(double[] base, double[] cong, double[] treat, String[] names, TrialStats.Settings s) {
        Map<String, Object> rec = new LinkedHashMap<>();
        rec.put("baseline", names[0]);
        rec.put("congested", names[1]);
        rec.put("treated", names[2]);
        double v = TrialStats.recovery(TrialStats.mean(base), TrialStats.mean(cong), TrialStats.mean(treat));
        rec.put("ratio", Double.isNaN(v) ? null : (Object) v);
        Map<String, Object> b = Bootstrap.bca(new double[][] {base, cong, treat}, m -> TrialStats.recovery(m[0], m[1], m[2]),
                s.resamples(), s.seed(), s.level());
        rec.put("ci95", b.get("ci"));
        rec.put("bootstrap_se", b.get("se"));
        rec.put("bootstrap_undefined", b.get("undefined_resamples"));
        return rec;
    }

    @Command(name = "stats", mixinStandardHelpOptions = true, description = "Statistics of a trials CSV.")
    static final class StatsCmd implements Callable<Integer> {
        @Option(names = "--csv", required = true) Path csv;
        @Option(names = "--by", defaultValue = "condition", split = ",", description = "Condition column(s).") List<String> by;
        @Option(names = "--value", defaultValue = "elapsed_s") String value;
        @Option(names = "--compare", description = "A|B (repeatable): B against A.") List<String> compare = new ArrayList<>();
        @Option(names = "--recovery", description = "BASELINE|CONGESTED|TREATED (repeatable)")
        List<String> recovery = new ArrayList<>();
        @Option(names = "--out", required = true) Path out;
        @Option(names = "--baseline", description = "Reference condition of the TOST margin (default: each comparison's A).")
        String baseline;
        @Option(names = "--tost-margin", defaultValue = "0.02",
                description = "TOST equivalence margin as a fraction of the reference mean (default ${DEFAULT-VALUE}).")
        double margin;
        @Option(names = "--seed", defaultValue = "1", description = "Bootstrap seed (default ${DEFAULT-VALUE}).") long seed;
        @Option(names = "--resamples", defaultValue = "10000", description = "Bootstrap resamples (default ${DEFAULT-VALUE}).")
        int resamples;

        @Override
        public Integer call() {
            try {
                if (!(margin > 0 && margin < 1)) throw new IllegalArgumentException("--tost-margin " + margin + ": want a fraction in (0, 1), e.g. 0.02");
                TrialStats.Settings st = new TrialStats.Settings(0.95, 0.05, 0.80, resamples, seed, margin, baseline);
                Map<String, double[]> data = Trials.read(csv, by, value, Map.of());
                List<String[]> cmp = new ArrayList<>();
                for (String c : compare) cmp.add(split(c, 2, "--compare"));
                List<String[]> rec = new ArrayList<>();
                for (String r3 : recovery) rec.add(split(r3, 3, "--recovery"));
                Map<String, Object> r = analyse(data, cmp, rec, Map.of(), st);
                r.put("source", csv.toString());
                Files.writeString(out, Json.write(r) + "\n");
                System.out.println(out);
                return 0;
            } catch (Exception e) {
                System.err.println("[qoslab-analysis] error: " + e.getMessage());
                return 2;
            }
        }
    }

    @Command(name = "calls", mixinStandardHelpOptions = true,
            description = "Call-latency tail statistics (p50/p90/p99/p99.9/max per condition, trials resampled as clusters, "
                    + "p50/p99 comparisons and recovery) from call records (JSON lines).")
    static final class CallsCmd implements Callable<Integer> {
        @Option(names = "--calls", required = true, description = "JSON-lines file(s) of call records (repeatable).")
        List<Path> files;
        @Option(names = "--by", defaultValue = "condition", split = ",", description = "Condition field(s).") List<String> by;
        @Option(names = "--trial", defaultValue = "trial", description = "Field naming the trial (the resampled cluster).")
        String trial;
        @Option(names = "--value", defaultValue = "latency_ms", description = "Latency field; records where it is null are skipped.")
        String value;
        @Option(names = "--where", description = "FIELD=TEXT (repeatable): keep only records whose field equals TEXT.")
        List<String> where = new ArrayList<>();
        @Option(names = "--compare", description = "A|B (repeatable): B against A.") List<String> compare = new ArrayList<>();
        @Option(names = "--recovery", description = "BASELINE|CONGESTED|TREATED (repeatable)") List<String> recovery = new ArrayList<>();
        @Option(names = "--seed", defaultValue = "1", description = "Bootstrap seed (default ${DEFAULT-VALUE}).") long seed;
        @Option(names = "--resamples", defaultValue = "10000", description = "Bootstrap resamples (default ${DEFAULT-VALUE}).")
        int resamples;
        @Option(names = "--out", required = true) Path out;

        @Override
        public Integer call() {
            try {
                Map<String, String> w = new LinkedHashMap<>();
                for (String x : where) {
                    int eq = x.indexOf('=');
                    if (eq < 1) throw new IllegalArgumentException("--where wants FIELD=TEXT, got " + x);
                    w.put(x.substring(0, eq), x.substring(eq + 1));
                }
                long[] skipped = new long[1];
                Map<String, CallStats.Condition> data = CallsFile.read(files, by, trial, value, w, skipped);
                if (data.isEmpty()) throw new IllegalArgumentException("no call records with a " + value + " in " + files);
                List<String[]> cmp = new ArrayList<>();
                for (String c : compare) cmp.add(split(c, 2, "--compare"));
                List<String[]> rec = new ArrayList<>();
                for (String r3 : recovery) rec.add(split(r3, 3, "--recovery"));
                Map<String, Object> r = CallStats.analyse(data, cmp, rec, resamples, seed, 0.95, value);
                r.put("skipped_records", skipped[0]);
                r.put("source", files.stream().map(Path::toString).collect(java.util.stream.Collectors.toList()));
                Files.writeString(out, Json.write(r) + "\n");
                System.out.println(out);
                return 0;
            } catch (Exception e) {
                System.err.println("[qoslab-analysis] error: " + e.getMessage());
                return 2;
            }
        }
    }

    @Command(name = "thesis", mixinStandardHelpOptions = true,
            description = "The thesis's Appendix A data: Table 3 and Table 5 with comparisons and recovery.")
    static final class ThesisCmd implements Callable<Integer> {
        @Option(names = "--data", required = true, description = "Folder with thesis-table3-scaling.csv and thesis-table5-qos.csv.")
        Path data;
        @Option(names = "--out", required = true) Path out;
        @Option(names = "--seed", defaultValue = "1", description = "Bootstrap seed (default ${DEFAULT-VALUE}).") long seed;
        @Option(names = "--resamples", defaultValue = "10000", description = "Bootstrap resamples (default ${DEFAULT-VALUE}).")
        int resamples;

        @Override
        public Integer call() {
            try {
                TrialStats.Settings d = TrialStats.Settings.defaults();
                Files.writeString(out, Json.write(thesis(data, new TrialStats.Settings(d.level(), d.alpha(), d.power(),
                        resamples, seed, d.marginRel(), null))) + "\n");
                System.out.println(out);
                return 0;
            } catch (Exception e) {
                System.err.println("[qoslab-analysis] error: " + e.getMessage());
                return 2;
            }
        }
    }

    /** Tables 3 and 5 from the raw trial times; Table 5's no-congestion/no-QoS column is Table 3's 4 machines. */
    static Map<String, Object> thesis(Path dir, TrialStats.Settings s) throws java.io.IOException {
        Map<String, double[]> t3raw = Trials.read(dir.resolve("thesis-table3-scaling.csv"), List.of("machines"), "elapsed_s", Map.of());
        Map<String, double[]> t3 = new LinkedHashMap<>();
        t3raw.forEach((k, v) -> t3.put("machines=" + k, v));
        Map<String, double[]> t5raw = Trials.read(dir.resolve("thesis-table5-qos.csv"), List.of("congestion", "qos"), "elapsed_s", Map.of());
        Map<String, double[]> t5 = new LinkedHashMap<>();
        t5.put("no congestion, no QoS", t3.get("machines=4"));
        t5.put("congestion, no QoS", t5raw.get("congestion=yes,qos=no"));
        t5.put("no congestion, QoS", t5raw.get("congestion=no,qos=yes"));
        t5.put("congestion, QoS", t5raw.get("congestion=yes,qos=yes"));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("table3", analyse(t3, List.of(), List.of(), PUBLISHED, withBaseline(s, null)));
        out.put("table5", analyse(t5, List.of(new String[] {"no congestion, no QoS", "congestion, no QoS"},
                new String[] {"congestion, no QoS", "congestion, QoS"},
                new String[] {"no congestion, no QoS", "no congestion, QoS"},
                new String[] {"no congestion, QoS", "congestion, QoS"}),
                List.<String[]>of(new String[] {"no congestion, no QoS", "congestion, no QoS", "congestion, QoS"}),
                PUBLISHED, withBaseline(s, "no congestion, no QoS")));
        out.put("source", dir.toString());
        return out;
    }

    static TrialStats.Settings withBaseline(TrialStats.Settings s, String baseline) {
        return new TrialStats.Settings(s.level(), s.alpha(), s.power(), s.resamples(), s.seed(), s.marginRel(), baseline);
    }

    private static String[] split(String s, int n, String opt) {
        String[] p = s.split("\\|");
        if (p.length != n) throw new IllegalArgumentException(opt + " wants " + n + " conditions separated by '|', got " + s);
        return p;
    }
}
