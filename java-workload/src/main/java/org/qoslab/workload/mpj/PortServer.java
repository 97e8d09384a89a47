package org.qoslab.workload.mpj;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;

/**
 * The rendezvous MPJ Express's niodev needs before its ranks can talk: the part of
 * {@code mpjrun} ({@code runtime.starter.MPJRun}, MPJ Express 0.44) that collects each rank's
 * ports and hands every rank the table, without the daemons ({@code mpjboot}: one per node,
 * started over ssh, which would spawn the ranks themselves outside the executors' control).
 * The ranks are started by qoslab's executors instead, each with
 * {@code <rank> <conf> niodev} as MPJ's {@code MPI.Init} expects ({@link #conf}).
 *
 * <p>Protocol (read from the 0.44 bytecode of {@code MPJRun} and {@code xdev.niodev.NIODevice}):
 * a rank connects, writes {@code writeUTF("Sending Info")}, its write port, its read port and its
 * rank ({@code writeInt} each), then reads one {@code readUTF} string: {@code "#Peer Information"}
 * followed by {@code ";HOST@READPORT@WRITEPORT@RANK@DEBUGPORT"} per rank in rank order. HOST is
 * the address the rank connected from, as {@code MPJRun} does.
 */
public final class PortServer {
    /** niodev's protocol switch limit, bytes: eager below, rendezvous above (mpjrun's default, 128 KiB). */
    public static final int PSL = 131072;

    private PortServer() { }

    /** The configuration argument of every rank: N processes, PSL, this server's address. */
    public static String conf(int nprocs, String serverHost, int serverPort) {
        return "#Number of Processes;" + nprocs + ";#Protocol Switch Limit;" + PSL + ";#Server Name;" + serverHost
                + ";#Server Port;" + serverPort;
    }

    /**
     * Serve one job: accept {@code nprocs} ranks on {@code bind}:{@code port}, then answer each
     * with the table. Throws when not every rank registered within {@code timeoutS} seconds
     * (naming the ranks that did).
     */
    public static void serve(String bind, int port, int nprocs, double timeoutS) throws IOException {
        Socket[] peers = new Socket[nprocs];
        String[] entries = new String[nprocs];
        try (ServerSocket ss = new ServerSocket()) {
            ss.setReuseAddress(true);
            ss.bind(new InetSocketAddress(InetAddress.getByName(bind), port), nprocs + 4);
            long deadline = System.nanoTime() + (long) (timeoutS * 1e9);
            for (int got = 0; got < nprocs; got++) {
                ss.setSoTimeout((int) Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                Socket s;
                try {
                    s = ss.accept();
                } catch (SocketTimeoutException e) {
                    throw new IOException(got + " of " + nprocs + " MPJ ranks registered within " + timeoutS + " s", e);
                }
                int rank = register(s, entries, nprocs);
                peers[rank] = s;
            }
            StringBuilder table = new StringBuilder("#Peer Information");
            for (String e : entries) table.append(';').append(e);
            for (Socket s : peers) {
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                out.writeUTF(table.toString());
                out.flush();
                s.close();
            }
        } finally {
            for (Socket s : peers) if (s != null && !s.isClosed()) s.close();
        }
    }

    /** Read one rank's registration into {@code entries}; its rank. */
    static int register(Socket s, String[] entries, int nprocs) throws IOException {
        DataInputStream in = new DataInputStream(s.getInputStream());
        String hello = in.readUTF();
        if (!hello.startsWith("Sending Info")) throw new IOException("not an MPJ rank: " + hello);
        int writePort = in.readInt(), readPort = in.readInt(), rank = in.readInt();
        if (rank < 0 || rank >= nprocs || entries[rank] != null) throw new IOException("bad or repeated rank " + rank);
        entries[rank] = s.getInetAddress().getHostAddress() + "@" + readPort + "@" + writePort + "@" + rank + "@0";
        return rank;
    }
}
