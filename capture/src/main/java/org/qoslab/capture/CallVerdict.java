package org.qoslab.capture;

import static org.qoslab.capture.JrmpConnection.PH_REPLY;
import static org.qoslab.capture.JrmpConnection.PH_REQUEST;

/**
 * The record of a call when it closes: its counts and times from the connection, and whether it
 * can be timed ({@code complete}) or why not ({@code reason}). Pure: reads the connection, changes
 * nothing. The rules (capture/README.md, "JRMP calls"): a call is complete when its return started,
 * no sequence gap in it stayed unfilled, every return byte the client acknowledged was seen, and
 * it was closed by the client's next message, or by a FIN/RST or the capture's end after the client
 * acknowledged every return byte seen (at the capture's end also only after the quiet time).
 */
final class CallVerdict {
    /** The client's next message closed the call. */
    static final int CLOSE_NEXT = 0;
    /** A FIN or RST closed the connection. */
    static final int CLOSE_FIN = 1;
    /** The capture ended, or the connection was evicted or idle too long. */
    static final int CLOSE_END = 2;

    private CallVerdict() { }

    /**
     * The record of the call in progress on {@code c} (whose phase is not {@code PH_NONE}).
     *
     * @param how {@link #CLOSE_NEXT}, {@link #CLOSE_FIN} or {@link #CLOSE_END}
     * @param ts time of the closing event (ns since the epoch)
     * @param why what closed the connection (FIN/RST, eviction, idle), or null
     * @param quietNs at the capture's end, a return is complete only after this much silence (ns)
     */
    static CallMatcher.Call of(JrmpConnection c, int how, long ts, String why, long quietNs) {
        CallMatcher.Call r = new CallMatcher.Call();
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
        r.rto = c.maxGap >= CallMatcher.RTO_GAP_NS;
        r.callFrame = c.callFrame;
        r.returnFrame = c.returnFrame;
        r.reason = reason(c, how, ts, why, quietNs);
        r.complete = r.reason == null;
        if (c.phase == PH_REPLY) r.serverNs = c.firstReplyTs - c.lastReqTs;
        if (r.complete) r.endNs = c.lastReplyTs;
        return r;
    }

    /** Why the call in progress cannot be timed, or null when it is complete. */
    static String reason(JrmpConnection c, int how, long ts, String why, long quietNs) {
        String reason = c.broken;
        if (reason == null && (c.holeInBody[0] || c.holeInBody[1]))
            reason = "sequence gap in the " + (c.holeInBody[0] ? "request" : "reply") + " never filled (a segment the capture did not see)";
        long unseen = c.unseenAcknowledged();
        if (c.phase == PH_REQUEST) {
            if (reason == null) reason = how == CLOSE_NEXT ? "no ReturnData before the client's next message"
                    : how == CLOSE_FIN ? "no ReturnData before " + why : "no ReturnData before the capture ended";
            if (how == CLOSE_END && why != null) reason = reason + " (" + why + ")";
            if (unseen > 0 && c.broken == null) reason = reason + " (the client acknowledged " + unseen + " server bytes the capture did not see)";
        } else if (reason == null && unseen > 0) {
            reason = "return's tail not captured: the client acknowledged " + unseen + " bytes after the last return byte seen";
        } else if (reason == null && how != CLOSE_NEXT) {
            boolean acked = c.clientAckKnown && c.seqKnown[1] && c.clientAck - c.next[1] >= 0;
            if (!acked) reason = "reply not fully acknowledged by the client when " + (how == CLOSE_FIN ? why : why != null ? why : "the capture ended");
            else if (how == CLOSE_END && ts - c.lastReplyTs < quietNs)
                reason = "capture ended " + (ts - c.lastReplyTs) / 1_000_000 + " ms after the last reply byte (less than the quiet time)";
        }
        return reason;
    }
}
