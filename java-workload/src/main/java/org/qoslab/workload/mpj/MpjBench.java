package org.qoslab.workload.mpj;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import mpi.Intracomm;
import mpi.MPI;
import org.qoslab.common.Json;

/**
 * Reference 003's message-passing measurements on MPJ Express (the mpiJava API: rank-addressed
 * Send/Recv with tags, Barrier, a tree Bcast), one process per rank; rank 0 prints one JSON line.
 * Started as {@code MpjBench <rank> <conf> niodev [options]} ({@link PortServer#conf}); options:
 * {@code --min-bytes}, {@code --max-bytes} (ping-pong and Bcast sizes, doubling), {@code --reps},
 * {@code --warmup}, {@code --socket-peer HOST:PORT} (also a plain-socket ping-pong from rank 0 to
 * rank 1, which listens on PORT: reference 003's table puts the two side by side).
 *
 * <p>Per operation, latencies in seconds ({@link Latencies#summary}): {@code pingpong} (rank 0 to
 * rank 1 and back, per size: the round trip), {@code barrier} and {@code bcast} (per size from
 * rank 0) and {@code allreduce} (a sum of 1 and 1024 doubles): each repetition starts from a
 * Barrier and counts the slowest rank's time (an Allreduce MAX of every rank's own time, not
 * timed): a collective is as late as its last member. {@code valid} is false when any echo,
 * broadcast or sum differs from what it must be.
 */
public final class MpjBench {
    private MpjBench() { }

    /** Options after MPJ's own three arguments. */
    static final class Options {
        int minBytes = 1, maxBytes = 65536, reps = 25, warmup = 5;
        String socketPeer;

        static Options parse(String[] a) {
            Options o = new Options();
            for (int i = 0; i + 1 < a.length; i += 2) {
                switch (a[i]) {
                    case "--min-bytes" -> o.minBytes = Integer.parseInt(a[i + 1]);
                    case "--max-bytes" -> o.maxBytes = Integer.parseInt(a[i + 1]);
                    case "--reps" -> o.reps = Integer.parseInt(a[i + 1]);
                    case "--warmup" -> o.warmup = Integer.parseInt(a[i + 1]);
                    case "--socket-peer" -> o.socketPeer = a[i + 1];
                    default -> throw new IllegalArgumentException("unknown option " + a[i]);
                }
            }
            if (o.minBytes < 1 || o.maxBytes < o.minBytes || o.reps < 1 || o.warmup < 0)
                throw new IllegalArgumentException("need 1 <= --min-bytes <= --max-bytes, --reps >= 1, --warmup >= 0");
            return o;
        }
    }

    /** Run one rank (see the class doc); exits 0 when valid. */
    public static void main(String[] args) throws Exception {
        long t0 = System.nanoTime();
        String[] rest = MPI.Init(args);
        Intracomm w = MPI.COMM_WORLD;
        int rank = w.Rank(), size = w.Size();
        Options o = Options.parse(rest);
        Map<String, Object> r = new LinkedHashMap<>();
        boolean[] ok = {true};
        r.put("workload", "mpj");
        r.put("ranks", size);
        r.put("implementation", "MPJ Express 0.44 niodev");
        if (size >= 2) r.put("pingpong", Ops.pingpong(w, rank, o, ok));
        SocketPingPong sock = o.socketPeer != null && size >= 2 ? SocketPingPong.open(w, rank, o.socketPeer) : null;
        if (sock != null) r.put("socket_pingpong", sock.run(rank, o, ok));
        r.put("barrier", Ops.barrier(w, o, ok));
        r.put("bcast", Ops.bcast(w, rank, o, ok));
        r.put("allreduce", Ops.allreduce(w, rank, size, o, ok));
        int[] bad = {ok[0] ? 0 : 1}, anyBad = new int[1];
        w.Allreduce(bad, 0, anyBad, 0, 1, MPI.INT, MPI.MAX);
        r.put("valid", anyBad[0] == 0);
        r.put("elapsed_s", (System.nanoTime() - t0) / 1e9);
        if (sock != null) sock.close();
        MPI.Finalize();
        if (rank == 0) {
            System.out.println(Json.write(r));
            System.out.flush();
        }
        System.exit(anyBad[0] == 0 ? 0 : 1);
    }

    /** The slowest rank's time of one repetition (seconds): an Allreduce MAX, not timed itself. */
    static double slowest(Intracomm w, double mine) throws Exception {
        double[] in = {mine}, out = new double[1];
        w.Allreduce(in, 0, out, 0, 1, MPI.DOUBLE, MPI.MAX);
        return out[0];
    }

    /**
     * A list of per-size summaries: {@code bytes} and the latency summary; with {@code roundTrip}
     * also {@code throughput_bits_s} = 2 x bytes x 8 / median (both directions, reference 003's rate).
     */
    static List<Map<String, Object>> perSize(int[] sizes, double[][] samples, boolean roundTrip) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (int i = 0; i < sizes.length; i++) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("bytes", sizes[i]);
            m.put("latency_s", Latencies.summary(samples[i]));
            double p50 = Latencies.nearestRank(sorted(samples[i]), 50);
            if (roundTrip) m.put("throughput_bits_s", p50 > 0 ? 2.0 * sizes[i] * 8 / p50 : null);
            out.add(m);
        }
        return out;
    }

    private static double[] sorted(double[] a) {
        double[] s = a.clone();
        java.util.Arrays.sort(s);
        return s;
    }
}
