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
    void thousandsOfMutatedFilesNeverThrowAnythingElse() throws Exception {
        Random rnd = new Random(20261122L);
        byte[][] seeds = {Frames.pcap(1, sample(), null), Frames.pcapng(1, sample()), Frames.pcap(113, sample(), null)};
        Path p = dir.resolve("fuzz.pcap");
        int errors = 0;
        for (int i = 0; i < 3000; i++) {
            byte[] f = seeds[i % seeds.length].clone();
            int edits = 1 + rnd.nextInt(8);
            for (int k = 0; k < edits; k++) {
                switch (rnd.nextInt(4)) {
                    case 0: f[rnd.nextInt(f.length)] = (byte) rnd.nextInt(256); break;
                    case 1: f = java.util.Arrays.copyOf(f, rnd.nextInt(f.length + 1)); break;
                    case 2: { int at = rnd.nextInt(Math.max(1, f.length - 4)); if (f.length >= 4) { f[at] = (byte) 0xff; f[at + 1] = (byte) 0xff; f[at + 2] = (byte) 0xff; f[at + 3] = (byte) 0xff; } break; }
                    default: { byte[] g = new byte[f.length + 16]; System.arraycopy(f, 0, g, 0, f.length); rnd.nextBytes(java.util.Arrays.copyOfRange(g, f.length, g.length)); f = g; }
                }
                if (f.length == 0) break;
            }
            Files.write(p, f);
            Summary s = new Summary(new Classifier(TrafficClass.RmiMode.FLOW, 100, 1_000_000_000L), "198.18.0.1", 1.0, null);
            try {
                PcapFileReader.read(p, s);
                s.toMap(java.util.Map.of());
            } catch (CaptureFormatException expected) {
                errors++;
            }
        }
        assertTrue(errors > 0 && errors < 3000, "errors " + errors);
    }

    static PacketSink noop() { return (ts, l, b, o, c, orig) -> { }; }
}
