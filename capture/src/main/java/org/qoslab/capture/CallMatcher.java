package org.qoslab.capture;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * JRMP (Java RMI transport) call/return matching on captured TCP connections: one {@link Call}
 * record per remote call, timed at the capture point. Fed by {@link Summary} with every decoded TCP
 * packet, so the offline reader and both live engines share it. Exactly what is matched, and the
 * limits, are in capture/README.md ("JRMP calls").
 *
 * <p>A connection is tracked from a client segment whose payload starts with the JRMI magic
 * (0x4a524d49); its bytes are followed per direction by TCP sequence number (no copies, no
 * per-packet allocation): the handshake (header, ProtocolAck 0x4e + endpoint, client endpoint for
 * StreamProtocol 0x4b; SingleOpProtocol 0x4c has neither) is parsed byte by byte, then messages:
 * client Call 0x50, Ping 0x52, DgcAck 0x54 (+20 bytes), server ReturnData 0x51, PingAck 0x53.
 * Call and ReturnData bodies are Java serialization streams whose length is not cheap to find, so
 * a body runs until the peer starts the next message: a call starts at its 0x50 byte and its return
 * ends with the last server->client data segment before the client's next message (Call, Ping,
 * DgcAck), the connection's FIN/RST or the end of the capture. A call is complete only when every
 * return byte the client acknowledged was seen ({@link CallVerdict}); on lossy captures a client
 * message acknowledging unseen server bytes, or a server segment acknowledging unseen client bytes,
 * ends the call incomplete and resumes the other stream at the acknowledged sequence number.
 *
 * <p>The work is split by responsibility: this class keeps the connection table and the counts,
 * {@link JrmpSequencer} places segments by sequence number, {@link JrmpParser} reads JRMP bytes,
 * {@link JrmpConnection} holds a connection's state and {@link CallVerdict} decides each record.
 *
 * <p>Not thread-safe; one instance per capture.
 */
public final class CallMatcher {
    /** A silence of at least this long inside a call counts as a retransmission timeout (Linux's minimum RTO). */
    public static final long RTO_GAP_NS = 200_000_000L;
    static final int MAGIC = Classifier.JRMI_MAGIC;
    static final int CLOSE_NEXT = CallVerdict.CLOSE_NEXT, CLOSE_FIN = CallVerdict.CLOSE_FIN, CLOSE_END = CallVerdict.CLOSE_END;

    /** One matched call (all times in ns since the epoch, at the capture point). */
    public static final class Call {
        /** "jrmp" (this matcher), "giop" or "giop-locate" ({@link GiopMatcher}), "mpj" ({@link NiodevMatcher}). */
        public String protocol = "jrmp";
        /** GIOP's request id, MPJ's tag; -1 for JRMP (which has none). */
        public long requestId = -1;
        public int ipVersion;
        int cAddr, sAddr, cPort, sPort;
        long c6hi, c6lo, s6hi, s6lo;
        private String client, server;
        /** 1-based index of the call on its connection. */
        public int index;
        public long startNs;
        /** Time of the last return byte; -1 when the call is incomplete (never guessed). */
        public long endNs = -1;
        /** First reply byte minus last request byte (the server's time, incl. its stack), -1 without a reply. */
        public long serverNs = -1;
        public long requestBytes, replyBytes;
        public int segments, retransmitted, outOfOrder;
        public long maxGapNs;
        public boolean rto, complete;
        public String reason;
        /** 1-based frame numbers (as tshark counts) of the segment holding the Call byte and the ReturnData byte (0: none). */
        public long callFrame, returnFrame;

        public long latencyNs() { return endNs < 0 ? -1 : endNs - startNs; }

        /** Client endpoint, {@code 198.18.0.1:40000} or {@code [2001:db8::1]:40000} (formatted when first asked). */
        public String client() {
            if (client == null) client = IpText.endpoint(ipVersion, cAddr, c6hi, c6lo, cPort);
            return client;
        }

        public String server() {
            if (server == null) server = IpText.endpoint(ipVersion, sAddr, s6hi, s6lo, sPort);
            return server;
        }

        public Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("client", client());
            m.put("server", server());
            m.put("index", index);
            m.put("start_ns", startNs);
            m.put("end_ns", endNs < 0 ? null : (Object) endNs);
            m.put("latency_ms", endNs < 0 ? null : (Object) ((endNs - startNs) / 1e6));
            m.put("server_ms", serverNs < 0 ? null : (Object) (serverNs / 1e6));
            m.put("request_bytes", requestBytes);
            m.put("reply_bytes", replyBytes);
            m.put("segments", segments);
            m.put("retransmitted", retransmitted);
            m.put("out_of_order", outOfOrder);
            m.put("rto", rto);
            m.put("max_gap_ms", maxGapNs / 1e6);
            m.put("complete", complete);
            m.put("reason", reason);
            m.put("call_frame", callFrame);
            m.put("return_frame", returnFrame == 0 ? null : (Object) returnFrame);
            m.put("protocol", protocol);
            m.put("request_id", requestId < 0 ? null : (Object) requestId);
            return m;
        }

        @Override public String toString() { return toMap().toString(); }
    }

    private final int maxConns;
    private final long idleNs, quietNs;
    private final LinkedHashMap<JrmpConnection.Key, JrmpConnection> conns;
    private final JrmpConnection.Key probe = new JrmpConnection.Key();
    private final JrmpParser parser = new JrmpParser(this);
    private final JrmpSequencer sequencer = new JrmpSequencer(this, parser);
    private JrmpConnection lastConn;
    private int tracked;
    private long lastA, lastB;
    private Consumer<Call> sink;
    private long evictTs;
    private boolean finished;
    /** Counters for the summary. */
    public long connections, callsSeen, complete, withRto, retransmitted, outOfOrder, gaps, pings, pingAcks, dgcAcks,
            returnsWithoutCall, desyncs, multiplex, notSupported, evicted, retransmittedInCalls;
    /** Client messages that acknowledged server bytes the capture never saw (the server stream resumed at the ACK). */
    public long ackResyncs;

    /**
     * @param maxConns JRMP connections tracked at once (least recently seen evicted first: its call closes as at the capture's end)
     * @param idleNs a connection idle longer than this is forgotten the same way
     * @param quietNs a call whose reply has started when the capture ends (or its connection is evicted) counts as
     *        complete only when the client acknowledged every reply byte and nothing followed for this long
     */
    public CallMatcher(int maxConns, long idleNs, long quietNs) {
        this.maxConns = maxConns;
        this.idleNs = idleNs;
        this.quietNs = quietNs;
        this.conns = new LinkedHashMap<>(64, 0.75f, false) { // insertion order; expireIdle re-queues live ones
            @Override
            protected boolean removeEldestEntry(Map.Entry<JrmpConnection.Key, JrmpConnection> e) {
                if (size() > CallMatcher.this.maxConns) {
                    evicted++;
                    if (e.getValue() == lastConn) lastConn = null;
                    closeCall(e.getValue(), CLOSE_END, evictTs, "connection evicted from the table (--max-flows)");
                    return true;
                }
                return false;
            }
        };
    }

    /** Where finished calls go (in the order they close); null: only counted. */
    public CallMatcher sink(Consumer<Call> s) { this.sink = s; return this; }

    public int tracked() { return conns.size(); }

        /**
     * One decoded packet ({@code d} as the classifier left it). Only TCP packets of connections that
     * opened with the JRMI magic are looked at; everything else returns after two tests.
     *
     * @param frame 1-based frame number in the capture
     */
    public void packet(long ts, Classifier.Decoded d, ByteBuffer b, long frame) {
        // kept tiny (inlined into the reader's loop); the rest only runs while JRMP connections exist
        if (tracked == 0 && !(d.payloadCaptured >= 4 && b.getInt(d.payloadOff) == MAGIC)) return;
        track(ts, d, b, frame);
    }

    private void track(long ts, Classifier.Decoded d, ByteBuffer b, long frame) {
        if (!d.tcp || d.fragment != 0 || d.problem != Classifier.Problem.NONE || d.ipVersion == 0) return;
        boolean magic = d.payloadCaptured >= 4 && b.getInt(d.payloadOff) == MAGIC;
        long ea = ((d.src & 0xFFFFFFFFL) << 16) | d.sport, eb = ((d.dst & 0xFFFFFFFFL) << 16) | d.dport;
        if (ea < eb) { probe.a = ea; probe.b = eb; } else { probe.a = eb; probe.b = ea; }
        JrmpConnection c;
        if (lastConn != null && probe.a == lastA && probe.b == lastB) {
            c = lastConn; // segments come in bursts: most packets are the previous one's connection
        } else {
            c = conns.get(probe);
            lastConn = c;
            lastA = probe.a;
            lastB = probe.b;
        }
        if (c == null || ts - c.lastTs > idleNs) {
            if (c != null) { // idle too long: that connection is over, this is a new one (or nothing)
                remove();
                closeCall(c, CLOSE_END, ts, "connection idle past --idle-timeout");
            }
            if (!magic || (d.tcpFlags & 0x07) != 0) return;
            c = open(d, ts);
            evictTs = ts;
            conns.put(new JrmpConnection.Key(probe.a, probe.b), c);
            lastConn = c;
            expireIdle(ts);
            tracked = conns.size();
        }
        segment(c, ts, d, b, frame);
    }

    private JrmpConnection open(Classifier.Decoded d, long ts) {
        JrmpConnection c = new JrmpConnection();
        connections++;
        c.ipVersion = d.ipVersion;
        c.cAddr = d.src; c.sAddr = d.dst; c.cPort = d.sport; c.sPort = d.dport;
        c.c6hi = d.src6hi; c.c6lo = d.src6lo; c.s6hi = d.dst6hi; c.s6lo = d.dst6lo;
        c.next[0] = d.tcpSeq;
        c.seqKnown[0] = true;
        if ((d.tcpFlags & 0x10) != 0) { // the client's ACK names the server's first data byte
            c.next[1] = d.tcpAck;
            c.seqKnown[1] = true;
        }
        c.st[0] = JrmpConnection.ST_HEADER;
        c.st[1] = JrmpConnection.ST_ACK;
        c.lastTs = ts;
        return c;
    }

    /** A few of the oldest-inserted connections per new one: idle ones go, live ones move to the back (LRU enough). */
    private void expireIdle(long now) {
        for (int checked = 0; checked < 4 && conns.size() > 1; checked++) {
            var it = conns.entrySet().iterator();
            Map.Entry<JrmpConnection.Key, JrmpConnection> e = it.next();
            JrmpConnection c = e.getValue();
            if (c == lastConn) break;
            it.remove();
            if (now - c.lastTs > idleNs) {
                if (c == lastConn) lastConn = null;
                closeCall(c, CLOSE_END, now, "connection idle past --idle-timeout");
            } else {
                conns.put(e.getKey(), c);
                if (now - c.lastTs < idleNs / 2) break;
            }
        }
    }

    private void remove() {
        conns.remove(probe);
        lastConn = null;
        tracked = conns.size();
    }

    private int dirOf(JrmpConnection c, Classifier.Decoded d) {
        if (d.sport != c.cPort || d.src != c.cAddr) return 1;
        if (c.ipVersion == 6 && (d.src6hi != c.c6hi || d.src6lo != c.c6lo)) return 1;
        return 0;
    }

    private void segment(JrmpConnection c, long ts, Classifier.Decoded d, ByteBuffer b, long frame) {
        int dir = dirOf(c, d);
        long gap = ts - c.lastTs;
        c.lastTs = ts;
        if (dir == 0 && (d.tcpFlags & 0x10) != 0 && (!c.clientAckKnown || d.tcpAck - c.clientAck > 0)) {
            c.clientAck = d.tcpAck;
            c.clientAckKnown = true;
        }
        int len = d.payloadLen;
        boolean dataSeg = len > 0;
        if (dataSeg) sequencer.data(c, dir, ts, d, b, frame, len, gap);
        else if (c.phase != JrmpConnection.PH_NONE) c.pendingGap = Math.max(c.pendingGap, gap);
        if ((d.tcpFlags & 0x05) != 0) { // FIN or RST: the connection is over
            remove();
            closeCall(c, CLOSE_FIN, ts, (d.tcpFlags & 0x04) != 0 ? "connection reset" : "connection closed");
        }
    }

    /** Body bytes of the call in progress: request bytes from the client, reply bytes from the server. */
    void addBody(JrmpConnection c, int dir, int n) {
        if (dir == 0 && c.phase == JrmpConnection.PH_REQUEST) c.reqBytes += n;
        else if (dir == 1 && c.phase == JrmpConnection.PH_REPLY) c.repBytes += n;
    }

    /** The connection lost its place in the JRMP stream: its call (if any) is incomplete for {@code why}. */
    void lose(JrmpConnection c, String why) {
        if (!c.lost) desyncs++;
        c.lost = true;
        c.st[0] = c.st[1] = JrmpConnection.ST_LOST;
        if (c.phase != JrmpConnection.PH_NONE && c.broken == null) c.broken = why;
    }

    /** Close the call in progress (if any), count it and emit it ({@link CallVerdict} decides whether it is complete). */
    void closeCall(JrmpConnection c, int how, long ts, String why) {
        if (c.phase == JrmpConnection.PH_NONE) return;
        Call r = CallVerdict.of(c, how, ts, why, quietNs);
        if (r.complete) complete++;
        if (r.rto) withRto++;
        c.phase = JrmpConnection.PH_NONE;
        if (sink != null) sink.accept(r);
    }

    /**
     * The capture is over: close every call in progress (a call whose reply started is complete
     * only when the client acknowledged all of it and nothing followed for the quiet time).
     *
     * @param captureEndNs time of the capture's last packet
     */
    public void finish(long captureEndNs) {
        if (finished) return;
        finished = true;
        for (JrmpConnection c : new ArrayList<>(conns.values())) closeCall(c, CLOSE_END, captureEndNs, null);
    }

    /** Counts for summary.json's {@code calls} block. */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("connections", connections);
        m.put("calls", callsSeen);
        m.put("complete", complete);
        m.put("incomplete", callsSeen - complete);
        m.put("with_rto", withRto);
        m.put("retransmitted_segments", retransmitted);
        m.put("retransmitted_in_calls", retransmittedInCalls);
        m.put("out_of_order_segments", outOfOrder);
        m.put("sequence_gaps", gaps);
        m.put("pings", pings);
        m.put("ping_acks", pingAcks);
        m.put("dgc_acks", dgcAcks);
        m.put("returns_without_call", returnsWithoutCall);
        m.put("desynchronised_connections", desyncs);
        m.put("resynchronised_at_ack", ackResyncs);
        m.put("multiplex_connections", multiplex);
        m.put("protocol_not_supported", notSupported);
        m.put("evicted_connections", evicted);
        m.put("rto_gap_ms", RTO_GAP_NS / 1e6);
        m.put("quiet_ms", quietNs / 1e6);
        return m;
    }

    /** Collects calls into a list (tests). */
    public static List<Call> collect(CallMatcher m) {
        List<Call> out = new ArrayList<>();
        m.sink(out::add);
        return out;
    }
}
