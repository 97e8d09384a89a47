package org.qoslab.workload.sort;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.UnicastRemoteObject;
import java.util.ArrayList;
import java.util.List;
import org.omg.CORBA.ORB;
import org.qoslab.workload.net.Marked;
import org.qoslab.workload.rmi.MarkingSocketFactory;

/**
 * A sort server (reference 002, Figure 1): one JVM serving the three mechanisms at once, on
 * ports from one base port: RMI registry BASE, RMI service BASE + 1, TCP socket BASE + 2, IIOP
 * (CORBA) BASE + 3. Every mechanism does the same three steps: keep a part, sort it
 * ({@code Arrays.sort}), return it.
 *
 * <p>Socket protocol (BASE + 2, one part per connection): the client sends {@code 'P'}, the
 * count and the integers one {@code writeInt} at a time through a buffered stream (reference 002,
 * section 5: small portions written repeatedly, no Java serialization) and reads {@code 'K'};
 * {@code 'S'} answers the sort time as a long (ns); {@code 'T'} answers the count and the sorted
 * integers. Big-endian, as {@code DataOutputStream}.
 */
public final class SortServer {
    /** Port offsets from the base port. */
    public static final int EXPORT_OFFSET = 1, SOCKET_OFFSET = 2, IIOP_OFFSET = 3;
    /** Socket buffer of the socket mechanism's streams, bytes. */
    static final int STREAM_BUFFER = 64 * 1024;

    private final List<AutoCloseable> open = new ArrayList<>();
    private final SortStore store = new SortStore();

    private SortServer() { }

    /**
     * Start a server bound to {@code advertise} on {@code base}..{@code base}+3, marking what it
     * sends with {@code dscp} (-1 = unmarked); returns once every port listens (the RMI registry,
     * the port a pool waits for, binds last).
     */
    public static SortServer start(String advertise, int base, int dscp, double timeoutS) throws Exception {
        SortServer s = new SortServer();
        MarkingOrbSocketFactory.setDscp(dscp);
        ORB orb = Orbs.serve(advertise, base + IIOP_OFFSET, s.store, timeoutS);
        s.open.add(() -> orb.shutdown(false));
        ServerSocket ss = Marked.listen(advertise, base + SOCKET_OFFSET, dscp);
        s.open.add(ss);
        Thread t = new Thread(() -> s.acceptLoop(ss, dscp), "sort-socket-accept");
        t.setDaemon(true);
        t.start();
        MarkingSocketFactory f = new MarkingSocketFactory(dscp, 5000, advertise);
        Impl impl = new Impl(s.store);
        SortService stub = (SortService) UnicastRemoteObject.exportObject(impl, base + EXPORT_OFFSET, f, f);
        Registry reg = LocateRegistry.createRegistry(base, f, f);
        reg.rebind("SortService", stub);
        s.open.add(() -> UnicastRemoteObject.unexportObject(impl, true));
        s.open.add(() -> UnicastRemoteObject.unexportObject(reg, true));
        return s;
    }

    /** Stop every listener (tests; a worker runs until killed). */
    public void close() {
        for (AutoCloseable c : open) {
            try {
                c.close();
            } catch (Exception ignored) {
                // best effort
            }
        }
    }

    private void acceptLoop(ServerSocket ss, int dscp) {
        while (!ss.isClosed()) {
            try {
                Socket c = Marked.accepted(ss.accept(), dscp);
                Thread t = new Thread(() -> serve(c), "sort-socket-" + c.getRemoteSocketAddress());
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                if (!ss.isClosed()) System.err.println("[qoslab-workload] sort socket accept: " + e.getMessage());
            }
        }
    }

    /** One client connection: any number of P/S/T requests, until the client closes. */
    static void serve(Socket c) {
        try (c; DataInputStream in = new DataInputStream(new BufferedInputStream(c.getInputStream(), STREAM_BUFFER));
             DataOutputStream out = new DataOutputStream(new BufferedOutputStream(c.getOutputStream(), STREAM_BUFFER))) {
            int[] part = null;
            while (true) {
                int op = in.read();
                if (op < 0) return;
                switch (op) {
                    case 'P' -> { part = readInts(in); out.writeByte('K'); }
                    case 'S' -> {
                        if (part == null) throw new IOException("sort before any part");
                        long t0 = System.nanoTime();
                        java.util.Arrays.sort(part);
                        out.writeLong(System.nanoTime() - t0);
                    }
                    case 'T' -> {
                        if (part == null) throw new IOException("take before any part");
                        writeInts(out, part);
                        part = null;
                    }
                    default -> throw new IOException("unknown request byte " + op);
                }
                out.flush();
            }
        } catch (EOFException e) {
            // the client closed mid-message: nothing to answer
        } catch (IOException e) {
            System.err.println("[qoslab-workload] sort socket connection: " + e.getMessage());
        }
    }

    /** A count and that many integers, one {@code readInt} each. */
    static int[] readInts(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0) throw new IOException("negative count " + n);
        int[] a = new int[n];
        for (int i = 0; i < n; i++) a[i] = in.readInt();
        return a;
    }

    /** A count and the integers, one {@code writeInt} each (not flushed). */
    static void writeInts(DataOutputStream out, int[] a) throws IOException {
        out.writeInt(a.length);
        for (int v : a) out.writeInt(v);
    }

    /** The RMI servant. */
    static final class Impl implements SortService {
        private final SortStore store;

        Impl(SortStore store) { this.store = store; }

        @Override public void put(long session, int[] part) { store.put(session, part); }

        @Override public long sort(long session) { return store.sort(session); }

        @Override public int[] take(long session) { return store.take(session); }
    }
}
