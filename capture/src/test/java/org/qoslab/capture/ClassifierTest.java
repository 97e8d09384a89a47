package org.qoslab.capture;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** Packet bytes -> class, on crafted frames: every class, the precedence, both RMI modes. */
class ClassifierTest {
    static final String A = "198.18.0.1", B = "198.18.0.2";

    static TrafficClass cls(Classifier c, int link, byte[] f, int cap, int orig, long ts) {
        return c.classify(ts, link, ByteBuffer.wrap(f), 0, cap, orig);
    }

    static TrafficClass cls(Classifier c, byte[] f) { return cls(c, 1, f, f.length, f.length, 0); }

    static Classifier flow() { return new Classifier(TrafficClass.RmiMode.FLOW, 1000, 60_000_000_000L); }

    static Classifier ethereal() { return new Classifier(TrafficClass.RmiMode.ETHEREAL, 1000, 60_000_000_000L); }

    @Test
    void everyClassAndItsPrecedence() {
        Classifier c = flow();
        byte[] payload = new byte[100];
        assertEquals(TrafficClass.CONTROL_ACK, cls(c, Frames.ether(0x0800, Frames.ipv4(6, A, B, 0, Frames.tcp(5000, 22, 0x10, new byte[0]), 0))));
        assertEquals(TrafficClass.SSH, cls(c, Frames.tcpFrame(A, B, 40000, 22, 0, payload)));
        assertEquals(TrafficClass.RMI, cls(c, Frames.tcpFrame(A, B, 40000, 1099, 0, payload)));
        assertEquals(TrafficClass.DATA, cls(c, Frames.tcpFrame(A, B, 40000, 5001, 0, payload)));
        assertEquals(TrafficClass.UDP, cls(c, Frames.ether(0x0800, Frames.ipv4(17, A, B, 0, Frames.udp(9, 10001, payload), 0))));
        assertEquals(TrafficClass.OTHER, cls(c, Frames.ether(0x0806, new byte[28])));  // ARP
        assertEquals(TrafficClass.OTHER, cls(c, Frames.ether(0x0800, Frames.ipv4(1, A, B, 0, new byte[8], 0))));  // ICMP
        assertEquals(TrafficClass.OTHER, cls(c, Frames.ether(0x86dd, new byte[60])));  // IPv6
        // short frame: below control/ack, ssh and rmi, above data and udp
        byte[] data = Frames.tcpFrame(A, B, 40000, 5001, 0, payload);
        assertEquals(TrafficClass.SHORT_FRAME, cls(c, 1, data, 60, data.length, 0));
        byte[] ssh = Frames.tcpFrame(A, B, 40000, 22, 0, payload);
        assertEquals(TrafficClass.SSH, cls(c, 1, ssh, 60, ssh.length, 0));
        byte[] ack = Frames.ether(0x0800, Frames.ipv4(6, A, B, 0, Frames.tcp(5000, 80, 0x10, new byte[0]), 0));
        assertEquals(TrafficClass.CONTROL_ACK, cls(c, 1, ack, 50, ack.length, 0));
        // a TCP header cut before 16 bytes has no length for tshark (no tcp.len): a short frame
        assertEquals(TrafficClass.SHORT_FRAME, cls(c, 1, ack, 40, ack.length, 0));
        byte[] u = Frames.ether(0x0800, Frames.ipv4(17, A, B, 0, Frames.udp(9, 10001, payload), 0));
        assertEquals(TrafficClass.SHORT_FRAME, cls(c, 1, u, 50, u.length, 0));
    }

    @Test
    void dscpAndDecodedFields() {
        Classifier c = flow();
        cls(c, Frames.tcpFrame(A, B, 40000, 1100, 0xa0, new byte[10]));
        assertEquals(40, c.d.dscp);
        assertEquals(Summary.ipToInt(A), c.d.src);
        assertEquals(1100, c.d.dport);
        assertEquals(10, c.d.payloadLen);
    }

    @Test
    void rmiFlowModeFollowsConnectionsThatOpenWithJrmi() {
        Classifier f = flow(), e = ethereal();
        byte[] hello = Frames.tcpFrame(A, B, 40000, 1100, 0, Frames.JRMI);
        byte[] call = Frames.tcpFrame(A, B, 40000, 1100, 0, new byte[] {0x50, 1, 2, 3});
        byte[] reply = Frames.tcpFrame(B, A, 1100, 40000, 0, new byte[500]);
        assertEquals(TrafficClass.RMI, cls(f, hello));
        assertEquals(TrafficClass.RMI, cls(f, call));
        assertEquals(TrafficClass.RMI, cls(f, reply));          // both directions, whole connection
        assertEquals(TrafficClass.DATA, cls(e, hello));          // ethereal: only port 1099 is RMI
        assertEquals(TrafficClass.DATA, cls(e, reply));
        // a capture that starts mid-connection: first payload seen is not JRMI -> not RMI
        Classifier mid = flow();
        assertEquals(TrafficClass.DATA, cls(mid, reply));
        assertEquals(TrafficClass.DATA, cls(mid, call));
        // ethereal: every payload on the registry port
        assertEquals(TrafficClass.RMI, cls(e, Frames.tcpFrame(A, B, 40001, 1099, 0, new byte[16])));
    }

    @Test
    void linkTypesAndFragments() {
        Classifier c = flow();
        byte[] ip = Frames.ipv4(17, A, B, 0, Frames.udp(9, 10001, new byte[10]), 0);
        assertEquals(TrafficClass.UDP, cls(c, 101, ip, ip.length, ip.length, 0));      // raw IPv4
        byte[] sll = new byte[16 + ip.length];
        sll[14] = 0x08;
        System.arraycopy(ip, 0, sll, 16, ip.length);
        assertEquals(TrafficClass.UDP, cls(c, 113, sll, sll.length, sll.length, 0));   // Linux cooked
        byte[] sll2 = new byte[20 + ip.length];
        sll2[0] = 0x08;
        System.arraycopy(ip, 0, sll2, 20, ip.length);
        assertEquals(TrafficClass.UDP, cls(c, 276, sll2, sll2.length, sll2.length, 0)); // Linux cooked v2
        byte[] vlan = new byte[18 + ip.length];
        vlan[12] = (byte) 0x81; vlan[16] = 0x08;
        System.arraycopy(ip, 0, vlan, 18, ip.length);
        assertEquals(TrafficClass.UDP, cls(c, 1, vlan, vlan.length, vlan.length, 0));   // 802.1Q
        assertEquals(TrafficClass.OTHER, cls(c, 147, ip, ip.length, ip.length, 0));     // unsupported link
        assertEquals(1, c.unsupportedLink);
        byte[] frag = Frames.ether(0x0800, Frames.ipv4(6, A, B, 0, new byte[64], 100));  // non-first fragment
        assertEquals(TrafficClass.DATA, cls(c, frag));
    }

    @Test
    void flowTableStaysBoundedWithAMillionFlows() {
        Classifier c = new Classifier(TrafficClass.RmiMode.FLOW, 50_000, 60_000_000_000L);
        byte[] f = Frames.tcpFrame(A, B, 40000, 5000, 0, Frames.JRMI);
        ByteBuffer b = ByteBuffer.wrap(f);
        for (int i = 0; i < 1_000_000; i++) {
            b.putShort(14 + 20, (short) (i & 0xFFFF));        // source port
            b.putInt(14 + 12, 0xC6120000 | (i >>> 16));         // source address 198.18.x.y
            c.classify(i * 1000L, 1, b, 0, f.length, f.length);
        }
        // every flow but the 50 000 kept was evicted; the 32 packets on ports 22 and 1099 (16
        // addresses each) are SSH / registry RMI and never enter the table
        assertEquals(1_000_000 - 50_000 - 32, c.flows().evictedFull);
        assertEquals(50_000, c.flows().size());
        // idle timeout: one flow, then a long silence, then a new flow evicts the idle one
        Classifier t = new Classifier(TrafficClass.RmiMode.FLOW, 1000, 1_000_000_000L);
        cls(t, 1, f, f.length, f.length, 0);
        cls(t, 1, Frames.tcpFrame(A, B, 40001, 5000, 0, Frames.JRMI), f.length, f.length, 5_000_000_000L);
        assertEquals(1, t.flows().size());
        assertEquals(1, t.flows().evictedIdle);
    }
}
