package org.qoslab.capture;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.qoslab.common.Json;

/**
 * Aggregates classified packets: per class and per direction relative to a host (packets, bytes
 * of the frames on the wire, mean frame length, first/last time), a DSCP histogram per class, and
 * a per-class bit-rate time series (bins of {@code binSeconds}, plus a running average over
 * {@code window} bins, as in the thesis's Figures 11-18).
 */
public final class Summary implements PacketSink {
    private static final int NC = TrafficClass.values().length;
    private final Classifier classifier;
    private final int host;          // direction reference (0 = none)
    private final double binSeconds;
    private final long binNanos;
    private final long[][] packets = new long[NC][3], bytes = new long[NC][3]; // dir: 0 in, 1 out, 2 other
    private final long[] first = new long[NC], last = new long[NC];
    private final long[][] dscp = new long[NC][64];
    private long[][] series = new long[NC][64]; // bytes per class per bin
    private int bins;
    private long t0 = Long.MIN_VALUE, tEnd;
    private long total;
    private final PrintWriter perPacket;

    public Summary(Classifier classifier, String hostIp, double binSeconds, PrintWriter perPacket) {
        this.classifier = classifier;
        this.host = hostIp == null ? 0 : ipToInt(hostIp);
        this.binSeconds = binSeconds;
        this.binNanos = (long) (binSeconds * 1e9);
        this.perPacket = perPacket;
        if (perPacket != null) perPacket.println("index,time_s,class,cap_len,orig_len,dscp,src,dst,sport,dport");
        java.util.Arrays.fill(first, Long.MAX_VALUE);
    }

    /** "198.18.0.1" -> int (big-endian), IllegalArgumentException otherwise. */
    public static int ipToInt(String ip) {
        String[] p = ip.split("\\.");
        if (p.length != 4) throw new IllegalArgumentException("not an IPv4 address: " + ip);
        int v = 0;
        for (String s : p) {
            int o = Integer.parseInt(s);
            if (o < 0 || o > 255) throw new IllegalArgumentException("not an IPv4 address: " + ip);
            v = (v << 8) | o;
        }
        return v;
    }

    static String intToIp(int v) {
        return ((v >>> 24) & 0xFF) + "." + ((v >>> 16) & 0xFF) + "." + ((v >>> 8) & 0xFF) + "." + (v & 0xFF);
    }

    @Override
    public void packet(long ts, int linkType, ByteBuffer buf, int offset, int capLen, int origLen) {
        TrafficClass c = classifier.classify(ts, linkType, buf, offset, capLen, origLen);
        int ci = c.ordinal();
        Classifier.Decoded d = classifier.d;
        int dir = !d.ipv4 || host == 0 ? 2 : d.dst == host ? 0 : d.src == host ? 1 : 2;
        packets[ci][dir]++;
        bytes[ci][dir] += origLen;
        if (ts < first[ci]) first[ci] = ts;
        if (ts > last[ci]) last[ci] = ts;
        if (d.dscp >= 0) dscp[ci][d.dscp]++;
        if (t0 == Long.MIN_VALUE) t0 = ts;
        if (ts > tEnd) tEnd = ts;
        long bin = ts >= t0 ? (ts - t0) / binNanos : 0;
        if (bin < 10_000_000) { // a bogus timestamp must not allocate a huge series
            int bi = (int) bin;
            if (bi >= series[0].length) {
                int n = Math.max(bi + 1, series[0].length * 2);
                for (int i = 0; i < NC; i++) series[i] = java.util.Arrays.copyOf(series[i], n);
            }
            series[ci][bi] += origLen;
            if (bi + 1 > bins) bins = bi + 1;
        }
        total++;
        if (perPacket != null) {
            perPacket.printf("%d,%.9f,%s,%d,%d,%d,%s,%s,%d,%d%n", total, (ts - t0) / 1e9, c.label, capLen, origLen, d.dscp,
                    d.ipv4 ? intToIp(d.src) : "", d.ipv4 ? intToIp(d.dst) : "", d.sport, d.dport);
        }
    }

    public long packetsOf(TrafficClass c) { return packets[c.ordinal()][0] + packets[c.ordinal()][1] + packets[c.ordinal()][2]; }

    public long total() { return total; }

    /** The summary as JSON-ready maps. {@code extra} (source, drops, problems) is merged in first. */
    public Map<String, Object> toMap(Map<String, Object> extra) {
        Map<String, Object> out = new LinkedHashMap<>(extra);
        out.put("host", host == 0 ? null : intToIp(host));
        out.put("packets", total);
        out.put("duration_s", total == 0 ? 0.0 : (tEnd - t0) / 1e9);
        out.put("start_epoch_s", total == 0 ? null : (Object) (t0 / 1e9));
        out.put("unsupported_link_packets", classifier.unsupportedLink);
        out.put("flow_table", Map.of("size", classifier.flows().size(), "evicted_idle", classifier.flows().evictedIdle,
                "evicted_full", classifier.flows().evictedFull));
        Map<String, Object> classes = new LinkedHashMap<>();
        for (TrafficClass c : TrafficClass.values()) {
            int i = c.ordinal();
            long p = packets[i][0] + packets[i][1] + packets[i][2], by = bytes[i][0] + bytes[i][1] + bytes[i][2];
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("packets", p);
            m.put("bytes", by);
            m.put("mean_frame_bytes", p == 0 ? null : (Object) ((double) by / p));
            m.put("first_s", p == 0 ? null : (Object) ((first[i] - t0) / 1e9));
            m.put("last_s", p == 0 ? null : (Object) ((last[i] - t0) / 1e9));
            m.put("in", Map.of("packets", packets[i][0], "bytes", bytes[i][0]));
            m.put("out", Map.of("packets", packets[i][1], "bytes", bytes[i][1]));
            Map<String, Object> h = new LinkedHashMap<>();
            for (int v = 0; v < 64; v++) if (dscp[i][v] > 0) h.put(Integer.toString(v), dscp[i][v]);
            m.put("dscp", h);
            classes.put(c.label, m);
        }
        out.put("classes", classes);
        return out;
    }

    /** Write summary.json and timeseries.csv (bits/s per class per bin and running averages). */
    public void write(Path dir, Map<String, Object> extra, int window) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("summary.json"), Json.write(toMap(extra)) + "\n");
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(dir.resolve("timeseries.csv")))) {
            List<String> head = new ArrayList<>(List.of("time_s"));
            for (TrafficClass c : TrafficClass.values()) head.add(c.label + "_bps");
            for (TrafficClass c : TrafficClass.values()) head.add(c.label + "_avg_bps");
            w.println(String.join(",", head));
            double[] sum = new double[NC];
            for (int b = 0; b < bins; b++) {
                StringBuilder sb = new StringBuilder().append(String.format("%.3f", b * binSeconds));
                for (int i = 0; i < NC; i++) sb.append(',').append(String.format("%.1f", series[i][b] * 8 / binSeconds));
                for (int i = 0; i < NC; i++) {
                    sum[i] += series[i][b] * 8 / binSeconds;
                    if (b >= window) sum[i] -= series[i][b - window] * 8 / binSeconds;
                    sb.append(',').append(String.format("%.1f", sum[i] / Math.min(b + 1, window)));
                }
                w.println(sb);
            }
        }
    }
}
