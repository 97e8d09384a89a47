package org.qoslab.capture;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** What the reader decodes: tags, link types, IPv6 extension headers, fragments, tunnels, DSCP. */
class DecodeTest {
    static final String A = "198.18.0.1", B = "198.18.0.2";
    static final byte[] V6A = ip6("2001:db8::1"), V6B = ip6("2001:db8::2");

    static byte[] ip6(String s) {
        try {
            return java.net.InetAddress.getByName(s).getAddress();
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /** IPv6 header (traffic class tc) + body whose first header is nh. */
    static byte[] ipv6(int nh, int tc, byte[] body) {
        ByteBuffer b = ByteBuffer.allocate(40 + body.length);
        b.putInt(0x60000000 | (tc << 20)).putShort((short) body.length).put((byte) nh).put((byte) 64)
                .put(V6A).put(V6B).put(body);
        return b.array();
    }

    /** A generic extension header (hop-by-hop, routing, destination options): 8 bytes. */
    static byte[] ext(int next, byte[] rest) {
        ByteBuffer b = ByteBuffer.allocate(8 + rest.length);
        b.put((byte) next).put((byte) 0).put(new byte[6]).put(rest);
        return b.array();
    }

    static byte[] frag6(int next, int offset8, boolean more, int id, byte[] rest) {
        ByteBuffer b = ByteBuffer.allocate(8 + rest.length);
        b.put((byte) next).put((byte) 0).putShort((short) ((offset8 << 3) | (more ? 1 : 0))).putInt(id).put(rest);
        return b.array();
    }

    static byte[] cat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) n += p.length;
        ByteBuffer b = ByteBuffer.allocate(n);
        for (byte[] p : parts) b.put(p);
        return b.array();
    }

    static byte[] bytes(int... v) {
        byte[] b = new byte[v.length];
        for (int i = 0; i < v.length; i++) b[i] = (byte) v[i];
        return b;
    }

    static Classifier flow() { return new Classifier(TrafficClass.RmiMode.FLOW, 1000, 60_000_000_000L); }

    static TrafficClass cls(Classifier c, int link, byte[] f) {
        return c.classify(0, link, ByteBuffer.wrap(f), 0, f.length, f.length);
    }

    static String label(Classifier c) { return Classifier.encapLabel(c.d.encap); }

    final byte[] tcpData = Frames.tcp(40000, 5001, 0x18, new byte[100]);
    final byte[] ip4Data = Frames.ipv4(6, A, B, 0xb8, tcpData, 0);

    @Test
    void anyNumberOfVlanTags() {
        Classifier c = flow();
        for (int tags = 0; tags <= 5; tags++) {
            byte[] f = Frames.ether(0x0800, ip4Data);
            for (int t = 0; t < tags; t++) { // push a tag: outer 802.1ad, inner 802.1Q
                byte[] g = new byte[f.length + 4];
                System.arraycopy(f, 0, g, 0, 12);
                g[12] = (byte) (t == tags - 1 && tags > 1 ? 0x88 : 0x81);
                g[13] = (byte) (t == tags - 1 && tags > 1 ? 0xa8 : 0x00);
                g[15] = 10;
                System.arraycopy(f, 12, g, 16, f.length - 12);
                f = g;
            }
            assertEquals(TrafficClass.DATA, cls(c, 1, f), "tags " + tags);
            assertEquals(46, c.d.dscp);
        }
        assertEquals("ethernet/802.1q-x3+/ipv4", label(c));
        cls(c, 1, Frames.ether(0x88a8, cat(bytes(0, 10, 0x81, 0), bytes(0, 20, 0x08, 0), ip4Data)));
        assertEquals("ethernet/qinq/ipv4", label(c));
        // a tag cut in the middle: undecodable, counted as such
        assertEquals(TrafficClass.OTHER, cls(c, 1, Frames.ether(0x8100, bytes(0, 10))));
        assertEquals(Classifier.Problem.LINK_HEADER_CUT, c.d.problem);
    }

    @Test
    void ipv6WithExtensionHeadersAndTrafficClass() {
        Classifier c = flow();
        byte[] v6 = ipv6(0, 0xb8, ext(43, ext(60, ext(6, tcpData))));  // hop-by-hop, routing, destination, TCP
        assertEquals(TrafficClass.DATA, cls(c, 1, Frames.ether(0x86dd, v6)));
        assertEquals(6, c.d.ipVersion);
        assertEquals(46, c.d.dscp);                        // traffic class 0xb8 -> DSCP 46
        assertEquals(100, c.d.payloadLen);
        assertEquals("ethernet/ipv6+ext", label(c));
        byte[] ack = ipv6(6, 0, Frames.tcp(40000, 22, 0x10, new byte[0]));
        assertEquals(TrafficClass.CONTROL_ACK, cls(c, 1, Frames.ether(0x86dd, ack)));
        assertEquals(TrafficClass.SSH, cls(c, 1, Frames.ether(0x86dd, ipv6(6, 0, Frames.tcp(40000, 22, 0x18, new byte[9])))));
        assertEquals(TrafficClass.UDP, cls(c, 1, Frames.ether(0x86dd, ipv6(60, 0, ext(17, Frames.udp(5, 6, new byte[9]))))));
        assertEquals(TrafficClass.OTHER, cls(c, 1, Frames.ether(0x86dd, ipv6(58, 0, new byte[8]))));  // ICMPv6
        // AH (length in 32-bit words minus 2): 12 bytes here
        byte[] ah = cat(bytes(6, 1, 0, 0), new byte[8]);
        assertEquals(TrafficClass.DATA, cls(c, 1, Frames.ether(0x86dd, ipv6(51, 0, cat(ah, tcpData)))));
        // chain cut by the snaplen: short frame, and counted as undecodable
        byte[] f = Frames.ether(0x86dd, ipv6(0, 0, ext(43, ext(60, ext(6, tcpData)))));
        assertEquals(TrafficClass.SHORT_FRAME, c.classify(0, 1, ByteBuffer.wrap(f), 0, 60, f.length));
        assertEquals(Classifier.Problem.EXTENSION_HEADER_CUT, c.d.problem);
        // an IPv6 host: directions
        Summary s = new Summary(flow(), "2001:db8::2", 1.0, null);
        s.packet(0, 1, ByteBuffer.wrap(Frames.ether(0x86dd, v6)), 0, 14 + v6.length, 14 + v6.length);
        @SuppressWarnings("unchecked")
        var data = (java.util.Map<String, Object>) ((java.util.Map<String, Object>) s.toMap(java.util.Map.of()).get("classes")).get("data");
        assertEquals(1L, ((java.util.Map<?, ?>) data.get("in")).get("packets"));
        assertEquals(java.util.Map.of("46", 1L), data.get("dscp"));
    }

    @Test
    void fragmentsFollowTheirFirst() {
        Classifier c = flow();
        byte[] ssh = Frames.tcp(40000, 22, 0x18, new byte[100]);
        byte[] first = Frames.ipv4(6, A, B, 0, ssh, 0x2000);          // MF, offset 0
        byte[] later = Frames.ipv4(6, A, B, 0, new byte[64], 15);       // offset 15 x 8, same id
        assertEquals(TrafficClass.SSH, cls(c, 101, first));
        assertEquals(1, c.d.fragment);
        assertEquals(TrafficClass.SSH, cls(c, 101, later));             // followed the first
        assertEquals(1, c.fragFollowed);
        Classifier fresh = flow();
        assertEquals(TrafficClass.DATA, cls(fresh, 101, later));        // first not seen: TCP -> data
        assertEquals(TrafficClass.UDP, cls(fresh, 101, Frames.ipv4(17, A, B, 0, new byte[64], 15)));
        assertEquals(TrafficClass.OTHER, cls(fresh, 101, Frames.ipv4(1, A, B, 0, new byte[64], 15)));
        assertEquals(3, fresh.fragUnseen);
        // a later fragment cut by the snaplen keeps the precedence: data -> short frame
        byte[] lf = Frames.ether(0x0800, later);
        assertEquals(TrafficClass.SHORT_FRAME, fresh.classify(0, 1, ByteBuffer.wrap(lf), 0, 40, lf.length));
        // IPv6 fragments: the first by its UDP header, a later one follows it
        Classifier v = flow();
        assertEquals(TrafficClass.UDP, cls(v, 229, ipv6(44, 0, frag6(17, 0, true, 7, Frames.udp(5, 6, new byte[64])))));
        assertEquals(TrafficClass.UDP, cls(v, 229, ipv6(44, 0, frag6(17, 9, false, 7, new byte[64]))));
        assertEquals(1, v.fragFollowed);
    }

    @Test
    void linkTypes() {
        Classifier c = flow();
        byte[] v6 = ipv6(6, 0, tcpData);
        assertEquals(TrafficClass.DATA, cls(c, 101, v6));                               // raw, version nibble
        assertEquals(TrafficClass.DATA, cls(c, 229, v6));                               // LINKTYPE_IPV6
        assertEquals(TrafficClass.DATA, cls(c, 228, ip4Data));                          // LINKTYPE_IPV4
        assertEquals(TrafficClass.DATA, cls(c, 276, cat(bytes(0x86, 0xdd), new byte[18], v6)));  // SLL2
        assertEquals("linux-sll2/ipv6", label(c));
        assertEquals(TrafficClass.DATA, cls(c, 113, cat(new byte[14], bytes(0x86, 0xdd), v6)));  // SLL
        assertEquals(TrafficClass.DATA, cls(c, 9, cat(bytes(0xff, 0x03, 0x00, 0x21), ip4Data)));   // PPP
        assertEquals(TrafficClass.DATA, cls(c, 9, cat(bytes(0x00, 0x57), v6)));                  // PPP, no address/control
        assertEquals(TrafficClass.OTHER, cls(c, 9, cat(bytes(0xff, 0x03, 0xc0, 0x21), new byte[20]))); // LCP
        assertEquals("ppp/non-ip", label(c));
        assertEquals(TrafficClass.DATA, cls(c, 104, cat(bytes(0x0f, 0x00, 0x08, 0x00), ip4Data)));  // Cisco HDLC
        assertEquals("cisco-hdlc/ipv4", label(c));
        assertEquals(TrafficClass.DATA, cls(c, 0, cat(bytes(2, 0, 0, 0), ip4Data)));             // BSD loopback, LE
        assertEquals(TrafficClass.DATA, cls(c, 0, cat(bytes(0, 0, 0, 30), v6)));                 // BSD loopback, BE, AF_INET6
        assertEquals(TrafficClass.DATA, cls(c, 108, cat(bytes(0, 0, 0, 2), ip4Data)));           // OpenBSD loop
        assertEquals(TrafficClass.DATA, cls(c, 1, Frames.ether(0x8864, cat(bytes(0x11, 0, 0, 1, 0, 0), bytes(0, 0x21), ip4Data))));
        assertEquals("ethernet/pppoe/ipv4", label(c));
        assertEquals(TrafficClass.OTHER, cls(c, 147, ip4Data));
        assertEquals(Classifier.Problem.UNSUPPORTED_LINK, c.d.problem);
        assertEquals(TrafficClass.OTHER, cls(c, 1, Frames.ether(0x0026, new byte[40])));  // 802.3 length: LLC
        assertEquals("ethernet/non-ip", label(c));
    }

    @Test
    void tunnelsInnerOrOuter() {
        Classifier in = flow();
        Classifier out = new Classifier(TrafficClass.RmiMode.FLOW, 1000, 60_000_000_000L, Classifier.Tunnel.OUTER);
        byte[] ipip = Frames.ipv4(4, "198.18.1.1", "198.18.1.2", 0, ip4Data, 0);
        byte[] sixin4 = Frames.ipv4(41, "198.18.1.1", "198.18.1.2", 0, ipv6(6, 0, tcpData), 0);
        byte[] fourin6 = ipv6(4, 0, ip4Data);
        byte[] gre = Frames.ipv4(47, "198.18.1.1", "198.18.1.2", 0, cat(bytes(0, 0, 0x08, 0), ip4Data), 0);
        byte[] greKey = Frames.ipv4(47, "198.18.1.1", "198.18.1.2", 0, cat(bytes(0x20, 0, 0x86, 0xdd, 0, 0, 0, 5), ipv6(6, 0, tcpData)), 0);
        byte[] teb = Frames.ipv4(47, "198.18.1.1", "198.18.1.2", 0, cat(bytes(0, 0, 0x65, 0x58), Frames.ether(0x0800, ip4Data)), 0);
        byte[] erspan2 = Frames.ipv4(47, "198.18.1.1", "198.18.1.2", 0,
                cat(bytes(0x10, 0, 0x88, 0xbe, 0, 0, 0, 1), new byte[8], Frames.ether(0x8100, cat(bytes(0, 5, 8, 0), ip4Data))), 0);
        String[] labels = {"raw-ip/ipv4/ip-in-ip/ipv4", "raw-ip/ipv4/ip-in-ip/ipv6", "raw-ip/ipv6/ip-in-ip/ipv4",
            "raw-ip/ipv4/gre/ipv4", "raw-ip/ipv4/gre/ipv6", "raw-ip/ipv4/gre/ethernet/ipv4", "raw-ip/ipv4/gre/erspan/ipv4"};
        byte[][] frames = {ipip, sixin4, fourin6, gre, greKey, teb, erspan2};
        for (int i = 0; i < frames.length; i++) {
            assertEquals(TrafficClass.DATA, cls(in, 101, frames[i]), labels[i]);
            assertEquals(labels[i], label(in));
            assertEquals(TrafficClass.OTHER, cls(out, 101, frames[i]), labels[i]);
            assertTrue(label(out).startsWith(labels[i].substring(0, labels[i].lastIndexOf('/'))), label(out));
        }
        // ERSPAN type I (no sequence bit, no header) and type III (12 bytes, +8 with the O bit)
        byte[] e1 = Frames.ipv4(47, A, B, 0, cat(bytes(0, 0, 0x88, 0xbe), Frames.ether(0x0800, ip4Data)), 0);
        byte[] e3 = Frames.ipv4(47, A, B, 0, cat(bytes(0, 0, 0x22, 0xeb), new byte[12], Frames.ether(0x0800, ip4Data)), 0);
        byte[] o = new byte[12];
        o[11] = 1;
        byte[] e3o = Frames.ipv4(47, A, B, 0, cat(bytes(0, 0, 0x22, 0xeb), o, new byte[8], Frames.ether(0x86dd, ipv6(6, 0, tcpData))), 0);
        for (byte[] f : new byte[][] {e1, e3, e3o}) {
            assertEquals(TrafficClass.DATA, cls(in, 101, f));
            assertTrue(label(in).startsWith("raw-ip/ipv4/gre/erspan/ipv"), label(in));
        }
        cls(in, 101, gre);
        assertEquals(46, in.d.dscp);  // inner: the inner header's DSCP
        cls(out, 101, gre);
        assertEquals(0, out.d.dscp);
        assertEquals(Summary.ipToInt("198.18.1.1"), out.d.src);
        // tunnels in tunnels: at most MAX_DEPTH IP layers, then undecodable
        byte[] deep = ip4Data;
        for (int i = 0; i < 6; i++) deep = Frames.ipv4(4, A, B, 0, deep, 0);
        assertEquals(TrafficClass.OTHER, cls(in, 101, deep));
        assertEquals(Classifier.Problem.TOO_DEEP, in.d.problem);
        // GRE version 1 (PPTP): not followed, counted
        cls(in, 101, Frames.ipv4(47, A, B, 0, cat(bytes(0x30, 0x81, 0x88, 0x0b), new byte[12]), 0));
        assertEquals(Classifier.Problem.TUNNEL_UNSUPPORTED, in.d.problem);
    }

    @Test
    void summaryCountsEncapsulationsAndUndecodable() {
        Summary s = new Summary(flow(), null, 1.0, null);
        byte[][] fs = {Frames.ether(0x0800, ip4Data), Frames.ether(0x86dd, ipv6(6, 0, tcpData)), Frames.ether(0x0806, new byte[28]),
            Frames.ether(0x0800, new byte[10])};
        for (byte[] f : fs) s.packet(1_000_000_000L, 1, ByteBuffer.wrap(f), 0, f.length, f.length);
        s.packet(1_000_000_000L, 147, ByteBuffer.wrap(ip4Data), 0, ip4Data.length, ip4Data.length);
        var m = s.toMap(java.util.Map.of());
        assertEquals(java.util.Map.of("ethernet/ipv4", 2L, "ethernet/ipv6", 1L, "ethernet/non-ip", 1L, "?", 1L),
                m.get("encapsulations"));
        @SuppressWarnings("unchecked")
        var und = (java.util.Map<String, Object>) m.get("undecodable");
        assertEquals(2L, und.get("packets"));
        assertEquals(java.util.Map.of("147", 1L), und.get("unsupported_link_types"));
        @SuppressWarnings("unchecked")
        var other = (java.util.Map<String, Object>) m.get("other_breakdown");
        assertEquals(1L, other.get("non_ip"));
        assertEquals(2L, other.get("undecodable"));
    }
}
