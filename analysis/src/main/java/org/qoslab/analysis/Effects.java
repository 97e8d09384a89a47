package org.qoslab.analysis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.numbers.gamma.LogGamma;
import org.apache.commons.statistics.distribution.NormalDistribution;
import org.apache.commons.statistics.distribution.TDistribution;
import org.apache.commons.statistics.inference.AlternativeHypothesis;
import org.apache.commons.statistics.inference.DataDispersion;
import org.apache.commons.statistics.inference.TTest;

/**
 * Effect sizes, equivalence, power and robust summaries for two independent samples of trial times
 * (seconds). Every function here is pure; sources of the definitions are given per function.
 */
public final class Effects {
    private Effects() { }

    /** Pooled standard deviation sqrt(((na-1) sa^2 + (nb-1) sb^2) / (na + nb - 2)), seconds. */
    static double pooledSd(double[] a, double[] b) {
        double va = var(a), vb = var(b);
        return Math.sqrt(((a.length - 1) * va + (b.length - 1) * vb) / (a.length + b.length - 2));
    }

    /** Cohen's d of b against a: (mean b - mean a) / pooled sd (Cohen 1988, eq. 2.2.1 with the pooled sample sd). */
    public static double cohensD(double[] a, double[] b) {
        return (mean(b) - mean(a)) / pooledSd(a, b);
    }

    /**
     * Hedges' g: Cohen's d times the exact small-sample correction J(df) = Gamma(df/2) /
     * (sqrt(df/2) Gamma((df-1)/2)), df = na + nb - 2 (Hedges 1981, eq. 6e).
     */
    public static double hedgesG(double[] a, double[] b) {
        double df = a.length + b.length - 2;
        double j = Math.exp(LogGamma.value(df / 2) - LogGamma.value((df - 1) / 2)) / Math.sqrt(df / 2);
        return j * cohensD(a, b);
    }

    /**
     * Hodges-Lehmann shift of b against a: the median of the na*nb differences b_j - a_i (seconds),
     * with its distribution-free interval: the differences of rank C and na*nb + 1 - C, C =
     * round(na nb / 2 - z(1 - (1-level)/2) sqrt(na nb (na + nb + 1) / 12)), at least 1 (Hollander,
     * Wolfe and Chicken 2014, "Nonparametric Statistical Methods", 3rd ed., section 4.3, the
     * large-sample approximation of C; no tie correction).
     *
     * @return {shift, lower, upper} in seconds
     */
    public static double[] hodgesLehmann(double[] a, double[] b, double level) {
        int na = a.length, nb = b.length, nn = na * nb;
        double[] d = new double[nn];
        int k = 0;
        for (double y : b) for (double x : a) d[k++] = y - x;
        Arrays.sort(d);
        double median = nn % 2 == 1 ? d[nn / 2] : (d[nn / 2 - 1] + d[nn / 2]) / 2;
        double z = NormalDistribution.of(0, 1).inverseCumulativeProbability(1 - (1 - level) / 2);
        long c = Math.round(nn / 2.0 - z * Math.sqrt(nn * (na + nb + 1.0) / 12.0));
        c = Math.max(1, Math.min(c, (nn + 1) / 2));
        return new double[] {median, d[(int) c - 1], d[nn - (int) c]};
    }

    /**
     * TOST (Schuirmann 1987) equivalence of b and a within +-margin (seconds): two one-sided Welch
     * t-tests, H0 mean(b) - mean(a) <= -margin and H0 mean(b) - mean(a) >= +margin; p = the larger
     * of the two; equivalent when p < alpha, i.e. when the (1 - 2 alpha) Welch interval of the
     * difference lies inside +-margin.
     */
    public static Map<String, Object> tost(double[] a, double[] b, double margin, double alpha) {
        TTest welch = TTest.withDefaults().with(DataDispersion.HETEROSCEDASTIC);
        double pLower = welch.with(AlternativeHypothesis.GREATER_THAN).withMu(-margin).test(b, a).getPValue();
        double pUpper = welch.with(AlternativeHypothesis.LESS_THAN).withMu(margin).test(b, a).getPValue();
        double p = Math.max(pLower, pUpper);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("margin_s", margin);
        m.put("p_lower", pLower);
        m.put("p_upper", pUpper);
        m.put("p", p);
        m.put("ci90_s", welchInterval(a, b, 1 - 2 * alpha));
        m.put("equivalent", p < alpha);
        return m;
    }

    /** Welch interval of mean(b) - mean(a) at {@code level}: difference +- t(df) * se, seconds. */
    public static List<Double> welchInterval(double[] a, double[] b, double level) {
        double se = welchSe(a, b), df = welchDf(a, b), diff = mean(b) - mean(a);
        double t = TDistribution.of(df).inverseCumulativeProbability(1 - (1 - level) / 2);
        return Arrays.asList(diff - t * se, diff + t * se);
    }

    /**
     * Minimum detectable difference of means (seconds) at {@code power} for a two-sided Welch test
     * at {@code alpha} with these sample sizes and standard deviations: (t(1 - alpha/2, df) +
     * t(power, df)) * se, the Welch-Satterthwaite df and se of the samples (the central-t
     * approximation of the noncentral-t power, e.g. Cohen 1988 section 2.4; it slightly
     * overstates the power for small df).
     */
    public static double mde(double[] a, double[] b, double alpha, double power) {
        TDistribution t = TDistribution.of(welchDf(a, b));
        return (t.inverseCumulativeProbability(1 - alpha / 2) + t.inverseCumulativeProbability(power)) * welchSe(a, b);
    }

    static double welchSe(double[] a, double[] b) {
        return Math.sqrt(var(a) / a.length + var(b) / b.length);
    }

    /** Welch-Satterthwaite degrees of freedom. */
    static double welchDf(double[] a, double[] b) {
        double qa = var(a) / a.length, qb = var(b) / b.length;
        return (qa + qb) * (qa + qb) / (qa * qa / (a.length - 1) + qb * qb / (b.length - 1));
    }

    /**
     * Holm's step-down adjusted p-values (Holm 1979): sort ascending, p_(i) * (m - i + 1), running
     * maximum, capped at 1; returned in the input order. Null entries stay null and do not count.
     */
    public static List<Double> holm(List<Double> p) {
        List<Integer> idx = new ArrayList<>();
        for (int i = 0; i < p.size(); i++) if (p.get(i) != null) idx.add(i);
        idx.sort((x, y) -> Double.compare(p.get(x), p.get(y)));
        Double[] out = new Double[p.size()];
        double run = 0;
        int m = idx.size();
        for (int r = 0; r < m; r++) {
            run = Math.max(run, Math.min(1, p.get(idx.get(r)) * (m - r)));
            out[idx.get(r)] = run;
        }
        return Arrays.asList(out);
    }

    /**
     * Tukey's fences: quartiles by linear interpolation (Hyndman-Fan type 7, numpy's default), fences
     * q1 - 1.5 IQR and q3 + 1.5 IQR; counts of values strictly outside. Reported, never removed.
     */
    public static Map<String, Object> tukey(double[] x) {
        double[] s = x.clone();
        Arrays.sort(s);
        double q1 = Bootstrap.quantile7(s, 0.25), q3 = Bootstrap.quantile7(s, 0.75), iqr = q3 - q1;
        double lo = q1 - 1.5 * iqr, hi = q3 + 1.5 * iqr;
        int nlo = 0, nhi = 0;
        for (double v : s) {
            if (v < lo) nlo++;
            if (v > hi) nhi++;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("q1", q1);
        m.put("q3", q3);
        m.put("iqr", iqr);
        m.put("tukey_fences", Arrays.asList(lo, hi));
        m.put("outliers_low", nlo);
        m.put("outliers_high", nhi);
        m.put("outliers", nlo + nhi);
        return m;
    }

    static double mean(double[] x) {
        double s = 0;
        for (double v : x) s += v;
        return s / x.length;
    }

    /** Sample variance (n - 1). */
    static double var(double[] x) {
        double m = mean(x), s = 0;
        for (double v : x) s += (v - m) * (v - m);
        return s / (x.length - 1);
    }
}
