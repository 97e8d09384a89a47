package org.qoslab.capture;

import static org.qoslab.capture.Classifier.L_ETH;
import static org.qoslab.capture.Classifier.L_HDLC;
import static org.qoslab.capture.Classifier.L_LOOP;
import static org.qoslab.capture.Classifier.L_NULL;
import static org.qoslab.capture.Classifier.L_PPP;
import static org.qoslab.capture.Classifier.L_PPPETHER;
import static org.qoslab.capture.Classifier.L_RAW;
import static org.qoslab.capture.Classifier.L_SLL;
import static org.qoslab.capture.Classifier.L_SLL2;
import static org.qoslab.capture.Classifier.MAX_DEPTH;
import static org.qoslab.capture.Classifier.T_ERSPAN;
import static org.qoslab.capture.Classifier.T_GRE;
import static org.qoslab.capture.Classifier.T_IPIP;
import static org.qoslab.capture.Classifier.T_TEB;

import java.nio.ByteBuffer;
import org.qoslab.capture.Classifier.Decoded;
import org.qoslab.capture.Classifier.Problem;
import org.qoslab.capture.Classifier.Tunnel;

/**
 * Frame bytes -> {@link Decoded} fields, for {@link Classifier}: the link types, tags, IPv4/IPv6
 * (extension headers, fragments) and tunnels listed in capture/README.md ("What the reader
 * decodes"), down to the TCP or UDP header. Pure: reads the buffer, fills the one reused
 * {@link Decoded}; no allocation per packet. Every length is checked against the captured bytes
 * ({@link Problem} says where decoding stopped). Not thread-safe; one per classifier.
 */
final class FrameDecoder {
    private final Decoded d;
    private final Tunnel tunnel;

    /** @param d the fields to fill (reused for every frame) */
    FrameDecoder(Decoded d, Tunnel tunnel) {
        this.d = d;
        this.tunnel = tunnel;
    }

    private static int u8(ByteBuffer b, int p) { return b.get(p) & 0xFF; }

    private static int u16(ByteBuffer b, int p) { return b.getShort(p) & 0xFFFF; }

    private boolean fail(Problem p) { d.problem = p; return false; }

    /**
     * Decode the frame into the {@link Decoded} fields. Returns true when an IP header was decoded (the class is
     * then taken from {@link #d}); false for non-IP frames and undecodable ones ({@link Decoded#problem}
     * says which).
     */
    boolean decode(int linkType, ByteBuffer b, int off, int capLen) {
        Decoded x = d;
        x.ipVersion = 0; x.tcp = false; x.udp = false; x.proto = -1; x.sport = -1; x.dport = -1; x.dscp = -1;
        x.payloadLen = 0; x.payloadOff = -1; x.payloadCaptured = 0; x.fragment = 0; x.encap = 0;
        x.problem = Problem.NONE; x.src = 0; x.dst = 0;
        int end = off + capLen;
        switch (linkType) {
            case 1:
                x.encap = L_ETH;
                return ether(b, off, end, 0);
            case 113: // Linux cooked v1: protocol at 14
                x.encap = L_SLL;
                if (off + 16 > end) return fail(Problem.LINK_HEADER_CUT);
                return ethertype(b, u16(b, off + 14), off + 16, end, 0);
            case 276: // Linux cooked v2: protocol at 0
                x.encap = L_SLL2;
                if (off + 20 > end) return fail(Problem.LINK_HEADER_CUT);
                return ethertype(b, u16(b, off), off + 20, end, 0);
            case 101: case 12: case 14: // raw IP: the version nibble decides
                x.encap = L_RAW;
                if (off >= end) return fail(Problem.IP_HEADER_CUT);
                return ipAny(b, off, end, 0);
            case 228:
                x.encap = L_RAW;
                return ip4(b, off, end, 0);
            case 229:
                x.encap = L_RAW;
                return ip6(b, off, end, 0);
            case 0: case 108: { // BSD loopback (host byte order) / OpenBSD loop (network order)
                x.encap = linkType == 0 ? L_NULL : L_LOOP;
                if (off + 4 > end) return fail(Problem.LINK_HEADER_CUT);
                int fam = b.getInt(off);
                if ((fam & 0xFFFF0000) != 0) fam = Integer.reverseBytes(fam);
                if (fam == 2) return ip4(b, off + 4, end, 0);
                if (fam == 10 || fam == 24 || fam == 28 || fam == 30) return ip6(b, off + 4, end, 0);
                return nonIp();
            }
            case 9: case 50: // PPP, PPP in HDLC-like framing
                x.encap = L_PPP;
                return ppp(b, off, end, 0);
            case 51: // PPPoE without Ethernet
                x.encap = L_PPPETHER;
                if (off + 6 > end) return fail(Problem.LINK_HEADER_CUT);
                return ppp(b, off + 6, end, 0);
            case 104: // Cisco HDLC: address, control, ethertype
                x.encap = L_HDLC;
                if (off + 4 > end) return fail(Problem.LINK_HEADER_CUT);
                return ethertype(b, u16(b, off + 2), off + 4, end, 0);
            default:
                return fail(Problem.UNSUPPORTED_LINK);
        }
    }

    private boolean nonIp() {
        setL3(3);
        return false;
    }

    /** Record the network layer in the encapsulation code: the outer one, or the inner one under a tunnel. */
    private void setL3(int l3) {
        Decoded x = d;
        if (((x.encap >> 10) & 7) != 0) x.encap = (x.encap & ~(3 << 13)) | (l3 << 13);
        else x.encap = (x.encap & ~(3 << 7)) | (l3 << 7);
    }

    private boolean ether(ByteBuffer b, int p, int end, int depth) {
        if (p + 14 > end) return fail(Problem.LINK_HEADER_CUT);
        int et = u16(b, p + 12);
        if (et < 0x0600) return nonIp(); // 802.3 length: LLC/SNAP, STP, ...
        return ethertype(b, et, p + 14, end, depth);
    }

    private boolean ethertype(ByteBuffer b, int et, int p, int end, int depth) {
        Decoded x = d;
        int tags = 0;
        while (et == 0x8100 || et == 0x88a8 || et == 0x9100) {
            if (p + 4 > end) return fail(Problem.LINK_HEADER_CUT);
            if (++tags > 64) return fail(Problem.TOO_DEEP);
            et = u16(b, p + 2);
            p += 4;
        }
        if (tags > 0 && depth == 0) x.encap |= Math.min(tags, 3) << 4;
        if (et == 0x8864) { // PPPoE session: 6-byte header, then a PPP protocol
            if (depth == 0) x.encap |= 1 << 6;
            if (p + 8 > end) return fail(Problem.LINK_HEADER_CUT);
            return ppp(b, p + 6, end, depth);
        }
        if (et == 0x0800) return ip4(b, p, end, depth);
        if (et == 0x86dd) return ip6(b, p, end, depth);
        return nonIp();
    }

    private boolean ppp(ByteBuffer b, int p, int end, int depth) {
        if (p + 1 > end) return fail(Problem.LINK_HEADER_CUT);
        if (p + 2 <= end && u8(b, p) == 0xff && u8(b, p + 1) == 0x03) p += 2; // address, control
        if (p + 1 > end) return fail(Problem.LINK_HEADER_CUT);
        int proto;
        if ((u8(b, p) & 1) != 0) { proto = u8(b, p); p += 1; } // protocol field compression
        else {
            if (p + 2 > end) return fail(Problem.LINK_HEADER_CUT);
            proto = u16(b, p);
            p += 2;
        }
        if (proto == 0x21) return ip4(b, p, end, depth);
        if (proto == 0x57) return ip6(b, p, end, depth);
        return nonIp();
    }

    private boolean ipAny(ByteBuffer b, int p, int end, int depth) {
        int v = u8(b, p) >> 4;
        if (v == 4) return ip4(b, p, end, depth);
        if (v == 6) return ip6(b, p, end, depth);
        return fail(Problem.BAD_IP_HEADER);
    }

    private boolean ip4(ByteBuffer b, int p, int end, int depth) {
        Decoded x = d;
        setL3(1);
        if (p + 20 > end) return fail(Problem.IP_HEADER_CUT);
        int vihl = u8(b, p);
        int ihl = (vihl & 0x0F) * 4;
        if ((vihl >> 4) != 4 || ihl < 20) return fail(Problem.BAD_IP_HEADER);
        if (p + ihl > end) return fail(Problem.IP_HEADER_CUT);
        int total = u16(b, p + 2);
        if (total != 0 && total < ihl) return fail(Problem.BAD_IP_HEADER);
        x.ipVersion = 4;
        x.dscp = u8(b, p + 1) >> 2;
        x.src = b.getInt(p + 12);
        x.dst = b.getInt(p + 16);
        x.src6hi = x.src6lo = x.dst6hi = x.dst6lo = 0;
        int fo = u16(b, p + 6);
        int frag = (fo & 0x1FFF) != 0 ? 2 : (fo & 0x2000) != 0 ? 1 : 0;
        x.fragId = u16(b, p + 4);
        int q = p + ihl;
        int l4len = total == 0 ? end - q : total - ihl; // total 0: a TSO/GSO capture, use what is there
        int proto = u8(b, p + 9);
        while (proto == 51 && frag != 2) { // AH: next header, length in 32-bit words minus 2
            if (q + 8 > end) return fail(Problem.EXTENSION_HEADER_CUT);
            int len = (u8(b, q + 1) + 2) * 4;
            proto = u8(b, q);
            q += len;
            l4len -= len;
        }
        return l4(b, q, end, proto, l4len, frag, depth);
    }

    private boolean ip6(ByteBuffer b, int p, int end, int depth) {
        Decoded x = d;
        setL3(2);
        if (p + 40 > end) return fail(Problem.IP_HEADER_CUT);
        int w = b.getInt(p);
        if ((w >>> 28) != 6) return fail(Problem.BAD_IP_HEADER);
        x.ipVersion = 6;
        x.dscp = (w >>> 22) & 0x3F;
        int plen = u16(b, p + 4);
        int nh = u8(b, p + 6);
        x.src6hi = b.getLong(p + 8); x.src6lo = b.getLong(p + 16);
        x.dst6hi = b.getLong(p + 24); x.dst6lo = b.getLong(p + 32);
        x.src = fold(x.src6hi, x.src6lo);
        x.dst = fold(x.dst6hi, x.dst6lo);
        int q = p + 40;
        int remaining = plen == 0 ? end - q : plen; // 0: jumbogram (hop-by-hop option), use what is there
        int frag = 0;
        for (int n = 0; ; n++) {
            if (n > 16) return fail(Problem.EXTENSION_HEADER_CUT);
            if (nh == 0 || nh == 43 || nh == 60 || nh == 51) { // hop-by-hop, routing, destination, AH
                if (q + 8 > end) return fail(Problem.EXTENSION_HEADER_CUT);
                int len = nh == 51 ? (u8(b, q + 1) + 2) * 4 : (u8(b, q + 1) + 1) * 8;
                nh = u8(b, q);
                q += len;
                remaining -= len;
                x.encap |= 1 << 9;
            } else if (nh == 44) { // fragment
                if (q + 8 > end) return fail(Problem.EXTENSION_HEADER_CUT);
                int fo = u16(b, q + 2);
                frag = (fo >>> 3) != 0 ? 2 : (fo & 1) != 0 ? 1 : 0;
                x.fragId = b.getInt(q + 4) & 0xFFFFFFFFL;
                nh = u8(b, q);
                q += 8;
                remaining -= 8;
                x.encap |= 1 << 9;
                if (frag == 2) break;
            } else {
                break;
            }
        }
        return l4(b, q, end, nh, remaining, frag, depth);
    }

    private static int fold(long hi, long lo) {
        long h = hi * 0x9E3779B97F4A7C15L ^ lo;
        h *= 0xC2B2AE3D27D4EB4FL;
        return (int) (h ^ (h >>> 32));
    }

    private boolean l4(ByteBuffer b, int q, int end, int proto, int l4len, int frag, int depth) {
        Decoded x = d;
        x.proto = proto;
        x.fragment = frag;
        if (frag == 2) return true; // a later fragment: no transport header here
        if (proto == 6) {
            // tshark gives tcp.len only once 16 header bytes (through the window) are captured
            if (q + 16 > end) return fail(Problem.TRANSPORT_HEADER_CUT) || true;
            int doff = (u8(b, q + 12) >> 4) * 4;
            if (doff < 20) x.problem = Problem.BAD_TCP_HEADER; // tshark still gives ports and tcp.len: so do we
            x.tcp = true;
            x.sport = u16(b, q);
            x.dport = u16(b, q + 2);
            x.tcpSeq = b.getInt(q + 4);
            x.tcpAck = b.getInt(q + 8);
            x.tcpFlags = u8(b, q + 13);
            x.payloadLen = Math.max(0, l4len - doff);
            x.payloadOff = q + doff;
            x.payloadCaptured = Math.max(0, Math.min(x.payloadLen, end - x.payloadOff));
            return true;
        }
        if (proto == 17) {
            x.udp = true;
            if (q + 4 <= end) {
                x.sport = u16(b, q);
                x.dport = u16(b, q + 2);
            } else {
                x.problem = Problem.TRANSPORT_HEADER_CUT;
            }
            return true;
        }
        if (proto == 4 || proto == 41) return tunnelled(b, q, end, T_IPIP, depth, proto == 4 ? 4 : 6);
        if (proto == 47) return gre(b, q, end, depth);
        return true; // ICMP, ESP, ...: other
    }

    private boolean enterTunnel(int kind, int depth) {
        Decoded x = d;
        if (((x.encap >> 10) & 7) == 0 || depth == 0) x.encap = (x.encap & ~(7 << 10)) | (kind << 10);
        if (tunnel == Tunnel.OUTER) return false;
        if (depth + 1 >= MAX_DEPTH) { fail(Problem.TOO_DEEP); return false; }
        return true;
    }

    private boolean tunnelled(ByteBuffer b, int q, int end, int kind, int depth, int version) {
        if (!enterTunnel(kind, depth)) return true; // outer: classified by the outer header (other)
        boolean ok = version == 4 ? ip4(b, q, end, depth + 1) : ip6(b, q, end, depth + 1);
        return ok || d.ipVersion != 0;
    }

    private boolean gre(ByteBuffer b, int q, int end, int depth) {
        Decoded x = d;
        if (q + 4 > end) { x.encap |= T_GRE << 10; return fail(Problem.TUNNEL_UNSUPPORTED) || true; }
        int flags = u16(b, q), et = u16(b, q + 2);
        if ((flags & 7) != 0 || (flags & 0x4000) != 0) { // not version 0, or source routing
            x.encap |= T_GRE << 10;
            return fail(Problem.TUNNEL_UNSUPPORTED) || true;
        }
        int hl = 4 + ((flags & 0x8000) != 0 ? 4 : 0) + ((flags & 0x2000) != 0 ? 4 : 0) + ((flags & 0x1000) != 0 ? 4 : 0);
        int p = q + hl;
        int kind = et == 0x88be || et == 0x22eb ? T_ERSPAN : et == 0x6558 ? T_TEB : T_GRE;
        if (!enterTunnel(kind, depth)) return true;
        boolean ok;
        if (et == 0x0800) ok = ip4(b, p, end, depth + 1);
        else if (et == 0x86dd) ok = ip6(b, p, end, depth + 1);
        else if (et == 0x6558) ok = ether(b, p, end, depth + 1);
        else if (et == 0x88be) { // ERSPAN type II (sequence bit set, 8-byte header) or type I (none)
            ok = ether(b, (flags & 0x1000) != 0 ? p + 8 : p, end, depth + 1);
        } else if (et == 0x22eb) { // ERSPAN type III: 12 bytes, +8 with the platform sub-header (O bit)
            if (p + 12 > end) return fail(Problem.TUNNEL_UNSUPPORTED) || true;
            ok = ether(b, p + 12 + ((u8(b, p + 11) & 1) != 0 ? 8 : 0), end, depth + 1);
        } else {
            setL3(3);
            return true; // GRE carrying something else (keepalive, PPP, MPLS...): other
        }
        return ok || x.ipVersion != 0;
    }
}
