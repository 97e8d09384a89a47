package org.qoslab.workload.mpj;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Map;
import mpi.Intracomm;

/**
 * The plain-socket ping-pong beside MPJ's (reference 003's table compares the two): rank 1
 * listens on the given port before a Barrier, rank 0 connects after it; length-prefixed byte
 * messages, no Nagle, the same sizes and repetitions as MPJ's ping-pong.
 */
final class SocketPingPong implements AutoCloseable {
    private final ServerSocket listener;
    private Socket socket;

    private SocketPingPong(ServerSocket listener) {
        this.listener = listener;
    }

    /** Rank 1 listens on PORT of {@code peer} ("HOST:PORT"), rank 0 connects to it; other ranks take no part. */
    static SocketPingPong open(Intracomm w, int rank, String peer) throws Exception {
        int colon = peer.lastIndexOf(':');
        String host = peer.substring(0, colon);
        int port = Integer.parseInt(peer.substring(colon + 1));
        SocketPingPong p = new SocketPingPong(rank == 1 ? new ServerSocket() : null);
        if (p.listener != null) {
            p.listener.setReuseAddress(true);
            p.listener.bind(new InetSocketAddress(port));
        }
        w.Barrier();
        if (rank == 0) p.socket = new Socket(host, port);
        else if (rank == 1) p.socket = p.listener.accept();
        if (p.socket != null) p.socket.setTcpNoDelay(true);
        return p;
    }

    /** The round trips per size at rank 0 (rank 1 echoes); null elsewhere. */
    List<Map<String, Object>> run(int rank, MpjBench.Options o, boolean[] ok) throws IOException {
        if (socket == null) return null;
        int[] sizes = Latencies.doubling(o.minBytes, o.maxBytes);
        double[][] samples = new double[sizes.length][o.reps];
        DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 1 << 16));
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream(), 1 << 16));
        for (int s = 0; s < sizes.length; s++) {
            byte[] buf = new byte[sizes[s]], back = new byte[sizes[s]];
            for (int rep = -o.warmup; rep < o.reps; rep++) {
                if (rank == 0) {
                    for (int i = 0; i < buf.length; i++) buf[i] = Ops.pattern(rep, i);
                    long t = System.nanoTime();
                    out.writeInt(buf.length);
                    out.write(buf);
                    out.flush();
                    in.readFully(back, 0, in.readInt());
                    double dt = (System.nanoTime() - t) / 1e9;
                    if (!java.util.Arrays.equals(buf, back)) ok[0] = false;
                    if (rep >= 0) samples[s][rep] = dt;
                } else {
                    in.readFully(back, 0, in.readInt());
                    out.writeInt(back.length);
                    out.write(back);
                    out.flush();
                }
            }
        }
        return rank == 0 ? MpjBench.perSize(sizes, samples, true) : null;
    }

    @Override
    public void close() throws IOException {
        if (socket != null) socket.close();
        if (listener != null) listener.close();
    }
}
