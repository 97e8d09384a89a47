package org.qoslab.capture;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Packet bytes -> {@link TrafficClass}. Pure apart from two bounded tables (the connection table
 * of the {@code FLOW} RMI mode and the IP fragment table). One instance per capture; not
 * thread-safe; no allocation per packet on the common paths.
 *
 * <p>Decoding (see capture/README.md, "What the reader decodes"): link types Ethernet (1, any
 * number of 802.1Q / 802.1ad / 0x9100 tags, PPPoE sessions), Linux cooked v1 (113) and v2 (276),
 * raw IP (101, 12, 14 by the version nibble; 228 IPv4, 229 IPv6), PPP (9, 50; 51 PPPoE), Cisco
 * HDLC (104), BSD loopback (0, host byte order) and OpenBSD loop (108). IPv4 (with AH) and IPv6
 * (hop-by-hop, routing, destination options, fragment and AH headers walked to the transport
 * header). Tunnels: IP-in-IP (4in4, 6in4, 4in6, 6in6), GRE (IP, transparent Ethernet bridging,
 * ERSPAN I/II/III), classified by the inner packet ({@link Tunnel#INNER}) or by the outer one
 * ({@link Tunnel#OUTER}: the tunnel packet is {@code other}). At most {@link #MAX_DEPTH} nested
 * encapsulations.
 *
 * <p>Fragments: a first fragment is classified by its transport header; a later fragment takes
 * the class of its datagram's first fragment when that was seen (table keyed by addresses, IP
 * identification and protocol, at most {@link #MAX_FRAGMENTS} datagrams, {@link #FRAGMENT_TIMEOUT_NS}
 * idle), else TCP -> {@code data}, UDP -> {@code udp}, anything else -> {@code other} (then the
 * short-frame rule applies as for any frame).
 *
 * <p>TCP payload length comes from the IP total length (IPv6: payload length minus extension
 * headers), not the captured length, so short frames keep their true class precedence.
 */
public final class Classifier {
    /** JRMP handshake magic "JRMI" (Java RMI specification, section 10.2). */
    public static final int JRMI_MAGIC = 0x4a524d49;
    /** IANA rmiregistry port. */
    public static final int RMI_REGISTRY_PORT = 1099;
    /** Nested encapsulations (tunnels, tags inside tunnels) followed at most. */
    public static final int MAX_DEPTH = 4;
    /** Fragmented datagrams remembered at once (LRU). */
    public static final int MAX_FRAGMENTS = 65536;
    /** A datagram's fragments more than this apart are not joined (ns; 2x Linux's 30 s ipfrag_time). */
    public static final long FRAGMENT_TIMEOUT_NS = 60_000_000_000L;

    /** Which IP header of a tunnelled packet decides its class, addresses and DSCP. */
    public enum Tunnel { INNER, OUTER }

    /** Why a frame could not be decoded down to its transport header. */
    public enum Problem {
        NONE("none"),
        UNSUPPORTED_LINK("unsupported link type"),
        LINK_HEADER_CUT("link-layer header cut"),
        IP_HEADER_CUT("IP header cut"),
        BAD_IP_HEADER("bad IP header (version, header length or total length)"),
        EXTENSION_HEADER_CUT("IPv6 extension header chain cut or too long"),
        TRANSPORT_HEADER_CUT("TCP/UDP header cut"),
        BAD_TCP_HEADER("bad TCP header length"),
        TUNNEL_UNSUPPORTED("tunnel header cut or unsupported (GRE version/routing)"),
        TOO_DEEP("more than " + MAX_DEPTH + " nested encapsulations");

        public final String label;

        Problem(String label) { this.label = label; }
    }

    // encapsulation code: link[0:4] tags[4:6] pppoe[6] l3[7:9] ext[9] tunnel[10:13] inner[13:15]
    /** Size of the encapsulation code space ({@link Decoded#encap} is below it). */
    public static final int ENCAP_CODES = 1 << 15;
    static final String[] LINKS = {"?", "ethernet", "linux-sll", "linux-sll2", "raw-ip", "ppp", "cisco-hdlc",
        "bsd-loopback", "loop", "ppp-ether"};
    static final int L_ETH = 1, L_SLL = 2, L_SLL2 = 3, L_RAW = 4, L_PPP = 5, L_HDLC = 6, L_NULL = 7, L_LOOP = 8,
        L_PPPETHER = 9;
    static final String[] L3 = {"", "ipv4", "ipv6", "non-ip"};
    static final String[] TUNNELS = {"", "ip-in-ip", "gre", "gre/erspan", "gre/ethernet"};
    static final int T_IPIP = 1, T_GRE = 2, T_ERSPAN = 3, T_TEB = 4;

    /** Human label of an encapsulation code, e.g. {@code ethernet/qinq/ipv6+ext/gre/ipv4}. */
    public static String encapLabel(int code) {
        StringBuilder sb = new StringBuilder(LINKS[Math.min(code & 15, LINKS.length - 1)]);
        int tags = (code >> 4) & 3;
        if (tags == 1) sb.append("/802.1q");
        else if (tags == 2) sb.append("/qinq");
        else if (tags == 3) sb.append("/802.1q-x3+");
        if ((code & (1 << 6)) != 0) sb.append("/pppoe");
        int l3 = (code >> 7) & 3;
        if (l3 != 0) sb.append('/').append(L3[l3]);
        if ((code & (1 << 9)) != 0) sb.append("+ext");
        int t = (code >> 10) & 7;
        if (t != 0) sb.append('/').append(TUNNELS[Math.min(t, TUNNELS.length - 1)]);
        int in = (code >> 13) & 3;
        if (in != 0) sb.append('/').append(L3[in]);
        return sb.toString();
    }

    /** Fields of the last decoded packet (reused: no allocation per packet). */
    public static final class Decoded {
        /** IP version of the header the class is taken from: 4, 6, or 0 (none decoded). */
        public int ipVersion;
        /** IPv4 addresses (big-endian ints); for IPv6 a 32-bit fold used only in table keys. */
        public int src, dst;
        /** IPv6 addresses as two big-endian longs each (0 for IPv4). */
        public long src6hi, src6lo, dst6hi, dst6lo;
        public int proto = -1, sport = -1, dport = -1, dscp = -1, payloadLen;
        /** TCP sequence and acknowledgement numbers and flags (FIN 0x01, SYN 0x02, RST 0x04, ACK 0x10) when {@link #tcp}. */
        public int tcpSeq, tcpAck, tcpFlags;
        /** Where the L4 payload starts in the buffer, and how many of its bytes are present. */
        public int payloadOff = -1, payloadCaptured;
        public boolean tcp, udp;
        /** 0 not a fragment, 1 first fragment, 2 later fragment. */
        public int fragment;
        /** IP identification of a fragment (IPv6: the fragment header's). */
        public long fragId;
        /** Encapsulation code, see {@link #encapLabel}. */
        public int encap;
        /** Why decoding stopped early ({@link Problem#NONE} when it did not). */
        public Problem problem = Problem.NONE;
    }

    private final TrafficClass.RmiMode mode;
    private final Tunnel tunnel;
    private final FlowTable flows;
    private final FragmentTable frags;
    public final Decoded d = new Decoded();
    /** Packets whose link type is not supported (counted as {@code other}). */
    public long unsupportedLink;
    /** Later fragments that followed their first fragment, and those whose first was not seen. */
    public long fragFollowed, fragUnseen;

    public Classifier(TrafficClass.RmiMode mode, int maxFlows, long idleTimeoutNanos) {
        this(mode, maxFlows, idleTimeoutNanos, Tunnel.INNER);
    }

    /**
     * @param maxFlows connection table cap (LRU), >= 1
     * @param idleTimeoutNanos a connection idle longer than this (ns) is forgotten
     */
    public Classifier(TrafficClass.RmiMode mode, int maxFlows, long idleTimeoutNanos, Tunnel tunnel) {
        this.mode = mode;
        this.tunnel = tunnel;
        this.flows = new FlowTable(maxFlows, idleTimeoutNanos);
        this.frags = new FragmentTable(MAX_FRAGMENTS, FRAGMENT_TIMEOUT_NS);
    }

    public FlowTable flows() { return flows; }

    public Tunnel tunnel() { return tunnel; }

    private static int u8(ByteBuffer b, int p) { return b.get(p) & 0xFF; }

    private static int u16(ByteBuffer b, int p) { return b.getShort(p) & 0xFFFF; }

    private boolean fail(Problem p) { d.problem = p; return false; }

    /**
     * Decode the frame into {@link #d}. Returns true when an IP header was decoded (the class is
     * then taken from {@link #d}); false for non-IP frames and undecodable ones ({@link Decoded#problem}
     * says which).
     */
    public boolean decode(int linkType, ByteBuffer b, int off, int capLen) {
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
                unsupportedLink++;
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

    /** Class of a frame (see {@link TrafficClass} for the precedence). */
    public TrafficClass classify(long tsNanos, int linkType, ByteBuffer b, int off, int capLen, int origLen) {
        decode(linkType, b, off, capLen);
        TrafficClass base = base(tsNanos, b);
        if (base.ordinal() <= TrafficClass.RMI.ordinal()) return base;
        return capLen < origLen ? TrafficClass.SHORT_FRAME : base;
    }

    /** The class ignoring the short-frame rule: control/ack, ssh, rmi, data, udp or other. */
    private TrafficClass base(long ts, ByteBuffer b) {
        Decoded x = d;
        if (x.ipVersion == 0) return TrafficClass.OTHER;
        if (x.fragment == 2) {
            TrafficClass c = frags.get(x, ts);
            if (c != null) { fragFollowed++; return c; }
            fragUnseen++;
            return x.proto == 6 ? TrafficClass.DATA : x.proto == 17 ? TrafficClass.UDP : TrafficClass.OTHER;
        }
        TrafficClass c;
        if (x.tcp) {
            if (x.payloadLen == 0) c = TrafficClass.CONTROL_ACK;
            else if (x.sport == 22 || x.dport == 22) c = TrafficClass.SSH;
            else if (isRmi(ts, b)) c = TrafficClass.RMI;
            else c = TrafficClass.DATA;
        } else if (x.udp) {
            c = TrafficClass.UDP;
        } else {
            c = TrafficClass.OTHER;
        }
        if (x.fragment == 1) frags.put(x, ts, c);
        return c;
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
     * capture that starts mid-connection leaves it non-RMI. IPv6 connections are keyed by a 32-bit
     * fold of their addresses (a collision can only merge two connections' RMI decision).
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

    /** Fragmented datagrams seen (first fragment's class), bounded like the flow table. */
    static final class FragmentTable {
        private final long idleNanos;
        private final LinkedHashMap<FlowTable.Key, long[]> map; // value: {class ordinal, lastSeen}

        FragmentTable(int max, long idleNanos) {
            this.idleNanos = idleNanos;
            this.map = new LinkedHashMap<>(64, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<FlowTable.Key, long[]> e) { return size() > max; }
            };
        }

        private static FlowTable.Key key(Decoded x) {
            return new FlowTable.Key(((x.src & 0xFFFFFFFFL) << 32) | (x.dst & 0xFFFFFFFFL),
                    (x.fragId << 12) | ((long) x.ipVersion << 8) | (x.proto & 0xFF));
        }

        void put(Decoded x, long ts, TrafficClass c) { map.put(key(x), new long[] {c.ordinal(), ts}); }

        TrafficClass get(Decoded x, long ts) {
            long[] v = map.get(key(x));
            if (v == null || Math.abs(ts - v[1]) > idleNanos) return null;
            v[1] = ts;
            return TrafficClass.values()[(int) v[0]];
        }
    }
}
