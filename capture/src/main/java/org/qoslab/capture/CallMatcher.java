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
 * DgcAck), the connection's FIN/RST or the end of the capture.
 *
 * <p>Not thread-safe; one instance per capture.
 */
public final class CallMatcher {
    /** A silence of at least this long inside a call counts as a retransmission timeout (Linux's minimum RTO). */
    public static final long RTO_GAP_NS = 200_000_000L;
    static final int MAGIC = Classifier.JRMI_MAGIC;
    static final int STREAM_PROTOCOL = 0x4b, SINGLE_OP_PROTOCOL = 0x4c, MULTIPLEX_PROTOCOL = 0x4d;
    static final int PROTOCOL_ACK = 0x4e, PROTOCOL_NOT_SUPPORTED = 0x4f;
    static final int CALL = 0x50, RETURN_DATA = 0x51, PING = 0x52, PING_ACK = 0x53, DGC_ACK = 0x54;

    /** One matched call (all times in ns since the epoch, at the capture point). */
    public static final class Call {
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
            if (client == null) client = endpoint(ipVersion, cAddr, c6hi, c6lo, cPort);
            return client;
        }

        public String server() {
            if (server == null) server = endpoint(ipVersion, sAddr, s6hi, s6lo, sPort);
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
            return m;
        }

        @Override public String toString() { return toMap().toString(); }
    }

    // parser states of one direction
    static final int ST_HEADER = 0, ST_UTF_LEN = 1, ST_SKIP = 2, ST_ACK = 3, ST_BOUNDARY = 4, ST_BODY = 5, ST_LOST = 6;
    // call phases
    static final int PH_NONE = 0, PH_REQUEST = 1, PH_REPLY = 2;

    /** Connection key (both endpoints, canonical order); the probe instance is reused for lookups. */
    static final class Key {
        long a, b;

        Key() { }

        Key(long a, long b) { this.a = a; this.b = b; }

        @Override public boolean equals(Object o) { return o instanceof Key && ((Key) o).a == a && ((Key) o).b == b; }

        @Override public int hashCode() { long h = a * 0x9E3779B97F4A7C15L ^ b; return (int) (h ^ (h >>> 29)); }
    }

    static final class Conn {
        int ipVersion, cAddr, sAddr, cPort, sPort;
        long c6hi, c6lo, s6hi, s6lo;
        // per direction, 0 = client->server, 1 = server->client
        final int[] next = new int[2];
        final boolean[] seqKnown = new boolean[2];
        final int[] holeStart = new int[2], holeEnd = new int[2];
        final boolean[] hole = new boolean[2], holeInBody = new boolean[2];
        final int[] st = new int[2], after = new int[2], partial = new int[2], partialN = new int[2];
        final long[] skip = new long[2];
        boolean singleOp, lost;
        int clientAck;
        boolean clientAckKnown;
        int lastDataDir = -1;
        long lastTs;
        int calls;
        // the call in progress
        int phase;
        long start, lastReqTs, firstReplyTs, lastReplyTs, reqBytes, repBytes, maxGap, pendingGap, callFrame, returnFrame;
        int segs, retx, ooo;
        String broken;
    }

    private final int maxConns;
    private final long idleNs, quietNs;
    private final LinkedHashMap<Key, Conn> conns;
    private final Key probe = new Key();
    private Conn lastConn;
    private int tracked;
    private long lastA, lastB;
    private Consumer<Call> sink;
    private long evictTs;
    private boolean finished;
    /** Counters for the summary. */
    public long connections, callsSeen, complete, withRto, retransmitted, outOfOrder, gaps, pings, pingAcks, dgcAcks,
            returnsWithoutCall, desyncs, multiplex, notSupported, evicted, retransmittedInCalls;

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
            protected boolean removeEldestEntry(Map.Entry<Key, Conn> e) {
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

    private static int u8(ByteBuffer b, int p) { return b.get(p) & 0xFF; }

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
        Conn c;
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
            conns.put(new Key(probe.a, probe.b), c);
            lastConn = c;
            expireIdle(ts);
            tracked = conns.size();
        }
        segment(c, ts, d, b, frame);
    }

    private Conn open(Classifier.Decoded d, long ts) {
        Conn c = new Conn();
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
        c.st[0] = ST_HEADER;
        c.st[1] = ST_ACK;
        c.lastTs = ts;
        return c;
    }

    /** A few of the oldest-inserted connections per new one: idle ones go, live ones move to the back (LRU enough). */
    private void expireIdle(long now) {
        for (int checked = 0; checked < 4 && conns.size() > 1; checked++) {
            var it = conns.entrySet().iterator();
            Map.Entry<Key, Conn> e = it.next();
            Conn c = e.getValue();
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

    private int dirOf(Conn c, Classifier.Decoded d) {
        if (d.sport != c.cPort || d.src != c.cAddr) return 1;
        if (c.ipVersion == 6 && (d.src6hi != c.c6hi || d.src6lo != c.c6lo)) return 1;
        return 0;
    }

    private void segment(Conn c, long ts, Classifier.Decoded d, ByteBuffer b, long frame) {
        int dir = dirOf(c, d);
        long gap = ts - c.lastTs;
        c.lastTs = ts;
        if (dir == 0 && (d.tcpFlags & 0x10) != 0 && (!c.clientAckKnown || d.tcpAck - c.clientAck > 0)) {
            c.clientAck = d.tcpAck;
            c.clientAckKnown = true;
        }
        int len = d.payloadLen;
        boolean dataSeg = len > 0;
        if (dataSeg) data(c, dir, ts, d, b, frame, len, gap);
        else if (c.phase != PH_NONE) c.pendingGap = Math.max(c.pendingGap, gap);
        if ((d.tcpFlags & 0x05) != 0) { // FIN or RST: the connection is over
            remove();
            closeCall(c, CLOSE_FIN, ts, (d.tcpFlags & 0x04) != 0 ? "connection reset" : "connection closed");
        }
    }

    private void data(Conn c, int dir, long ts, Classifier.Decoded d, ByteBuffer b, long frame, int len, long gap) {
        int seq = d.tcpSeq;
        if (!c.seqKnown[dir]) { c.next[dir] = seq; c.seqKnown[dir] = true; }
        int delta = seq - c.next[dir];
        if (delta > 0) { // bytes before this segment were not captured (yet)
            gaps++;
            boolean body = !c.lost && c.st[dir] == ST_BODY && !c.holeInBody[dir]
                    && c.phase == (dir == 0 ? PH_REQUEST : PH_REPLY);
            c.hole[dir] = true;
            c.holeStart[dir] = c.next[dir];
            c.holeEnd[dir] = seq;
            c.next[dir] = seq + len;
            if (body) { // inside a call's body: only byte counts are missing; a later fill makes it whole again
                c.holeInBody[dir] = true;
                countInCall(c, dir, ts, gap, false);
                addBody(c, dir, len);
                c.lastDataDir = dir;
                return;
            }
            boolean resync = dir == 0 && c.lastDataDir == 1 && d.payloadCaptured > 0 && u8(b, d.payloadOff) == CALL;
            lose(c, "sequence gap in the " + (dir == 0 ? "client" : "server") + " stream (a segment the capture did not see)");
            if (resync) resync(c, ts, b, d, frame, len);
            else countInCall(c, dir, ts, gap, true);
            c.lastDataDir = dir;
            return;
        }
        if (delta + len <= 0) { // nothing new: a retransmission, or a late segment filling a gap
            boolean fill = c.hole[dir] && seq - c.holeStart[dir] >= 0 && c.holeEnd[dir] - seq > 0;
            if (fill) {
                outOfOrder++;
                if (c.phase != PH_NONE) c.ooo++;
                if (seq == c.holeStart[dir]) { // fills the hole from its start
                    int n = Math.min(len, c.holeEnd[dir] - seq);
                    if (c.holeInBody[dir]) addBody(c, dir, n);
                    c.holeStart[dir] = seq + n;
                    if (c.holeStart[dir] == c.holeEnd[dir]) { c.hole[dir] = false; c.holeInBody[dir] = false; }
                }
            } else {
                retransmitted++;
                if (c.phase != PH_NONE) { c.retx++; retransmittedInCalls++; }
            }
            countInCall(c, dir, ts, gap, true);
            return;
        }
        if (delta < 0) { // partly old: the new part is processed
            retransmitted++;
            if (c.phase != PH_NONE) { c.retx++; retransmittedInCalls++; }
        }
        int from = -delta;
        c.next[dir] = seq + len;
        if (c.lost) {
            if (dir == 0 && from == 0 && c.lastDataDir == 1 && d.payloadCaptured > 0 && u8(b, d.payloadOff) == CALL) {
                resync(c, ts, b, d, frame, len);
            } else {
                countInCall(c, dir, ts, gap, true);
            }
            c.lastDataDir = dir;
            return;
        }
        // a client segment that starts a message belongs to the next call, not to the one it closes
        if (!(dir == 0 && c.st[0] == ST_BOUNDARY)) countInCall(c, dir, ts, gap, false);
        consume(c, dir, ts, b, d.payloadOff, d.payloadCaptured, from, len, frame);
        c.lastDataDir = dir;
    }

    private static void addBody(Conn c, int dir, int n) {
        if (dir == 0 && c.phase == PH_REQUEST) c.reqBytes += n;
        else if (dir == 1 && c.phase == PH_REPLY) c.repBytes += n;
    }

    /** A lost connection picks up again at a client segment starting with Call after server data. */
    private void resync(Conn c, long ts, ByteBuffer b, Classifier.Decoded d, long frame, int len) {
        c.lost = false;
        c.st[0] = ST_BOUNDARY;
        c.st[1] = ST_BOUNDARY;
        consume(c, 0, ts, b, d.payloadOff, d.payloadCaptured, 0, len, frame);
    }

    private void lose(Conn c, String why) {
        if (!c.lost) desyncs++;
        c.lost = true;
        c.st[0] = c.st[1] = ST_LOST;
        if (c.phase != PH_NONE && c.broken == null) c.broken = why;
    }

    /** Segment counts, retransmission timing and the end time of the call in progress (data segments not parsed). */
    private void countInCall(Conn c, int dir, long ts, long gap, boolean old) {
        if (c.phase == PH_NONE) return;
        c.segs++;
        c.pendingGap = Math.max(c.pendingGap, gap);
        if (c.phase == PH_REQUEST ? dir == 0 : dir == 1) {
            c.maxGap = Math.max(c.maxGap, c.pendingGap);
            c.pendingGap = 0;
        }
        if (c.phase == PH_REPLY && dir == 1) c.lastReplyTs = ts;
        if (c.phase == PH_REQUEST && dir == 0 && !old) c.lastReqTs = ts;
    }

    /** Parse new bytes [from, len) of a segment's payload (only [0, captured) are in the buffer). */
    private void consume(Conn c, int dir, long ts, ByteBuffer b, int off, int captured, int from, int len, long frame) {
        int i = from;
        while (i < len) {
            switch (c.st[dir]) {
                case ST_SKIP: {
                    long n = Math.min(c.skip[dir], len - i);
                    i += (int) n;
                    c.skip[dir] -= n;
                    if (c.skip[dir] == 0) c.st[dir] = c.after[dir];
                    break;
                }
                case ST_BODY: {
                    addBody(c, dir, len - i);
                    i = len;
                    break;
                }
                case ST_LOST:
                    return;
                case ST_HEADER: { // magic (checked when the connection was opened), version, protocol
                    if (c.partialN[dir] == 6) {
                        if (i >= captured) { lose(c, "JRMP header not captured (snaplen)"); return; }
                        int p = u8(b, off + i);
                        if (p == STREAM_PROTOCOL) {
                            c.st[0] = ST_UTF_LEN; // the client endpoint follows once the server acknowledged
                            c.after[0] = ST_BOUNDARY;
                            c.partialN[0] = 0;
                            c.partial[0] = 0;
                        } else if (p == SINGLE_OP_PROTOCOL) {
                            c.singleOp = true;
                            c.st[0] = ST_BOUNDARY;
                            c.st[1] = ST_BOUNDARY;
                        } else {
                            if (p == MULTIPLEX_PROTOCOL) multiplex++;
                            lose(c, "JRMP protocol 0x" + Integer.toHexString(p) + " not matched");
                            return;
                        }
                    } else {
                        c.partialN[dir]++;
                    }
                    i++;
                    break;
                }
                case ST_ACK: {
                    if (i >= captured) { lose(c, "JRMP ProtocolAck not captured (snaplen)"); return; }
                    int a = u8(b, off + i++);
                    if (a == PROTOCOL_ACK) {
                        c.st[1] = ST_UTF_LEN;
                        c.after[1] = ST_BOUNDARY;
                        c.partial[1] = 0;
                        c.partialN[1] = 0;
                    } else {
                        if (a == PROTOCOL_NOT_SUPPORTED) notSupported++;
                        lose(c, "server answered the JRMP header with 0x" + Integer.toHexString(a));
                        return;
                    }
                    break;
                }
                case ST_UTF_LEN: { // endpoint: UTF host (2-byte length + bytes), then a 4-byte port
                    if (i >= captured) { lose(c, "JRMP endpoint not captured (snaplen)"); return; }
                    c.partial[dir] = (c.partial[dir] << 8) | u8(b, off + i++);
                    if (++c.partialN[dir] == 2) {
                        c.skip[dir] = c.partial[dir] + 4L;
                        c.st[dir] = ST_SKIP;
                    }
                    break;
                }
                case ST_BOUNDARY: {
                    if (i >= captured) { lose(c, "JRMP message byte not captured (snaplen)"); return; }
                    int m = u8(b, off + i);
                    if (dir == 0) {
                        if (m == CALL) {
                            closeCall(c, CLOSE_NEXT, ts, null);
                            c.phase = PH_REQUEST;
                            c.start = ts;
                            c.lastReqTs = ts;
                            c.callFrame = frame;
                            c.returnFrame = 0;
                            c.reqBytes = len - i;
                            c.repBytes = 0;
                            c.segs = 1;
                            c.retx = c.ooo = 0;
                            c.maxGap = c.pendingGap = 0;
                            c.broken = null;
                            c.holeInBody[0] = c.holeInBody[1] = false;
                            c.calls++;
                            callsSeen++;
                            c.st[0] = ST_BODY;
                            c.st[1] = ST_BOUNDARY;
                            i = len;
                        } else if (m == PING) {
                            closeCall(c, CLOSE_NEXT, ts, null);
                            pings++;
                            c.st[1] = ST_BOUNDARY;
                            i++;
                        } else if (m == DGC_ACK) {
                            closeCall(c, CLOSE_NEXT, ts, null);
                            dgcAcks++;
                            c.skip[0] = 20; // the UniqueIdentifier (ObjID's UID: int, long, short)
                            c.after[0] = ST_BOUNDARY;
                            c.st[0] = ST_SKIP;
                            c.st[1] = ST_BOUNDARY;
                            i++;
                        } else {
                            lose(c, "unknown JRMP client message 0x" + Integer.toHexString(m));
                            return;
                        }
                    } else {
                        if (m == RETURN_DATA) {
                            if (c.phase == PH_REQUEST) {
                                c.phase = PH_REPLY;
                                c.firstReplyTs = ts;
                                c.lastReplyTs = ts;
                                c.returnFrame = frame;
                                c.repBytes = len - i;
                                c.pendingGap = 0; // the silence before the first reply byte is the server's own time
                            } else {
                                returnsWithoutCall++;
                            }
                            c.st[1] = ST_BODY;
                            c.st[0] = ST_BOUNDARY;
                            i = len;
                        } else if (m == PING_ACK) {
                            pingAcks++;
                            i++;
                        } else {
                            lose(c, "unknown JRMP server message 0x" + Integer.toHexString(m));
                            return;
                        }
                    }
                    break;
                }
                default:
                    return;
            }
        }
    }

    static final int CLOSE_NEXT = 0, CLOSE_FIN = 1, CLOSE_END = 2;

    static String endpoint(int v, int a, long hi, long lo, int port) {
        StringBuilder sb = new StringBuilder(48);
        if (v == 4) sb.append(Summary.intToIp(a));
        else sb.append('[').append(Summary.ip6ToString(hi, lo)).append(']');
        return sb.append(':').append(port).toString();
    }

    /** Close the call in progress (if any) and emit it. */
    private void closeCall(Conn c, int how, long ts, String why) {
        if (c.phase == PH_NONE) return;
        Call r = new Call();
        r.ipVersion = c.ipVersion;
        r.cAddr = c.cAddr; r.sAddr = c.sAddr; r.cPort = c.cPort; r.sPort = c.sPort;
        r.c6hi = c.c6hi; r.c6lo = c.c6lo; r.s6hi = c.s6hi; r.s6lo = c.s6lo;
        r.index = c.calls;
        r.startNs = c.start;
        r.requestBytes = c.reqBytes;
        r.replyBytes = c.repBytes;
        r.segments = c.segs;
        r.retransmitted = c.retx;
        r.outOfOrder = c.ooo;
        r.maxGapNs = c.maxGap;
        r.rto = c.maxGap >= RTO_GAP_NS;
        r.callFrame = c.callFrame;
        r.returnFrame = c.returnFrame;
        String reason = c.broken;
        if (reason == null && (c.holeInBody[0] || c.holeInBody[1]))
            reason = "sequence gap in the " + (c.holeInBody[0] ? "request" : "reply") + " never filled (a segment the capture did not see)";
        if (c.phase == PH_REQUEST) {
            if (reason == null) reason = how == CLOSE_NEXT ? "no ReturnData before the client's next message"
                    : how == CLOSE_FIN ? "no ReturnData before " + why : "no ReturnData before the capture ended";
            if (how == CLOSE_END && why != null) reason = reason + " (" + why + ")";
        } else if (reason == null && how != CLOSE_NEXT) {
            boolean acked = c.clientAckKnown && c.seqKnown[1] && c.clientAck - c.next[1] >= 0;
            if (!acked) reason = "reply not fully acknowledged by the client when " + (how == CLOSE_FIN ? why : why != null ? why : "the capture ended");
            else if (how == CLOSE_END && ts - c.lastReplyTs < quietNs)
                reason = "capture ended " + (ts - c.lastReplyTs) / 1_000_000 + " ms after the last reply byte (less than the quiet time)";
        }
        r.complete = reason == null;
        r.reason = reason;
        if (c.phase == PH_REPLY) r.serverNs = c.firstReplyTs - c.lastReqTs;
        if (r.complete) {
            r.endNs = c.lastReplyTs;
            complete++;
        }
        if (r.rto) withRto++;
        c.phase = PH_NONE;
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
        for (Conn c : new ArrayList<>(conns.values())) closeCall(c, CLOSE_END, captureEndNs, null);
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
