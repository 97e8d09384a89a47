package org.qoslab.capture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** GIOP request/reply matching on crafted captures with known reply delays (and tshark's GIOP dissector on the same file). */
class GiopMatcherTest {
    @TempDir Path dir;
    static final long T0 = CallMatcherTest.T0;
    static final String C = CallMatcherTest.C, S = CallMatcherTest.S;
    static final int CP = CallMatcherTest.CP, SP = CallMatcherTest.SP; // the Conv helper's connection

    /** A GIOP message: header (version 1.minor, byte order), then {@code body} (its size from it). */
    static byte[] giop(int minor, boolean little, boolean more, int type, byte[] body) {
        ByteBuffer b = ByteBuffer.allocate(12 + body.length).order(little ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN);
        b.put(new byte[] {'G', 'I', 'O', 'P', 1, (byte) minor, (byte) ((little ? 1 : 0) | (more ? 2 : 0)), (byte) type});
        b.putInt(body.length).put(body);
        return b.array();
    }

    /** A GIOP 1.2 Request/Reply/LocateRequest body: request id, response flags (3 = reply expected), filler. */
    static byte[] body12(int id, int flags, int filler) {
        ByteBuffer b = ByteBuffer.allocate(8 + filler);
        b.putInt(id).put((byte) flags);
        return b.array();
    }

    /** A GIOP 1.0 Request body: one service context of {@code ctx} bytes, request id, response_expected, filler. */
    static byte[] body10(int id, boolean expected, int ctx, int filler) {
        int afterCtx = (4 + 8 + ctx + 3) & ~3;
        ByteBuffer b = ByteBuffer.allocate(afterCtx + 8 + filler);
        b.putInt(1).putInt(0x4f4d0001).putInt(ctx).put(new byte[ctx]);
        b.position(afterCtx);
        b.putInt(id).put((byte) (expected ? 1 : 0));
        return b.array();
    }

    static long ms(double v) { return T0 + Math.round(v * 1e6); }

    List<CallMatcher.Call> run(byte[] pcap, Map<String, Object>[] counts) throws Exception {
        Path p = dir.resolve("g" + System.nanoTime() + ".pcap");
        Files.write(p, pcap);
        GiopMatcher g = new GiopMatcher(100);
        List<CallMatcher.Call> out = GiopMatcher.collect(g);
        Summary s = new Summary(new Classifier(TrafficClass.RmiMode.FLOW, 100, 60_000_000_000L), C, 1.0, null).giop(g);
        PcapFileReader.read(p, s);
        Map<String, Object> m = s.toMap(Map.of());
        if (counts != null) {
            @SuppressWarnings("unchecked") Map<String, Object> gm = (Map<String, Object>) m.get("giop_calls");
            counts[0] = gm;
        }
        return out;
    }

    /**
     * Five calls with known reply delays on one connection (GIOP 1.2 big-endian, 1.2 little-endian with
     * a reply in two fragments, two outstanding at once answered out of order, a 1.0 request behind a
     * service context, a oneway, a LocateRequest) and a second connection whose reply loses a segment.
     */
    static CallMatcherTest.Conv acceptance(int[][] frames) {
        CallMatcherTest.Conv v = new CallMatcherTest.Conv();
        v.add(0, C, S, CP, SP, v.cseq - 1, 0, 0x02, new byte[0]);
        v.add(100, S, C, SP, CP, v.sseq - 1, v.cseq, 0x12, new byte[0]);
        v.cAck(200);
        frames[0] = new int[] {v.c2s(1_000, giop(2, false, false, 0, body12(5, 3, 100))),      // call 5: 1.0 ms -> 3.5 ms
                v.s2c(3_500, giop(2, false, false, 1, body12(5, 0, 40)))};
        frames[1] = new int[] {v.c2s(10_000, giop(2, true, false, 0, le(body12(6, 3, 2000)))),  // call 6: 10 ms -> 30 ms (2 fragments)
                v.s2c(20_000, giop(2, true, true, 1, le(body12(6, 0, 1000))))};
        v.s2c(30_000, giop(2, true, false, 7, le(body12(6, 0, 500))));
        int req7 = v.c2s(40_000, giop(2, false, false, 0, body12(7, 3, 10)));                 // 7 and 8 outstanding together,
        int req8 = v.c2s(41_000, giop(2, false, false, 0, body12(8, 3, 10)));                 // 8 answered first: 41 -> 45 ms
        frames[3] = new int[] {req8, v.s2c(45_000, giop(2, false, false, 1, body12(8, 0, 10)))};
        frames[2] = new int[] {req7, v.s2c(47_000, giop(2, false, false, 1, body12(7, 0, 10)))};
        v.c2s(50_000, giop(2, false, false, 0, body12(9, 0, 10)));                              // oneway: no record
        frames[4] = new int[] {v.c2s(60_000, giop(0, false, false, 0, body10(10, true, 6, 20))), // GIOP 1.0 behind a context
                v.s2c(66_000, giop(0, false, false, 1, body10(10, true, 6, 20)))};
        frames[5] = new int[] {v.c2s(70_000, giop(2, false, false, 3, body12(11, 0, 4))),     // LocateRequest: 70 -> 71 ms
                v.s2c(71_000, giop(2, false, false, 4, body12(11, 0, 4)))};
        return v;
    }

    static byte[] le(byte[] body12) { // request id little-endian (the header says so)
        ByteBuffer b = ByteBuffer.wrap(body12);
        int id = b.getInt(0);
        b.order(ByteOrder.LITTLE_ENDIAN).putInt(0, id);
        return body12;
    }

    @Test
    @SuppressWarnings("unchecked")
    void knownRepliesGiveExactlyTheKnownCallsAndALostSegmentNeverTimesACall() throws Exception {
        int[][] f = new int[6][];
        CallMatcherTest.Conv v = acceptance(f);
        // a second connection: its reply's middle segment is not in the capture
        int cseq = 9000, sseq = 19000, cp = 40002;
        v.add(80_000, C, S, cp, SP, cseq, sseq, 0x18, giop(2, false, false, 0, body12(1, 3, 10)));
        byte[] reply = giop(2, false, false, 1, body12(1, 0, 3000));
        v.add(90_000, S, C, SP, cp, sseq, cseq + 30, 0x18, java.util.Arrays.copyOfRange(reply, 0, 1000));
        // bytes 1000..2000 lost
        v.add(92_000, S, C, SP, cp, sseq + 2000, cseq + 30, 0x18, java.util.Arrays.copyOfRange(reply, 2000, reply.length));
        Map<String, Object>[] counts = new Map[1];
        List<CallMatcher.Call> calls = run(v.pcap(), counts);
        assertEquals(List.of(5L, 6L, 8L, 7L, 10L, 11L, 1L), calls.stream().map(c -> c.requestId).toList());
        double[][] want = {{1.0, 3.5}, {10.0, 30.0}, {41.0, 45.0}, {40.0, 47.0}, {60.0, 66.0}, {70.0, 71.0}};
        for (int i = 0; i < want.length; i++) {
            CallMatcher.Call c = calls.get(i);
            assertTrue(c.complete, c.toString());
            assertEquals(ms(want[i][0]), c.startNs, "start of " + c.requestId);
            assertEquals(ms(want[i][1]), c.endNs, "end of " + c.requestId);
            assertEquals(C + ":" + CP, c.client());
            assertEquals(S + ":" + SP, c.server());
        }
        assertEquals("giop-locate", calls.get(5).protocol);
        assertEquals(12 + 8 + 2000, calls.get(1).requestBytes);
        assertEquals(12 + 8 + 1000 + 12 + 8 + 500, calls.get(1).replyBytes, "both fragments");
        assertEquals(f[0][0], calls.get(0).callFrame);
        assertEquals(f[0][1], calls.get(0).returnFrame);
        CallMatcher.Call lost = calls.get(6);
        assertFalse(lost.complete);
        assertEquals(-1, lost.endNs);
        assertNull(lost.toMap().get("latency_ms"));
        assertTrue(lost.reason.startsWith("sequence gap in the replies"), lost.reason);
        Map<String, Object> m = counts[0];
        assertEquals(2L, m.get("connections"));
        assertEquals(7L, m.get("calls"));
        assertEquals(6L, m.get("complete"));
        assertEquals(1L, m.get("oneway_requests"));
        assertEquals(1L, m.get("fragments"));
        assertEquals(1L, m.get("sequence_gaps"));
        assertEquals(1L, m.get("locate_requests"));
        assertEquals("giop", calls.get(0).toMap().get("protocol"));
        assertEquals(5L, calls.get(0).toMap().get("request_id"));
    }

    @Test
    void aCallCutByTheCaptureIsIncompleteAndAServiceContextIsSkipped() throws Exception {
        CallMatcherTest.Conv v = new CallMatcherTest.Conv();
        v.c2s(1_000, giop(1, false, false, 0, body10(77, true, 13, 5)));
        List<CallMatcher.Call> calls = run(v.pcap(), null);
        assertEquals(1, calls.size());
        assertEquals(77L, calls.get(0).requestId);
        assertFalse(calls.get(0).complete);
        assertEquals("capture ended before the reply", calls.get(0).reason);
        assertEquals(-1, GiopStream.afterContexts(ByteBuffer.wrap(new byte[] {0, 0, 0, 1, 0}), false));
    }

    /** tshark's GIOP dissector agrees frame for frame on requests and replies (skipped without tshark). */
    @Test
    void tsharkSeesTheSameRequestsAndReplies() throws Exception {
        int[][] f = new int[6][];
        byte[] pcap = acceptance(f).pcap();
        Path p = dir.resolve("t.pcap");
        Files.write(p, pcap);
        Process t;
        try {
            t = new ProcessBuilder("tshark", "-r", p.toString(), "-d", "tcp.port==" + SP + ",giop", "-Y", "giop",
                    "-T", "fields", "-e", "frame.number", "-e", "giop.type", "-e", "giop.request_id").redirectErrorStream(false).start();
        } catch (java.io.IOException e) {
            Assumptions.abort("no tshark");
            return;
        }
        String out = new String(t.getInputStream().readAllBytes());
        assertTrue(t.waitFor(60, TimeUnit.SECONDS));
        List<CallMatcher.Call> calls = run(pcap, null);
        for (CallMatcher.Call c : calls) {
            assertTrue(out.contains(c.callFrame + "\t"), "tshark has no GIOP frame " + c.callFrame + ":\n" + out);
            assertTrue(out.lines().anyMatch(l -> l.startsWith(c.callFrame + "\t") && l.endsWith("\t" + c.requestId)),
                    "request " + c.requestId + " in frame " + c.callFrame + ":\n" + out);
            assertTrue(out.lines().anyMatch(l -> l.startsWith(c.returnFrame + "\t") && l.endsWith("\t" + c.requestId)),
                    "reply " + c.requestId + " in frame " + c.returnFrame + ":\n" + out);
        }
    }

    /** A capture of {@code n} GIOP 1.2 requests (reply expected) on one connection, {@code perSegment} to a segment, never answered. */
    static byte[] unanswered(int n, int perSegment) {
        CallMatcherTest.Conv v = new CallMatcherTest.Conv();
        v.add(0, C, S, CP, SP, v.cseq - 1, 0, 0x02, new byte[0]);
        for (int id = 0; id < n; id += perSegment) {
            java.io.ByteArrayOutputStream seg = new java.io.ByteArrayOutputStream();
            for (int k = id; k < Math.min(n, id + perSegment); k++) seg.writeBytes(giop(2, false, false, 0, body12(k, 3, 0)));
            v.c2s(1_000 + id, seg.toByteArray());
        }
        return v.pcap();
    }

    @Test
    void unansweredRequestsStopAtTheLimitWithAnErrorNamingIt() throws Exception {
        Path p = dir.resolve("unanswered.pcap");
        Files.write(p, unanswered(5_000, 50));
        GiopMatcher g = new GiopMatcher(100, 1_000);
        Summary s = new Summary(new Classifier(TrafficClass.RmiMode.FLOW, 100, 60_000_000_000L), C, 1.0, null).giop(g);
        CallLimitException e = org.junit.jupiter.api.Assertions.assertThrows(CallLimitException.class, () -> PcapFileReader.read(p, s));
        assertTrue(e.getMessage().startsWith("more than 1000 GIOP requests wait for their replies at once (" + C + ":" + CP
                + " -> " + S + ":" + SP + ", frame 22)") && e.getMessage().contains("--max-open-calls"), e.getMessage());
        // under the limit the same requests are counted, and closed incomplete at the end
        GiopMatcher big = new GiopMatcher(100, 5_000);
        List<CallMatcher.Call> out = GiopMatcher.collect(big);
        PcapFileReader.read(p, new Summary(new Classifier(TrafficClass.RmiMode.FLOW, 100, 60_000_000_000L), C, 1.0, null).giop(big));
        big.finish();
        assertEquals(5_000, out.size());
        assertTrue(out.stream().noneMatch(c -> c.complete));
    }

    @Test
    void answeredRequestsFreeTheirPlaceAndShortHeadersKeepSmallBuffers() throws Exception {
        CallMatcherTest.Conv v = new CallMatcherTest.Conv();
        v.add(0, C, S, CP, SP, v.cseq - 1, 0, 0x02, new byte[0]);
        for (int id = 0; id < 3_000; id++) { // 3000 calls one after another, never more than one open
            v.c2s(1_000 + 10L * id, giop(2, false, false, 0, body12(id, 3, 0)));
            v.s2c(1_005 + 10L * id, giop(2, false, false, 1, body12(id, 0, 0)));
        }
        Map<String, Object>[] counts = new Map[1];
        Path p = dir.resolve("answered.pcap");
        Files.write(p, v.pcap());
        GiopMatcher g = new GiopMatcher(100, 2);
        List<CallMatcher.Call> out = GiopMatcher.collect(g);
        PcapFileReader.read(p, new Summary(new Classifier(TrafficClass.RmiMode.FLOW, 100, 60_000_000_000L), C, 1.0, null).giop(g));
        assertEquals(3_000, out.size());
        assertTrue(out.stream().allMatch(c -> c.complete));
        // a GIOP 1.2 header and id need 20 bytes: the streams' buffers never grew to the 1.0 prefix (2060 bytes)
        for (GiopMatcher.Conn c : g.conns.values()) for (GiopStream d : c.dirs) assertTrue(d.head.length <= 24, "" + d.head.length);
    }
}
