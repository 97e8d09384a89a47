package org.qoslab.analysis;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.commons.math3.distribution.TDistribution;
import org.apache.commons.math3.stat.descriptive.DescriptiveStatistics;
import org.apache.commons.math3.stat.inference.MannWhitneyUTest;
import org.apache.commons.math3.stat.inference.TTest;

/** Statistics over trial times (seconds) with Apache Commons Math 3.6.1. Pure functions. */
public final class TrialStats {
    private TrialStats() { }

    /**
     * n, mean, sample standard deviation, 95 % confidence interval of the mean (Student t with n-1
     * degrees of freedom), median, min, max, coefficient of variation (sd / mean).
     *
     * @throws IllegalArgumentException for fewer than 2 values
     */
    public static Map<String, Object> describe(double[] x) {
        if (x.length < 2) throw new IllegalArgumentException("need at least 2 trials, got " + x.length);
        DescriptiveStatistics d = new DescriptiveStatistics(x);
        double mean = d.getMean(), sd = d.getStandardDeviation(); // sample (n-1) standard deviation
        double half = new TDistribution(x.length - 1).inverseCumulativeProbability(0.975) * sd / Math.sqrt(x.length);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("n", x.length);
        m.put("mean", mean);
        m.put("sd", sd);
        m.put("ci95", Arrays.asList(mean - half, mean + half));
        m.put("median", d.getPercentile(50));
        m.put("min", d.getMin());
        m.put("max", d.getMax());
        m.put("cv", sd / mean);
        return m;
    }

    /**
     * Condition {@code b} against {@code a}: difference of means (b - a, seconds), ratio of means
     * (b / a), Welch's two-sided t-test p (unequal variances), Mann-Whitney U two-sided p (normal
     * approximation, Commons Math).
     */
    public static Map<String, Object> compare(String a, double[] xa, String b, double[] xb) {
        Map<String, Object> m = new LinkedHashMap<>();
        double ma = new DescriptiveStatistics(xa).getMean(), mb = new DescriptiveStatistics(xb).getMean();
        m.put("a", a);
        m.put("b", b);
        m.put("difference_s", mb - ma);
        m.put("ratio", mb / ma);
        m.put("welch_t_p", new TTest().tTest(xa, xb));
        m.put("mann_whitney_p", new MannWhitneyUTest().mannWhitneyUTest(xa, xb));
        return m;
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
