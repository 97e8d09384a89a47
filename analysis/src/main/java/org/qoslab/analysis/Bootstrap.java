package org.qoslab.analysis;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.apache.commons.rng.UniformRandomProvider;
import org.apache.commons.rng.simple.RandomSource;
import org.apache.commons.statistics.distribution.NormalDistribution;

/**
 * Seeded bootstrap confidence intervals, bias-corrected and accelerated (BCa: Efron and Tibshirani
 * 1993, "An Introduction to the Bootstrap", sections 14.3 and 15.4, eq. 14.14-14.15), for a statistic
 * of the <em>means</em> of k independent samples (difference, ratio, recovery ratio). Each sample is
 * resampled with replacement on its own (stratified, as scipy.stats.bootstrap with paired=False):
 * all resamples of sample 1, then of sample 2, ... from one generator, Commons RNG
 * XO_RO_SHI_RO_128_PP seeded with {@code seed} (reproducible across JVMs and versions). The
 * acceleration comes from the leave-one-out jackknife of each sample in turn, the bias correction
 * from the share of resampled statistics below the observed one (ties count half), the interval
 * ends are the linear-interpolation (Hyndman-Fan type 7) quantiles of the resampled statistics:
 * the same definitions as scipy.stats.bootstrap(method='BCa').
 */
public final class Bootstrap {
    private Bootstrap() { }

    /** Method name written to stats.json. */
    public static final String METHOD = "BCa";
    /** Generator name written to stats.json. */
    public static final String RNG = "Commons RNG XO_RO_SHI_RO_128_PP";

    /**
     * BCa interval of {@code stat(means)} over {@code samples}.
     *
     * @param stat function of the k sample means; NaN marks an undefined value (e.g. recovery with no slowdown)
     * @param resamples number of bootstrap resamples (B), at least 100
     * @param level confidence level, e.g. 0.95
     * @return map with "ci" (two numbers, or null when any resampled or jackknife value is undefined),
     *     "se" (standard deviation of the resampled statistics), "undefined_resamples"
     */
    public static Map<String, Object> bca(double[][] samples, ToDoubleFunction<double[]> stat, int resamples,
                                          long seed, double level) {
        if (resamples < 100) throw new IllegalArgumentException("bootstrap needs at least 100 resamples, got " + resamples);
        int k = samples.length;
        double[] observed = new double[k];
        for (int j = 0; j < k; j++) observed[j] = mean(samples[j]);
        double theta = stat.applyAsDouble(observed);
        double[][] bmeans = new double[k][];
        UniformRandomProvider rng = RandomSource.XO_RO_SHI_RO_128_PP.create(seed);
        for (int j = 0; j < k; j++) bmeans[j] = resampledMeans(samples[j], resamples, rng);
        double[] dist = new double[resamples];
        int undefined = 0;
        double[] m = new double[k];
        for (int b = 0; b < resamples; b++) {
            for (int j = 0; j < k; j++) m[j] = bmeans[j][b];
            dist[b] = stat.applyAsDouble(m);
            if (Double.isNaN(dist[b])) undefined++;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        double acc = acceleration(samples, observed, stat);
        if (undefined > 0 || Double.isNaN(theta) || Double.isNaN(acc)) {
            out.put("ci", null);
        } else {
            double[] sorted = dist.clone();
            Arrays.sort(sorted);
            double below = 0;
            for (double v : sorted) below += v < theta ? 1 : v == theta ? 0.5 : 0;
            NormalDistribution z = NormalDistribution.of(0, 1);
            double z0 = z.inverseCumulativeProbability(below / resamples);
            double alpha = (1 - level) / 2, za = z.inverseCumulativeProbability(alpha);
            double n1 = z0 + za, n2 = z0 - za;
            double p1 = z.cumulativeProbability(z0 + n1 / (1 - acc * n1));
            double p2 = z.cumulativeProbability(z0 + n2 / (1 - acc * n2));
            out.put("ci", Arrays.asList(quantile7(sorted, p1), quantile7(sorted, p2)));
        }
        out.put("se", undefined > 0 ? null : (Object) sd(dist));
        out.put("undefined_resamples", undefined);
        return out;
    }

    /** B means of resamples (with replacement, size n) of x. */
    static double[] resampledMeans(double[] x, int resamples, UniformRandomProvider rng) {
        double[] out = new double[resamples];
        int n = x.length;
        for (int b = 0; b < resamples; b++) {
            double s = 0;
            for (int i = 0; i < n; i++) s += x[rng.nextInt(n)];
            out[b] = s / n;
        }
        return out;
    }

    /** Acceleration: jackknife skewness over the leave-one-out values of every sample (Efron-Tibshirani eq. 14.15, summed per sample). */
    static double acceleration(double[][] samples, double[] observed, ToDoubleFunction<double[]> stat) {
        double num = 0, den = 0;
        for (int j = 0; j < samples.length; j++) {
            double[] x = samples[j];
            int n = x.length;
            double total = 0;
            for (double v : x) total += v;
            double[] loo = new double[n];
            double[] m = observed.clone();
            for (int i = 0; i < n; i++) {
                m[j] = (total - x[i]) / (n - 1);
                loo[i] = stat.applyAsDouble(m);
                if (Double.isNaN(loo[i])) return Double.NaN;
            }
            double dot = mean(loo), s3 = 0, s2 = 0;
            for (double v : loo) {
                double u = (n - 1) * (dot - v);
                s3 += u * u * u;
                s2 += u * u;
            }
            num += s3 / Math.pow(n, 3);
            den += s2 / Math.pow(n, 2);
        }
        return num / (6 * Math.pow(den, 1.5));
    }

    /** Quantile of sorted values, linear interpolation between order statistics (Hyndman-Fan type 7, numpy's default). */
    public static double quantile7(double[] sorted, double p) {
        double h = (sorted.length - 1) * p;
        int lo = (int) Math.floor(h);
        if (lo >= sorted.length - 1) return sorted[sorted.length - 1];
        if (lo < 0) return sorted[0];
        return sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]);
    }

    static double mean(double[] x) {
        double s = 0;
        for (double v : x) s += v;
        return s / x.length;
    }

    static double sd(double[] x) {
        double m = mean(x), s = 0;
        for (double v : x) s += (v - m) * (v - m);
        return Math.sqrt(s / (x.length - 1));
    }
}
