package org.qoslab.capture;

import static org.qoslab.capture.JrmpConnection.PH_REPLY;
import static org.qoslab.capture.JrmpConnection.PH_REQUEST;
import static org.qoslab.capture.JrmpConnection.ST_ACK;
import static org.qoslab.capture.JrmpConnection.ST_BODY;
import static org.qoslab.capture.JrmpConnection.ST_BOUNDARY;
import static org.qoslab.capture.JrmpConnection.ST_HEADER;
import static org.qoslab.capture.JrmpConnection.ST_LOST;
import static org.qoslab.capture.JrmpConnection.ST_SKIP;
import static org.qoslab.capture.JrmpConnection.ST_UTF_LEN;

import java.nio.ByteBuffer;

/**
 * The JRMP byte parser of {@link CallMatcher}: new in-order bytes of one direction of a tracked
 * connection, byte by byte across segments, through the handshake (header, ProtocolAck and the
 * endpoints) to the message boundaries, where a client Call (0x50) opens a call and the server's
 * ReturnData (0x51) starts its return. Bodies are skipped (only counted). Counters and finished
 * calls go to the matcher. Not thread-safe; one per matcher.
 */
final class JrmpParser {
    static final int STREAM_PROTOCOL = 0x4b, SINGLE_OP_PROTOCOL = 0x4c, MULTIPLEX_PROTOCOL = 0x4d;
    static final int PROTOCOL_ACK = 0x4e, PROTOCOL_NOT_SUPPORTED = 0x4f;
    static final int CALL = 0x50, RETURN_DATA = 0x51, PING = 0x52, PING_ACK = 0x53, DGC_ACK = 0x54;
    /** What a state handler returns to stop parsing the segment (the connection lost its place). */
    private static final int STOP = -1;

    private final CallMatcher m;

    JrmpParser(CallMatcher m) { this.m = m; }

    static int u8(ByteBuffer b, int p) { return b.get(p) & 0xFF; }

    /**
     * Parse new bytes [from, len) of a segment's payload; only [0, captured) are in the buffer,
     * starting at {@code off}.
     *
     * @param ts capture time of the segment (ns)
     * @param frame 1-based frame number of the segment
     */
    void consume(JrmpConnection c, int dir, long ts, ByteBuffer b, int off, int captured, int from, int len, long frame) {
        int i = from;
        while (i < len && i != STOP) {
            switch (c.st[dir]) {
                case ST_SKIP: i = skip(c, dir, i, len); break;
                case ST_BODY: m.addBody(c, dir, len - i); i = len; break;
                case ST_HEADER: i = header(c, dir, b, off, captured, i); break;
                case ST_ACK: i = protocolAck(c, b, off, captured, i); break;
                case ST_UTF_LEN: i = utfLength(c, dir, b, off, captured, i); break;
                case ST_BOUNDARY:
                    if (i >= captured) { m.lose(c, "JRMP message byte not captured (snaplen)"); return; }
                    i = dir == 0 ? clientMessage(c, ts, u8(b, off + i), i, len, frame)
                            : serverMessage(c, ts, u8(b, off + i), i, len, frame);
                    break;
                case ST_LOST:
                default:
                    return;
            }
        }
    }

    private static int skip(JrmpConnection c, int dir, int i, int len) {
        long n = Math.min(c.skip[dir], len - i);
        c.skip[dir] -= n;
        if (c.skip[dir] == 0) c.st[dir] = c.after[dir];
        return i + (int) n;
    }

    /** Magic (checked when the connection was opened), version, then the protocol byte. */
    private int header(JrmpConnection c, int dir, ByteBuffer b, int off, int captured, int i) {
        if (c.partialN[dir] != 6) {
            c.partialN[dir]++;
            return i + 1;
        }
        if (i >= captured) { m.lose(c, "JRMP header not captured (snaplen)"); return STOP; }
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
            if (p == MULTIPLEX_PROTOCOL) m.multiplex++;
            m.lose(c, "JRMP protocol 0x" + Integer.toHexString(p) + " not matched");
            return STOP;
        }
        return i + 1;
    }

    private int protocolAck(JrmpConnection c, ByteBuffer b, int off, int captured, int i) {
        if (i >= captured) { m.lose(c, "JRMP ProtocolAck not captured (snaplen)"); return STOP; }
        int a = u8(b, off + i);
        if (a != PROTOCOL_ACK) {
            if (a == PROTOCOL_NOT_SUPPORTED) m.notSupported++;
            m.lose(c, "server answered the JRMP header with 0x" + Integer.toHexString(a));
            return STOP;
        }
        c.st[1] = ST_UTF_LEN;
        c.after[1] = ST_BOUNDARY;
        c.partial[1] = 0;
        c.partialN[1] = 0;
        return i + 1;
    }

    /** Endpoint: UTF host (2-byte length + bytes), then a 4-byte port, skipped. */
    private int utfLength(JrmpConnection c, int dir, ByteBuffer b, int off, int captured, int i) {
        if (i >= captured) { m.lose(c, "JRMP endpoint not captured (snaplen)"); return STOP; }
        c.partial[dir] = (c.partial[dir] << 8) | u8(b, off + i);
        if (++c.partialN[dir] == 2) {
            c.skip[dir] = c.partial[dir] + 4L;
            c.st[dir] = ST_SKIP;
        }
        return i + 1;
    }

    /** A client message byte at a boundary: Call, Ping or DgcAck; each ends the call before it. */
    private int clientMessage(JrmpConnection c, long ts, int msg, int i, int len, long frame) {
        if (msg != CALL && msg != PING && msg != DGC_ACK) {
            m.lose(c, "unknown JRMP client message 0x" + Integer.toHexString(msg));
            return STOP;
        }
        endPreviousCall(c, ts);
        c.st[1] = ST_BOUNDARY;
        if (msg == PING) {
            m.pings++;
            return i + 1;
        }
        if (msg == DGC_ACK) {
            m.dgcAcks++;
            c.skip[0] = 20; // the UniqueIdentifier (ObjID's UID: int, long, short)
            c.after[0] = ST_BOUNDARY;
            c.st[0] = ST_SKIP;
            return i + 1;
        }
        openCall(c, ts, frame, len - i);
        return len;
    }

    /**
     * The client starts its next message, so it has read the whole return. When its ACK covers
     * server bytes the capture never saw (the return's tail was dropped), the call is incomplete
     * and the server stream picks up at the acknowledged sequence number: its next byte starts a
     * message.
     */
    private void endPreviousCall(JrmpConnection c, long ts) {
        long unseen = c.unseenAcknowledged();
        m.closeCall(c, CallMatcher.CLOSE_NEXT, ts, null);
        if (unseen > 0) {
            m.ackResyncs++;
            c.next[1] = c.clientAck;
            if (c.hole[1] && c.clientAck - c.holeEnd[1] >= 0) c.hole[1] = false;
            c.holeInBody[1] = false;
        }
    }

    private void openCall(JrmpConnection c, long ts, long frame, int requestBytes) {
        c.phase = PH_REQUEST;
        c.start = ts;
        c.lastReqTs = ts;
        c.callFrame = frame;
        c.returnFrame = 0;
        c.reqBytes = requestBytes;
        c.repBytes = 0;
        c.segs = 1;
        c.retx = c.ooo = 0;
        c.maxGap = c.pendingGap = 0;
        c.broken = null;
        c.holeInBody[0] = c.holeInBody[1] = false;
        c.calls++;
        m.callsSeen++;
        c.st[0] = ST_BODY;
    }

    /** A server message byte at a boundary: ReturnData (the call's return starts) or PingAck. */
    private int serverMessage(JrmpConnection c, long ts, int msg, int i, int len, long frame) {
        if (msg == PING_ACK) {
            m.pingAcks++;
            return i + 1;
        }
        if (msg != RETURN_DATA) {
            m.lose(c, "unknown JRMP server message 0x" + Integer.toHexString(msg));
            return STOP;
        }
        if (c.phase == PH_REQUEST) {
            c.phase = PH_REPLY;
            c.firstReplyTs = ts;
            c.lastReplyTs = ts;
            c.returnFrame = frame;
            c.repBytes = len - i;
            c.pendingGap = 0; // the silence before the first reply byte is the server's own time
        } else {
            m.returnsWithoutCall++;
        }
        c.st[1] = ST_BODY;
        c.st[0] = ST_BOUNDARY;
        return len;
    }
}
