package org.qoslab.capture;

import java.nio.ByteBuffer;

/**
 * One direction of a GIOP connection for {@link GiopMatcher}: follows the TCP byte stream by
 * sequence number and cuts it into GIOP messages (12-byte header: magic "GIOP", version
 * major.minor, flags (bit 0 little-endian, bit 1 more fragments follow; GIOP 1.0: the byte-order
 * boolean), message type, message size), reading each message's request id. Where the request id
 * lies (CORBA 3.0, chapter 15 "GIOP"): GIOP 1.2 Request, Reply, Fragment, LocateRequest,
 * LocateReply and CancelRequest start their body with it; GIOP 1.0/1.1 Request and Reply put a
 * service context list before it (read here from the message's first {@value #PREFIX} body bytes),
 * LocateRequest/LocateReply/CancelRequest start with it. The following by sequence number and the
 * cutting into header and body: {@link TcpDirection}. Pure state, no I/O.
 */
final class GiopStream extends TcpDirection<GiopStream.Events> {
    static final int MAGIC = 0x47494f50; // "GIOP"
    static final int REQUEST = 0, REPLY = 1, CANCEL = 2, LOCATE_REQUEST = 3, LOCATE_REPLY = 4, CLOSE = 5, ERROR = 6, FRAGMENT = 7;
    /** Body bytes kept per message to find a GIOP 1.0/1.1 request id behind its service contexts. */
    static final int PREFIX = 2048;

    /** What the stream tells its owner. */
    interface Events {
        /** A message's header and request id are read ({@code requestId} -1 when it has none or it was not found). */
        void start(GiopStream s, int type, long requestId, boolean responseExpected, long ts, long frame);

        /**
         * The message's last byte was seen at {@code ts} ({@code more}: the GIOP more-fragments flag
         * was set; {@code bytes}: the whole message, header included).
         */
        void end(GiopStream s, int type, long requestId, boolean more, long bytes, long ts);
    }

    private int type, minor;
    private long size;
    private boolean little, more;
    private long requestId;

    /** A stream cut at 12-byte GIOP headers (plus up to {@value #PREFIX} body bytes kept). */
    GiopStream(int dir) { super(dir, 12 + PREFIX, 12); }

    /** The 12-byte header is read once there; the message starts once its kept body prefix is there. */
    @Override
    void headerBytes(long ts, Events ev) {
        if (have == 12 && need == 12 && !header()) { lost = true; return; }
        if (have == need && !started) begin(ts, ev);
    }

    private boolean header() {
        ByteBuffer h = ByteBuffer.wrap(head, 0, 12);
        if (h.getInt(0) != MAGIC || head[4] != 1 || head[5] > 2) return false;
        minor = head[5];
        little = (head[6] & 1) != 0;
        more = minor >= 1 && (head[6] & 2) != 0;
        type = head[7];
        int size = (int) (little ? Integer.reverseBytes(h.getInt(8)) : h.getInt(8));
        if (type < 0 || type > FRAGMENT || size < 0) return false;
        long body = size & 0xFFFFFFFFL;
        this.size = 12 + body;
        int prefix = (int) Math.min(body, idInPrefix() ? PREFIX : (type == CLOSE || type == ERROR ? 0 : 8));
        need = 12 + prefix;
        remaining = body - prefix;
        return true;
    }

    /** GIOP 1.0/1.1 Request/Reply: the id lies behind the service contexts, so keep more of the body. */
    private boolean idInPrefix() { return minor < 2 && (type == REQUEST || type == REPLY); }

    private void begin(long ts, GiopStream.Events ev) {
        started = true;
        requestId = -1;
        boolean expected = true;
        ByteBuffer p = ByteBuffer.wrap(head, 12, need - 12).slice();
        int idAt = 0;
        if (idInPrefix()) idAt = afterContexts(p, little);
        else if (type == FRAGMENT && minor < 2) idAt = -1; // a 1.1 fragment has no id: it continues the previous message
        if (idAt >= 0 && idAt + 4 <= p.limit() && type != CLOSE && type != ERROR) {
            requestId = u32(p, idAt, little);
            int flag = idAt + 4;
            if (type == REQUEST && flag < p.limit()) expected = minor < 2 ? p.get(flag) != 0 : (p.get(flag) & 1) != 0;
        }
        ev.start(this, type, requestId, expected, startTs, startFrame);
        if (remaining == 0) finishMessage(ts, ev);
    }

    /** The CDR ulong at {@code at} in the message's byte order. */
    static long u32(ByteBuffer p, int at, boolean little) {
        int v = p.getInt(at);
        return (little ? Integer.reverseBytes(v) : v) & 0xFFFFFFFFL;
    }

    /** Offset of the ulong after a service context list at the start of {@code p}, -1 when the prefix is too short. */
    static int afterContexts(ByteBuffer p, boolean little) {
        if (p.limit() < 4) return -1;
        long n = u32(p, 0, little);
        int at = 4;
        for (long i = 0; i < n; i++) {
            at = (at + 3) & ~3;
            if (at + 8 > p.limit()) return -1;
            long len = u32(p, at + 4, little);
            if (len > p.limit()) return -1;
            at += 8 + (int) len;
        }
        at = (at + 3) & ~3;
        return at;
    }

    @Override
    void end(long ts, Events ev) { ev.end(this, type, requestId, more, size, ts); }
}
