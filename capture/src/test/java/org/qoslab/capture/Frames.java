package org.qoslab.capture;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/** Crafted frames and capture files for the tests. */
final class Frames {
    private Frames() { }

    static byte[] ipv4(int proto, String src, String dst, int tos, byte[] l4, int fragOff) {
        ByteBuffer b = ByteBuffer.allocate(20 + l4.length);
        b.put((byte) 0x45).put((byte) tos).putShort((short) (20 + l4.length)).putShort((short) 1)
                .putShort((short) fragOff).put((byte) 64).put((byte) proto).putShort((short) 0)
                .putInt(Summary.ipToInt(src)).putInt(Summary.ipToInt(dst)).put(l4);
        return b.array();
    }

    static byte[] tcp(int sport, int dport, int flags, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(20 + payload.length);
        b.putShort((short) sport).putShort((short) dport).putInt(1).putInt(1).put((byte) 0x50).put((byte) flags)
                .putShort((short) 65535).putShort((short) 0).putShort((short) 0).put(payload);
        return b.array();
    }

    /** A TCP header with the given sequence and acknowledgement numbers and flags (0x10 ACK, 0x18 PSH+ACK, 0x02 SYN, 0x01 FIN). */
    static byte[] tcp(int sport, int dport, int seq, int ack, int flags, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(20 + payload.length);
        b.putShort((short) sport).putShort((short) dport).putInt(seq).putInt(ack).put((byte) 0x50).put((byte) flags)
                .putShort((short) 65535).putShort((short) 0).putShort((short) 0).put(payload);
        return b.array();
    }

    static byte[] udp(int sport, int dport, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(8 + payload.length);
        b.putShort((short) sport).putShort((short) dport).putShort((short) (8 + payload.length)).putShort((short) 0).put(payload);
        return b.array();
    }

    static byte[] ether(int ethertype, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(14 + payload.length);
        b.put(new byte[] {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2}).putShort((short) ethertype).put(payload);
        return b.array();
    }

    static byte[] tcpFrame(String src, String dst, int sport, int dport, int tos, byte[] payload) {
        return ether(0x0800, ipv4(6, src, dst, tos, tcp(sport, dport, 0x18, payload), 0));
    }

    static final byte[] JRMI = {0x4a, 0x52, 0x4d, 0x49, 0x00, 0x02, 0x4b};

    /** A pcap file (little-endian, microseconds, LINKTYPE link) with the frames; capLens may cut them. */
    static byte[] pcap(int link, List<byte[]> frames, int[] capLens) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteBuffer h = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        h.putInt(0xa1b2c3d4).putShort((short) 2).putShort((short) 4).putInt(0).putInt(0).putInt(65535).putInt(link);
        o.writeBytes(h.array());
        for (int i = 0; i < frames.size(); i++) {
            byte[] f = frames.get(i);
            int cap = capLens == null ? f.length : Math.min(capLens[i], f.length);
            ByteBuffer r = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
            r.putInt(1700000000 + i).putInt(i * 1000).putInt(cap).putInt(f.length);
            o.writeBytes(r.array());
            o.write(f, 0, cap);
        }
        return o.toByteArray();
    }

    /** A pcap file with nanosecond timestamps (magic 0xa1b23c4d, little-endian). */
    static byte[] pcapNs(int link, List<byte[]> frames, List<Long> tsNanos) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteBuffer h = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        h.putInt(0xa1b23c4d).putShort((short) 2).putShort((short) 4).putInt(0).putInt(0).putInt(65535).putInt(link);
        o.writeBytes(h.array());
        for (int i = 0; i < frames.size(); i++) {
            byte[] f = frames.get(i);
            long ts = tsNanos.get(i);
            ByteBuffer r = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
            r.putInt((int) (ts / 1_000_000_000L)).putInt((int) (ts % 1_000_000_000L)).putInt(f.length).putInt(f.length);
            o.writeBytes(r.array());
            o.write(f, 0, f.length);
        }
        return o.toByteArray();
    }

    /** The same frames as pcapng (SHB, IDB with ns resolution, EPBs), big-endian to test byte order. */
    static byte[] pcapng(int link, List<byte[]> frames) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteBuffer shb = ByteBuffer.allocate(28).order(ByteOrder.BIG_ENDIAN);
        shb.putInt(0x0A0D0D0A).putInt(28).putInt(0x1A2B3C4D).putShort((short) 1).putShort((short) 0).putLong(-1).putInt(28);
        o.writeBytes(shb.array());
        ByteBuffer idb = ByteBuffer.allocate(32).order(ByteOrder.BIG_ENDIAN);
        idb.putInt(1).putInt(32).putShort((short) link).putShort((short) 0).putInt(65535)
                .putShort((short) 9).putShort((short) 1).put((byte) 9).put(new byte[3]).putInt(0).putInt(32);
        o.writeBytes(idb.array());
        for (int i = 0; i < frames.size(); i++) {
            byte[] f = frames.get(i);
            int pad = (4 - f.length % 4) % 4, len = 32 + f.length + pad;
            ByteBuffer e = ByteBuffer.allocate(len).order(ByteOrder.BIG_ENDIAN);
            long ts = 1_700_000_000_000_000_000L + i;
            e.putInt(6).putInt(len).putInt(0).putInt((int) (ts >>> 32)).putInt((int) ts).putInt(f.length).putInt(f.length)
                    .put(f).put(new byte[pad]).putInt(len);
            o.writeBytes(e.array());
        }
        return o.toByteArray();
    }
}
