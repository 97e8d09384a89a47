package org.qoslab.workload.matmul;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The byte encoding of the {@code socket} and {@code datagram} mechanisms (the programmer's own
 * marshalling, reference 000 Fig. 3.3/3.4): one message = a type byte and its fields, big-endian.
 * On a TCP stream every message is preceded by its length (an int); over UDP a message is what
 * {@link org.qoslab.workload.net.ReliableDatagram} delivers.
 *
 * <pre>
 * SPA    node                       (request: A band + B)
 * MCA    plan node                  (request: tile plan + A and B blocks)
 * REPLY  node                       (C band / block and timings)
 * PUSH   node                       (worker to worker: one column of A or row of B)
 * PING   long id, int len, bytes    (echo request: pingpong, and "are you there")
 * PONG   long id, int len, bytes
 * ERROR  long job, int tile, utf8   (a task failed on the worker)
 * node = long job, int tile, step, kind, long computeNanos, exchangeNanos, retransmits, int pushes, matrix a, matrix b
 * matrix = int rows (-1 = none), int cols, rows*cols ints
 * plan = int n, q, i, j, tileId, h, w, len, leftTile, upTile, leftPort, upPort, byte externalizable,
 *        long timeoutMs, str leftHost, str upHost  (str = int length + UTF-8)
 * </pre>
 */
public final class Wire {
    private Wire() { }

    public static final byte SPA = 1, MCA = 2, REPLY = 3, PUSH = 4, PING = 5, PONG = 6, ERROR = 7;
    /** Most entries one matrix may claim (a guard against corrupt lengths). */
    static final long MAX_ENTRIES = 1L << 28;

    /** A decoded message: {@code type} and the fields its type uses. */
    public static final class Msg {
        public byte type;
        public MatrixNode node;
        public TilePlan plan;
        public long id, job;
        public int tile;
        public byte[] payload;
        public String error;
    }

    // ---- encoding ----

    public static byte[] node(byte type, MatrixNode n) {
        ByteBuffer bb = ByteBuffer.allocate(1 + nodeSize(n));
        bb.put(type);
        putNode(bb, n);
        return bb.array();
    }

    public static byte[] mca(TilePlan p, MatrixNode n) {
        byte[] lh = utf8(p.leftHost), uh = utf8(p.upHost);
        ByteBuffer bb = ByteBuffer.allocate(1 + 12 * 4 + 1 + 8 + 8 + lh.length + uh.length + nodeSize(n));
        bb.put(MCA);
        bb.putInt(p.n).putInt(p.q).putInt(p.i).putInt(p.j).putInt(p.tileId).putInt(p.h).putInt(p.w).putInt(p.len)
                .putInt(p.leftTile).putInt(p.upTile).putInt(p.leftPort).putInt(p.upPort)
                .put((byte) (p.externalizable ? 1 : 0)).putLong(p.timeoutMs);
        bb.putInt(lh.length).put(lh).putInt(uh.length).put(uh);
        putNode(bb, n);
        return bb.array();
    }

    public static byte[] ping(byte type, long id, byte[] payload) {
        ByteBuffer bb = ByteBuffer.allocate(1 + 8 + 4 + payload.length);
        bb.put(type).putLong(id).putInt(payload.length).put(payload);
        return bb.array();
    }

    public static byte[] error(long job, int tile, String message) {
        byte[] m = utf8(message == null ? "error" : message);
        ByteBuffer bb = ByteBuffer.allocate(1 + 8 + 4 + 4 + m.length);
        bb.put(ERROR).putLong(job).putInt(tile).putInt(m.length).put(m);
        return bb.array();
    }

    private static byte[] utf8(String s) { return (s == null ? "" : s).getBytes(StandardCharsets.UTF_8); }

    private static int matrixSize(int[][] m) {
        if (m == null) return 4;
        int cols = m.length == 0 ? 0 : m[0].length;
        return 8 + 4 * m.length * cols;
    }

    private static int nodeSize(MatrixNode n) { return 8 + 4 * 3 + 8 * 3 + 4 + matrixSize(n.a) + matrixSize(n.b); }

    private static void putNode(ByteBuffer bb, MatrixNode n) {
        bb.putLong(n.job).putInt(n.tile).putInt(n.step).putInt(n.kind)
                .putLong(n.computeNanos).putLong(n.exchangeNanos).putLong(n.retransmits).putInt(n.pushes);
        putMatrix(bb, n.a);
        putMatrix(bb, n.b);
    }

    private static void putMatrix(ByteBuffer bb, int[][] m) {
        if (m == null) { bb.putInt(-1); return; }
        int cols = m.length == 0 ? 0 : m[0].length;
        bb.putInt(m.length).putInt(cols);
        for (int[] row : m) {
            if (row.length != cols) throw new IllegalArgumentException("ragged matrix");
            bb.asIntBuffer().put(row);
            bb.position(bb.position() + 4 * cols);
        }
    }

    // ---- decoding ----

    /** Decode one message (its first byte is the type). */
    public static Msg decode(byte[] data) throws IOException {
        try {
            ByteBuffer bb = ByteBuffer.wrap(data);
            Msg m = new Msg();
            m.type = bb.get();
            switch (m.type) {
                case SPA: case REPLY: case PUSH:
                    m.node = getNode(bb);
                    break;
                case MCA: {
                    TilePlan p = new TilePlan();
                    p.n = bb.getInt(); p.q = bb.getInt(); p.i = bb.getInt(); p.j = bb.getInt();
                    p.tileId = bb.getInt(); p.h = bb.getInt(); p.w = bb.getInt(); p.len = bb.getInt();
                    p.leftTile = bb.getInt(); p.upTile = bb.getInt(); p.leftPort = bb.getInt(); p.upPort = bb.getInt();
                    p.externalizable = bb.get() != 0;
                    p.timeoutMs = bb.getLong();
                    p.leftHost = getString(bb);
                    p.upHost = getString(bb);
                    m.plan = p;
                    m.node = getNode(bb);
                    break;
                }
                case PING: case PONG: {
                    m.id = bb.getLong();
                    int len = bb.getInt();
                    if (len < 0 || len > bb.remaining()) throw new IOException("bad payload length " + len);
                    m.payload = new byte[len];
                    bb.get(m.payload);
                    break;
                }
                case ERROR:
                    m.job = bb.getLong();
                    m.tile = bb.getInt();
                    m.error = getString(bb);
                    break;
                default:
                    throw new IOException("unknown message type " + m.type);
            }
            if (m.node != null) { m.job = m.node.job; m.tile = m.node.tile; }
            return m;
        } catch (java.nio.BufferUnderflowException | NegativeArraySizeException e) {
            throw new IOException("truncated or corrupt message (" + data.length + " bytes)");
        }
    }

    private static String getString(ByteBuffer bb) throws IOException {
        int len = bb.getInt();
        if (len < 0 || len > bb.remaining()) throw new IOException("bad string length " + len);
        byte[] b = new byte[len];
        bb.get(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    private static MatrixNode getNode(ByteBuffer bb) throws IOException {
        MatrixNode n = new MatrixNode();
        n.job = bb.getLong();
        n.tile = bb.getInt();
        n.step = bb.getInt();
        n.kind = bb.getInt();
        n.computeNanos = bb.getLong();
        n.exchangeNanos = bb.getLong();
        n.retransmits = bb.getLong();
        n.pushes = bb.getInt();
        n.a = getMatrix(bb);
        n.b = getMatrix(bb);
        return n;
    }

    private static int[][] getMatrix(ByteBuffer bb) throws IOException {
        int rows = bb.getInt();
        if (rows < 0) return null;
        int cols = bb.getInt();
        if (cols < 0 || (long) rows * cols > MAX_ENTRIES || 4L * rows * cols > bb.remaining())
            throw new IOException("bad matrix " + rows + "x" + cols);
        int[][] m = new int[rows][cols];
        for (int[] row : m) {
            bb.asIntBuffer().get(row);
            bb.position(bb.position() + 4 * cols);
        }
        return m;
    }
}
