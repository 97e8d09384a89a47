package org.qoslab.workload.mpj;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import mpi.Intracomm;
import mpi.MPI;

/** The MPJ operations of {@link MpjBench}: each returns its summaries and clears {@code ok[0]} on a wrong result. */
final class Ops {
    private static final int TAG = 3;

    private Ops() { }

    /** Payload byte {@code i} of repetition {@code rep}: checkable, different per repetition. */
    static byte pattern(int rep, int i) {
        return (byte) (i * 31 + rep * 7 + 1);
    }

    /** Rank 0 sends, rank 1 echoes; per size the round trips (other ranks wait). */
    static List<Map<String, Object>> pingpong(Intracomm w, int rank, MpjBench.Options o, boolean[] ok) throws Exception {
        int[] sizes = Latencies.doubling(o.minBytes, o.maxBytes);
        double[][] samples = new double[sizes.length][o.reps];
        for (int s = 0; s < sizes.length; s++) {
            byte[] buf = new byte[sizes[s]], back = new byte[sizes[s]];
            for (int rep = -o.warmup; rep < o.reps; rep++) {
                if (rank == 0) {
                    for (int i = 0; i < buf.length; i++) buf[i] = pattern(rep, i);
                    long t = System.nanoTime();
                    w.Send(buf, 0, buf.length, MPI.BYTE, 1, TAG);
                    w.Recv(back, 0, back.length, MPI.BYTE, 1, TAG);
                    double dt = (System.nanoTime() - t) / 1e9;
                    if (!java.util.Arrays.equals(buf, back)) ok[0] = false;
                    if (rep >= 0) samples[s][rep] = dt;
                } else if (rank == 1) {
                    w.Recv(back, 0, back.length, MPI.BYTE, 0, TAG);
                    w.Send(back, 0, back.length, MPI.BYTE, 0, TAG);
                }
            }
        }
        w.Barrier();
        return MpjBench.perSize(sizes, samples, true);
    }

    /** Barrier latency: the slowest rank's time through one Barrier, after a Barrier. */
    static Map<String, Object> barrier(Intracomm w, MpjBench.Options o, boolean[] ok) throws Exception {
        double[] samples = new double[o.reps];
        for (int rep = -o.warmup; rep < o.reps; rep++) {
            w.Barrier();
            long t = System.nanoTime();
            w.Barrier();
            double dt = MpjBench.slowest(w, (System.nanoTime() - t) / 1e9);
            if (rep >= 0) samples[rep] = dt;
        }
        return Latencies.summary(samples);
    }

    /** Bcast from rank 0 per size: the slowest rank's time; every rank checks what it got. */
    static List<Map<String, Object>> bcast(Intracomm w, int rank, MpjBench.Options o, boolean[] ok) throws Exception {
        int[] sizes = Latencies.doubling(o.minBytes, o.maxBytes);
        double[][] samples = new double[sizes.length][o.reps];
        for (int s = 0; s < sizes.length; s++) {
            byte[] buf = new byte[sizes[s]];
            for (int rep = -o.warmup; rep < o.reps; rep++) {
                for (int i = 0; i < buf.length; i++) buf[i] = rank == 0 ? pattern(rep, i) : 0;
                w.Barrier();
                long t = System.nanoTime();
                w.Bcast(buf, 0, buf.length, MPI.BYTE, 0);
                double dt = MpjBench.slowest(w, (System.nanoTime() - t) / 1e9);
                for (int i = 0; i < buf.length; i++) if (buf[i] != pattern(rep, i)) { ok[0] = false; break; }
                if (rep >= 0) samples[s][rep] = dt;
            }
        }
        return MpjBench.perSize(sizes, samples, false);
    }

    /** Allreduce SUM of 1 and 1024 doubles (rank r contributes (r + 1) x (i + 1)): the slowest rank's time. */
    static List<Map<String, Object>> allreduce(Intracomm w, int rank, int size, MpjBench.Options o, boolean[] ok)
            throws Exception {
        int[] counts = {1, 1024};
        double[][] samples = new double[counts.length][o.reps];
        double ranksum = size * (size + 1) / 2.0;
        for (int c = 0; c < counts.length; c++) {
            double[] in = new double[counts[c]], out = new double[counts[c]];
            for (int i = 0; i < in.length; i++) in[i] = (rank + 1.0) * (i + 1);
            for (int rep = -o.warmup; rep < o.reps; rep++) {
                w.Barrier();
                long t = System.nanoTime();
                w.Allreduce(in, 0, out, 0, in.length, MPI.DOUBLE, MPI.SUM);
                double dt = MpjBench.slowest(w, (System.nanoTime() - t) / 1e9);
                for (int i = 0; i < out.length; i++) if (out[i] != ranksum * (i + 1)) { ok[0] = false; break; }
                if (rep >= 0) samples[c][rep] = dt;
            }
        }
        List<Map<String, Object>> res = new java.util.ArrayList<>();
        for (int c = 0; c < counts.length; c++) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("doubles", counts[c]);
            m.put("latency_s", Latencies.summary(samples[c]));
            res.add(m);
        }
        return res;
    }
}
