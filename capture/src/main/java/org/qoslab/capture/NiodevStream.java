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
 * implausible size) makes the direction unreadable ({@link #lost}). The following by sequence number
 * and the cutting into header and body: {@link TcpDirection}. Pure state, no I/O.
 */
final class NiodevStream extends TcpDirection<NiodevStream.Events> {
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

    /** The sending process, from its channel's init or any message header. */
    long senderHi, senderLo;
    boolean senderKnown;
    private long size;

    /** A stream cut at niodev headers: a 4-byte code first, then the rest of its {@value #HEADER}-byte header at most. */
    NiodevStream(int dir) { super(dir, HEADER, 4); }

    /** True when {@code code} (a segment's first int) can start a niodev message. */
    static boolean opens(int code) { return code == SEND || code == INIT_DATA || code == INIT_CTRL; }

    /** The header is read once the bytes it asked for are there. */
    @Override
    void headerBytes(long ts, Events ev) {
        if (have == need) header(ts, ev);
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
        if (remaining == 0) finishMessage(ts, ev);
    }

    @Override
    void end(long ts, Events ev) { ev.end(this, size, ts); }

    /** A message has started and its last byte is not yet seen. */
    boolean inMessage() { return started; }
}
