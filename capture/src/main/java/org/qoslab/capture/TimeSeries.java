package org.qoslab.capture;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.PrimitiveIterator;
import java.util.stream.LongStream;

/**
 * The per-class bit-rate time series of a capture ({@link Summary}'s part): bytes and packets per
 * class per bin of {@code binSeconds}, only occupied bins stored (at most {@link Summary#MAX_BINS}).
 * At the end the occupied bins are split into clusters wherever two are more than
 * {@code maxGapSeconds} apart; the cluster with the most packets is the capture's own
 * {@link Range}, packets outside it are time outliers. Written dense (every bin) or sparse
 * (occupied bins and a zero row either side of each gap). Times are ns since the epoch.
 */
final class TimeSeries {
    private static final int NC = TrafficClass.values().length;
    static final int E_MIN = 2 * NC, E_MAX = 2 * NC + 1; // bin entry: bytes[NC], packets[NC], min ts, max ts
    private final double binSeconds;
    private final long binNanos;
    private final double maxGapSeconds;
    private final HashMap<Long, long[]> bins = new HashMap<>();
    private long curBin = Long.MIN_VALUE;
    private long[] cur;
    /** Packets left out because {@link Summary#MAX_BINS} bins were occupied. */
    long dropped;
    /** Time of the first packet (ns), the origin of the bins. */
    long t0 = Long.MIN_VALUE;
    private Range range; // computed once at the end

    /** The series' own range and what lies outside it (after {@link #range(long)}). */
    static final class Range {
        long[] keys = new long[0];   // occupied bins in range, ascending
        long firstTs, lastTs, inRange, outliers;
        List<Double> outlierExamples = new ArrayList<>();
        boolean dense;
        long rows;
    }

    /**
     * @param binSeconds bin width (s), > 0
     * @param maxGapSeconds occupied bins further apart than this (s) split the capture into clusters
     */
    TimeSeries(double binSeconds, double maxGapSeconds) {
        this.binSeconds = binSeconds;
        this.binNanos = Math.max(1, (long) (binSeconds * 1e9));
        this.maxGapSeconds = maxGapSeconds;
    }

    /** One packet of class ordinal {@code ci}, {@code origLen} bytes on the wire, at {@code ts} (ns). */
    void add(long ts, int ci, int origLen) {
        if (t0 == Long.MIN_VALUE) t0 = ts;
        long bin = Math.floorDiv(ts - t0, binNanos);
        if (bin != curBin) {
            long[] e = bins.get(bin);
            if (e == null && bins.size() < Summary.MAX_BINS) {
                e = new long[2 * NC + 2];
                e[E_MIN] = Long.MAX_VALUE;
                e[E_MAX] = Long.MIN_VALUE;
                bins.put(bin, e);
            }
            cur = e;
            curBin = e == null ? Long.MIN_VALUE : bin;
        }
        if (cur != null) {
            cur[ci] += origLen;
            cur[NC + ci]++;
            if (ts < cur[E_MIN]) cur[E_MIN] = ts;
            if (ts > cur[E_MAX]) cur[E_MAX] = ts;
        } else {
            dropped++;
        }
    }

    /** The bin entry of an occupied bin (bytes[NC], packets[NC], min ts, max ts), or null. */
    long[] bin(long key) { return bins.get(key); }

    /** The capture's own range, computed once; {@code total} = every packet added. */
    Range range(long total) {
        if (range != null) return range;
        Range r = new Range();
        long[] all = bins.keySet().stream().mapToLong(Long::longValue).sorted().toArray();
        if (all.length == 0) return range = r;
        long gapBins = Math.max(1, (long) Math.ceil(maxGapSeconds / binSeconds));
        int bestStart = 0, bestEnd = 0, s = 0;
        long bestPk = -1, pk = 0;
        for (int i = 0; i <= all.length; i++) {
            if (i == all.length || (i > s && all[i] - all[i - 1] > gapBins)) {
                if (pk > bestPk) { bestPk = pk; bestStart = s; bestEnd = i; }
                s = i;
                pk = 0;
                if (i == all.length) break;
            }
            long[] e = bins.get(all[i]);
            for (int k = 0; k < NC; k++) pk += e[NC + k];
        }
        r.keys = Arrays.copyOfRange(all, bestStart, bestEnd);
        r.inRange = bestPk;
        r.outliers = total - bestPk - dropped;
        r.firstTs = Long.MAX_VALUE;
        r.lastTs = Long.MIN_VALUE;
        for (long k : r.keys) {
            long[] e = bins.get(k);
            r.firstTs = Math.min(r.firstTs, e[E_MIN]);
            r.lastTs = Math.max(r.lastTs, e[E_MAX]);
        }
        for (int i = 0; i < all.length && r.outlierExamples.size() < 5; i++) {
            if (i < bestStart || i >= bestEnd) r.outlierExamples.add(bins.get(all[i])[E_MIN] / 1e9);
        }
        long span = r.keys[r.keys.length - 1] - r.keys[0] + 1;
        r.dense = span <= Math.max(Summary.MIN_DENSE_ROWS, Summary.DENSE_ROWS_PER_PACKET * r.inRange);
        r.rows = r.dense ? span : sparseRows(r.keys).size();
        return range = r;
    }

    static List<Long> sparseRows(long[] keys) {
        List<Long> rows = new ArrayList<>();
        for (int i = 0; i < keys.length; i++) {
            if (i > 0 && keys[i] - keys[i - 1] > 1) {
                rows.add(keys[i - 1] + 1);
                if (keys[i] - 1 > keys[i - 1] + 1) rows.add(keys[i] - 1);
            }
            rows.add(keys[i]);
        }
        return rows;
    }

    /** timeseries.csv: bits/s per class per bin and running averages over {@code window} bins. */
    void write(PrintWriter w, int window, long total) {
        List<String> head = new ArrayList<>(List.of("time_s"));
        for (TrafficClass c : TrafficClass.values()) head.add(c.label + "_bps");
        for (TrafficClass c : TrafficClass.values()) head.add(c.label + "_avg_bps");
        w.println(String.join(",", head));
        Range r = range(total);
        if (r.keys.length == 0) return;
        long k0 = r.keys[0], kN = r.keys[r.keys.length - 1];
        PrimitiveIterator.OfLong rows = r.dense ? LongStream.rangeClosed(k0, kN).iterator()
                : sparseRows(r.keys).stream().mapToLong(Long::longValue).iterator();
        double[] sum = new double[NC];
        int lo = 0, hi = 0; // occupied bins in (row - window, row]
        double scale = 8 / binSeconds;
        StringBuilder sb = new StringBuilder(256);
        while (rows.hasNext()) {
            long row = rows.nextLong();
            while (hi < r.keys.length && r.keys[hi] <= row) {
                long[] e = bins.get(r.keys[hi++]);
                for (int i = 0; i < NC; i++) sum[i] += e[i];
            }
            while (lo < hi && r.keys[lo] <= row - window) {
                long[] e = bins.get(r.keys[lo++]);
                for (int i = 0; i < NC; i++) sum[i] -= e[i];
            }
            long[] e = bins.get(row);
            long n = Math.min(row - k0 + 1, window);
            sb.setLength(0);
            sb.append(fixed((row - k0) * binSeconds, 3));
            for (int i = 0; i < NC; i++) sb.append(',').append(fixed(e == null ? 0 : e[i] * scale, 1));
            for (int i = 0; i < NC; i++) sb.append(',').append(fixed(sum[i] * scale / n, 1));
            w.println(sb);
        }
    }

    /** A number with {@code digits} (1 or 3) decimals, without String.format. */
    static String fixed(double v, int digits) {
        long m = digits == 1 ? 10 : 1000;
        long q = Math.round(v * m);
        String f = Long.toString(Math.abs(q % m));
        while (f.length() < digits) f = "0" + f;
        return (q < 0 ? "-" : "") + Math.abs(q / m) + "." + f;
    }
}
