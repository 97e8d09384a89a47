package org.qoslab.capture;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * MPJ Express niodev messages timed on the wire, into the same {@link CallMatcher.Call} records as
 * JRMP and GIOP ({@code protocol} "mpj", {@code request_id} = the MPJ tag). MPJ is message passing,
 * not request/reply, so a call is what its framing allows (capture/README.md, "MPJ messages"):
 * <ul>
 *   <li>a connection is tracked from a segment whose payload starts a niodev message
 *       ({@link NiodevStream}); each direction's sender is the UUID in its channel init or message
 *       headers, its receiver the UUID the other direction announced: niodev writes each rank's
 *       messages to a peer on one connection and the peer's replies on another, so a call spans
 *       two connections;</li>
 *   <li>a message from rank A to rank B with tag T and context X opens a call; the next message
 *       from B to A with the same tag and context is its reply, and the call ends at the segment
 *       holding the reply's last byte ({@code endNs}); a second A-to-B message with the same tag and
 *       context before any reply makes the first one a one-way message (counted, no record), as is
 *       a message never answered;</li>
 *   <li>a sequence gap (a segment the capture did not see) in a direction between A and B closes
 *       every message between A and B still waiting for its reply as an incomplete call, never timed
 *       (the lost bytes may hold a reply or another request; a one-way message among them is
 *       recorded so too); that direction resumes at the next segment starting a niodev message.
 *       Retransmitted bytes are skipped; an unreadable header stops the direction the same way.</li>
 * </ul>
 * Not thread-safe; one instance per capture.
 */
public final class NiodevMatcher extends TcpMatcher<NiodevMatcher.Conn, NiodevStream> {
    private final Map<Key, Open> open = new HashMap<>();
    private final Map<Long, Integer> perPair = new HashMap<>();
    /** Counters for the summary (and {@link TcpMatcher#gaps}, {@link TcpMatcher#retransmitted}). */
    public long connections, messages, calls, complete, oneway, unattributed, unreadable;
    /** Messages waiting for their replies at once, at most ({@code --max-open-calls}). */
    private final int maxOpen;

    /** Who sends to whom with which tag and context. */
    record Key(long fromHi, long fromLo, long toHi, long toLo, int tag, int context) {
        Key reply() { return new Key(toHi, toLo, fromHi, fromLo, tag, context); }

        boolean between(long aHi, long aLo, long bHi, long bLo) {
            return fromHi == aHi && fromLo == aLo && toHi == bHi && toLo == bLo
                    || fromHi == bHi && fromLo == bLo && toHi == aHi && toLo == aLo;
        }
    }

    /** A call in progress: its request (seen whole or not yet) and its reply once it starts. */
    static final class Open {
        Key key;
        long start, lastReq = -1, firstReply = -1, reqBytes, repBytes, callFrame, replyFrame;
        int cAddr, sAddr, cPort, sPort;
        boolean replying;
    }

    /** A tracked connection: both directions and the message each is carrying. */
    final class Conn implements NiodevStream.Events {
        int aAddr, bAddr, aPort, bPort;
        final NiodevStream[] dirs = {new NiodevStream(0), new NiodevStream(1)};
        final Open[] current = new Open[2];
        long ts;

        @Override
        public void start(NiodevStream s, long hi, long lo, int tag, int context, long t, long frame) {
            messages++;
            NiodevStream other = dirs[1 - s.dir];
            if (!other.senderKnown) { unattributed++; return; } // the receiver never said who it is
            Key k = new Key(hi, lo, other.senderHi, other.senderLo, tag, context);
            Open req = open.get(k.reply());
            if (req != null && req.lastReq >= 0 && !req.replying) {
                req.replying = true;
                req.firstReply = t;
                req.replyFrame = frame;
                current[s.dir] = req;
                return;
            }
            if (open.remove(k) != null) oneway++;
            if (open.size() >= maxOpen) {
                throw new CallLimitException("MPJ messages", maxOpen, IpText.endpoint(4, s.dir == 0 ? aAddr : bAddr, 0, 0,
                        s.dir == 0 ? aPort : bPort) + " -> " + IpText.endpoint(4, s.dir == 0 ? bAddr : aAddr, 0, 0,
                        s.dir == 0 ? bPort : aPort) + ", frame " + frame);
            }
            Open o = new Open();
            o.key = k;
            o.start = t;
            o.callFrame = frame;
            boolean fromA = s.dir == 0;
            o.cAddr = fromA ? aAddr : bAddr; o.sAddr = fromA ? bAddr : aAddr;
            o.cPort = fromA ? aPort : bPort; o.sPort = fromA ? bPort : aPort;
            open.put(k, o);
            current[s.dir] = o;
        }

        @Override
        public void end(NiodevStream s, long bytes, long t) {
            Open o = current[s.dir];
            current[s.dir] = null;
            if (o == null || open.get(o.key) != o) return;
            if (!o.replying) {
                o.lastReq = t;
                o.reqBytes = bytes;
                return;
            }
            o.repBytes = bytes;
            open.remove(o.key);
            emit(o, t, null);
        }
    }

    /** @param maxConns niodev connections tracked at once (the oldest is forgotten first) */
    public NiodevMatcher(int maxConns) { this(maxConns, CallLimitException.DEFAULT_MAX_OPEN); }

    /**
     * @param maxConns niodev connections tracked at once (the oldest is forgotten first)
     * @param maxOpen messages waiting for their replies at once; one more throws {@link CallLimitException}
     */
    public NiodevMatcher(int maxConns, int maxOpen) {
        super(maxConns);
        this.maxOpen = maxOpen;
    }

    @Override
    void evict(Conn c) {
        for (NiodevStream s : c.dirs) lose(c, s, "connection evicted from the table");
    }

    /** Where finished calls go (in the order they close). */
    public NiodevMatcher sink(Consumer<CallMatcher.Call> s) { this.sink = s; return this; }

    /** One decoded TCP packet (IPv4; {@code frame} 1-based as tshark counts). */
    public void packet(long ts, Classifier.Decoded d, ByteBuffer b, long frame) {
        if (!d.tcp || d.ipVersion != 4 || d.fragment != 0 || d.problem != Classifier.Problem.NONE) return;
        boolean opens = d.payloadCaptured >= 4 && NiodevStream.opens(b.getInt(d.payloadOff));
        if (conns.isEmpty() && !opens) return;
        long key = connKey(d);
        Conn c = conns.get(key);
        if (c == null) {
            if (!opens) return;
            c = new Conn();
            c.aAddr = d.src; c.bAddr = d.dst; c.aPort = d.sport; c.bPort = d.dport;
            conns.put(key, c);
            connections++;
        }
        c.ts = ts;
        segment(c, c.dirs[d.src == c.aAddr && d.sport == c.aPort ? 0 : 1], ts, d, b, frame, opens);
        if ((d.tcpFlags & 0x05) != 0) {
            conns.remove(key);
            for (NiodevStream s : c.dirs) if (s.inMessage()) lose(c, s, "connection closed inside a message");
        }
    }

    @Override
    void gap(Conn c, NiodevStream s, long ts) { lose(c, s, "sequence gap (a segment the capture did not see)"); }

    @Override
    void unreadable(Conn c, NiodevStream s, long ts) {
        unreadable++;
        lose(c, s, "unreadable niodev header");
    }

    /** Direction {@code s} of {@code c} lost bytes: every call open between its two ranks ends incomplete. */
    private void lose(Conn c, NiodevStream s, String why) {
        c.current[s.dir] = null;
        NiodevStream o = c.dirs[1 - s.dir];
        if (!s.senderKnown || !o.senderKnown) return;
        for (Open x : new ArrayList<>(open.values())) {
            if (x.key.between(s.senderHi, s.senderLo, o.senderHi, o.senderLo)) {
                open.remove(x.key);
                emit(x, -1, why);
            }
        }
    }

    private void emit(Open o, long endTs, String why) {
        CallMatcher.Call r = new CallMatcher.Call();
        r.ipVersion = 4;
        r.cAddr = o.cAddr; r.sAddr = o.sAddr; r.cPort = o.cPort; r.sPort = o.sPort;
        r.protocol = "mpj";
        r.requestId = o.key.tag() & 0xFFFFFFFFL;
        long pair = o.key.fromHi() ^ o.key.fromLo() * 31 ^ o.key.toHi() * 17 ^ o.key.toLo();
        r.index = perPair.merge(pair, 1, Integer::sum);
        r.startNs = o.start;
        r.callFrame = o.callFrame;
        r.returnFrame = o.replyFrame;
        r.requestBytes = o.reqBytes;
        r.replyBytes = o.repBytes;
        r.complete = why == null;
        r.reason = why;
        if (o.firstReply >= 0 && o.lastReq >= 0) r.serverNs = o.firstReply - o.lastReq;
        calls++;
        if (r.complete) { r.endNs = endTs; complete++; }
        if (sink != null) sink.accept(r);
    }

    /** The capture is over: a reply still in progress ends its call incomplete; unanswered messages are one-way. */
    public void finish() {
        for (Open o : new ArrayList<>(open.values())) {
            if (o.replying) emit(o, -1, "capture ended inside the reply");
            else oneway++;
        }
        open.clear();
        conns.clear();
    }

    /** Counts for summary.json's {@code mpj_calls} block. */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("connections", connections);
        m.put("messages", messages);
        m.put("calls", calls);
        m.put("complete", complete);
        m.put("incomplete", calls - complete);
        m.put("oneway_messages", oneway);
        m.put("unattributed_messages", unattributed);
        m.put("sequence_gaps", gaps);
        m.put("retransmitted_segments", retransmitted);
        m.put("unreadable", unreadable);
        return m;
    }
}
