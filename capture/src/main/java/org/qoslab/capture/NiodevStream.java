package org.qoslab.capture;

import java.nio.ByteBuffer;

/**
 * One direction of an MPJ Express niodev connection for {@link NiodevMatcher}: follows the TCP byte
 * stream by sequence number and cuts it into niodev messages. The framing, read from MPJ Express
 * 0.44's {@code xdev.niodev.NIODevice} ({@code eagerSend}, {@code rendezCtrlMsgSend}, the channel
 * set-up) and checked on a real capture ({@code NiodevMatcherTest}), all big-endian:
 * <ul>
 *   <li>a channel opens with {@value #INIT_DATA} (data channel) or {@value #INIT_CTRL} (control
 *       channel), the rank (int) and the process's UUID (two longs): {@value #INIT_BYTES} bytes;</li>
 *   <li>a message is {@value #SEND} (READY_TO_SEND), the sender's UUID, tag, static buffer size,
 *       dynamic buffer size, comm mode, context, element count, send counter and further fields, a
 *       {@value #HEADER}-byte header, then its static and dynamic buffers.</li>
 * </ul>
 * Anything else (the rendezvous protocol's other codes above the 128 KiB protocol switch limit, an
 * implausible size) makes the direction unreadable ({@link #lost}). Pure state, no I/O.
 */
final class NiodevStream {
    static final int INIT_DATA = -21, INIT_CTRL = -20, SEND = -24;
    static final int INIT_BYTES = 24, HEADER = 81;
    /** Larger static or dynamic buffers than this are not believed (a misread header). */
    static final int MAX_BUFFER = 1 << 30;

    /** What the stream tells its owner. */
    interface Events {
        /** A message header is read: its sender's UUID, tag and context; its first byte was seen at {@code ts} in {@code frame}. */
        void start(NiodevStream s, long uuidHi, long uuidLo, int tag, int context, long ts, long frame);

        /** The message's last byte was seen at {@code ts} ({@code bytes}: header and buffers). */
        void end(NiodevStream s, long bytes, long ts);
    }

    final int dir;
    int next;
    boolean seqKnown, lost = true;
    /** The sending process, from its channel's init or any message header. */
    long senderHi, senderLo;
    boolean senderKnown;
    private final byte[] head = new byte[HEADER];
    private int have, need;
    private long remaining, size, startTs, startFrame;
    private boolean started;

    NiodevStream(int dir) { this.dir = dir; }

    /** True when {@code code} (a segment's first int) can start a niodev message. */
    static boolean opens(int code) { return code == SEND || code == INIT_DATA || code == INIT_CTRL; }

    /** Start (or restart) at a segment whose payload begins a niodev message. */
    void resync(int seq) {
        next = seq;
        seqKnown = true;
        lost = false;
        have = 0;
        need = 4;
        remaining = 0;
        started = false;
    }

    /** Feed {@code len} in-order bytes from {@code b} at {@code off}. */
    void feed(ByteBuffer b, int off, int len, long ts, long frame, Events ev) {
        int i = 0;
        while (i < len && !lost) {
            if (have < need) {
                if (have == 0) { startTs = ts; startFrame = frame; }
                int n = Math.min(need - have, len - i);
                b.get(off + i, head, have, n);
                have += n;
                i += n;
                if (have == need) header(ts, ev);
                continue;
            }
            long n = Math.min(remaining, len - i);
            remaining -= n;
            i += (int) n;
            if (remaining == 0) finish(ts, ev);
        }
    }

    private void header(long ts, Events ev) {
        ByteBuffer h = ByteBuffer.wrap(head);
        int code = h.getInt(0);
        if (need == 4) {
            if (code == INIT_DATA || code == INIT_CTRL) need = INIT_BYTES;
            else if (code == SEND) need = HEADER;
            else lost = true;
            return;
        }
        if (code != SEND) { // a channel's init: who sends on this direction
            senderHi = h.getLong(8);
            senderLo = h.getLong(16);
            senderKnown = true;
            have = 0;
            need = 4;
            return;
        }
        int sBuf = h.getInt(24), dBuf = h.getInt(28);
        if (sBuf < 0 || dBuf < 0 || sBuf > MAX_BUFFER || dBuf > MAX_BUFFER) { lost = true; return; }
        senderHi = h.getLong(4);
        senderLo = h.getLong(12);
        senderKnown = true;
        size = HEADER + (long) sBuf + dBuf;
        remaining = (long) sBuf + dBuf;
        started = true;
        ev.start(this, senderHi, senderLo, h.getInt(20), h.getInt(36), startTs, startFrame);
        if (remaining == 0) finish(ts, ev);
    }

    private void finish(long ts, Events ev) {
        if (!started) return;
        ev.end(this, size, ts);
        started = false;
        have = 0;
        need = 4;
    }

    /** A message has started and its last byte is not yet seen. */
    boolean inMessage() { return started; }
}
