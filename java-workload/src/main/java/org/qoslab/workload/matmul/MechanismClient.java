package org.qoslab.workload.matmul;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.qoslab.workload.net.Marked;
import org.qoslab.workload.net.ReliableDatagram;
import org.qoslab.workload.rmi.MarkingSocketFactory;

/**
 * The manager's side of one mechanism: requests to worker {@code w} (an index into the worker
 * list) that block until the reply. Safe for concurrent calls (one per task).
 */
public abstract class MechanismClient implements Closeable {
    public static final List<String> MECHANISMS = List.of("rmi-serializable", "rmi-externalizable", "socket", "datagram");

    protected final List<WorkerAddr> workers;
    protected final int dscp, connectTimeoutMs;
    protected final long timeoutMs;

    protected MechanismClient(List<WorkerAddr> workers, int dscp, int connectTimeoutMs, long timeoutMs) {
        this.workers = workers;
        this.dscp = Marked.checkDscp(dscp);
        this.connectTimeoutMs = connectTimeoutMs;
        this.timeoutMs = timeoutMs;
    }

    /** The client of a mechanism ({@link #MECHANISMS}; {@code rmi} = {@code rmi-serializable}). */
    public static MechanismClient open(String mechanism, List<WorkerAddr> workers, int dscp, int connectTimeoutMs,
                                       long timeoutMs) throws IOException {
        switch (mechanism) {
            case "rmi": case "rmi-serializable": return new Rmi(workers, false, dscp, connectTimeoutMs, timeoutMs);
            case "rmi-externalizable": return new Rmi(workers, true, dscp, connectTimeoutMs, timeoutMs);
            case "socket": return new Stream(workers, dscp, connectTimeoutMs, timeoutMs);
            case "datagram": return new Datagram(workers, dscp, connectTimeoutMs, timeoutMs);
            default: throw new IllegalArgumentException("unknown mechanism " + mechanism + " (" + String.join(", ", MECHANISMS) + ")");
        }
    }

    /** Reach worker {@code w} once (lookup / connect / first datagram); returns its description. */
    public abstract String hello(int w) throws Exception;

    public abstract MatrixNode spa(int w, MatrixNode task) throws Exception;

    public abstract MatrixNode mca(int w, TilePlan plan, MatrixNode blocks) throws Exception;

    public abstract byte[] echo(int w, byte[] payload) throws Exception;

    /** True when payloads go as {@link ExternalMatrixNode}. */
    public boolean externalizable() { return false; }

    /** Datagram retransmissions by this client so far (0 for other mechanisms). */
    public long retransmits() { return 0; }

    /** The port of this mechanism on worker {@code w}. */
    public abstract int port(WorkerAddr w);

    // ------------------------------------------------------------------ RMI

    static final class Rmi extends MechanismClient {
        private final boolean ext;
        private final MarkingSocketFactory csf;
        private final MatmulService[] stubs;

        Rmi(List<WorkerAddr> workers, boolean ext, int dscp, int connectTimeoutMs, long timeoutMs) {
            super(workers, dscp, connectTimeoutMs, timeoutMs);
            this.ext = ext;
            this.csf = new MarkingSocketFactory(dscp, connectTimeoutMs);
            this.stubs = new MatmulService[workers.size()];
        }

        private synchronized MatmulService stub(int w) throws Exception {
            if (stubs[w] == null) {
                Registry r = LocateRegistry.getRegistry(workers.get(w).host, workers.get(w).rmiPort, csf);
                stubs[w] = (MatmulService) r.lookup(MatmulService.NAME);
            }
            return stubs[w];
        }

        @Override public String hello(int w) throws Exception { return stub(w).describe(); }
        @Override public MatrixNode spa(int w, MatrixNode task) throws Exception { return stub(w).spa(task); }
        @Override public MatrixNode mca(int w, TilePlan p, MatrixNode b) throws Exception { return stub(w).mca(p, b); }
        @Override public byte[] echo(int w, byte[] payload) throws Exception { return stub(w).echo(payload); }
        @Override public boolean externalizable() { return ext; }
        @Override public int port(WorkerAddr w) { return w.rmiPort; }
        @Override public void close() { }
    }

    // ------------------------------------------------------------------ socket

    /** Buffered TCP streams, length-prefixed messages; a small pool of connections per worker. */
    static final class Stream extends MechanismClient {
        private static final class Conn {
            final SocketChannel ch;
            final DataInputStream in;
            final DataOutputStream out;
            Conn(SocketChannel ch, int readTimeoutMs) throws IOException {
                this.ch = ch;
                ch.socket().setSoTimeout(readTimeoutMs);
                in = new DataInputStream(new BufferedInputStream(ch.socket().getInputStream(), 1 << 16));
                out = new DataOutputStream(new BufferedOutputStream(ch.socket().getOutputStream(), 1 << 16));
            }
        }

        private final List<ConcurrentLinkedQueue<Conn>> idle = new ArrayList<>();
        private final ConcurrentHashMap<Conn, Boolean> all = new ConcurrentHashMap<>();
        private final AtomicLong ids = new AtomicLong();

        Stream(List<WorkerAddr> workers, int dscp, int connectTimeoutMs, long timeoutMs) {
            super(workers, dscp, connectTimeoutMs, timeoutMs);
            for (int i = 0; i < workers.size(); i++) idle.add(new ConcurrentLinkedQueue<>());
        }

        /** The sockets this client opened (tests read their ToS). */
        List<SocketChannel> channels() {
            List<SocketChannel> out = new ArrayList<>();
            for (Conn c : all.keySet()) out.add(c.ch);
            return out;
        }

        private byte[] call(int w, byte[] request) throws IOException {
            Conn c = idle.get(w).poll();
            if (c == null) {
                WorkerAddr a = workers.get(w);
                c = new Conn(Marked.connect(new InetSocketAddress(a.host, a.socketPort), dscp, connectTimeoutMs),
                        (int) Math.min(Integer.MAX_VALUE, timeoutMs));
                all.put(c, Boolean.TRUE);
            }
            try {
                Frames.write(c.out, request);
                byte[] reply = Frames.read(c.in);
                if (reply == null) throw new IOException("connection closed by the worker");
                idle.get(w).add(c);
                return reply;
            } catch (IOException | RuntimeException e) {
                all.remove(c);
                c.ch.close();
                throw e;
            }
        }

        @Override public String hello(int w) throws Exception {
            echo(w, new byte[0]);
            return workers.get(w).host + ":" + workers.get(w).socketPort;
        }

        @Override public MatrixNode spa(int w, MatrixNode task) throws Exception {
            return reply(Wire.decode(call(w, Wire.node(Wire.SPA, task))), w);
        }

        @Override public MatrixNode mca(int w, TilePlan p, MatrixNode b) throws Exception {
            return reply(Wire.decode(call(w, Wire.mca(p, b))), w);
        }

        @Override public byte[] echo(int w, byte[] payload) throws Exception {
            long id = ids.incrementAndGet();
            Wire.Msg m = Wire.decode(call(w, Wire.ping(Wire.PING, id, payload)));
            if (m.type != Wire.PONG || m.id != id) throw new IOException("unexpected answer to a ping (type " + m.type + ")");
            return m.payload;
        }

        private MatrixNode reply(Wire.Msg m, int w) throws IOException {
            if (m.type == Wire.ERROR) throw new IOException(m.error);
            if (m.type != Wire.REPLY) throw new IOException("unexpected answer type " + m.type);
            return m.node;
        }

        @Override public int port(WorkerAddr w) { return w.socketPort; }

        @Override public void close() {
            for (Conn c : all.keySet()) try { c.ch.close(); } catch (IOException ignored) { }
            all.clear();
        }
    }

    // ------------------------------------------------------------------ datagram

    /** Reliable datagrams from one UDP endpoint of the manager; replies matched by (job, tile) or ping id. */
    static final class Datagram extends MechanismClient {
        private record Key(byte kind, long a, int b) { }

        private final ReliableDatagram udp;
        private final ConcurrentHashMap<Key, CompletableFuture<Wire.Msg>> pending = new ConcurrentHashMap<>();
        private final AtomicLong ids = new AtomicLong();

        Datagram(List<WorkerAddr> workers, int dscp, int connectTimeoutMs, long timeoutMs) throws IOException {
            super(workers, dscp, connectTimeoutMs, timeoutMs);
            udp = new ReliableDatagram(null, 0, dscp, this::onMessage, "qoslab-matmul-manager-udp");
        }

        ReliableDatagram endpoint() { return udp; }

        private void onMessage(InetSocketAddress from, byte[] msg) {
            Wire.Msg m;
            try {
                m = Wire.decode(msg);
            } catch (IOException e) {
                System.err.println("[qoslab-workload] bad datagram from " + from + ": " + e.getMessage());
                return;
            }
            Key k = m.type == Wire.PONG ? new Key(Wire.PING, m.id, 0) : new Key(Wire.REPLY, m.job, m.tile);
            CompletableFuture<Wire.Msg> f = pending.get(k);
            if (f != null) f.complete(m);
        }

        private Wire.Msg call(int w, Key k, byte[] request) throws Exception {
            CompletableFuture<Wire.Msg> f = new CompletableFuture<>();
            pending.put(k, f);
            long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
            try {
                WorkerAddr a = workers.get(w);
                udp.send(new InetSocketAddress(a.host, a.datagramPort), request, deadline);
                long left = deadline - System.nanoTime();
                try {
                    return f.get(Math.max(1, left), TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    throw new java.net.SocketTimeoutException("no reply from " + a.host + ":" + a.datagramPort
                            + " within " + timeoutMs + " ms");
                } catch (ExecutionException e) {
                    throw new IOException(e.getCause());
                }
            } finally {
                pending.remove(k);
            }
        }

        @Override public String hello(int w) throws Exception {
            echo(w, new byte[0]);
            return workers.get(w).host + ":" + workers.get(w).datagramPort;
        }

        @Override public MatrixNode spa(int w, MatrixNode task) throws Exception {
            return reply(call(w, new Key(Wire.REPLY, task.job, task.tile), Wire.node(Wire.SPA, task)));
        }

        @Override public MatrixNode mca(int w, TilePlan p, MatrixNode b) throws Exception {
            return reply(call(w, new Key(Wire.REPLY, b.job, p.tileId), Wire.mca(p, b)));
        }

        @Override public byte[] echo(int w, byte[] payload) throws Exception {
            long id = ids.incrementAndGet();
            return call(w, new Key(Wire.PING, id, 0), Wire.ping(Wire.PING, id, payload)).payload;
        }

        private static MatrixNode reply(Wire.Msg m) throws IOException {
            if (m.type == Wire.ERROR) throw new IOException(m.error);
            if (m.type != Wire.REPLY) throw new IOException("unexpected answer type " + m.type);
            return m.node;
        }

        @Override public long retransmits() { return udp.retransmits.sum(); }

        @Override public int port(WorkerAddr w) { return w.datagramPort; }

        @Override public void close() throws IOException { udp.close(); }
    }
}
