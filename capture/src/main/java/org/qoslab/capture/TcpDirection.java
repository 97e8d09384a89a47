package org.qoslab.capture;

import java.nio.ByteBuffer;

/**
 * What {@link GiopStream} and {@link NiodevStream} share: one direction of a TCP connection,
 * followed by sequence number ({@link #next}, {@link #seqKnown}, {@link #lost}; its owner, a
 * {@link TcpMatcher}, compares each segment with them) and cut into messages: a header collected
 * into {@link #head} until {@link #need} bytes are there (each addition handed to
 * {@link #headerBytes}, which reads it, asks for more or starts the message), then a body of
 * {@link #remaining} bytes counted but not kept, whose last byte ends the message
 * ({@link #finishMessage}). Pure state, no I/O.
 *
 * @param <E> what the stream tells its owner (the subclass's {@code Events})
 */
abstract class TcpDirection<E> {
    /** 0: the direction from the side that opened the tracking (client or first sender), 1: back. */
    final int dir;
    /** The sequence number of the next byte expected (valid when {@link #seqKnown}). */
    int next;
    /** {@code lost}: the stream cannot be followed until a segment starts a message ({@link #resync}). */
    boolean seqKnown, lost = true;
    /**
     * The current message's header bytes: {@link #have} of the {@link #need} wanted so far; grown on
     * demand up to {@link #headMax}, so a connection whose messages need short headers costs a few bytes
     * (100 000 tracked connections must fit the heap).
     */
    byte[] head;
    private final int headMax;
    int have, need;
    /** Body bytes of the current message still to come. */
    long remaining;
    /** When and in which frame the current message's first byte was seen. */
    long startTs, startFrame;
    /** The current message has started (its owner was told) and is not yet over. */
    boolean started;
    /** The header bytes a message needs before anything can be read of it. */
    private final int first;

    /**
     * @param dir 0 or 1 (see {@link #dir})
     * @param headBytes the largest header kept (bytes)
     * @param first the header bytes a message needs before anything can be read of it
     */
    TcpDirection(int dir, int headBytes, int first) {
        this.dir = dir;
        this.head = new byte[first];
        this.headMax = headBytes;
        this.first = first;
    }

    /** Start (or restart) at a segment whose payload begins a message. */
    void resync(int seq) {
        next = seq;
        seqKnown = true;
        lost = false;
        have = 0;
        need = first;
        remaining = 0;
        started = false;
    }

    /** Feed {@code len} in-order bytes from {@code b} at {@code off}, seen at {@code ts} in {@code frame}. */
    void feed(ByteBuffer b, int off, int len, long ts, long frame, E ev) {
        int i = 0;
        while (i < len && !lost) {
            if (have < need) {
                if (have == 0) { startTs = ts; startFrame = frame; } // a message starts at its first header byte
                int n = Math.min(need - have, len - i);
                if (have + n > head.length) head = java.util.Arrays.copyOf(head, Math.min(headMax, Math.max(need, 2 * head.length)));
                b.get(off + i, head, have, n);
                have += n;
                i += n;
                headerBytes(ts, ev);
                continue;
            }
            long n = Math.min(remaining, len - i);
            remaining -= n;
            i += (int) n;
            if (remaining == 0) finishMessage(ts, ev);
        }
    }

    /**
     * Header bytes were added ({@link #have} of {@link #need}): read them when enough are there,
     * raising {@link #need}, starting the message or setting {@link #lost} (not this protocol).
     */
    abstract void headerBytes(long ts, E ev);

    /** Tell {@code ev} the current message ended at {@code ts}. */
    abstract void end(long ts, E ev);

    /** The current message's last byte was seen at {@code ts}: tell the owner, wait for the next header. */
    final void finishMessage(long ts, E ev) {
        if (!started) return;
        end(ts, ev);
        have = 0;
        need = first;
        started = false;
    }
}
