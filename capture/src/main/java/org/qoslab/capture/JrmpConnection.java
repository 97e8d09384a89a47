package org.qoslab.capture;

/**
 * State of one tracked JRMP connection for {@link CallMatcher}: both endpoints, the per-direction
 * TCP sequence state and JRMP parser state, and the call in progress. Plain fields, no behaviour;
 * direction index 0 is client->server, 1 server->client. Times are ns since the epoch at the
 * capture point; sequence numbers are TCP's (compared modulo 2^32 by subtraction).
 */
final class JrmpConnection {
    // parser states of one direction
    static final int ST_HEADER = 0, ST_UTF_LEN = 1, ST_SKIP = 2, ST_ACK = 3, ST_BOUNDARY = 4, ST_BODY = 5, ST_LOST = 6;
    // call phases
    static final int PH_NONE = 0, PH_REQUEST = 1, PH_REPLY = 2;

    /** Connection key (both endpoints, canonical order); the matcher reuses one probe instance for lookups. */
    static final class Key {
        long a, b;

        Key() { }

        Key(long a, long b) { this.a = a; this.b = b; }

        @Override public boolean equals(Object o) { return o instanceof Key && ((Key) o).a == a && ((Key) o).b == b; }

        @Override public int hashCode() { long h = a * 0x9E3779B97F4A7C15L ^ b; return (int) (h ^ (h >>> 29)); }
    }

    int ipVersion, cAddr, sAddr, cPort, sPort;
    long c6hi, c6lo, s6hi, s6lo;
    /** Next expected sequence number per direction (the end of the highest byte seen). */
    final int[] next = new int[2];
    final boolean[] seqKnown = new boolean[2];
    /** The latest sequence gap per direction: bytes [holeStart, holeEnd) not seen (yet). */
    final int[] holeStart = new int[2], holeEnd = new int[2];
    final boolean[] hole = new boolean[2], holeInBody = new boolean[2];
    /** Parser state per direction, the state after a skip, and a partly read number. */
    final int[] st = new int[2], after = new int[2], partial = new int[2], partialN = new int[2];
    final long[] skip = new long[2];
    boolean singleOp, lost;
    /** Highest acknowledgement number the client sent (of the server's stream). */
    int clientAck;
    boolean clientAckKnown;
    int lastDataDir = -1;
    long lastTs;
    int calls;
    // the call in progress
    int phase;
    long start, lastReqTs, firstReplyTs, lastReplyTs, reqBytes, repBytes, maxGap, pendingGap, callFrame, returnFrame;
    int segs, retx, ooo;
    /** Why the call in progress cannot be timed (null: nothing wrong so far). */
    String broken;

    /** Server bytes the client acknowledged beyond the last byte the capture saw (0 when none or unknown). */
    long unseenAcknowledged() {
        if (!clientAckKnown || !seqKnown[1]) return 0;
        int d = clientAck - next[1];
        return d > 0 ? d : 0;
    }
}
