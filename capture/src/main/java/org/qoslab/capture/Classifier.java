package org.qoslab.capture;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Packet bytes -> {@link TrafficClass}. Pure apart from the bounded flow table of the
 * {@code FLOW} RMI mode. One instance per capture; not thread-safe.
 *
 * <p>Link types: Ethernet (1, VLAN tags skipped), Linux cooked v1 (113) and v2 (276), raw IPv4
 * (101, 228, and 12). IPv4 only (the testbed disables IPv6; IPv6 counts as {@code other}).
 * TCP payload length comes from the IP total length, not the captured length, so short frames
 * keep their true class precedence.
 */
public final class Classifier {
    /** JRMP handshake magic "JRMI" (Java RMI specification, section 10.2). */
    public static final int JRMI_MAGIC = 0x4a524d49;
    /** IANA rmiregistry port. */
    public static final int RMI_REGISTRY_PORT = 1099;

    /** Fields of the last decoded packet (reused: no allocation per packet). */
    public static final class Decoded {
        public boolean ipv4;
        public int src, dst, proto = -1, sport = -1, dport = -1, dscp = -1, payloadLen;
        public int payloadOff = -1, payloadCaptured;  // where the L4 payload starts in the buffer, bytes present
        public boolean tcp, udp;
    }

    private final TrafficClass.RmiMode mode;
    private final FlowTable flows;
    public final Decoded d = new Decoded();
    /** Packets whose link type is not supported (counted as {@code other}). */
    public long unsupportedLink;

    public Classifier(TrafficClass.RmiMode mode, int maxFlows, long idleTimeoutNanos) {
        this.mode = mode;
        this.flows = new FlowTable(maxFlows, idleTimeoutNanos);
    }

    public FlowTable flows() { return flows; }

    /** Decode the frame into {@link #d}; false when it is not IPv4 (or too short to tell). */
    public boolean decode(int linkType, ByteBuffer b, int off, int capLen) {
        Decoded x = d;
        x.ipv4 = false; x.tcp = false; x.udp = false; x.proto = -1; x.sport = -1; x.dport = -1; x.dscp = -1;
        x.payloadLen = 0; x.payloadOff = -1; x.payloadCaptured = 0;
        int end = off + capLen, ip;
        switch (linkType) {
            case 1: { // Ethernet
                int p = off + 12;
                if (p + 2 > end) return false;
                int et = b.getShort(p) & 0xFFFF;
                while ((et == 0x8100 || et == 0x88a8) && p + 6 <= end) { p += 4; et = b.getShort(p) & 0xFFFF; }
                if (et != 0x0800) return false;
                ip = p + 2;
                break;
            }
            case 113: // Linux cooked v1
                if (off + 16 > end || (b.getShort(off + 14) & 0xFFFF) != 0x0800) return false;
                ip = off + 16;
                break;
            case 276: // Linux cooked v2
                if (off + 20 > end || (b.getShort(off) & 0xFFFF) != 0x0800) return false;
                ip = off + 20;
                break;
            case 101: case 228: case 12:
                ip = off;
                break;
            default:
                unsupportedLink++;
                return false;
        }
        if (ip + 20 > end) return false;
        int vihl = b.get(ip) & 0xFF;
        if ((vihl >> 4) != 4) return false;
        int ihl = (vihl & 0x0F) * 4;
        if (ihl < 20) return false;
        x.ipv4 = true;
        x.dscp = (b.get(ip + 1) & 0xFF) >> 2;
        int total = b.getShort(ip + 2) & 0xFFFF;
        x.proto = b.get(ip + 9) & 0xFF;
        x.src = b.getInt(ip + 12);
        x.dst = b.getInt(ip + 16);
        boolean firstFragment = (b.getShort(ip + 6) & 0x1FFF) == 0;
        int l4 = ip + ihl;
        if (x.proto == 6) {
            x.tcp = true;
            if (!firstFragment) { x.payloadLen = Math.max(0, total - ihl); return true; }
            if (l4 + 20 > end) { x.payloadLen = Math.max(0, total - ihl - 20); return true; } // header cut: assume no options
            x.sport = b.getShort(l4) & 0xFFFF;
            x.dport = b.getShort(l4 + 2) & 0xFFFF;
            int doff = ((b.get(l4 + 12) & 0xFF) >> 4) * 4;
            if (doff < 20) doff = 20;
            x.payloadLen = total > 0 ? Math.max(0, total - ihl - doff) : Math.max(0, end - l4 - doff);
            x.payloadOff = l4 + doff;
            x.payloadCaptured = Math.max(0, Math.min(x.payloadLen, end - x.payloadOff));
        } else if (x.proto == 17) {
            x.udp = true;
            if (firstFragment && l4 + 4 <= end) {
                x.sport = b.getShort(l4) & 0xFFFF;
                x.dport = b.getShort(l4 + 2) & 0xFFFF;
            }
        }
        return true;
    }

    /** Class of a frame (see {@link TrafficClass} for the precedence). */
    public TrafficClass classify(long tsNanos, int linkType, ByteBuffer b, int off, int capLen, int origLen) {
        if (!decode(linkType, b, off, capLen)) return capLen < origLen ? TrafficClass.SHORT_FRAME : TrafficClass.OTHER;
        Decoded x = d;
        if (x.tcp) {
            if (x.payloadLen == 0) return TrafficClass.CONTROL_ACK;
            if (x.sport == 22 || x.dport == 22) return TrafficClass.SSH;
            if (isRmi(tsNanos, b)) return TrafficClass.RMI;
            return capLen < origLen ? TrafficClass.SHORT_FRAME : TrafficClass.DATA;
        }
        if (capLen < origLen) return TrafficClass.SHORT_FRAME;
        return x.udp ? TrafficClass.UDP : TrafficClass.OTHER;
    }

    private boolean isRmi(long ts, ByteBuffer b) {
        Decoded x = d;
        // Wireshark's JRMP dissector owns TCP port 1099: every payload segment there is "rmi"
        if (x.sport == RMI_REGISTRY_PORT || x.dport == RMI_REGISTRY_PORT) return true;
        if (mode != TrafficClass.RmiMode.FLOW || x.sport < 0) return false;
        boolean magic = x.payloadCaptured >= 4 && b.getInt(x.payloadOff) == JRMI_MAGIC;
        return flows.rmi(x.src, x.sport, x.dst, x.dport, ts, magic);
    }

    /**
     * Bounded connection table of the FLOW mode: at most {@code maxFlows} connections (least
     * recently seen evicted first) and none idle longer than the timeout. A connection is decided
     * at its first payload packet seen: RMI iff that payload starts with the JRMI magic, so a
     * capture that starts mid-connection leaves it non-RMI.
     */
    public static final class FlowTable {
        private final int max;
        private final long idleNanos;
        private final LinkedHashMap<Key, long[]> map; // value: {rmi ? 1 : 0, lastSeen}
        public long evictedIdle, evictedFull;

        record Key(long a, long b) { }

        FlowTable(int max, long idleNanos) {
            this.max = max;
            this.idleNanos = idleNanos;
            this.map = new LinkedHashMap<>(1024, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Key, long[]> e) {
                    if (size() > FlowTable.this.max) { evictedFull++; return true; }
                    return false;
                }
            };
        }

        public int size() { return map.size(); }

        boolean rmi(int src, int sport, int dst, int dport, long ts, boolean magic) {
            long ea = ((src & 0xFFFFFFFFL) << 16) | sport, eb = ((dst & 0xFFFFFFFFL) << 16) | dport;
            Key k = ea < eb ? new Key(ea, eb) : new Key(eb, ea);
            long[] v = map.get(k);
            if (v == null || ts - v[1] > idleNanos) {
                v = new long[] {magic ? 1 : 0, ts};
                map.put(k, v);
                expireIdle(ts);
            }
            v[1] = ts;
            return v[0] == 1;
        }

        private void expireIdle(long now) {
            var it = map.entrySet().iterator();
            int checked = 0;
            while (it.hasNext() && checked++ < 4) { // amortised: a few of the oldest per insertion
                if (now - it.next().getValue()[1] > idleNanos) { it.remove(); evictedIdle++; } else break;
            }
        }
    }
}
