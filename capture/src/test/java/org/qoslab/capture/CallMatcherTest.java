package org.qoslab.capture;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** JRMP call/return matching on crafted captures with known calls (and tshark's rmi dissector on the same file). */
class CallMatcherTest {
    @TempDir Path dir;

    static final long T0 = 1_700_000_000_000_000_000L;
    static final String C = "198.18.0.1", S = "198.18.0.2";
    static final int CP = 40000, SP = 1100;

    /** One TCP connection written frame by frame; times in microseconds after T0. */
    static final class Conv {
        final List<byte[]> frames = new ArrayList<>();
        final List<Long> ts = new ArrayList<>();
        int cseq = 1000, sseq = 5000;

        int add(long us, String src, String dst, int sport, int dport, int seq, int ack, int flags, byte[] p) {
            frames.add(Frames.ether(0x0800, Frames.ipv4(6, src, dst, 0, Frames.tcp(sport, dport, seq, ack, flags, p), 0)));
            ts.add(T0 + us * 1000);
            return frames.size();
        }

        /** Client data (new bytes); returns the frame number (1-based). */
        int c2s(long us, byte[] p) { int f = add(us, C, S, CP, SP, cseq, sseq, 0x18, p); cseq += p.length; return f; }

        int s2c(long us, byte[] p) { int f = add(us, S, C, SP, CP, sseq, cseq, 0x18, p); sseq += p.length; return f; }

        int cAck(long us) { return add(us, C, S, CP, SP, cseq, sseq, 0x10, new byte[0]); }

        int sAck(long us) { return add(us, S, C, SP, CP, sseq, cseq, 0x10, new byte[0]); }

        /** The three-way handshake and the JRMP StreamProtocol handshake, ending at 1.4 ms. */
        Conv handshake() {
            add(0, C, S, CP, SP, cseq - 1, 0, 0x02, new byte[0]);
            add(100, S, C, SP, CP, sseq - 1, cseq, 0x12, new byte[0]);
            cAck(200);
            c2s(1000, Frames.JRMI);
            s2c(1200, cat(new byte[] {0x4e}, utf(C), new byte[] {0, 0, (byte) 0x9c, 0x40}));
            c2s(1400, cat(utf(C), new byte[] {0, 0, 0, 0}));
            return this;
        }

        byte[] pcap() { return Frames.pcapNs(1, frames, ts); }
    }

    static byte[] utf(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return cat(new byte[] {(byte) (b.length >> 8), (byte) b.length}, b);
    }

    static byte[] cat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) n += p.length;
        byte[] out = new byte[n];
        int i = 0;
        for (byte[] p : parts) { System.arraycopy(p, 0, out, i, p.length); i += p.length; }
        return out;
    }

    /** A message: its type byte then {@code body} filler bytes ('x', which no JRMP message starts with). */
    static byte[] msg(int type, int body) {
        byte[] b = new byte[1 + body];
        Arrays.fill(b, (byte) 'x');
        b[0] = (byte) type;
        return b;
    }

    static byte[] body(int n) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) 'x');
        return b;
    }

    /** The acceptance capture: handshake, three complete calls (a retransmission and an RTO in the second), a ping, a DGC ack, a fourth call cut by the capture's end. */
    static final class Acceptance {
        final Conv v = new Conv().handshake();
        final int[] callFrames = new int[4], returnFrames = new int[4];
        int retransmittedFrame, pingFrame, pingAckFrame, dgcFrame;

        Acceptance() {
            // call 1: 10.0 ms -> 15.5 ms, request 61 + 40 bytes, reply 100 + 100 bytes
            callFrames[0] = v.c2s(10_000, msg(0x50, 60));
            v.c2s(10_500, body(40));
            v.sAck(11_000);
            returnFrames[0] = v.s2c(15_000, msg(0x51, 99));
            v.s2c(15_500, body(100));
            v.cAck(16_000);
            pingFrame = v.c2s(20_000, new byte[] {0x52});
            pingAckFrame = v.s2c(20_300, new byte[] {0x53});
            v.cAck(20_400);
            // call 2: 30 ms -> 250 ms: the reply's second segment is sent again after 214.8 ms of silence
            callFrames[1] = v.c2s(30_000, msg(0x50, 49));
            returnFrames[1] = v.s2c(35_000, msg(0x51, 199));
            int seq = v.sseq;
            v.s2c(35_100, body(200));
            v.add(35_200, C, S, CP, SP, v.cseq, seq, 0x10, new byte[0]); // the client acknowledges only the first 200
            retransmittedFrame = v.add(250_000, S, C, SP, CP, seq, v.cseq, 0x18, body(200));
            v.cAck(250_300);
            dgcFrame = v.c2s(260_000, msg(0x54, 20));
            // call 3: 300 ms -> 302 ms
            callFrames[2] = v.c2s(300_000, msg(0x50, 29));
            returnFrames[2] = v.s2c(302_000, msg(0x51, 49));
            v.cAck(302_500);
            // call 4: its reply is under way when the capture ends (nothing acknowledged)
            callFrames[3] = v.c2s(400_000, msg(0x50, 29));
            returnFrames[3] = v.s2c(404_000, msg(0x51, 99));
            v.s2c(404_100, body(100));
        }
    }

    static final class Run {
        Summary summary;
        List<CallMatcher.Call> calls;
    }

    Run classify(byte[] file, long quietNs) throws Exception {
        Path p = dir.resolve("c" + System.nanoTime() + ".pcap");
        Files.write(p, file);
        CallMatcher m = new CallMatcher(100, 300_000_000_000L, quietNs);
        Run r = new Run();
        r.calls = CallMatcher.collect(m);
        r.summary = new Summary(new Classifier(TrafficClass.RmiMode.FLOW, 100, 60_000_000_000L), C, 1.0, null).calls(m);
        PcapFileReader.read(p, r.summary);
        r.summary.toMap(Map.of()); // ends the capture: open calls are closed
        return r;
    }

    static long ms(double v) { return T0 + Math.round(v * 1e6); }

    @Test
    void acceptanceCaptureGivesExactlyTheKnownCalls() throws Exception { // long: one capture, every field of its four calls asserted
        Acceptance a = new Acceptance();
        Run r = classify(a.v.pcap(), 1_000_000_000L);
        List<CallMatcher.Call> calls = r.calls;
        assertEquals(4, calls.size(), calls.toString());

        CallMatcher.Call c1 = calls.get(0);
        assertEquals("198.18.0.1:40000", c1.client());
        assertEquals("198.18.0.2:1100", c1.server());
        assertEquals(1, c1.index);
        assertEquals(ms(10), c1.startNs);
        assertEquals(ms(15.5), c1.endNs);
        assertEquals(101, c1.requestBytes);
        assertEquals(200, c1.replyBytes);
        assertEquals(4, c1.segments);
        assertEquals(0, c1.retransmitted);
        assertFalse(c1.rto);
        assertTrue(c1.complete, c1.reason);
        assertEquals(Math.round(4.5e6), c1.serverNs);
        assertEquals(a.callFrames[0], c1.callFrame);
        assertEquals(a.returnFrames[0], c1.returnFrame);

        CallMatcher.Call c2 = calls.get(1);
        assertEquals(ms(30), c2.startNs);
        assertEquals(ms(250), c2.endNs, "the return ends with the retransmitted segment the client waited for");
        assertEquals(50, c2.requestBytes);
        assertEquals(400, c2.replyBytes, "retransmitted bytes are not counted twice");
        assertEquals(4, c2.segments);
        assertEquals(1, c2.retransmitted);
        assertTrue(c2.rto);
        assertEquals(Math.round(214.8e6), c2.maxGapNs);
        assertTrue(c2.complete, c2.reason);

        CallMatcher.Call c3 = calls.get(2);
        assertEquals(ms(300), c3.startNs);
        assertEquals(ms(302), c3.endNs);
        assertEquals(30, c3.requestBytes);
        assertEquals(50, c3.replyBytes);
        assertEquals(0, c3.retransmitted);
        assertFalse(c3.rto);
        assertTrue(c3.complete, c3.reason);
        assertTrue(c3.maxGapNs < 1_000_000L, "the server's own 2 ms are not a gap inside the call: " + c3.maxGapNs);

        CallMatcher.Call c4 = calls.get(3);
        assertEquals(ms(400), c4.startNs);
        assertFalse(c4.complete);
        assertEquals(-1, c4.endNs, "an incomplete call is never given an end time");
        assertNull(c4.toMap().get("latency_ms"));
        assertTrue(c4.reason.contains("not fully acknowledged"), c4.reason);
        assertEquals(200, c4.replyBytes);
        assertEquals(a.callFrames[3], c4.callFrame);

        @SuppressWarnings("unchecked")
        Map<String, Object> sum = (Map<String, Object>) r.summary.toMap(Map.of()).get("calls");
        assertEquals(1L, sum.get("connections"));
        assertEquals(4L, sum.get("calls"));
        assertEquals(3L, sum.get("complete"));
        assertEquals(1L, sum.get("incomplete"));
        assertEquals(1L, sum.get("with_rto"));
        assertEquals(1L, sum.get("retransmitted_segments"));
        assertEquals(1L, sum.get("pings"));
        assertEquals(1L, sum.get("ping_acks"));
        assertEquals(1L, sum.get("dgc_acks"));
        assertEquals(0L, sum.get("sequence_gaps"));
        assertEquals(0L, sum.get("desynchronised_connections"));

        // the JSON line
        Map<String, Object> m = c1.toMap();
        assertEquals(5.5, (Double) m.get("latency_ms"), 1e-9);
        assertEquals(ms(15.5), m.get("end_ns"));
    }

    @Test
    void theCallCutByTheCaptureIsCompleteOnlyWhenAcknowledgedAndQuiet() throws Exception {
        Acceptance a = new Acceptance();
        a.v.cAck(404_200); // now the client acknowledged every reply byte
        a.v.add(404_300 + 2_000_000, S, C, SP, CP, a.v.sseq, a.v.cseq, 0x10, new byte[0]); // 2 s later: a keep-alive-like ACK
        List<CallMatcher.Call> quiet1s = classify(a.v.pcap(), 1_000_000_000L).calls;
        assertTrue(quiet1s.get(3).complete, quiet1s.get(3).reason);
        assertEquals(ms(404.1), quiet1s.get(3).endNs);
        List<CallMatcher.Call> quiet3s = classify(a.v.pcap(), 3_000_000_000L).calls;
        assertFalse(quiet3s.get(3).complete);
        assertTrue(quiet3s.get(3).reason.contains("quiet"), quiet3s.get(3).reason);
    }

    @Test
    void finAfterAFullReplyClosesTheCallComplete() throws Exception {
        Conv v = new Conv().handshake();
        v.c2s(10_000, msg(0x50, 99));
        v.s2c(12_000, msg(0x51, 299));
        v.add(13_000, C, S, CP, SP, v.cseq, v.sseq, 0x11, new byte[0]); // FIN+ACK, all acknowledged
        List<CallMatcher.Call> calls = classify(v.pcap(), 1_000_000_000L).calls;
        assertEquals(1, calls.size());
        assertTrue(calls.get(0).complete, calls.get(0).reason);
        assertEquals(ms(12), calls.get(0).endNs);
        assertEquals(100, calls.get(0).requestBytes);
        assertEquals(300, calls.get(0).replyBytes);
    }

    @Test
    void aGapInTheReplyMakesTheCallIncompleteUnlessTheMissingSegmentArrivesLater() throws Exception {
        for (boolean filled : new boolean[] {false, true}) {
            Conv v = new Conv().handshake();
            v.c2s(10_000, msg(0x50, 9));
            v.s2c(12_000, msg(0x51, 99));
            int hole = v.sseq;
            v.sseq += 100; // the capture never sees bytes [hole, hole+100) ...
            v.s2c(12_200, body(100));
            if (filled) v.add(12_300, S, C, SP, CP, hole, v.cseq, 0x18, body(100)); // ... or sees them late
            v.cAck(12_400);
            v.c2s(20_000, msg(0x50, 9));
            v.s2c(21_000, msg(0x51, 9));
            v.cAck(21_100);
            v.add(21_200, C, S, CP, SP, v.cseq, v.sseq, 0x11, new byte[0]);
            Run r = classify(v.pcap(), 1_000_000_000L);
            List<CallMatcher.Call> calls = r.calls;
            assertEquals(2, calls.size(), calls.toString());
            CallMatcher.Call c = calls.get(0);
            assertEquals(filled, c.complete, String.valueOf(c.reason));
            if (filled) {
                assertEquals(ms(12.3), c.endNs);
                assertEquals(300, c.replyBytes);
                assertEquals(1, c.outOfOrder);
                assertEquals(0, c.retransmitted);
            } else {
                assertEquals(-1, c.endNs);
                assertTrue(c.reason.contains("gap"), c.reason);
            }
            assertTrue(calls.get(1).complete, "the next call on the connection is matched again: " + calls.get(1).reason);
            assertEquals(ms(20), calls.get(1).startNs);
        }
    }

    @Test
    void aLostCallSegmentDesynchronisesUntilTheNextCallAfterServerData() throws Exception {
        Conv v = new Conv().handshake();
        v.cseq += 50; // the Call's first segment was not captured
        v.c2s(10_100, body(30));
        v.s2c(12_000, msg(0x51, 99));
        v.cAck(12_100);
        v.c2s(20_000, msg(0x50, 9)); // picks up here
        v.s2c(21_000, msg(0x51, 9));
        v.add(21_200, C, S, CP, SP, v.cseq, v.sseq, 0x11, new byte[0]);
        Run r = classify(v.pcap(), 1_000_000_000L);
        assertEquals(1, r.calls.size(), r.calls.toString());
        assertEquals(ms(20), r.calls.get(0).startNs);
        assertEquals(ms(21), r.calls.get(0).endNs);
        @SuppressWarnings("unchecked")
        Map<String, Object> sum = (Map<String, Object>) r.summary.toMap(Map.of()).get("calls");
        assertEquals(1L, sum.get("desynchronised_connections"));
        assertEquals(1L, sum.get("sequence_gaps"));
    }

    @Test
    void singleOpProtocolAndSplitHandshakeSegments() throws Exception {
        Conv v = new Conv();
        v.c2s(0, cat(new byte[] {0x4a, 0x52, 0x4d, 0x49, 0, 2, 0x4c}, msg(0x50, 20))); // header and call in one segment
        v.s2c(5_000, msg(0x51, 30));
        v.add(6_000, C, S, CP, SP, v.cseq, v.sseq, 0x11, new byte[0]);
        List<CallMatcher.Call> calls = classify(v.pcap(), 1_000_000_000L).calls;
        assertEquals(1, calls.size());
        assertTrue(calls.get(0).complete, calls.get(0).reason);
        assertEquals(21, calls.get(0).requestBytes);
        // StreamProtocol with the server's ProtocolAck split inside its endpoint's length
        Conv w = new Conv();
        w.c2s(0, Frames.JRMI);
        byte[] ack = cat(new byte[] {0x4e}, utf(S), new byte[] {0, 0, 4, 0x4c});
        w.s2c(100, Arrays.copyOfRange(ack, 0, 2));
        w.s2c(200, Arrays.copyOfRange(ack, 2, ack.length));
        w.c2s(300, cat(utf(C), new byte[] {0, 0, 0, 0}, msg(0x50, 5))); // endpoint and call coalesced
        w.s2c(1_000, msg(0x51, 5));
        w.add(2_000, C, S, CP, SP, w.cseq, w.sseq, 0x11, new byte[0]);
        calls = classify(w.pcap(), 1_000_000_000L).calls;
        assertEquals(1, calls.size());
        assertEquals(T0 + 300_000, calls.get(0).startNs);
        assertEquals(6, calls.get(0).requestBytes);
        assertTrue(calls.get(0).complete);
    }

    @Test
    void nonJrmpTrafficIsNotTracked() throws Exception {
        Conv v = new Conv();
        v.c2s(0, "GET / HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        v.s2c(100, msg(0x51, 10));
        v.c2s(200, msg(0x50, 10));
        Run r = classify(v.pcap(), 1_000_000_000L);
        assertTrue(r.calls.isEmpty());
        assertEquals(0, r.summary.calls().tracked());
    }

    // ------------------------------------------------------------------------------------ tshark

    @Test
    void tsharksRmiDissectorAgreesOnCallAndReturnFrames() throws Exception {
        Path tshark = Path.of("/usr/bin/tshark");
        Assumptions.assumeTrue(Files.isExecutable(tshark), "tshark not installed");
        Acceptance a = new Acceptance();
        Path p = dir.resolve("jrmp.pcap");
        Files.write(p, a.v.pcap());
        Process pr = new ProcessBuilder(tshark.toString(), "-n", "-r", p.toString(), "-d", "tcp.port==" + SP + ",rmi",
                "-T", "fields", "-E", "separator=;", "-e", "frame.number", "-e", "rmi.outputstream.message",
                "-e", "rmi.inputstream.message", "-e", "tcp.analysis.retransmission", "-e", "frame.protocols")
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(pr.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(pr.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, pr.exitValue(), out);
        TreeSet<Integer> tCalls = new TreeSet<>(), tReturns = new TreeSet<>(), tRetx = new TreeSet<>();
        int pings = 0, pingAcks = 0, dgc = 0;
        for (String line : out.split("\n")) {
            if (line.isBlank()) continue;
            String[] f = line.split(";", -1);
            int n = Integer.parseInt(f[0]);
            if (f[1].equals("0x50")) tCalls.add(n);
            if (f[1].equals("0x52")) pings++;
            if (f[1].equals("0x54")) dgc++;
            if (f[2].equals("0x51")) tReturns.add(n);
            if (f[2].equals("0x53")) pingAcks++;
            if (!f[3].isEmpty()) tRetx.add(n);
        }
        Run r = classify(a.v.pcap(), 1_000_000_000L);
        TreeSet<Integer> ours = new TreeSet<>(), ourReturns = new TreeSet<>();
        for (CallMatcher.Call c : r.calls) {
            ours.add((int) c.callFrame);
            if (c.returnFrame > 0) ourReturns.add((int) c.returnFrame);
        }
        assertEquals(tCalls, ours, "frames starting a Call (tshark rmi.outputstream.message == 0x50)");
        assertEquals(tReturns, ourReturns, "frames starting a ReturnData (tshark rmi.inputstream.message == 0x51)");
        assertEquals(new TreeSet<>(List.of(a.retransmittedFrame)), tRetx, "tshark's TCP analysis flags the same retransmission");
        CallMatcher m = r.summary.calls();
        assertEquals(pings, m.pings);
        assertEquals(pingAcks, m.pingAcks);
        assertEquals(dgc, m.dgcAcks);
        assertEquals(1, pings);
        assertEquals(1, dgc);
    }
}
