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
        subcommands = {Main.StatsCmd.class, Main.ThesisCmd.class},
        description = "Trial statistics with Apache Commons Math: mean, sd, 95% CI, Welch t, Mann-Whitney U, recovery.")
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

    /** Statistics of conditions, comparisons and recovery as the stats.json map. */
    static Map<String, Object> analyse(Map<String, double[]> data, List<String[]> compare, List<String[]> recovery,
                                       Map<String, double[]> published) {
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Object> conds = new LinkedHashMap<>();
        for (Map.Entry<String, double[]> e : data.entrySet()) {
            Map<String, Object> d = TrialStats.describe(e.getValue());
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
        List<Object> comps = new ArrayList<>();
        for (String[] c : compare) {
            if (!data.containsKey(c[0]) || !data.containsKey(c[1]))
                throw new IllegalArgumentException("--compare " + c[0] + "|" + c[1] + ": no such condition (have " + data.keySet() + ")");
            comps.add(TrialStats.compare(c[0], data.get(c[0]), c[1], data.get(c[1])));
        }
        out.put("comparisons", comps);
        List<Object> recs = new ArrayList<>();
        for (String[] r3 : recovery) {
            for (String r : r3)
                if (!data.containsKey(r)) throw new IllegalArgumentException("--recovery: no condition " + r);
            Map<String, Object> rec = new LinkedHashMap<>();
            rec.put("baseline", r3[0]);
            rec.put("congested", r3[1]);
            rec.put("treated", r3[2]);
            double v = TrialStats.recovery(TrialStats.mean(data.get(r3[0])), TrialStats.mean(data.get(r3[1])),
                    TrialStats.mean(data.get(r3[2])));
            rec.put("ratio", Double.isNaN(v) ? null : (Object) v);
            recs.add(rec);
        }
        out.put("recovery", recs);
        return out;
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

        @Override
        public Integer call() {
            try {
                Map<String, double[]> data = Trials.read(csv, by, value, Map.of());
                List<String[]> cmp = new ArrayList<>();
                for (String c : compare) cmp.add(split(c, 2, "--compare"));
                List<String[]> rec = new ArrayList<>();
                for (String r3 : recovery) rec.add(split(r3, 3, "--recovery"));
                Map<String, Object> r = analyse(data, cmp, rec, Map.of());
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

    @Command(name = "thesis", mixinStandardHelpOptions = true,
            description = "The thesis's Appendix A data: Table 3 and Table 5 with comparisons and recovery.")
    static final class ThesisCmd implements Callable<Integer> {
        @Option(names = "--data", required = true, description = "Folder with thesis-table3-scaling.csv and thesis-table5-qos.csv.")
        Path data;
        @Option(names = "--out", required = true) Path out;

        @Override
        public Integer call() {
            try {
                Files.writeString(out, Json.write(thesis(data)) + "\n");
                System.out.println(out);
                return 0;
            } catch (Exception e) {
                System.err.println("[qoslab-analysis] error: " + e.getMessage());
                return 2;
            }
        }
    }

    /** Tables 3 and 5 from the raw trial times; Table 5's no-congestion/no-QoS column is Table 3's 4 machines. */
    static Map<String, Object> thesis(Path dir) throws java.io.IOException {
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
        out.put("table3", analyse(t3, List.of(), List.of(), PUBLISHED));
        out.put("table5", analyse(t5, List.of(new String[] {"no congestion, no QoS", "congestion, no QoS"},
                new String[] {"congestion, no QoS", "congestion, QoS"},
                new String[] {"no congestion, no QoS", "no congestion, QoS"}),
                List.<String[]>of(new String[] {"no congestion, no QoS", "congestion, no QoS", "congestion, QoS"}),
                PUBLISHED));
        out.put("source", dir.toString());
        return out;
    }

    private static String[] split(String s, int n, String opt) {
        String[] p = s.split("\\|");
        if (p.length != n) throw new IllegalArgumentException(opt + " wants " + n + " conditions separated by '|', got " + s);
        return p;
    }
}
