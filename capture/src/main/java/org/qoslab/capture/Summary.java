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
import java.util.TreeMap;
import org.qoslab.common.Json;

/**
 * Aggregates classified packets: per class and per direction relative to a host (packets, bytes
 * of the frames on the wire, mean frame length, first/last time), a DSCP histogram per class
 * (IPv4 DS field and IPv6 traffic class), frames per encapsulation, undecodable frames by reason,
 * and a per-class bit-rate time series (bins of {@code binSeconds}, plus a running average over
 * {@code window} bins, as in the thesis's Figures 11-18).
 *
 * <p>Bounded by packets, not by time span: only occupied bins are stored (at most
 * {@link #MAX_BINS}); at the end the occupied bins are split into clusters wherever two are more
 * than {@code maxGapSeconds} apart, the cluster with the most packets is the capture's own range,
 * and packets outside it are reported as time outliers (counted in the classes, left out of the
 * series). The series is written dense (every bin) when that is at most
 * {@code max(MIN_DENSE_ROWS, DENSE_ROWS_PER_PACKET x packets)} rows, else sparse (occupied bins and
 * a zero row either side of each gap) with a warning.
 */
public final class Summary implements PacketSink {
    /** Occupied time bins kept at most (about 200 bytes each); later new bins are left out with a warning. */
    public static final int MAX_BINS = 500_000;
    /** A dense series of up to this many rows is always written (10 000 one-second bins = 2.8 h, about 0.7 MB). */
    public static final long MIN_DENSE_ROWS = 10_000;
    /** Beyond that, dense only while rows <= this many per packet in range. */
    public static final long DENSE_ROWS_PER_PACKET = 16;

    private static final int NC = TrafficClass.values().length;
    private final Classifier classifier;
    private final int host4;
    private final long host6hi, host6lo;
    private final int hostVersion;
    private final String hostText;
    private final double binSeconds;
    private final double maxGapSeconds;
    private final TimeSeries series;
    private final long[] packets = new long[NC * 3], bytes = new long[NC * 3]; // [class * 3 + dir], dir: 0 in, 1 out, 2 other
    private final long[] first = new long[NC], last = new long[NC];
    private final long[] dscp = new long[NC * 64]; // [class * 64 + dscp]
    private final long[] encap = new long[Classifier.ENCAP_CODES];
    private final long[] problems = new long[Classifier.Problem.values().length];
    private final long[] otherProto = new long[256];
    private long otherNonIp, otherUndecodable, fragFirst;
    private final Map<Integer, Long> unsupportedLinks = new TreeMap<>();
    private long total;
    private final PrintWriter perPacket;
    private String[] encapLabels;
    private CallMatcher calls = new CallMatcher(100_000, 300_000_000_000L, 1_000_000_000L);
    private GiopMatcher giop = new GiopMatcher(100_000);
    private NiodevMatcher mpj = new NiodevMatcher(100_000);

    public Summary(Classifier classifier, String hostIp, double binSeconds, PrintWriter perPacket) {
        this(classifier, hostIp, binSeconds, 3600, perPacket);
    }

    /**
     * @param hostIp IPv4 or IPv6 literal that directions (in/out) are relative to, or null
     * @param binSeconds time-series bin (s), > 0
     * @param maxGapSeconds occupied bins further apart than this (s) split the capture into clusters
     * @throws IllegalArgumentException for a host that is not an IP address literal
     */
    public Summary(Classifier classifier, String hostIp, double binSeconds, double maxGapSeconds, PrintWriter perPacket) {
        this.classifier = classifier;
        this.hostText = hostIp;
        if (hostIp == null) {
            hostVersion = 0; host4 = 0; host6hi = host6lo = 0;
        } else if (hostIp.contains(":")) {
            ByteBuffer a = ByteBuffer.wrap(IpText.ipv6Bytes(hostIp));
            hostVersion = 6; host4 = 0; host6hi = a.getLong(0); host6lo = a.getLong(8);
        } else {
            hostVersion = 4; host4 = ipToInt(hostIp); host6hi = host6lo = 0;
        }
        this.binSeconds = binSeconds;
        this.maxGapSeconds = maxGapSeconds;
        this.series = new TimeSeries(binSeconds, maxGapSeconds);
        this.perPacket = perPacket;
        if (perPacket != null) perPacket.println("index,time_s,class,cap_len,orig_len,dscp,src,dst,sport,dport,encap");
        java.util.Arrays.fill(first, Long.MAX_VALUE);
        java.util.Arrays.fill(last, Long.MIN_VALUE);
    }

    /** Use this JRMP call matcher (its table limits, quiet time and record sink); before the first packet. */
    public Summary calls(CallMatcher m) {
        this.calls = m;
        return this;
    }

    public CallMatcher calls() { return calls; }

    /** Use this GIOP call matcher (its table limit and record sink); before the first packet. */
    public Summary giop(GiopMatcher m) {
        this.giop = m;
        return this;
    }

    public GiopMatcher giop() { return giop; }

    /** Use this MPJ niodev message matcher (its table limit and record sink); before the first packet. */
    public Summary mpj(NiodevMatcher m) {
        this.mpj = m;
        return this;
    }

    public NiodevMatcher mpj() { return mpj; }

    /** "198.18.0.1" -> int (big-endian), IllegalArgumentException otherwise (see {@link IpText#ipToInt}). */
    public static int ipToInt(String ip) { return IpText.ipToInt(ip); }

    static String intToIp(int v) { return IpText.intToIp(v); }

    static String ip6ToString(long hi, long lo) { return IpText.ip6ToString(hi, lo); }

    private int direction(Classifier.Decoded d) {
        if (hostVersion == 4 && d.ipVersion == 4) return d.dst == host4 ? 0 : d.src == host4 ? 1 : 2;
        if (hostVersion == 6 && d.ipVersion == 6) {
            if (d.dst6hi == host6hi && d.dst6lo == host6lo) return 0;
            if (d.src6hi == host6hi && d.src6lo == host6lo) return 1;
        }
        return 2;
    }

    @Override
    public void packet(long ts, int linkType, ByteBuffer buf, int offset, int capLen, int origLen) {
        TrafficClass c = classifier.classify(ts, linkType, buf, offset, capLen, origLen);
        int ci = c.ordinal();
        Classifier.Decoded d = classifier.d;
        int dir = hostVersion == 0 ? 2 : direction(d);
        packets[ci * 3 + dir]++;
        bytes[ci * 3 + dir] += origLen;
        if (ts < first[ci]) first[ci] = ts;
        if (ts > last[ci]) last[ci] = ts;
        if (d.dscp >= 0) dscp[ci * 64 + d.dscp]++;
        encap[d.encap]++;
        if (d.problem != Classifier.Problem.NONE) {
            problems[d.problem.ordinal()]++;
            if (d.problem == Classifier.Problem.UNSUPPORTED_LINK) unsupportedLinks.merge(linkType, 1L, Long::sum);
        }
        if (d.fragment == 1) fragFirst++;
        if (c == TrafficClass.OTHER) {
            if (d.problem != Classifier.Problem.NONE) otherUndecodable++;
            else if (d.ipVersion == 0) otherNonIp++;
            else otherProto[d.proto & 0xFF]++;
        }
        series.add(ts, ci, origLen);
        if (d.tcp) {
            calls.packet(ts, d, buf, total + 1);
            giop.packet(ts, d, buf, total + 1);
            mpj.packet(ts, d, buf, total + 1);
        }
        total++;
        if (perPacket != null) perPacketRow(ts, c, capLen, origLen, d);
    }

    private void perPacketRow(long ts, TrafficClass c, int capLen, int origLen, Classifier.Decoded d) {
        if (encapLabels == null) encapLabels = new String[Classifier.ENCAP_CODES];
        String el = encapLabels[d.encap];
        if (el == null) el = encapLabels[d.encap] = Classifier.encapLabel(d.encap);
        String src = d.ipVersion == 4 ? intToIp(d.src) : d.ipVersion == 6 ? ip6ToString(d.src6hi, d.src6lo) : "";
        String dst = d.ipVersion == 4 ? intToIp(d.dst) : d.ipVersion == 6 ? ip6ToString(d.dst6hi, d.dst6lo) : "";
        perPacket.append(Long.toString(total)).append(',').append(seconds(ts - series.t0)).append(',').append(c.label)
                .append(',').append(Integer.toString(capLen)).append(',').append(Integer.toString(origLen))
                .append(',').append(Integer.toString(d.dscp)).append(',').append(src).append(',').append(dst)
                .append(',').append(Integer.toString(d.sport)).append(',').append(Integer.toString(d.dport))
                .append(',').append(el).append('\n');
    }

    /** ns -> "s.nnnnnnnnn" without String.format. */
    static String seconds(long ns) {
        String sign = ns < 0 ? "-" : "";
        long a = Math.abs(ns);
        if (a < 0) return "0"; // Long.MIN_VALUE
        String frac = Long.toString(a % 1_000_000_000L);
        return sign + (a / 1_000_000_000L) + "." + "000000000".substring(frac.length()) + frac;
    }

    public long packetsOf(TrafficClass c) { int i = c.ordinal() * 3; return packets[i] + packets[i + 1] + packets[i + 2]; }

    public long total() { return total; }

    private TimeSeries.Range range() { return series.range(total); }

    /** Warnings for the user (time outliers, a sparse or cut series); empty when all is well. */
    public List<String> warnings() {
        TimeSeries.Range r = range();
        List<String> w = new ArrayList<>();
        if (r.outliers > 0) {
            w.add(r.outliers + " packet(s) with timestamps far outside the capture's own range ("
                    + r.firstTs / 1e9 + " to " + r.lastTs / 1e9 + " s since the epoch, gaps over " + maxGapSeconds
                    + " s split it), e.g. at " + r.outlierExamples + " s: counted in the classes, left out of the time series");
        }
        if (!r.dense && r.keys.length > 0) {
            w.add("time series written sparse (" + r.rows + " rows: occupied bins and a zero row either side of each gap),"
                    + " a dense series would have " + (r.keys[r.keys.length - 1] - r.keys[0] + 1) + " rows for "
                    + r.inRange + " packets");
        }
        if (series.dropped > 0) {
            w.add(series.dropped + " packet(s) left out of the time series: more than " + MAX_BINS + " occupied bins");
        }
        return w;
    }

    /** The summary as JSON-ready maps. {@code extra} (source, drops, problems) is merged in first. */
    public Map<String, Object> toMap(Map<String, Object> extra) {
        TimeSeries.Range r = range();
        Map<String, Object> out = new LinkedHashMap<>(extra);
        out.put("host", hostText);
        out.put("packets", total);
        out.put("duration_s", r.keys.length == 0 ? 0.0 : (r.lastTs - r.firstTs) / 1e9);
        out.put("start_epoch_s", r.keys.length == 0 ? null : (Object) (r.firstTs / 1e9));
        out.put("tunnel", classifier.tunnel().name().toLowerCase());
        out.put("unsupported_link_packets", classifier.unsupportedLink);
        out.put("flow_table", Map.of("size", classifier.flows().size(), "evicted_idle", classifier.flows().evictedIdle,
                "evicted_full", classifier.flows().evictedFull));
        Map<String, Object> classes = new LinkedHashMap<>();
        for (TrafficClass c : TrafficClass.values()) classes.put(c.label, classMap(c, r));
        out.put("classes", classes);
        out.put("encapsulations", encapsulations());
        out.put("undecodable", undecodable());
        out.put("other_breakdown", otherBreakdown());
        out.put("fragments", Map.of("first", fragFirst, "later_followed", classifier.fragFollowed,
                "later_unseen", classifier.fragUnseen));
        Map<String, Object> time = new LinkedHashMap<>();
        time.put("bin_s", binSeconds);
        time.put("max_gap_s", maxGapSeconds);
        time.put("packets_in_range", r.inRange);
        time.put("outlier_packets", r.outliers);
        time.put("outlier_examples_epoch_s", r.outlierExamples);
        time.put("series_mode", r.dense ? "dense" : "sparse");
        time.put("series_rows", r.rows);
        time.put("series_dropped_packets", series.dropped);
        out.put("time", time);
        calls.finish(r.keys.length == 0 ? 0 : r.lastTs); // calls still open end with the capture's own range
        out.put("calls", calls.toMap());
        giop.finish();
        out.put("giop_calls", giop.toMap());
        mpj.finish();
        out.put("mpj_calls", mpj.toMap());
        out.put("warnings", warnings());
        return out;
    }

    private Map<String, Object> classMap(TrafficClass c, TimeSeries.Range r) {
        int i = c.ordinal();
        long p = packetsOf(c), by = bytes[i * 3] + bytes[i * 3 + 1] + bytes[i * 3 + 2];
        long f = first[i], l = last[i];
        if (p > 0 && r.keys.length > 0 && (f < r.firstTs || l > r.lastTs)) { // an outlier: the range's own bins
            f = Long.MAX_VALUE;
            l = Long.MIN_VALUE;
            for (long k : r.keys) {
                long[] e = series.bin(k);
                if (e[NC + i] > 0) { f = Math.min(f, e[TimeSeries.E_MIN]); l = Math.max(l, e[TimeSeries.E_MAX]); }
            }
        }
        boolean has = p > 0 && f != Long.MAX_VALUE && r.keys.length > 0;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("packets", p);
        m.put("bytes", by);
        m.put("mean_frame_bytes", p == 0 ? null : (Object) ((double) by / p));
        m.put("first_s", has ? (Object) ((f - r.firstTs) / 1e9) : null);
        m.put("last_s", has ? (Object) ((l - r.firstTs) / 1e9) : null);
        m.put("in", Map.of("packets", packets[i * 3], "bytes", bytes[i * 3]));
        m.put("out", Map.of("packets", packets[i * 3 + 1], "bytes", bytes[i * 3 + 1]));
        Map<String, Object> h = new LinkedHashMap<>();
        for (int v = 0; v < 64; v++) if (dscp[i * 64 + v] > 0) h.put(Integer.toString(v), dscp[i * 64 + v]);
        m.put("dscp", h);
        return m;
    }

    private Map<String, Object> encapsulations() {
        Map<String, Long> m = new TreeMap<>();
        for (int code = 0; code < encap.length; code++) {
            if (encap[code] > 0) m.merge(Classifier.encapLabel(code), encap[code], Long::sum);
        }
        return new LinkedHashMap<>(m);
    }

    private Map<String, Object> undecodable() {
        Map<String, Object> reasons = new LinkedHashMap<>();
        long n = 0;
        for (Classifier.Problem p : Classifier.Problem.values()) {
            if (p != Classifier.Problem.NONE && problems[p.ordinal()] > 0) {
                reasons.put(p.label, problems[p.ordinal()]);
                n += problems[p.ordinal()];
            }
        }
        Map<String, Object> links = new LinkedHashMap<>();
        unsupportedLinks.forEach((k, v) -> links.put(Integer.toString(k), v));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("packets", n);
        m.put("reasons", reasons);
        m.put("unsupported_link_types", links);
        return m;
    }

    private Map<String, Object> otherBreakdown() {
        Map<String, Object> protos = new LinkedHashMap<>();
        for (int p = 0; p < 256; p++) if (otherProto[p] > 0) protos.put(Integer.toString(p), otherProto[p]);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("non_ip", otherNonIp);
        m.put("undecodable", otherUndecodable);
        m.put("ip_protocols", protos);
        return m;
    }

    /** Write summary.json and timeseries.csv (bits/s per class per bin and running averages over {@code window} bins). */
    public void write(Path dir, Map<String, Object> extra, int window) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("summary.json"), Json.write(toMap(extra)) + "\n");
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(dir.resolve("timeseries.csv")))) {
            series.write(w, window, total);
        }
    }
}
