package org.qoslab.capture;

/**
 * The thesis's Ethereal traffic classes (Chapter V, Figures 9-10), in precedence order: the first
 * that applies wins. {@code UDP} holds the D-ITG congestion and any other UDP.
 */
public enum TrafficClass {
    /** TCP segment without payload: SYN, FIN, RST, pure ACK. */
    CONTROL_ACK("control/ack"),
    /** TCP port 22. */
    SSH("ssh"),
    /** JRMP (Java RMI), see {@link RmiMode}. */
    RMI("rmi"),
    /** Captured length shorter than the frame on the wire (snaplen cut it). */
    SHORT_FRAME("short-frame"),
    /** Any other TCP payload. */
    DATA("data"),
    /** UDP (congestion and other). */
    UDP("udp"),
    /** Everything else: ARP, ICMP, non-IP, undecodable. */
    OTHER("other");

    public final String label;

    TrafficClass(String label) { this.label = label; }

    /** How RMI is recognised. */
    public enum RmiMode {
        /** What Wireshark's/Ethereal's JRMP dissector shows: it is registered on TCP port 1099 and
         * claims every payload segment there (measured: tshark's {@code rmi} filter = all
         * {@code tcp.port==1099 && tcp.len>0}). Calls on exported objects' ports are invisible. */
        ETHEREAL,
        /** ETHEREAL plus: a TCP connection whose first payload seen starts with the JRMI magic is
         * RMI for its whole life (the calls to exported objects on any port). */
        FLOW
    }
}
