package org.qoslab.capture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.qoslab.common.Json;

/**
 * MPJ niodev message matching: a crafted capture with known reply delays (two ranks, each writing
 * on its own connection; one-way messages; a lost segment) and a real capture of MPJ Express 0.44
 * ranks on loopback (src/test/resources/mpj-pingpong-lo.pcap with the benchmark's own result).
 */
class NiodevMatcherTest {
    @TempDir Path dir;
    static final long T0 = CallMatcherTest.T0;
    static final String A = "198.18.0.1", B = "198.18.0.2";
    static final long[] UA = {0x1111L, 0x2222L}, UB = {0x3333L, 0x4444L};

    /** A channel init: -21, the rank, the UUID. */
    static byte[] init(int rank, long[] uuid) {
        return ByteBuffer.allocate(24).putInt(-21).putInt(rank).putLong(uuid[0]).putLong(uuid[1]).array();
    }

    /** A niodev message of {@code bytes} payload bytes: the 81-byte header, then the static buffer (8 + bytes). */
    static byte[] msg(long[] uuid, int tag, int context, int bytes) {
        ByteBuffer b = ByteBuffer.allocate(81 + 8 + bytes);
        b.putInt(-24).putLong(uuid[0]).putLong(uuid[1]).putInt(tag).putInt(8 + bytes).putInt(0).putInt(3)
                .putInt(context).putInt(bytes).putInt(1);
        return b.array();
    }

    /** A one-directional niodev connection (the writer's data, the reader's init) in a {@link CallMatcherTest.Conv}. */
    static final class Ch {
        final CallMatcherTest.Conv v;
        final String w, r;
        final int wp, rp;
        int wseq, rseq;

        Ch(CallMatcherTest.Conv v, String w, int wp, long[] wu, int wr, String r, int rp, long[] ru, int rr, long us) {
            this.v = v; this.w = w; this.r = r; this.wp = wp; this.rp = rp;
            wseq = wp * 10; rseq = rp * 10;
            send(us, init(wr, wu));
            v.add(us + 50, r, w, rp, wp, rseq, wseq, 0x18, init(rr, ru));
            rseq += 24;
        }

        int send(long us, byte[] p) {
            int f = v.add(us, w, r, wp, rp, wseq, rseq, 0x18, p);
            wseq += p.length;
            return f;
        }

        /** Bytes {@code from..to} of {@code p} as one segment (its sequence number placed in the stream). */
        int part(long us, byte[] p, int from, int to, int base) {
            return v.add(us, w, r, wp, rp, base + from, rseq, 0x18, Arrays.copyOfRange(p, from, to));
        }
    }

    static long ms(double v) { return T0 + Math.round(v * 1e6); }

    List<CallMatcher.Call> run(byte[] pcap, Map<String, Object>[] counts) throws Exception {
        Path p = dir.resolve("n" + System.nanoTime() + ".pcap");
        Files.write(p, pcap);
        NiodevMatcher n = new NiodevMatcher(100);
        List<CallMatcher.Call> out = NiodevMatcher.collect(n);
        Summary s = new Summary(new Classifier(TrafficClass.RmiMode.FLOW, 100, 60_000_000_000L), A, 1.0, null).mpj(n);
        PcapFileReader.read(p, s);
        @SuppressWarnings("unchecked") Map<String, Object> m = (Map<String, Object>) s.toMap(Map.of()).get("mpj_calls");
        if (counts != null) counts[0] = m;
        return out;
    }

    /**
     * Two ranks, each writing on its own connection: known replies (one request and reply in two
     * segments), one-way messages, two tags answered out of order, a repeated tag, another context,
     * and a reply whose first segment the capture lost. {@code f} gets the frames: q1 r1 q2 r2 q4 q5
     * q6 r6 r5 q8 r8 r8x q9.
     */
    static CallMatcherTest.Conv crafted(Map<String, Integer> f) {
        CallMatcherTest.Conv v = new CallMatcherTest.Conv();
        Ch ab = new Ch(v, A, 40001, UA, 0, B, 50001, UB, 1, 0);   // rank 0 writes to rank 1 here
        Ch ba = new Ch(v, B, 40002, UB, 1, A, 50002, UA, 0, 200); // and rank 1 to rank 0 here
        f.put("q1", ab.send(1_000, msg(UA, 3, 7, 1)));                    // call: 1.0 -> 3.5 ms
        f.put("r1", ba.send(3_500, msg(UB, 3, 7, 1)));
        byte[] big = msg(UA, 3, 7, 3000);                                  // a request in two segments,
        int base = ab.wseq;
        f.put("q2", ab.part(10_000, big, 0, 1500, base));
        ab.part(10_500, big, 1500, big.length, base);
        ab.wseq += big.length;
        byte[] bigReply = msg(UB, 3, 7, 3000);                             // its reply too: 10 -> 30 ms
        int rbase = ba.wseq;
        f.put("r2", ba.part(20_000, bigReply, 0, 1000, rbase));
        ba.part(30_000, bigReply, 1000, bigReply.length, rbase);
        ba.wseq += bigReply.length;
        f.put("q4", ab.send(40_000, msg(UA, 4, 7, 10)));                 // one-way: no record (until the gap below)
        f.put("q5", ab.send(50_000, msg(UA, 5, 7, 10)));                 // 5 and 6 outstanding together,
        f.put("q6", ab.send(51_000, msg(UA, 6, 7, 10)));                 // 6 answered first: 51 -> 55 ms
        f.put("r6", ba.send(55_000, msg(UB, 6, 7, 10)));
        f.put("r5", ba.send(57_000, msg(UB, 5, 7, 10)));                 // 50 -> 57 ms
        ab.send(60_000, msg(UA, 8, 7, 10));                               // tag 8 twice before a reply: the first is one-way
        f.put("q8", ab.send(61_000, msg(UA, 8, 7, 10)));                 // 61 -> 65 ms
        f.put("r8", ba.send(65_000, msg(UB, 8, 7, 10)));
        f.put("r8x", ba.send(66_000, msg(UB, 8, 9, 10)));                // another context: not a reply (one-way)
        f.put("q9", ab.send(70_000, msg(UA, 9, 7, 10)));                 // its reply's first segment is lost:
        byte[] lost = msg(UB, 9, 7, 2000);
        int lbase = ba.wseq;
        ba.part(82_000, lost, 1000, lost.length, lbase);                   // incomplete, never timed
        ba.wseq += lost.length;
        ba.send(90_000, msg(UB, 9, 7, 10));                               // after the gap: a new message, not 70's reply
        return v;
    }

    @Test
    @SuppressWarnings("unchecked")
    void knownRepliesGiveExactlyTheKnownCallsAndALostSegmentNeverTimesACall() throws Exception {
        Map<String, Integer> f = new java.util.HashMap<>();
        CallMatcherTest.Conv v = crafted(f);
        int q1 = f.get("q1"), r1 = f.get("r1"), q2 = f.get("q2"), r2 = f.get("r2"), q4 = f.get("q4"), q5 = f.get("q5");
        int q6 = f.get("q6"), r6 = f.get("r6"), r5 = f.get("r5"), q8 = f.get("q8"), r8 = f.get("r8"), r8x = f.get("r8x");
        int q9 = f.get("q9");
        Map<String, Object>[] counts = new Map[1];
        List<CallMatcher.Call> calls = run(v.pcap(), counts);

        long[][] want = {{q1, r1, 1_000, 3_500}, {q6, r6, 51_000, 55_000}, {q5, r5, 50_000, 57_000}, {q8, r8, 61_000, 65_000}};
        List<CallMatcher.Call> done = new ArrayList<>();
        for (CallMatcher.Call c : calls) if (c.complete) done.add(c);
        assertEquals(5, done.size(), calls.toString());
        CallMatcher.Call big2 = done.stream().filter(c -> c.callFrame == q2).findFirst().orElseThrow();
        assertEquals(ms(10), big2.startNs);
        assertEquals(ms(30), big2.endNs);
        assertEquals(r2, big2.returnFrame);
        assertEquals(81 + 8 + 3000, big2.requestBytes);
        assertEquals(81 + 8 + 3000, big2.replyBytes);
        assertEquals(ms(20) - ms(10.5), big2.serverNs);
        for (long[] w : want) {
            CallMatcher.Call c = done.stream().filter(x -> x.callFrame == w[0]).findFirst().orElseThrow();
            assertEquals(w[1], c.returnFrame);
            assertEquals(T0 + w[2] * 1000, c.startNs);
            assertEquals(T0 + w[3] * 1000, c.endNs);
            assertEquals("mpj", c.protocol);
            assertEquals(A + ":40001", c.client());
            assertEquals(B + ":50001", c.server());
        }
        assertTrue(done.stream().noneMatch(c -> c.callFrame == r8x));
        // the gap in rank 1's direction: every message between the two ranks still waiting for a reply
        // (9, whose reply it ate, and the unanswered 4 and 8/context 9) ends incomplete, never timed
        List<CallMatcher.Call> inc = new ArrayList<>(calls);
        inc.removeAll(done);
        assertEquals(List.of((long) q4, (long) r8x, (long) q9), inc.stream().map(c -> c.callFrame).sorted().toList());
        for (CallMatcher.Call g : inc) {
            assertFalse(g.complete);
            assertEquals(-1, g.endNs);
            assertNull(g.toMap().get("latency_ms"));
            assertTrue(g.reason.contains("sequence gap"), g.reason);
        }
        assertEquals(9, inc.stream().filter(c -> c.callFrame == q9).findFirst().orElseThrow().requestId);
        Map<String, Object> m = counts[0];
        assertEquals(2L, m.get("connections"));
        assertEquals(8L, m.get("calls"));
        assertEquals(5L, m.get("complete"));
        assertEquals(1L, m.get("sequence_gaps"));
        assertEquals(2L, m.get("oneway_messages")); // the first tag 8 (replaced), tag 9 after the gap (never answered)
    }

    @Test
    void withoutTheReceiversInitNothingIsTimed() throws Exception {
        CallMatcherTest.Conv v = new CallMatcherTest.Conv();
        // the capture started after the channels opened: messages, but no rank announced itself on the reverse side
        v.add(1_000, A, B, 40001, 50001, 100, 900, 0x18, msg(UA, 3, 7, 1));
        v.add(3_000, B, A, 40002, 50002, 500, 1900, 0x18, msg(UB, 3, 7, 1));
        Map<String, Object>[] counts = new Map[1];
        assertTrue(run(v.pcap(), counts).isEmpty());
        assertEquals(2L, counts[0].get("messages"));
        assertEquals(2L, counts[0].get("unattributed_messages"));
    }

    static final Path REAL = Path.of("src/test/resources/mpj-pingpong-lo.pcap");

    /**
     * The real capture: 2 ranks, ping-pong of 1 B..1 KiB, 3 repetitions each (tag 3), then MPJ's own
     * Barrier, Bcast and Allreduce traffic. Every ping-pong round trip is a complete call with the
     * request and reply sizes the framing says, and no wire time is longer than the round trip the
     * benchmark itself timed around it (percentile by percentile).
     */
    @Test
    @SuppressWarnings("unchecked")
    void aRealCaptureGivesEveryPingPongRoundTrip() throws Exception {
        List<CallMatcher.Call> calls = run(Files.readAllBytes(REAL), null);
        List<CallMatcher.Call> pp = new ArrayList<>();
        for (CallMatcher.Call c : calls) if (c.requestId == 3) pp.add(c);
        Map<String, Object> res = (Map<String, Object>) Json.parse(Files.readString(Path.of("src/test/resources/mpj-pingpong-lo.json")));
        List<Object> sizes = (List<Object>) res.get("pingpong");
        int reps = num(lat(sizes.get(0)), "n").intValue();
        assertEquals(sizes.size() * reps, pp.size(), pp.toString());
        for (int i = 0; i < sizes.size(); i++) {
            int bytes = num((Map<String, Object>) sizes.get(i), "bytes").intValue();
            double[] wire = new double[reps];
            for (int k = 0; k < reps; k++) {
                CallMatcher.Call c = pp.get(i * reps + k);
                assertTrue(c.complete, c.toString());
                assertEquals(81 + 8 + bytes, c.requestBytes, c.toString());
                assertEquals(81 + 8 + bytes, c.replyBytes, c.toString());
                wire[k] = c.latencyNs() / 1e9;
            }
            Arrays.sort(wire);
            Map<String, Object> jvm = lat(sizes.get(i));
            assertTrue(wire[0] <= num(jvm, "min").doubleValue(), bytes + " B: wire min " + wire[0] + " > " + jvm);
            assertTrue(wire[reps / 2] <= num(jvm, "p50").doubleValue(), bytes + " B: wire median " + wire[reps / 2] + " > " + jvm);
            assertTrue(wire[reps - 1] <= num(jvm, "max").doubleValue(), bytes + " B: wire max " + wire[reps - 1] + " > " + jvm);
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> lat(Object size) { return (Map<String, Object>) ((Map<String, Object>) size).get("latency_s"); }

    static Number num(Map<String, Object> m, String k) { return (Number) m.get(k); }

    /** tshark (no niodev dissector) shows each ping-pong call's frames as TCP payloads starting a tag-3 niodev message. */
    @Test
    void tsharkSeesANiodevHeaderInEveryCallAndReplyFrame() throws Exception {
        Process t;
        try {
            t = new ProcessBuilder("tshark", "-r", REAL.toString(), "-Y", "tcp.len >= 81", "-T", "fields",
                    "-e", "frame.number", "-e", "tcp.payload").redirectErrorStream(true).start();
        } catch (java.io.IOException e) {
            Assumptions.abort("no tshark");
            return;
        }
        String out = new String(t.getInputStream().readAllBytes());
        assertTrue(t.waitFor(60, TimeUnit.SECONDS));
        Map<Long, String> payload = new java.util.HashMap<>();
        for (String line : out.split("\n")) {
            String[] f = line.trim().split("\t");
            if (f.length == 2) payload.put(Long.parseLong(f[0]), f[1].replace(":", ""));
        }
        for (CallMatcher.Call c : run(Files.readAllBytes(REAL), null)) {
            if (c.requestId != 3) continue;
            for (long frame : new long[] {c.callFrame, c.returnFrame}) {
                String p = payload.get(frame);
                assertTrue(p != null && p.startsWith("ffffffe8") && p.substring(40, 48).equals("00000003"),
                        "frame " + frame + ": " + p);
            }
        }
    }

    @Test
    void unansweredMessagesStopAtTheLimitWithAnErrorNamingIt() throws Exception {
        CallMatcherTest.Conv v = new CallMatcherTest.Conv();
        Ch ab = new Ch(v, A, 40001, UA, 0, B, 50001, UB, 1, 0);
        for (int tag = 0; tag < 300; tag++) ab.send(1_000 + tag, msg(UA, tag, 7, 1)); // 300 tags, no reply
        Path p = dir.resolve("unanswered.pcap");
        Files.write(p, v.pcap());
        NiodevMatcher n = new NiodevMatcher(100, 200);
        Summary s = new Summary(new Classifier(TrafficClass.RmiMode.FLOW, 100, 60_000_000_000L), A, 1.0, null).mpj(n);
        CallLimitException e = org.junit.jupiter.api.Assertions.assertThrows(CallLimitException.class, () -> PcapFileReader.read(p, s));
        assertTrue(e.getMessage().startsWith("more than 200 MPJ messages wait for their replies at once (" + A + ":40001 -> "
                + B + ":50001") && e.getMessage().contains("--max-open-calls"), e.getMessage());
        Map<String, Object>[] counts = new Map[1];
        NiodevMatcher ok = new NiodevMatcher(100, 300);
        PcapFileReader.read(p, new Summary(new Classifier(TrafficClass.RmiMode.FLOW, 100, 60_000_000_000L), A, 1.0, null).mpj(ok));
        ok.finish();
        assertEquals(300L, ok.toMap().get("oneway_messages"));
    }
}
