package org.qoslab.capture;

import static org.qoslab.capture.JrmpConnection.PH_NONE;
import static org.qoslab.capture.JrmpConnection.PH_REPLY;
import static org.qoslab.capture.JrmpConnection.PH_REQUEST;
import static org.qoslab.capture.JrmpConnection.ST_BODY;
import static org.qoslab.capture.JrmpConnection.ST_BOUNDARY;

import java.nio.ByteBuffer;

/**
 * TCP sequence tracking of {@link CallMatcher}: places each data segment of a tracked connection
 * by its sequence number, hands new in-order bytes to the {@link JrmpParser}, and counts what it
 * cannot place: sequence gaps (bytes the capture did not see), retransmissions, late fills of a
 * gap. A gap inside a call's body only loses byte counts (the call stays incomplete unless the gap
 * is filled from its start); a gap where a message byte may lie loses the connection's place until
 * a client segment starts a Call after server data. Times are ns since the epoch. Not thread-safe.
 */
final class JrmpSequencer {
    private final CallMatcher m;
    private final JrmpParser parser;

    JrmpSequencer(CallMatcher m, JrmpParser parser) {
        this.m = m;
        this.parser = parser;
    }

    /**
     * One data segment ({@code len} > 0 payload bytes) in direction {@code dir}.
     *
     * @param gap silence on the connection before this segment (ns)
     */
    void data(JrmpConnection c, int dir, long ts, Classifier.Decoded d, ByteBuffer b, long frame, int len, long gap) {
        int seq = d.tcpSeq;
        if (!c.seqKnown[dir]) { c.next[dir] = seq; c.seqKnown[dir] = true; }
        if (dir == 1 && c.phase == PH_REPLY && !c.lost && acknowledgesUnseenClientBytes(c, d)) clientMessageNotSeen(c, ts, d.tcpAck);
        int delta = seq - c.next[dir];
        if (delta > 0) { // bytes before this segment were not captured (yet)
            gapBefore(c, dir, ts, d, b, frame, len, gap);
        } else if (delta + len <= 0) { // nothing new: a retransmission, or a late segment filling a gap
            old(c, dir, ts, seq, len, gap);
        } else {
            fresh(c, dir, ts, d, b, frame, len, gap, delta);
        }
    }

    /** A server segment whose ACK covers client bytes the capture never saw (while the client should be silent, reading the return). */
    private static boolean acknowledgesUnseenClientBytes(JrmpConnection c, Classifier.Decoded d) {
        return (d.tcpFlags & 0x10) != 0 && c.seqKnown[0] && d.tcpAck - c.next[0] > 0;
    }

    /**
     * The server acknowledges client bytes sent during a return: the client's next message, which
     * the capture did not see. It ended the call (incomplete: what the client acknowledged is
     * unknown); both streams resume at message boundaries, the client's at the server's ACK.
     */
    private void clientMessageNotSeen(JrmpConnection c, long ts, int serverAck) {
        if (c.broken == null) {
            c.broken = "the client's next message was not captured (the server acknowledged "
                    + (serverAck - c.next[0]) + " client bytes the capture did not see)";
        }
        m.closeCall(c, CallMatcher.CLOSE_NEXT, ts, null);
        m.ackResyncs++;
        c.next[0] = serverAck;
        c.hole[0] = false;
        c.st[0] = ST_BOUNDARY;
        c.st[1] = ST_BOUNDARY;
    }

    private void gapBefore(JrmpConnection c, int dir, long ts, Classifier.Decoded d, ByteBuffer b, long frame, int len,
            long gap) {
        int seq = d.tcpSeq;
        m.gaps++;
        boolean body = !c.lost && c.st[dir] == ST_BODY && !c.holeInBody[dir]
                && c.phase == (dir == 0 ? PH_REQUEST : PH_REPLY);
        c.hole[dir] = true;
        c.holeStart[dir] = c.next[dir];
        c.holeEnd[dir] = seq;
        c.next[dir] = seq + len;
        if (body) { // inside a call's body: only byte counts are missing; a later fill makes it whole again
            c.holeInBody[dir] = true;
            countInCall(c, dir, ts, gap, false);
            m.addBody(c, dir, len);
        } else {
            boolean resync = startsCallAfterServerData(c, dir, d, b);
            m.lose(c, "sequence gap in the " + (dir == 0 ? "client" : "server") + " stream (a segment the capture did not see)");
            if (resync) resync(c, ts, b, d, frame, len);
            else countInCall(c, dir, ts, gap, true);
        }
        c.lastDataDir = dir;
    }

    private void old(JrmpConnection c, int dir, long ts, int seq, int len, long gap) {
        boolean fill = c.hole[dir] && seq - c.holeStart[dir] >= 0 && c.holeEnd[dir] - seq > 0;
        if (fill) {
            m.outOfOrder++;
            if (c.phase != PH_NONE) c.ooo++;
            if (seq == c.holeStart[dir]) { // fills the hole from its start
                int n = Math.min(len, c.holeEnd[dir] - seq);
                if (c.holeInBody[dir]) m.addBody(c, dir, n);
                c.holeStart[dir] = seq + n;
                if (c.holeStart[dir] == c.holeEnd[dir]) { c.hole[dir] = false; c.holeInBody[dir] = false; }
            }
        } else {
            retransmission(c);
        }
        countInCall(c, dir, ts, gap, true);
    }

    private void retransmission(JrmpConnection c) {
        m.retransmitted++;
        if (c.phase != PH_NONE) { c.retx++; m.retransmittedInCalls++; }
    }

    /** New bytes (some of the segment may be old: only the new part is parsed). */
    private void fresh(JrmpConnection c, int dir, long ts, Classifier.Decoded d, ByteBuffer b, long frame, int len,
            long gap, int delta) {
        if (delta < 0) retransmission(c);
        int from = -delta;
        c.next[dir] = d.tcpSeq + len;
        if (c.lost) {
            if (from == 0 && startsCallAfterServerData(c, dir, d, b)) resync(c, ts, b, d, frame, len);
            else countInCall(c, dir, ts, gap, true);
            c.lastDataDir = dir;
            return;
        }
        // the client acknowledges server bytes the capture never saw: the server answered, so the
        // request is over and this segment starts the client's next message (JRMP is synchronous)
        if (dir == 0 && from == 0 && c.st[0] == ST_BODY && c.phase == PH_REQUEST && c.unseenAcknowledged() > 0) {
            c.st[0] = ST_BOUNDARY;
        }
        // a client segment that starts a message belongs to the next call, not to the one it closes
        if (!(dir == 0 && c.st[0] == ST_BOUNDARY)) countInCall(c, dir, ts, gap, false);
        parser.consume(c, dir, ts, b, d.payloadOff, d.payloadCaptured, from, len, frame);
        c.lastDataDir = dir;
    }

    private static boolean startsCallAfterServerData(JrmpConnection c, int dir, Classifier.Decoded d, ByteBuffer b) {
        return dir == 0 && c.lastDataDir == 1 && d.payloadCaptured > 0 && JrmpParser.u8(b, d.payloadOff) == JrmpParser.CALL;
    }

    /** A lost connection picks up again at a client segment starting with Call after server data. */
    private void resync(JrmpConnection c, long ts, ByteBuffer b, Classifier.Decoded d, long frame, int len) {
        c.lost = false;
        c.st[0] = ST_BOUNDARY;
        c.st[1] = ST_BOUNDARY;
        parser.consume(c, 0, ts, b, d.payloadOff, d.payloadCaptured, 0, len, frame);
    }

    /** Segment counts, retransmission timing and the end time of the call in progress (data segments not parsed). */
    static void countInCall(JrmpConnection c, int dir, long ts, long gap, boolean old) {
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
}
