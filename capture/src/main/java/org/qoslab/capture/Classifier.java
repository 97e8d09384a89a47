package org.qoslab.capture;

import java.nio.ByteBuffer;

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
    private final FrameDecoder decoder;
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
        this.decoder = new FrameDecoder(d, tunnel);
    }

    public FlowTable flows() { return flows; }

    public Tunnel tunnel() { return tunnel; }

    /**
     * Decode the frame into {@link #d}. Returns true when an IP header was decoded (the class is
     * then taken from {@link #d}); false for non-IP frames and undecodable ones ({@link Decoded#problem}
     * says which).
     *
     * @param linkType the capture's link type number (1 Ethernet, 113 Linux cooked, ...)
     * @param off where the frame starts in {@code b}
     * @param capLen bytes of the frame captured (in {@code b})
     */
    public boolean decode(int linkType, ByteBuffer b, int off, int capLen) {
        boolean ip = decoder.decode(linkType, b, off, capLen);
        if (d.problem == Problem.UNSUPPORTED_LINK) unsupportedLink++;
        return ip;
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
}
