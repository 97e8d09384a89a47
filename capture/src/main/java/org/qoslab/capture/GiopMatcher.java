package org.qoslab.capture;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * GIOP (CORBA's IIOP) request/reply matching on captured TCP connections, into the same
 * {@link CallMatcher.Call} records as JRMP ({@code protocol} "giop", {@code request_id}). The
 * model is the JRMP matcher's; the rules (capture/README.md, "GIOP calls"):
 * <ul>
 *   <li>a connection is tracked from a segment whose payload starts with "GIOP"; its sender is the
 *       client when that message is a Request or LocateRequest;</li>
 *   <li>each direction is cut into messages by their sizes ({@link GiopStream}); a Request or
 *       LocateRequest expecting a reply opens a call under its request id (per connection: any
 *       number outstanding, replies in any order); its reply (Reply, LocateReply, with GIOP 1.1/1.2
 *       fragments) closes it at the segment holding the reply's last byte: {@code endNs};</li>
 *   <li>a sequence gap (a segment the capture did not see) closes every open call of the
 *       connection incomplete, never timed; that direction resumes at the next segment starting
 *       with "GIOP". Retransmitted bytes are skipped. FIN/RST and the capture's end close open
 *       calls incomplete.</li>
 * </ul>
 * Not thread-safe; one instance per capture.
 */
public final class GiopMatcher extends TcpMatcher<GiopMatcher.Conn, GiopStream> {
    /** Counters for the summary (and {@link TcpMatcher#gaps}, {@link TcpMatcher#retransmitted}). */
    public long connections, calls, complete, oneway, repliesWithoutRequest, locates, fragments;
    /** Requests waiting for their replies now, over all connections, and the most allowed ({@code --max-open-calls}). */
    private int openNow;
    private final int maxOpen;

    /** A GIOP call in progress. */
    static final class Open {
        long id, start, lastReq, firstReply = -1, reqBytes, repBytes, callFrame, replyFrame;
        boolean locate, replying;
    }

    /** A tracked connection: both streams and the calls open on it. */
    final class Conn implements GiopStream.Events {
        int cAddr, sAddr, cPort, sPort, count;
        final GiopStream[] dirs = {new GiopStream(0), new GiopStream(1)};
        final Map<Long, Open> open = new HashMap<>();
        Open lastReply; // the reply a GIOP 1.1 fragment continues
        long ts;

        @Override
        public void start(GiopStream s, int type, long id, boolean expected, long t, long frame) {
            if (type == GiopStream.FRAGMENT) { fragments++; return; }
            if (s.dir == 0 && (type == GiopStream.REQUEST || type == GiopStream.LOCATE_REQUEST)) {
                if (type == GiopStream.LOCATE_REQUEST) locates++;
                if (!expected || id < 0) { if (!expected) oneway++; return; }
                Open o = new Open();
                o.id = id;
                o.start = t;
                o.callFrame = frame;
                o.locate = type == GiopStream.LOCATE_REQUEST;
                if (!open.containsKey(id) && openNow >= maxOpen) {
                    throw new CallLimitException("GIOP requests", maxOpen, IpText.endpoint(4, cAddr, 0, 0, cPort) + " -> "
                            + IpText.endpoint(4, sAddr, 0, 0, sPort) + ", frame " + frame);
                }
                if (open.put(id, o) == null) openNow++;
                count++;
                calls++;
            } else if (s.dir == 1 && (type == GiopStream.REPLY || type == GiopStream.LOCATE_REPLY)) {
                Open o = open.get(id);
                if (o == null) { repliesWithoutRequest++; return; }
                o.replying = true;
                o.firstReply = t;
                o.replyFrame = frame;
                lastReply = o;
            }
        }

        @Override
        public void end(GiopStream s, int type, long id, boolean more, long bytes, long t) {
            Open o = type == GiopStream.FRAGMENT && id < 0 ? (s.dir == 1 ? lastReply : null) : open.get(id);
            if (o == null) return;
            if (s.dir == 0) {
                o.lastReq = t;
                o.reqBytes += bytes;
            } else if (o.replying) {
                o.repBytes += bytes;
                if (more) return;
                if (open.remove(o.id) != null) openNow--;
                emit(this, o, t, null);
            }
        }
    }

    /** @param maxConns GIOP connections tracked at once (the oldest is forgotten first, its calls incomplete) */
    public GiopMatcher(int maxConns) { this(maxConns, CallLimitException.DEFAULT_MAX_OPEN); }

    /**
     * @param maxConns GIOP connections tracked at once (the oldest is forgotten first, its calls incomplete)
     * @param maxOpen requests waiting for their replies at once, over all connections; one more throws
     *        {@link CallLimitException}
     */
    public GiopMatcher(int maxConns, int maxOpen) {
        super(maxConns);
        this.maxOpen = maxOpen;
    }

    @Override
    void evict(Conn c) { closeAll(c, c.ts, "connection evicted from the table"); }

    /** Where finished calls go (in the order they close). */
    public GiopMatcher sink(Consumer<CallMatcher.Call> s) { this.sink = s; return this; }

    /** One decoded TCP packet (IPv4; {@code frame} 1-based as tshark counts). */
    public void packet(long ts, Classifier.Decoded d, ByteBuffer b, long frame) {
        if (conns.isEmpty() && !(d.payloadCaptured >= 4 && b.getInt(d.payloadOff) == GiopStream.MAGIC)) return;
        if (!d.tcp || d.ipVersion != 4 || d.fragment != 0 || d.problem != Classifier.Problem.NONE) return;
        long key = connKey(d);
        Conn c = conns.get(key);
        boolean magic = d.payloadCaptured >= 4 && b.getInt(d.payloadOff) == GiopStream.MAGIC;
        if (c == null) {
            if (!magic || d.payloadCaptured < 8) return;
            int type = b.get(d.payloadOff + 7);
            boolean fromClient = type == GiopStream.REQUEST || type == GiopStream.LOCATE_REQUEST;
            c = new Conn();
            c.cAddr = fromClient ? d.src : d.dst; c.sAddr = fromClient ? d.dst : d.src;
            c.cPort = fromClient ? d.sport : d.dport; c.sPort = fromClient ? d.dport : d.sport;
            conns.put(key, c);
            connections++;
        }
        c.ts = ts;
        segment(c, c.dirs[d.src == c.cAddr && d.sport == c.cPort ? 0 : 1], ts, d, b, frame, magic);
        if ((d.tcpFlags & 0x05) != 0) {
            conns.remove(key);
            closeAll(c, ts, (d.tcpFlags & 0x04) != 0 ? "connection reset before the reply" : "connection closed before the reply");
        }
    }

    @Override
    void gap(Conn c, GiopStream s, long ts) {
        closeAll(c, ts, "sequence gap in the " + (s.dir == 0 ? "requests" : "replies") + " (a segment the capture did not see)");
    }

    @Override
    void unreadable(Conn c, GiopStream s, long ts) { closeAll(c, ts, "unreadable GIOP header"); }

    private void closeAll(Conn c, long ts, String why) {
        for (Open o : new ArrayList<>(c.open.values())) emit(c, o, -1, why);
        openNow -= c.open.size();
        c.open.clear();
    }

    private void emit(Conn c, Open o, long endTs, String why) {
        CallMatcher.Call r = new CallMatcher.Call();
        r.ipVersion = 4;
        r.cAddr = c.cAddr; r.sAddr = c.sAddr; r.cPort = c.cPort; r.sPort = c.sPort;
        r.protocol = o.locate ? "giop-locate" : "giop";
        r.requestId = o.id;
        r.index = c.count;
        r.startNs = o.start;
        r.callFrame = o.callFrame;
        r.returnFrame = o.replyFrame;
        r.requestBytes = o.reqBytes;
        r.replyBytes = o.repBytes;
        r.complete = why == null;
        r.reason = why;
        if (o.firstReply >= 0 && o.lastReq > 0) r.serverNs = o.firstReply - o.lastReq;
        if (r.complete) { r.endNs = endTs; complete++; }
        if (sink != null) sink.accept(r);
    }

    /** The capture is over: every call still waiting for (the rest of) its reply is incomplete. */
    public void finish() {
        for (Conn c : new ArrayList<>(conns.values())) closeAll(c, c.ts, "capture ended before the reply");
        conns.clear();
    }

    /** Counts for summary.json's {@code giop_calls} block. */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("connections", connections);
        m.put("calls", calls);
        m.put("complete", complete);
        m.put("incomplete", calls - complete);
        m.put("oneway_requests", oneway);
        m.put("locate_requests", locates);
        m.put("fragments", fragments);
        m.put("replies_without_request", repliesWithoutRequest);
        m.put("sequence_gaps", gaps);
        m.put("retransmitted_segments", retransmitted);
        return m;
    }
}
