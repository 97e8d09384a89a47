package org.qoslab.workload.sort;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import org.omg.CORBA.ORB;
import org.qoslab.workload.net.Marked;
import org.qoslab.workload.rmi.MarkingSocketFactory;
import org.qoslab.workload.sort.corba.Sorter;

/**
 * The client's side of one sort server over one mechanism: {@code socket}, {@code rmi} or
 * {@code corba} (reference 002's three). Opening a client connects (TCP connect, registry
 * look-up, or corbaloc resolve with its {@code _is_a} round trip), so the phases time only
 * the three steps.
 */
public interface SortClient extends AutoCloseable {
    /** Mechanisms, in reference 002's table order. */
    String[] MECHANISMS = {"socket", "rmi", "corba"};

    /** Send a part (distribute). */
    void put(int[] part) throws Exception;

    /** Have the server sort it; the server's sort time, ns. */
    long sort() throws Exception;

    /** Bring the sorted part back (collect). */
    int[] take() throws Exception;

    @Override void close();

    /**
     * A connected client to the server at {@code host} with base port {@code base}.
     *
     * @param orb the manager's client ORB (corba only; null otherwise)
     */
    static SortClient open(String mechanism, String host, int base, long session, int dscp, double timeoutS, ORB orb)
            throws Exception {
        return switch (mechanism) {
            case "socket" -> new Stream(host, base + SortServer.SOCKET_OFFSET, dscp, timeoutS);
            case "rmi" -> new Rmi(host, base, session, dscp);
            case "corba" -> new Corba(Orbs.resolve(orb, host, base + SortServer.IIOP_OFFSET), session);
            default -> throw new IllegalArgumentException("mechanism must be socket, rmi or corba, got " + mechanism);
        };
    }

    /** The socket mechanism: one kept TCP connection, the protocol of {@link SortServer}. */
    final class Stream implements SortClient {
        private final SocketChannel ch;
        private final DataInputStream in;
        private final DataOutputStream out;

        Stream(String host, int port, int dscp, double timeoutS) throws IOException {
            ch = Marked.connect(new InetSocketAddress(host, port), dscp, 5000);
            ch.socket().setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeoutS * 1000));
            in = new DataInputStream(new BufferedInputStream(ch.socket().getInputStream(), SortServer.STREAM_BUFFER));
            out = new DataOutputStream(new BufferedOutputStream(ch.socket().getOutputStream(), SortServer.STREAM_BUFFER));
        }

        @Override public void put(int[] part) throws IOException {
            out.writeByte('P');
            SortServer.writeInts(out, part);
            out.flush();
            if (in.readByte() != 'K') throw new IOException("socket server did not acknowledge the part");
        }

        @Override public long sort() throws IOException {
            out.writeByte('S');
            out.flush();
            return in.readLong();
        }

        @Override public int[] take() throws IOException {
            out.writeByte('T');
            out.flush();
            return SortServer.readInts(in);
        }

        @Override public void close() {
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    /** The RMI mechanism: a registry look-up, then three calls per part. */
    final class Rmi implements SortClient {
        private final SortService svc;
        private final long session;

        Rmi(String host, int registryPort, long session, int dscp) throws Exception {
            MarkingSocketFactory f = new MarkingSocketFactory(dscp, 5000);
            Registry reg = LocateRegistry.getRegistry(host, registryPort, f);
            this.svc = (SortService) reg.lookup("SortService");
            this.session = session;
        }

        @Override public void put(int[] part) throws Exception { svc.put(session, part); }

        @Override public long sort() throws Exception { return svc.sort(session); }

        @Override public int[] take() throws Exception { return svc.take(session); }

        @Override public void close() { }
    }

    /** The CORBA mechanism: the IDL stub ({@code _SorterStub}) over IIOP. */
    final class Corba implements SortClient {
        private final Sorter sorter;
        private final long session;

        Corba(Sorter sorter, long session) {
            this.sorter = sorter;
            this.session = session;
        }

        @Override public void put(int[] part) { sorter.put(session, part); }

        @Override public long sort() { return sorter.sort(session); }

        @Override public int[] take() { return sorter.take(session); }

        @Override public void close() {
            sorter._release();
        }
    }
}
