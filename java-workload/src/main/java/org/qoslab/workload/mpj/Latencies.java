package org.qoslab.workload.mpj;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/** Per-operation latency summaries of the MPJ benchmark, in seconds. */
public final class Latencies {
    private Latencies() { }

    /**
     * {@code n}, {@code min}, {@code p50}, {@code p90}, {@code p99}, {@code max}, {@code mean} of
     * {@code samples} (seconds; percentiles by nearest rank, as the pingpong workload's p99).
     */
    public static Map<String, Object> summary(double[] samples) {
        double[] s = samples.clone();
        Arrays.sort(s);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("n", s.length);
        if (s.length == 0) return m;
        m.put("min", s[0]);
        m.put("p50", nearestRank(s, 50));
        m.put("p90", nearestRank(s, 90));
        m.put("p99", nearestRank(s, 99));
        m.put("max", s[s.length - 1]);
        m.put("mean", Arrays.stream(s).average().orElse(Double.NaN));
        return m;
    }

    /** The {@code p}-th percentile of sorted {@code s} by nearest rank (ceil(p/100 x n)-th value). */
    public static double nearestRank(double[] s, double p) {
        int k = (int) Math.ceil(p / 100.0 * s.length);
        return s[Math.max(0, Math.min(s.length - 1, k - 1))];
    }

    /** Sizes from {@code min} doubling up to {@code max} (bytes), {@code max} included. */
    public static int[] doubling(int min, int max) {
        int n = 0;
        for (long v = min; v <= max; v *= 2) n++;
        int[] out = new int[n];
        long v = min;
        for (int i = 0; i < n; i++, v *= 2) out[i] = (int) v;
        return out;
    }
}
