package org.qoslab.capture;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** pcap/pcapng reading, bad input and a seeded mutation fuzz test. */
class ReaderTest {
    @TempDir Path dir;

    static List<byte[]> sample() {
        List<byte[]> f = new ArrayList<>();
        f.add(Frames.tcpFrame("198.18.0.1", "198.18.0.2", 40000, 1100, 0xa0, Frames.JRMI));
        f.add(Frames.tcpFrame("198.18.0.2", "198.18.0.1", 1100, 40000, 0xa0, new byte[300]));
        f.add(Frames.ether(0x0800, Frames.ipv4(6, "198.18.0.1", "198.18.0.2", 0, Frames.tcp(40000, 1100, 0x10, new byte[0]), 0)));
        f.add(Frames.ether(0x0800, Frames.ipv4(17, "198.18.0.5", "198.18.0.1", 0, Frames.udp(9, 10001, new byte[1400]), 0)));
        f.add(Frames.tcpFrame("198.18.0.3", "198.18.0.1", 41000, 22, 0, new byte[48]));
        return f;
    }

    Summary classify(byte[] file) throws Exception {
        Path p = dir.resolve("f" + System.nanoTime());
        Files.write(p, file);
        Summary s = new Summary(new Classifier(TrafficClass.RmiMode.FLOW, 100, 60_000_000_000L), "198.18.0.1", 1.0, null);
        PcapFileReader.read(p, s);
        return s;
    }

    @Test
    void pcapAndPcapngGiveTheSameClasses() throws Exception {
        for (byte[] file : List.of(Frames.pcap(1, sample(), null), Frames.pcapng(1, sample()))) {
            Summary s = classify(file);
            assertEquals(5, s.total());
            assertEquals(2, s.packetsOf(TrafficClass.RMI));
            assertEquals(1, s.packetsOf(TrafficClass.CONTROL_ACK));
            assertEquals(1, s.packetsOf(TrafficClass.UDP));
            assertEquals(1, s.packetsOf(TrafficClass.SSH));
        }
        Summary cut = classify(Frames.pcap(1, sample(), new int[] {9999, 9999, 9999, 64, 9999}));
        assertEquals(1, cut.packetsOf(TrafficClass.SHORT_FRAME));
        @SuppressWarnings("unchecked")
        var rmi = (java.util.Map<String, Object>) ((java.util.Map<String, Object>) cut.toMap(java.util.Map.of()).get("classes")).get("rmi");
        assertEquals(java.util.Map.of("40", 2L), rmi.get("dscp"));
        assertEquals(java.util.Map.of("packets", 1L, "bytes", (long) sample().get(1).length), rmi.get("in"));
    }

    @Test
    void badFilesGiveClearErrorsNeverCrashes() throws Exception {
        Path empty = dir.resolve("empty.pcap");
        Files.write(empty, new byte[0]);
        CaptureFormatException e = assertThrows(CaptureFormatException.class, () -> PcapFileReader.read(empty, noop()));
        assertTrue(e.getMessage().contains("empty.pcap") && e.getMessage().contains("0 bytes"), e.getMessage());
        Path garbage = dir.resolve("garbage.pcap");
        Files.write(garbage, "this is not a capture file at all, clearly".getBytes());
        e = assertThrows(CaptureFormatException.class, () -> PcapFileReader.read(garbage, noop()));
        assertTrue(e.getMessage().contains("wrong magic"), e.getMessage());
        assertThrows(CaptureFormatException.class, () -> PcapFileReader.read(dir.resolve("missing.pcap"), noop()));
        // truncated in the middle of a packet: what came before is kept, the problem is named
        byte[] full = Frames.pcap(1, sample(), null);
        Path trunc = dir.resolve("trunc.pcap");
        Files.write(trunc, java.util.Arrays.copyOf(full, full.length - 100));
        PcapFileReader.Result r = PcapFileReader.read(trunc, noop());
        assertTrue(r.truncated && r.packets == 4 && r.problem.contains("cut"), r.problem);
        // a record claiming 2 GB
        byte[] huge = full.clone();
        huge[24 + 8] = (byte) 0xff; huge[24 + 9] = (byte) 0xff; huge[24 + 10] = (byte) 0xff; huge[24 + 11] = 0x7f;
        Path h = dir.resolve("huge.pcap");
        Files.write(h, huge);
        r = PcapFileReader.read(h, noop());
        assertTrue(r.truncated && r.packets == 0 && r.problem.contains("claims"), r.problem);
        // snaplen 0 in the header and zero-length records are read without trouble
        byte[] zero = Frames.pcap(1, List.of(new byte[0], new byte[0]), null);
        Path z = dir.resolve("zero.pcap");
        Files.write(z, zero);
        assertEquals(2, PcapFileReader.read(z, noop()).packets);
    }

    @Test
    void aPcapngBlockShorterThanItsTypeIsACutNeverAnIndexError() throws Exception {
        byte[] whole = Frames.pcapng(1, sample()); // SHB 28, IDB 32, then EPBs
        for (int type : new int[] {0x0A0D0D0A, 1, 3, 5, 6}) {
            for (int len = 12; len < PcapFileReader.minBlock(type); len += 4) {
                java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(len).order(java.nio.ByteOrder.BIG_ENDIAN);
                b.putInt(type).putInt(len);
                if (type == 0x0A0D0D0A && len >= 12) b.putInt(0x1A2B3C4D);
                b.putInt(len - 4, len);
                for (boolean atEnd : new boolean[] {true, false}) { // the last block, or one with packets after it
                    byte[] f = DecodeTest.cat(java.util.Arrays.copyOf(whole, 60), b.array(), atEnd ? new byte[0]
                            : java.util.Arrays.copyOfRange(whole, 60, whole.length));
                    Path p = dir.resolve("short.pcapng");
                    Files.write(p, f);
                    if (type == 0x0A0D0D0A && len == 12) { // no room for the byte-order magic: a format error at 60
                        CaptureFormatException e = assertThrows(CaptureFormatException.class, () -> PcapFileReader.read(p, noop()));
                        assertTrue(e.getMessage().contains("offset 60"), e.getMessage());
                        continue;
                    }
                    PcapFileReader.Result r = PcapFileReader.read(p, noop());
                    assertTrue(r.truncated && r.problem.contains("offset 60") && r.problem.contains("at least"),
                            "type " + type + " len " + len + ": " + r.problem);
                    assertEquals(0, r.packets);
                }
            }
        }
    }

    @Test
    void aNamedPipeOrDeviceIsRefusedWithoutBeingOpened() throws Exception {
        Path fifo = dir.resolve("pipe.pcap");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        long t0 = System.nanoTime();
        CaptureFormatException e = assertThrows(CaptureFormatException.class, () -> PcapFileReader.read(fifo, noop()));
        assertTrue(e.getMessage().startsWith(fifo + ": a named pipe") && e.getMessage().contains("regular file"), e.getMessage());
        e = assertThrows(CaptureFormatException.class, () -> PcapFileReader.read(Path.of("/dev/zero"), noop()));
        assertTrue(e.getMessage().contains("not a regular file"), e.getMessage());
        e = assertThrows(CaptureFormatException.class, () -> PcapFileReader.read(dir, noop()));
        assertTrue(e.getMessage().contains("a folder"), e.getMessage());
        assertTrue((System.nanoTime() - t0) / 1e9 < 5, "took " + (System.nanoTime() - t0) / 1e9 + " s");
    }

    /** Seeds for the mutation test: Ethernet pcap, big-endian pcapng, Linux cooked, and every encapsulation. */
    static byte[][] seeds() {
        List<byte[]> mixed = new ArrayList<>(sample());
        byte[] ip4 = Frames.ipv4(6, "198.18.0.1", "198.18.0.2", 0, Frames.tcp(4, 5, 0x18, new byte[40]), 0);
        mixed.add(Frames.ether(0x8100, DecodeTest.cat(DecodeTest.bytes(0, 5, 0x88, 0xa8, 0, 6, 8, 0), ip4)));
        mixed.add(Frames.ether(0x86dd, DecodeTest.ipv6(0, 0, DecodeTest.ext(44, DecodeTest.frag6(6, 0, true, 3,
                Frames.tcp(4, 5, 0x18, new byte[40]))))));
        mixed.add(Frames.ether(0x86dd, DecodeTest.ipv6(44, 0, DecodeTest.frag6(6, 6, false, 3, new byte[40]))));
        mixed.add(Frames.ether(0x0800, Frames.ipv4(47, "198.18.1.1", "198.18.1.2", 0,
                DecodeTest.cat(DecodeTest.bytes(0x10, 0, 0x88, 0xbe, 0, 0, 0, 1), new byte[8], Frames.ether(0x0800, ip4)), 0)));
        mixed.add(Frames.ether(0x0800, Frames.ipv4(41, "198.18.1.1", "198.18.1.2", 0, DecodeTest.ipv6(6, 0,
                Frames.tcp(4, 1099, 0x18, new byte[30])), 0)));
        return new byte[][] {Frames.pcap(1, sample(), null), Frames.pcapng(1, sample()), Frames.pcap(113, sample(), null),
            Frames.pcap(1, mixed, null), Frames.pcapng(1, mixed)};
    }

    @Test
    void aThousandMutatedFilesNeitherThrowNorRunLongNorWriteMuch() throws Exception {
        Random rnd = new Random(20261123L);
        byte[][] seeds = seeds();
        Path p = dir.resolve("fuzz.pcap");
        int errors = 0;
        double slowest = 0;
        long largest = 0;
        for (int i = 0; i < 1000; i++) {
            byte[] f = mutate(seeds[i % seeds.length].clone(), rnd);
            Files.write(p, f);
            Path out = dir.resolve("out" + (i % 4));
            long t0 = System.nanoTime();
            double bin = i % 10 == 0 ? 0.001 : 1.0; // every tenth with 1 ms bins: the series' worst case
            Summary s = new Summary(new Classifier(TrafficClass.RmiMode.FLOW, 100, 1_000_000_000L), "198.18.0.1", bin, null);
            try {
                PcapFileReader.read(p, s);
                if (bin < 1) { // the 1 ms files write their output (the series' worst case); the rest build the summary
                    s.write(out, java.util.Map.of(), 10);
                    largest = Math.max(largest, Files.size(out.resolve("timeseries.csv")) + Files.size(out.resolve("summary.json")));
                } else {
                    s.toMap(java.util.Map.of());
                }
            } catch (CaptureFormatException expected) {
                errors++;
            }
            slowest = Math.max(slowest, (System.nanoTime() - t0) / 1e9);
        }
        assertTrue(errors > 0 && errors < 1000, "errors " + errors);
        assertTrue(slowest < 10, "slowest file took " + slowest + " s");
        assertTrue(largest < 1_000_000, "largest output " + largest + " bytes");
    }

    /** 1-8 random edits: a byte, a cut, a 0xffffffff word, appended garbage, or a timestamp years away. */
    static byte[] mutate(byte[] f, Random rnd) {
        int edits = 1 + rnd.nextInt(8);
        for (int k = 0; k < edits && f.length > 0; k++) {
            switch (rnd.nextInt(5)) {
                case 0: f[rnd.nextInt(f.length)] = (byte) rnd.nextInt(256); break;
                case 1: f = java.util.Arrays.copyOf(f, rnd.nextInt(f.length + 1)); break;
                case 2: {
                    int at = rnd.nextInt(Math.max(1, f.length - 4));
                    if (f.length >= 4) for (int j = 0; j < 4; j++) f[at + j] = (byte) 0xff;
                    break;
                }
                case 3: {
                    byte[] g = java.util.Arrays.copyOf(f, f.length + 16);
                    for (int j = f.length; j < g.length; j++) g[j] = (byte) rnd.nextInt(256);
                    f = g;
                    break;
                }
                default: { // any 4-byte word set to a random value: hits seconds fields of records
                    int at = rnd.nextInt(Math.max(1, f.length - 4)) & ~3;
                    if (f.length >= at + 4) java.nio.ByteBuffer.wrap(f).putInt(at, rnd.nextInt());
                }
            }
        }
        return f;
    }

    @Test
    void aTimestampYearsAwayIsReportedAndDoesNotStretchTheSeries() throws Exception {
        List<byte[]> frames = new ArrayList<>();
        for (int i = 0; i < 2000; i++) frames.add(sample().get(i % 5));
        byte[] file = Frames.pcap(1, frames, null);  // 2000 records, one per second from 1700000000
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(file).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.putInt(24, 0x7fffffff);  // the first record's seconds: year 2038
        Path p = dir.resolve("years.pcap");
        Files.write(p, file);
        Path out = dir.resolve("years");
        long t0 = System.nanoTime();
        Summary s = new Summary(new Classifier(TrafficClass.RmiMode.FLOW, 100, 1_000_000_000L), null, 0.001, null);
        assertEquals(2000, PcapFileReader.read(p, s).packets);
        s.write(out, java.util.Map.of(), 10);
        double secs = (System.nanoTime() - t0) / 1e9;
        long bytes = Files.size(out.resolve("timeseries.csv")) + Files.size(out.resolve("summary.json"));
        assertTrue(secs < 2, secs + " s");
        assertTrue(bytes < 1_000_000, bytes + " bytes");
        List<String> w = s.warnings();
        assertTrue(w.get(0).startsWith("1 packet(s) with timestamps far outside"), w.toString());
        @SuppressWarnings("unchecked")
        var time = (java.util.Map<String, Object>) s.toMap(java.util.Map.of()).get("time");
        assertEquals(1L, time.get("outlier_packets"));
        assertEquals(List.of(2147483647.0), time.get("outlier_examples_epoch_s"));
        // the series covers the 1999 seconds of the capture's own range, not 2038
        assertEquals(1999.998, (Double) s.toMap(java.util.Map.of()).get("duration_s"), 1e-6);
        assertEquals("sparse", time.get("series_mode")); // 1 ms bins: 2 M dense rows for 1999 packets
        // with 1 s bins the same file is written dense, one row per second
        Summary d = new Summary(new Classifier(TrafficClass.RmiMode.FLOW, 100, 1_000_000_000L), null, 1.0, null);
        PcapFileReader.read(p, d);
        d.write(out, java.util.Map.of(), 10);
        @SuppressWarnings("unchecked")
        long rows = (Long) ((java.util.Map<String, Object>) d.toMap(java.util.Map.of()).get("time")).get("series_rows");
        assertTrue(rows >= 2000 && rows <= 2001, "rows " + rows);
        assertEquals(rows + 1, Files.readAllLines(out.resolve("timeseries.csv")).size());
    }

    static PacketSink noop() { return (ts, l, b, o, c, orig) -> { }; }
}
