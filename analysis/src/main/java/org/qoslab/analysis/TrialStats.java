package org.qoslab.analysis;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.commons.math3.stat.descriptive.DescriptiveStatistics;
import org.apache.commons.statistics.inference.DataDispersion;
import org.apache.commons.statistics.inference.MannWhitneyUTest;
import org.apache.commons.statistics.inference.PValueMethod;
import org.apache.commons.statistics.inference.TTest;

/**
 * Statistics over trial times (seconds) with Apache Commons Math 3.6.1 (descriptives) and Apache
 * Commons Statistics 1.1 (Welch t, Mann-Whitney U). Pure functions.
 */
public final class TrialStats {
    private TrialStats() { }

    /**
     * Settings of one analysis, all written to stats.json.
     *
     * @param level confidence level of every interval (0.95)
     * @param alpha significance level of the TOST and the MDE (0.05)
     * @param power power of the minimum detectable effect (0.80)
     * @param resamples bootstrap resamples
     * @param seed bootstrap seed
     * @param marginRel TOST margin as a fraction of the reference mean (0.02)
     * @param baseline the reference condition of the TOST margin; null = each comparison's a
     */
    public record Settings(double level, double alpha, double power, int resamples, long seed, double marginRel,
                           String baseline) {
        /** The defaults: 95 % intervals, alpha 0.05, power 0.8, 10000 BCa resamples, seed 1, margin 2 %. */
        public static Settings defaults() {
            return new Settings(0.95, 0.05, 0.80, 10_000, 1L, 0.02, null);
        }
    }

    /** Exact Mann-Whitney only when its table, (min n + 1)(max n + 1)(n m / 2 + 1) doubles, stays under 32 MB. */
    static final long EXACT_MW_CELLS = 4_000_000L;

    /** {@link #describe(double[], Settings)} with the default settings. */
    public static Map<String, Object> describe(double[] x) {
        return describe(x, Settings.defaults());
    }

    /**
     * n, mean, sample standard deviation, 95 % confidence interval of the mean, median, min, max,
     * coefficient of variation (sd / mean). The interval is the BCa bootstrap one ({@code s}'s
     * resamples, seed and level), like every other interval of a trial time: it stays inside the
     * values' support, where a Student t interval of a skewed congested condition ran below 0 s
     * (issue 35: -15.5 to 65.9 s). All values equal: the interval is [mean, mean].
     *
     * @throws IllegalArgumentException for fewer than 2 values
     */
    public static Map<String, Object> describe(double[] x, Settings s) {
        if (x.length < 2) throw new IllegalArgumentException("need at least 2 trials, got " + x.length);
        DescriptiveStatistics d = new DescriptiveStatistics(x);
        double mean = d.getMean(), sd = d.getStandardDeviation(); // sample (n-1) standard deviation
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("n", x.length);
        m.put("mean", mean);
        m.put("sd", sd);
        m.put("ci95", sd == 0 ? Arrays.asList(mean, mean)
                : Bootstrap.bca(new double[][] {x}, v -> v[0], s.resamples(), s.seed(), s.level()).get("ci"));
        m.put("median", d.getPercentile(50));
        m.put("min", d.getMin());
        m.put("max", d.getMax());
        m.put("cv", sd / mean);
        double[] sw = ShapiroWilk.test(x);
        m.put("shapiro_w", sw == null ? null : (Object) sw[0]);
        m.put("shapiro_p", sw == null ? null : (Object) sw[1]);
        m.putAll(Effects.tukey(x));
        return m;
    }

    /**
     * Condition {@code b} against {@code a} (see analysis/README.md for every field): difference and
     * ratio of means with BCa bootstrap intervals, Welch's two-sided t-test (statistic, df, p,
     * interval), Mann-Whitney U (exact when there are no ties and the table is small, else the
     * normal approximation with tie and continuity correction), Cohen's d, Hedges' g, the
     * Hodges-Lehmann shift with its interval, the minimum detectable effect and a TOST
     * equivalence test with margin {@code margin_s} (seconds).
     */
    public static Map<String, Object> compare(String a, double[] xa, String b, double[] xb, Settings s, double marginS) {
        double ma = mean(xa), mb = mean(xb);
        if (Effects.var(xa) == 0 && Effects.var(xb) == 0) return compareConstant(a, xa, b, xb, ma, mb, s);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("a", a);
        m.put("b", b);
        m.put("difference_s", mb - ma);
        m.put("ratio", mb / ma);
        TTest.Result w = TTest.withDefaults().with(DataDispersion.HETEROSCEDASTIC).test(xb, xa);
        m.put("welch_t_p", w.getPValue());
        m.putAll(mannWhitney(xa, xb));
        m.put("difference_ci95_s", Bootstrap.bca(new double[][] {xa, xb}, v -> v[1] - v[0], s.resamples(), s.seed(), s.level()).get("ci"));
        m.put("ratio_ci95", Bootstrap.bca(new double[][] {xa, xb}, v -> v[1] / v[0], s.resamples(), s.seed(), s.level()).get("ci"));
        m.put("welch_t", w.getStatistic());
        m.put("welch_df", w.getDegreesOfFreedom());
        m.put("difference_welch_ci95_s", Effects.welchInterval(xa, xb, s.level()));
        m.put("cohens_d", Effects.cohensD(xa, xb));
        m.put("hedges_g", Effects.hedgesG(xa, xb));
        double[] hl = Effects.hodgesLehmann(xa, xb, s.level());
        m.put("hodges_lehmann_s", hl[0]);
        m.put("hodges_lehmann_ci95_s", Arrays.asList(hl[1], hl[2]));
        double mde = Effects.mde(xa, xb, s.alpha(), s.power());
        m.put("mde_s", mde);
        m.put("mde_rel", mde / ma);
        m.put("tost", Effects.tost(xa, xb, marginS, s.alpha()));
        return m;
    }

    /** Why the tests of {@link #compareConstant} are null (stats.json's {@code not_computable}). */
    static final String NO_SPREAD = "every trial of both conditions has the same value (no spread): Welch's t, its "
            + "interval, Cohen's d, Hedges' g, the MDE and the TOST divide by a standard deviation of 0 and cannot be "
            + "computed";

    /**
     * {@link #compare} when neither sample varies (a metric constant within both conditions, e.g. a
     * counter): the difference and ratio of the means with degenerate intervals (every bootstrap
     * resample has the same means: the interval is the point, as {@link #describe}'s for sd 0), the
     * Hodges-Lehmann shift, Mann-Whitney U when the two values differ (its p, with the tie-corrected
     * variance, is then defined; null when they are equal: no test separates identical samples), and
     * null for every statistic that divides by a standard deviation, with {@code not_computable}
     * saying why ({@link #NO_SPREAD}). Holm's correction skips the nulls.
     */
    static Map<String, Object> compareConstant(String a, double[] xa, String b, double[] xb, double ma, double mb,
                                               Settings s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("a", a);
        m.put("b", b);
        m.put("difference_s", mb - ma);
        m.put("ratio", mb / ma);
        m.put("welch_t_p", null);
        if (ma != mb) {
            m.putAll(mannWhitney(xa, xb));
        } else {
            m.put("mann_whitney_p", null);
            m.put("mann_whitney_u", xa.length * (double) xb.length / 2);
            m.put("mann_whitney_method", null);
            m.put("mann_whitney_ties", true);
            m.put("prob_superiority", 0.5);
        }
        m.put("difference_ci95_s", Arrays.asList(mb - ma, mb - ma));
        m.put("ratio_ci95", Arrays.asList(mb / ma, mb / ma));
        for (String k : new String[] {"welch_t", "welch_df", "difference_welch_ci95_s", "cohens_d", "hedges_g"}) m.put(k, null);
        double[] hl = Effects.hodgesLehmann(xa, xb, s.level());
        m.put("hodges_lehmann_s", hl[0]);
        m.put("hodges_lehmann_ci95_s", Arrays.asList(hl[1], hl[2]));
        m.put("mde_s", null);
        m.put("mde_rel", null);
        m.put("tost", null);
        m.put("not_computable", NO_SPREAD);
        return m;
    }

    /**
     * Exact Mann-Whitney with ties only while its table, (n + 1) doubled rank sums up to the largest
     * times (min n + 1) sample sizes, stays under this many doubles (400 MB would be 50 M; this is
     * 40 M = 320 MB at most for an instant; two samples of 50 need 38 M).
     */
    static final long EXACT_MW_TIES_CELLS = 40_000_000L;

    /**
     * Mann-Whitney U of b against a (U = pairs with b > a, ties count half) and its two-sided p:
     * without ties exact (Commons Statistics, Bucchianico 1999 recursion) when the table fits
     * {@link #EXACT_MW_CELLS}; with ties the exact permutation distribution of the midrank sum
     * ({@link #exactTiedP}) when it fits {@link #EXACT_MW_TIES_CELLS}; otherwise the normal
     * approximation with the tie-corrected variance and a continuity correction of 0.5. The
     * normal approximation is far off for small tied samples: two constant groups of 3 (10 ms
     * against 20 ms) got p 0.047 where no test of 3 against 3 can go below 0.1 (issue 48).
     */
    static Map<String, Object> mannWhitney(double[] xa, double[] xb) {
        double[] all = new double[xa.length + xb.length];
        System.arraycopy(xa, 0, all, 0, xa.length);
        System.arraycopy(xb, 0, all, xa.length, xb.length);
        Arrays.sort(all);
        boolean ties = false;
        for (int i = 1; i < all.length; i++) ties |= all[i] == all[i - 1];
        long lo = Math.min(xa.length, xb.length), hi = Math.max(xa.length, xb.length);
        boolean exact = !ties && (lo + 1) * (hi + 1) * (lo * hi / 2 + 1) <= EXACT_MW_CELLS;
        MannWhitneyUTest.Result r = MannWhitneyUTest.withDefaults()
                .with(exact ? PValueMethod.EXACT : PValueMethod.ASYMPTOTIC).test(xb, xa);
        double p = r.getPValue();
        String method = exact ? "exact" : "normal, tie- and continuity-corrected";
        if (ties) {
            double pt = exactTiedP(xa, xb, EXACT_MW_TIES_CELLS);
            if (!Double.isNaN(pt)) {
                p = pt;
                method = "exact permutation, midranks (ties)";
            }
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("mann_whitney_p", p);
        m.put("mann_whitney_u", r.getStatistic());
        m.put("mann_whitney_method", method);
        m.put("mann_whitney_ties", ties);
        m.put("prob_superiority", r.getStatistic() / ((double) xa.length * xb.length));
        return m;
    }

    /**
     * Two-sided p of the Mann-Whitney test of b against a from the exact permutation distribution
     * of b's midrank sum given the pooled sample's ties: every one of the C(n, n_b) ways to choose b's
     * ranks from the pooled midranks is equally likely under the null; p = min(1, 2 min(P(S &lt;= s),
     * P(S &gt;= s))) for the observed sum s (the doubling rule, as scipy's permutation_test). Counted by
     * dynamic programming over doubled midranks (integers): subsets of size k with doubled sum t.
     * NaN when the table, (n_b + 1) x (largest doubled sum + 1), times n exceeds {@code maxCells}.
     */
    static double exactTiedP(double[] xa, double[] xb, long maxCells) {
        int n = xa.length + xb.length, nb = xb.length;
        double[][] v = new double[n][];
        for (int i = 0; i < xa.length; i++) v[i] = new double[] {xa[i], 0};
        for (int i = 0; i < nb; i++) v[xa.length + i] = new double[] {xb[i], 1};
        Arrays.sort(v, (p, q) -> Double.compare(p[0], q[0]));
        int[] r2 = new int[n];  // doubled midranks: a tie group at 1-based positions i..j gets i + j
        for (int i = 0; i < n; ) {
            int j = i;
            while (j + 1 < n && v[j + 1][0] == v[i][0]) j++;
            for (int k = i; k <= j; k++) r2[k] = (i + 1) + (j + 1);
            i = j + 1;
        }
        int observed = 0;
        for (int i = 0; i < n; i++) if (v[i][1] == 1) observed += r2[i];
        int[] sorted = r2.clone();
        Arrays.sort(sorted);
        int maxSum = 0;
        for (int i = n - nb; i < n; i++) maxSum += sorted[i];
        if ((long) n * (nb + 1) * (maxSum + 1L) > maxCells) return Double.NaN;
        double[][] count = new double[nb + 1][maxSum + 1];
        count[0][0] = 1;
        for (int e = 0; e < n; e++) {
            for (int k = Math.min(e + 1, nb); k >= 1; k--) {
                double[] to = count[k], from = count[k - 1];
                for (int t = maxSum; t >= r2[e]; t--) to[t] += from[t - r2[e]];
            }
        }
        double total = 0, le = 0, ge = 0;
        for (int t = 0; t <= maxSum; t++) {
            double c = count[nb][t];
            total += c;
            if (t <= observed) le += c;
            if (t >= observed) ge += c;
        }
        return Math.min(1.0, 2 * Math.min(le, ge) / total);
    }

    /**
     * Recovery ratio: the share of the congestion slowdown that the treatment wins back,
     * (congested - treated) / (congested - baseline), from the three conditions' means.
     * 1 = all of it, 0 = none, negative = worse. NaN when congestion did not slow anything.
     */
    public static double recovery(double baseline, double congested, double treated) {
        double slowdown = congested - baseline;
        return slowdown <= 0 ? Double.NaN : (congested - treated) / slowdown;
    }

    static double mean(double[] x) { return new DescriptiveStatistics(x).getMean(); }
}
