package org.qoslab.analysis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.rng.UniformRandomProvider;
import org.apache.commons.rng.simple.RandomSource;

/**
 * Call-latency tail statistics per condition: quantiles p50/p90/p99/p99.9 and the maximum of the
 * calls of all trials pooled (Hyndman-Fan type 7, numpy's default, as {@link Bootstrap#quantile7}),
 * with percentile bootstrap intervals in which <em>trials</em> are resampled as clusters: a resample
 * draws n trials with replacement from the condition's n trials, pools their calls (a trial drawn
 * twice counts twice) and takes the quantile. Calls of one trial share its network state (one flood,
 * one queue), so resampling calls as if independent would make the intervals far too narrow.
 *
 * <p>Percentile rather than BCa intervals: BCa's acceleration comes from the jackknife, which is
 * inconsistent for quantiles (non-smooth statistics; Efron and Tibshirani 1993, section 11.6). The
 * maximum gets no interval (the bootstrap of a sample maximum is inconsistent). Each condition's
 * resamples come from its own Commons RNG XO_RO_SHI_RO_128_PP generator seeded with
 * {seed, hash of the condition's name}, so conditions are resampled independently and the results
 * do not depend on the order of the input; comparisons and recoveries combine resample b of each
 * condition.
 */
public final class CallStats {
    private CallStats() { }

    public static final double[] QUANTILES = {0.5, 0.9, 0.99, 0.999};
    public static final String[] NAMES = {"p50", "p90", "p99", "p99_9"};
    /** Statistics compared between conditions and turned into recovery ratios. */
    public static final List<String> EFFECT_STATS = List.of("p50", "p99");
    public static final String METHOD = "percentile; trials resampled as clusters, their calls pooled";

    /** One condition's calls, per trial. */
    public static final class Condition {
        public final String name;
        final List<String> trials = new ArrayList<>();
        final List<double[]> calls = new ArrayList<>();
        long rtoCalls, retransmitted;
        boolean hasRto, hasRetransmitted;
        // pooled calls sorted ascending, with the trial each came from
        double[] v;
        int[] owner;
        double[] trialSum;
        int[] trialN;

        Condition(String name) { this.name = name; }

        void pool() {
            int n = 0;
            for (double[] c : calls) n += c.length;
            long[] idx = new long[n];
            double[] all = new double[n];
            int k = 0;
            trialSum = new double[calls.size()];
            trialN = new int[calls.size()];
            for (int t = 0; t < calls.size(); t++) {
                for (double x : calls.get(t)) {
                    all[k] = x;
                    idx[k] = t;
                    k++;
                    trialSum[t] += x;
                }
                trialN[t] = calls.get(t).length;
            }
            Integer[] order = new Integer[n];
            for (int i = 0; i < n; i++) order[i] = i;
            Arrays.sort(order, (a, b) -> Double.compare(all[a], all[b]));
            v = new double[n];
            owner = new int[n];
            for (int i = 0; i < n; i++) { v[i] = all[order[i]]; owner[i] = (int) idx[order[i]]; }
        }

        public int trials() { return calls.size(); }

        public int calls() { return v.length; }
    }

    /**
     * Read call records: kept for its callers, the reading is {@link CallsFile#read}'s (this class
     * computes, it does no I/O of its own).
     */
    public static Map<String, Condition> read(java.util.List<java.nio.file.Path> files, List<String> by, String trial,
            String value, Map<String, String> where, long[] skipped) throws java.io.IOException {
        return CallsFile.read(files, by, trial, value, where, skipped);
    }

    /** A condition built from per-trial latency arrays (tests, and callers with data in memory). */
    public static Condition of(String name, double[]... trials) {
        Condition c = new Condition(name);
        for (int t = 0; t < trials.length; t++) {
            c.trials.add(Integer.toString(t + 1));
            c.calls.add(trials[t].clone());
        }
        c.pool();
        return c;
    }

    /**
     * Order statistic of rank {@code rank} (0-based) of the pooled calls when trial t counts
     * {@code w[t]} times; {@code total} = sum of w[t] x calls of t. Scans from the nearer end.
     */
    static double orderStat(Condition c, int[] w, long rank, long total) {
        double[] v = c.v;
        int[] o = c.owner;
        long cum = 0;
        if (rank < total / 2) {
            for (int i = 0; i < v.length; i++) {
                cum += w[o[i]];
                if (cum > rank) return v[i];
            }
        } else {
            long top = total - 1 - rank;
            for (int i = v.length - 1; i >= 0; i--) {
                cum += w[o[i]];
                if (cum > top) return v[i];
            }
        }
        throw new IllegalStateException("rank " + rank + " of " + total);
    }

    /** Type-7 quantile of the pooled calls with trial weights {@code w}; NaN when no call is drawn. */
    public static double quantile(Condition c, int[] w, double p) {
        long total = 0;
        for (int t = 0; t < w.length; t++) total += (long) w[t] * c.trialN[t];
        if (total == 0) return Double.NaN;
        double h = (total - 1) * p;
        long lo = (long) Math.floor(h);
        double a = orderStat(c, w, lo, total);
        if (lo + 1 >= total || h == lo) return a;
        double b = orderStat(c, w, lo + 1, total);
        return a + (h - lo) * (b - a);
    }

    static double mean(Condition c, int[] w) {
        double s = 0;
        long n = 0;
        for (int t = 0; t < w.length; t++) { s += w[t] * c.trialSum[t]; n += (long) w[t] * c.trialN[t]; }
        return n == 0 ? Double.NaN : s / n;
    }

    /** Statistic names in a resample row: the quantiles, then the mean. */
    static final int S_MEAN = NAMES.length, NSTAT = NAMES.length + 1;

    static double[] stats(Condition c, int[] w) {
        double[] out = new double[NSTAT];
        for (int q = 0; q < QUANTILES.length; q++) out[q] = quantile(c, w, QUANTILES[q]);
        out[S_MEAN] = mean(c, w);
        return out;
    }

    /** {@code resamples} x {@link #NSTAT} statistics of cluster resamples of {@code c}. */
    static double[][] resample(Condition c, int resamples, long seed) {
        UniformRandomProvider rng = RandomSource.XO_RO_SHI_RO_128_PP.create(new long[] {seed, c.name.hashCode()});
        int n = c.trials();
        int[] w = new int[n];
        double[][] out = new double[resamples][];
        for (int b = 0; b < resamples; b++) {
            Arrays.fill(w, 0);
            for (int i = 0; i < n; i++) w[rng.nextInt(n)]++;
            out[b] = stats(c, w);
        }
        return out;
    }

    static int statIndex(String name) {
        if (name.equals("mean")) return S_MEAN;
        int i = Arrays.asList(NAMES).indexOf(name);
        if (i < 0) throw new IllegalArgumentException("unknown statistic " + name);
        return i;
    }

    /** Percentile interval (type-7 ends) of finite values; null when any value is undefined. */
    static List<Double> percentile(double[] dist, double level) {
        for (double d : dist) if (Double.isNaN(d)) return null;
        double[] s = dist.clone();
        Arrays.sort(s);
        return Arrays.asList(Bootstrap.quantile7(s, (1 - level) / 2), Bootstrap.quantile7(s, 1 - (1 - level) / 2));
    }

    static Object num(double v) { return Double.isNaN(v) ? null : (Object) v; }

    static int undefined(double[] d) {
        int n = 0;
        for (double v : d) if (Double.isNaN(v)) n++;
        return n;
    }

    /**
     * The calls part of stats (schema in analysis/README.md, "Call latency").
     *
     * @param compare pairs {A, B}: statistics of B against A
     * @param recovery triples {baseline, congested, treated}
     */
    public static Map<String, Object> analyse(Map<String, Condition> data, List<String[]> compare, List<String[]> recovery,
                                              int resamples, long seed, double level, String unit) {
        if (resamples < 100) throw new IllegalArgumentException("bootstrap needs at least 100 resamples, got " + resamples);
        Map<String, double[][]> boot = new LinkedHashMap<>();
        Map<String, double[]> observed = new LinkedHashMap<>();
        Map<String, Object> conds = new LinkedHashMap<>();
        for (Condition c : data.values()) {
            int[] ones = new int[c.trials()];
            Arrays.fill(ones, 1);
            observed.put(c.name, stats(c, ones));
            boot.put(c.name, resample(c, resamples, seed));
            conds.put(c.name, conditionBlock(c, observed.get(c.name), boot.get(c.name), level));
        }
        List<Object> comps = new ArrayList<>();
        for (String[] ab : compare) {
            for (String x : ab) if (!data.containsKey(x)) throw new IllegalArgumentException("--compare: no condition " + x + " (have " + data.keySet() + ")");
            for (String st : EFFECT_STATS) comps.add(comparison(ab, st, observed, boot, resamples, level));
        }
        List<Object> recs = new ArrayList<>();
        for (String[] r3 : recovery) {
            for (String x : r3) if (!data.containsKey(x)) throw new IllegalArgumentException("--recovery: no condition " + x + " (have " + data.keySet() + ")");
            for (String st : EFFECT_STATS) recs.add(recoveryBlock(r3, st, observed, boot, resamples, level));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("settings", settings(resamples, seed, level, unit));
        out.put("conditions", conds);
        out.put("comparisons", comps);
        out.put("recovery", recs);
        return out;
    }

    /** One condition's block: observed statistics, their intervals and standard errors (per-trial figures are the calls meter's). */
    private static Map<String, Object> conditionBlock(Condition c, double[] obs, double[][] bs, double level) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("trials", c.trials());
        m.put("calls", c.calls());
        for (int q = 0; q < NAMES.length; q++) m.put(NAMES[q], obs[q]);
        m.put("max", c.v[c.v.length - 1]);
        m.put("mean", obs[S_MEAN]);
        Map<String, Object> ci = new LinkedHashMap<>(), se = new LinkedHashMap<>();
        for (int k = 0; k < NSTAT; k++) {
            double[] d = column(bs, k);
            String key = k == S_MEAN ? "mean" : NAMES[k];
            ci.put(key, percentile(d, level));
            se.put(key, undefined(d) > 0 ? null : (Object) Bootstrap.sd(d));
        }
        m.put("ci95", ci);
        m.put("bootstrap_se", se);
        m.put("calls_with_rto", c.hasRto ? (Object) c.rtoCalls : null);
        m.put("retransmitted_segments", c.hasRetransmitted ? (Object) c.retransmitted : null);
        return m;
    }

    /** Statistic {@code st} of B against A ({@code ab} = {A, B}): difference and ratio with percentile intervals. */
    private static Map<String, Object> comparison(String[] ab, String st, Map<String, double[]> observed,
                                                  Map<String, double[][]> boot, int resamples, double level) {
        int k = statIndex(st);
        double a = observed.get(ab[0])[k], b = observed.get(ab[1])[k];
        double[] da = column(boot.get(ab[0]), k), db = column(boot.get(ab[1]), k);
        double[] diff = new double[resamples], ratio = new double[resamples];
        for (int i = 0; i < resamples; i++) {
            diff[i] = db[i] - da[i];
            ratio[i] = da[i] > 0 ? db[i] / da[i] : Double.NaN;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("a", ab[0]);
        m.put("b", ab[1]);
        m.put("statistic", st);
        m.put("a_value", a);
        m.put("b_value", b);
        m.put("difference", b - a);
        m.put("difference_ci95", percentile(diff, level));
        m.put("ratio", a > 0 ? (Object) (b / a) : null);
        m.put("ratio_ci95", percentile(ratio, level));
        return m;
    }

    /** Recovery of statistic {@code st} for {@code r3} = {baseline, congested, treated}, with its percentile interval. */
    private static Map<String, Object> recoveryBlock(String[] r3, String st, Map<String, double[]> observed,
                                                     Map<String, double[][]> boot, int resamples, double level) {
        int k = statIndex(st);
        double v = TrialStats.recovery(observed.get(r3[0])[k], observed.get(r3[1])[k], observed.get(r3[2])[k]);
        double[] d0 = column(boot.get(r3[0]), k), d1 = column(boot.get(r3[1]), k), d2 = column(boot.get(r3[2]), k);
        double[] dist = new double[resamples];
        for (int i = 0; i < resamples; i++) dist[i] = TrialStats.recovery(d0[i], d1[i], d2[i]);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("baseline", r3[0]);
        m.put("congested", r3[1]);
        m.put("treated", r3[2]);
        m.put("statistic", st);
        m.put("ratio", num(v));
        m.put("ci95", percentile(dist, level));
        m.put("bootstrap_se", undefined(dist) > 0 ? null : (Object) Bootstrap.sd(dist));
        m.put("bootstrap_undefined", undefined(dist));
        return m;
    }

    private static Map<String, Object> settings(int resamples, long seed, double level, String unit) {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("confidence_level", level);
        settings.put("unit", unit);
        settings.put("quantile_definition", "Hyndman-Fan type 7 (linear, numpy's default) over the pooled calls");
        settings.put("bootstrap_method", METHOD);
        settings.put("bootstrap_resamples", resamples);
        settings.put("bootstrap_seed", seed);
        settings.put("bootstrap_rng", Bootstrap.RNG + " seeded with {seed, condition name hashCode}");
        return settings;
    }

    static double[] column(double[][] rows, int k) {
        double[] out = new double[rows.length];
        for (int i = 0; i < rows.length; i++) out[i] = rows[i][k];
        return out;
    }
}
