package org.qoslab.workload.matmul;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.ServerSocket;
import java.nio.channels.SocketChannel;
import java.rmi.RemoteException;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.UnicastRemoteObject;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.qoslab.workload.net.Marked;
import org.qoslab.workload.net.ReliableDatagram;
import org.qoslab.workload.rmi.MarkingSocketFactory;

/**
 * A matmul worker: one {@link MatmulEngine} served over all four mechanisms at once (and the
 * pingpong echo over each), on fixed ports so a QoS profile can match them:
 * <ul>
 * <li>RMI: the {@link MatmulService} exported on {@code exportPort} and bound in a registry on
 *     {@code registryPort}, both through {@link MarkingSocketFactory} (DSCP, bind address);</li>
 * <li>socket: a TCP listener on {@code socketPort}; one thread per connection reads length-prefixed
 *     messages ({@link Frames}, {@link Wire}) and answers requests on the same connection;</li>
 * <li>datagram: a {@link ReliableDatagram} endpoint on UDP {@code datagramPort}; replies go back to
 *     the request's source.</li>
 * </ul>
 * MCA strips to neighbours go over the mechanism the tile's request came in by: RMI
 * {@code push} calls, a TCP connection per neighbour for the tile's life, or reliable datagrams
 * from the worker's own UDP port. The registry binds last: once its port accepts, everything listens.
 */
public final class MatmulWorker implements Closeable {
    /** Where and how to listen. */
    public static final class Options {
        /** Address to bind and to advertise in RMI stubs (java.rmi.server.hostname). */
        public String advertise = "127.0.0.1";
        public int registryPort = WorkerAddr.DEFAULT_BASE, exportPort = WorkerAddr.DEFAULT_BASE + WorkerAddr.EXPORT_OFFSET,
                socketPort = WorkerAddr.DEFAULT_BASE + WorkerAddr.SOCKET_OFFSET,
                datagramPort = WorkerAddr.DEFAULT_BASE + WorkerAddr.DATAGRAM_OFFSET;
        /** DSCP of everything this worker sends (all mechanisms), -1 = unmarked. */
        public int dscp = -1;
        public int connectTimeoutMs = 5000;
        /** Deadline of a datagram reply that is not part of an MCA tile (SPA, echo). */
        public long replyTimeoutMs = 120_000;

        /** Ports from one base: registry = base, export = base+1, socket = base+2, datagram = base+3. */
        public Options base(int base) {
            registryPort = base;
            exportPort = base + WorkerAddr.EXPORT_OFFSET;
            socketPort = base + WorkerAddr.SOCKET_OFFSET;
            datagramPort = base + WorkerAddr.DATAGRAM_OFFSET;
            return this;
        }
    }

    final Options o;
    final MatmulEngine engine = new MatmulEngine();
    private final String description;
    private final MarkingSocketFactory rmiFactory;
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "qoslab-matmul-task");
        t.setDaemon(true);
        return t;
    });
    private final Map<Peer, Boolean> peers = new ConcurrentHashMap<>();
    private final Map<Socket, Boolean> conns = new ConcurrentHashMap<>();
    private ServiceImpl service;
    private Registry registry;
    private ServerSocket listener;
    private ReliableDatagram udp;
    private volatile boolean closed;

    private MatmulWorker(Options o) {
        this.o = o;
        Marked.checkDscp(o.dscp);
        this.rmiFactory = new MarkingSocketFactory(o.dscp, o.connectTimeoutMs, o.advertise);
        this.description = o.advertise + " java " + System.getProperty("java.version");
    }

    /** Start serving on every mechanism; returns once all ports listen. */
    public static MatmulWorker start(Options o) throws Exception {
        MatmulWorker w = new MatmulWorker(o);
        try {
            w.udp = new ReliableDatagram(o.advertise, o.datagramPort, o.dscp, w::onDatagram, "qoslab-matmul-udp");
            w.listener = Marked.listen(o.advertise, o.socketPort, o.dscp);
            Thread acceptor = new Thread(w::acceptLoop, "qoslab-matmul-accept");
            acceptor.setDaemon(true);
            acceptor.start();
            if (o.advertise != null) System.setProperty("java.rmi.server.hostname", o.advertise);
            w.service = new ServiceImpl(w);
            MatmulService stub = (MatmulService) UnicastRemoteObject.exportObject(w.service, o.exportPort, w.rmiFactory, w.rmiFactory);
            w.registry = LocateRegistry.createRegistry(o.registryPort, w.rmiFactory, w.rmiFactory);
            w.registry.rebind(MatmulService.NAME, stub);
            return w;
        } catch (Exception e) {
            w.close();
            throw e;
        }
    }

    /** The worker's UDP endpoint (tests: its ToS, its counters). */
    public ReliableDatagram datagramEndpoint() { return udp; }

    /** This worker's open TCP sockets of the socket mechanism: accepted ones and those of running
     *  tiles to their neighbours (tests read their ToS). */
    java.util.List<Socket> tcpSockets() {
        java.util.List<Socket> out = new java.util.ArrayList<>(conns.keySet());
        for (Peer p : peers.keySet()) out.add(p.ch.socket());
        return out;
    }

    /** The socket mechanism's listener (tests read its ToS). */
    ServerSocket listener() { return listener; }

    /** Strips waiting for a tile (0 after clean runs). */
    public int pendingStrips() { return engine.pending(); }

    // ---------------------------------------------------------------- RMI

    private static final class ServiceImpl implements MatmulService {
        private final MatmulWorker w;
        ServiceImpl(MatmulWorker w) { this.w = w; }

        @Override public MatrixNode spa(MatrixNode task) throws RemoteException {
            try {
                return w.engine.spa(task);
            } catch (RuntimeException e) {
                throw new RemoteException("SPA task failed on " + w.o.advertise + ": " + e.getMessage());
            }
        }

        @Override public MatrixNode mca(TilePlan plan, MatrixNode blocks) throws RemoteException {
            try {
                try (RmiLinks links = w.new RmiLinks()) {
                    return w.engine.mca(plan, blocks, links);
                }
            } catch (Exception e) {
                throw new RemoteException(plan + " failed on " + w.o.advertise + ": " + e);
            }
        }

        @Override public void push(MatrixNode strip) { w.engine.deliver(strip); }

        @Override public byte[] echo(byte[] payload) { return payload; }

        @Override public String describe() { return w.description; }
    }

    /*
     * A tile's links to its two neighbours live as long as the tile: looked up / connected at its
     * first push, closed when it ends. Nothing is cached across runs, so a neighbour restarted
     * between runs (a worker pool renewing its JVMs) is found afresh: a cached stub would point at
     * a dead object, and a cached TCP connection to a dead peer would swallow the first strip
     * written into it.
     */

    /** RMI: the neighbours' stubs, looked up in their registries. */
    private final class RmiLinks implements MatmulEngine.Pusher, AutoCloseable {
        private MatmulService left, up;

        @Override public void push(TilePlan p, MatrixNode strip) throws Exception {
            if (strip.kind == MatrixNode.A_COLUMN) {
                if (left == null) left = lookup(p.leftHost, p.leftPort);
                left.push(strip);
            } else {
                if (up == null) up = lookup(p.upHost, p.upPort);
                up.push(strip);
            }
        }

        private MatmulService lookup(String host, int port) throws Exception {
            Registry r = LocateRegistry.getRegistry(host, port, rmiFactory);
            return (MatmulService) r.lookup(MatmulService.NAME);
        }

        @Override public void close() { }
    }

    // ---------------------------------------------------------------- socket

    /** An outgoing TCP connection to a neighbour (pushes only; nothing comes back on it). */
    private static final class Peer {
        final SocketChannel ch;
        final DataOutputStream out;
        Peer(SocketChannel ch) throws IOException {
            this.ch = ch;
            this.out = new DataOutputStream(new BufferedOutputStream(ch.socket().getOutputStream(), 1 << 16));
        }
    }

    /** Socket: one connection to each neighbour for the tile's life (closed gracefully: queued strips still arrive). */
    private final class SocketLinks implements MatmulEngine.Pusher, AutoCloseable {
        private Peer left, up;

        @Override public void push(TilePlan p, MatrixNode strip) throws IOException {
            boolean toLeft = strip.kind == MatrixNode.A_COLUMN;
            Peer peer = toLeft ? left : up;
            if (peer == null) {
                peer = new Peer(Marked.connect(new InetSocketAddress(toLeft ? p.leftHost : p.upHost, toLeft ? p.leftPort : p.upPort),
                        o.dscp, o.connectTimeoutMs));
                peers.put(peer, Boolean.TRUE);
                if (toLeft) left = peer; else up = peer;
            }
            Frames.write(peer.out, Wire.node(Wire.PUSH, strip));
        }

        @Override public void close() {
            for (Peer p : new Peer[] {left, up}) {
                if (p == null) continue;
                peers.remove(p);
                try { p.ch.close(); } catch (IOException ignored) { }
            }
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket s;
            try {
                s = Marked.accepted(listener.accept(), o.dscp);
            } catch (IOException e) {
                if (!closed) System.err.println("[qoslab-workload] matmul accept failed: " + e);
                if (closed || listener.isClosed()) return;
                continue;
            }
            conns.put(s, Boolean.TRUE);
            pool.submit(() -> serveConnection(s));
        }
    }

    private void serveConnection(Socket sock) {
        try (Socket s = sock) {
            DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 1 << 16));
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), 1 << 16));
            byte[] frame;
            while ((frame = Frames.read(in)) != null) {
                Wire.Msg m = Wire.decode(frame);
                switch (m.type) {
                    case Wire.PUSH: engine.deliver(m.node); break;
                    case Wire.PING: Frames.write(out, Wire.ping(Wire.PONG, m.id, m.payload)); break;
                    case Wire.SPA: case Wire.MCA: {
                        byte[] reply;
                        try {
                            MatrixNode r;
                            if (m.type == Wire.SPA) r = engine.spa(m.node);
                            else try (SocketLinks links = new SocketLinks()) {
                                r = engine.mca(m.plan, m.node, links);
                            }
                            reply = Wire.node(Wire.REPLY, r);
                        } catch (Exception | LinkageError | OutOfMemoryError e) {
                            reply = Wire.error(m.job, m.tile, (m.plan != null ? m.plan + " failed: " : "SPA task failed: ") + e);
                        }
                        Frames.write(out, reply);
                        break;
                    }
                    default: throw new IOException("unexpected message type " + m.type + " from a client");
                }
            }
        } catch (IOException e) {
            if (!closed) System.err.println("[qoslab-workload] matmul connection ended: " + e);
        } finally {
            conns.remove(sock);
        }
    }

    // ---------------------------------------------------------------- datagram

    /** On the UDP receive thread: strips are delivered at once, requests run on the pool. */
    private void onDatagram(InetSocketAddress from, byte[] msg) {
        if (msg.length > 0 && msg[0] == Wire.PUSH) {
            try {
                engine.deliver(Wire.decode(msg).node);
            } catch (IOException | RuntimeException e) {
                System.err.println("[qoslab-workload] bad datagram push from " + from + ": " + e);
            }
            return;
        }
        pool.submit(() -> serveDatagram(from, msg));
    }

    private void serveDatagram(InetSocketAddress from, byte[] msg) {
        long deadline = System.nanoTime() + o.replyTimeoutMs * 1_000_000L;
        byte[] reply;
        Wire.Msg m = null;
        try {
            m = Wire.decode(msg);
            long r0 = udp.retransmits.sum();
            switch (m.type) {
                case Wire.PING: reply = Wire.ping(Wire.PONG, m.id, m.payload); break;
                case Wire.SPA: case Wire.MCA: {
                    MatrixNode r;
                    if (m.type == Wire.SPA) r = engine.spa(m.node);
                    else {
                        deadline = System.nanoTime() + m.plan.timeoutMs * 1_000_000L;
                        r = engine.mca(m.plan, m.node, this::pushDatagram);
                    }
                    r.retransmits = udp.retransmits.sum() - r0;
                    reply = Wire.node(Wire.REPLY, r);
                    break;
                }
                default: throw new IOException("unexpected message type " + m.type);
            }
        } catch (Exception | LinkageError | OutOfMemoryError e) {
            reply = Wire.error(m == null ? 0 : m.job, m == null ? -1 : m.tile,
                    (m != null && m.plan != null ? m.plan + " failed: " : "task failed: ") + e);
        }
        try {
            udp.send(from, reply, deadline);
        } catch (IOException e) {
            if (!closed) System.err.println("[qoslab-workload] datagram reply to " + from + " failed: " + e);
        }
    }

    private void pushDatagram(TilePlan p, MatrixNode strip) throws IOException {
        boolean left = strip.kind == MatrixNode.A_COLUMN;
        InetSocketAddress to = new InetSocketAddress(left ? p.leftHost : p.upHost, left ? p.leftPort : p.upPort);
        udp.send(to, Wire.node(Wire.PUSH, strip), System.nanoTime() + p.timeoutMs * 1_000_000L);
    }

    // ---------------------------------------------------------------- life

    @Override
    public void close() {
        closed = true;
        try { if (registry != null) UnicastRemoteObject.unexportObject(registry, true); } catch (Exception ignored) { }
        try { if (service != null) UnicastRemoteObject.unexportObject(service, true); } catch (Exception ignored) { }
        try { if (listener != null) listener.close(); } catch (IOException ignored) { }
        try { if (udp != null) udp.close(); } catch (IOException ignored) { }
        for (Socket c : conns.keySet()) try { c.close(); } catch (IOException ignored) { }
        for (Peer p : peers.keySet()) try { p.ch.close(); } catch (IOException ignored) { }
        pool.shutdownNow();
    }

    @Override public String toString() { return "matmul worker " + description; }
}
