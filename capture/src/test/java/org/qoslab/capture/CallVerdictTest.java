package org.qoslab.capture;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

/** {@link CallVerdict}'s rules on a connection's state, without a capture. */
class CallVerdictTest {
    static final long MS = 1_000_000L, QUIET = 1000 * MS;

    /** A call whose return started at 5 ms and whose last return byte seen is at 7 ms; server stream next = 1300. */
    static JrmpConnection replying() {
        JrmpConnection c = new JrmpConnection();
        c.ipVersion = 4;
        c.phase = JrmpConnection.PH_REPLY;
        c.calls = 3;
        c.start = 1 * MS;
        c.lastReqTs = 2 * MS;
        c.firstReplyTs = 5 * MS;
        c.lastReplyTs = 7 * MS;
        c.seqKnown[1] = true;
        c.next[1] = 1300;
        c.clientAckKnown = true;
        c.clientAck = 1300;
        return c;
    }

    @Test
    void aReturnWhoseEveryAcknowledgedByteWasSeenIsCompleteAndTimed() {
        CallMatcher.Call r = CallVerdict.of(replying(), CallVerdict.CLOSE_NEXT, 9 * MS, null, QUIET);
        assertTrue(r.complete, r.reason);
        assertEquals(7 * MS, r.endNs);
        assertEquals(6 * MS, r.latencyNs());
        assertEquals(3 * MS, r.serverNs);
        assertEquals(3, r.index);
    }

    @Test
    void acknowledgedBytesTheCaptureDidNotSeeMakeItIncompleteHoweverItCloses() {
        for (int how : new int[] {CallVerdict.CLOSE_NEXT, CallVerdict.CLOSE_FIN, CallVerdict.CLOSE_END}) {
            JrmpConnection c = replying();
            c.clientAck = 1300 + 96;
            CallMatcher.Call r = CallVerdict.of(c, how, 5000 * MS, how == CallVerdict.CLOSE_FIN ? "connection closed" : null, QUIET);
            assertFalse(r.complete, "close " + how);
            assertEquals(-1, r.endNs);
            assertEquals("return's tail not captured: the client acknowledged 96 bytes after the last return byte seen", r.reason);
        }
    }

    @Test
    void sequenceNumbersWrapAround() {
        JrmpConnection c = replying();
        c.next[1] = Integer.MAX_VALUE - 10;
        c.clientAck = Integer.MIN_VALUE + 20; // 31 bytes further, across the wrap
        assertEquals(31, c.unseenAcknowledged());
        c.clientAck = Integer.MAX_VALUE - 20; // behind: nothing unseen
        assertEquals(0, c.unseenAcknowledged());
    }

    @Test
    void atTheCapturesEndTheReturnMustBeAcknowledgedAndQuiet() {
        JrmpConnection c = replying();
        c.clientAck = 1200; // 100 bytes seen, not acknowledged yet
        assertTrue(CallVerdict.reason(c, CallVerdict.CLOSE_END, 5000 * MS, null, QUIET).startsWith("reply not fully acknowledged"));
        c.clientAck = 1300;
        assertTrue(CallVerdict.reason(c, CallVerdict.CLOSE_END, 500 * MS, null, QUIET).contains("less than the quiet time"));
        assertNull(CallVerdict.reason(c, CallVerdict.CLOSE_END, 1007 * MS, null, QUIET));
    }

    @Test
    void aCallWithoutReturnSaysWhatClosedItAndWhatTheClientAcknowledged() {
        JrmpConnection c = replying();
        c.phase = JrmpConnection.PH_REQUEST;
        assertEquals("no ReturnData before the client's next message", CallVerdict.reason(c, CallVerdict.CLOSE_NEXT, 9 * MS, null, QUIET));
        assertEquals("no ReturnData before connection reset", CallVerdict.reason(c, CallVerdict.CLOSE_FIN, 9 * MS, "connection reset", QUIET));
        c.clientAck = 1300 + 40;
        assertEquals("no ReturnData before the client's next message (the client acknowledged 40 server bytes the capture did not see)",
                CallVerdict.reason(c, CallVerdict.CLOSE_NEXT, 9 * MS, null, QUIET));
        CallMatcher.Call r = CallVerdict.of(c, CallVerdict.CLOSE_NEXT, 9 * MS, null, QUIET);
        assertEquals(-1, r.serverNs, "no return: no server time");
    }

    @Test
    void aBrokenCallOrAnUnfilledGapKeepsItsOwnReason() {
        JrmpConnection c = replying();
        c.holeInBody[1] = true;
        assertTrue(CallVerdict.reason(c, CallVerdict.CLOSE_NEXT, 9 * MS, null, QUIET).startsWith("sequence gap in the reply never filled"));
        c.broken = "unknown JRMP server message 0x99";
        c.clientAck = 1400;
        assertEquals("unknown JRMP server message 0x99", CallVerdict.reason(c, CallVerdict.CLOSE_NEXT, 9 * MS, null, QUIET));
    }
}
