package org.qoslab.workload.pingpong;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.qoslab.workload.WorkloadException;
import org.qoslab.workload.matmul.MechanismClient;
import org.qoslab.workload.matmul.WorkerAddr;

/**
 * Reference 003's ping-pong (section 4: message sizes doubling up to 1 MiB, 25 round trips per
 * size, transfer rate = 2 x size x 8 bits x loops / elapsed, both directions counted) against a
 * matmul worker's echo, over {@code socket} (a buffered TCP stream, length-prefixed messages,
 * one connection kept open), {@code rmi} (an {@code echo(byte[])} call) or {@code datagram}
 * (reliable datagrams). Every echo is compared with what was sent.
 *
 * <p>Per size: {@code rtt_s} median, min and p99 (nearest rank) of the timed round trips, and
 * {@code throughput_bits_s} = 2 x bytes x 8 / median rtt. {@code warmup} untimed round trips
 * per size come first (JIT, TCP window).
 */
public final class PingPong {
    private PingPong() { }

    public static final List<String> MECHANISMS = List.of("socket", "rmi", "datagram");

    public static final class Config {
        public WorkerAddr worker;
        public String mechanism = "socket";
        public int minBytes = 1, maxBytes = 1 << 20;
        public int reps = 25, warmup = 5;
        public long seed = 1;
        public int dscp = -1;
        public double timeoutS = 120;
        public int connectTimeoutMs = 5000;
    }

    /** The sizes swept: minBytes, doubling, up to maxBytes (included). */
    public static List<Integer> sizes(int min, int max) {
        List<Integer> out = new ArrayList<>();
        for (long s = min; s <= max; s *= 2) out.add((int) s);
        return out;
    }

    /**
     * Echo payloads of every size (after {@code warmup} unrecorded round trips) and return the
     * result fields (the JSON line): round-trip times in seconds, throughput in bits/s.
     *
     * @throws WorkloadException naming the option or the worker when a run cannot be made
     */
    public static Map<String, Object> run(Config c) throws WorkloadException {
        if (c.worker == null) throw new WorkloadException("no worker given");
        if (!MECHANISMS.contains(c.mechanism))
            throw new WorkloadException("--mechanism must be socket, rmi or datagram, got " + c.mechanism);
        if (c.minBytes < 1 || c.maxBytes < c.minBytes || c.maxBytes > 64 << 20)
            throw new WorkloadException("sizes must satisfy 1 <= min <= max <= 64 MiB, got " + c.minBytes + ".." + c.maxBytes);
        if (c.reps < 1 || c.warmup < 0) throw new WorkloadException("--reps must be >= 1 and --warmup >= 0");
        long timeoutMs = Math.max(1, (long) (c.timeoutS * 1000));
        String mech = c.mechanism.equals("rmi") ? "rmi-serializable" : c.mechanism;
        // round trips run on this thread (a hand-off to another would add to every RTT); each
        // mechanism bounds a call itself: socket read timeout, datagram deadline, RMI's
        // sun.rmi.transport.tcp.responseTimeout (set by the CLI)
        try (MechanismClient client = MechanismClient.open(mech, List.of(c.worker), c.dscp, c.connectTimeoutMs, timeoutMs)) {
            call(() -> client.hello(0), c, "connect");
            long t0 = System.nanoTime();
            boolean valid = true;
            long mismatches = 0;
            List<Object> rows = new ArrayList<>();
            SplittableRandom rnd = new SplittableRandom(c.seed);
            for (int size : sizes(c.minBytes, c.maxBytes)) {
                byte[] payload = new byte[size];
                for (int i = 0; i < size; i++) payload[i] = (byte) rnd.nextInt(256);
                long[] rtt = new long[c.reps];
                for (int r = -c.warmup; r < c.reps; r++) {
                    long s = System.nanoTime();
                    byte[] back = call(() -> client.echo(0, payload), c, size + "-byte echo");
                    long e = System.nanoTime() - s;
                    if (!Arrays.equals(back, payload)) { valid = false; mismatches++; }
                    if (r >= 0) rtt[r] = e;
                }
                rows.add(row(size, rtt));
            }
            double elapsed = (System.nanoTime() - t0) / 1e9;
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("workload", "pingpong");
            out.put("mechanism", c.mechanism);
            out.put("worker", c.worker.name);
            out.put("dscp", c.dscp < 0 ? null : (Object) c.dscp);
            out.put("reps", c.reps);
            out.put("warmup", c.warmup);
            out.put("valid", valid);
            if (!valid) out.put("mismatches", mismatches);
            out.put("sizes", rows);
            if (c.mechanism.equals("datagram")) out.put("retransmits", client.retransmits());
            out.put("elapsed_s", elapsed);
            return out;
        } catch (java.io.IOException e) {
            throw new WorkloadException("cannot open the " + c.mechanism + " mechanism: " + WorkloadException.rootMessage(e), e);
        }
    }

    /** One size's row: median, min and p99 round trip (s, from {@code rtt} in ns; sorted here) and throughput. */
    static Map<String, Object> row(int size, long[] rtt) {
        int reps = rtt.length;
        Arrays.sort(rtt);
        double median = (reps % 2 == 1 ? rtt[reps / 2] : (rtt[reps / 2 - 1] + rtt[reps / 2]) / 2.0) / 1e9;
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("bytes", size);
        Map<String, Object> rt = new LinkedHashMap<>();
        rt.put("median", median);
        rt.put("min", rtt[0] / 1e9);
        rt.put("p99", rtt[Math.min(reps - 1, (int) Math.ceil(0.99 * reps) - 1)] / 1e9);
        row.put("rtt_s", rt);
        row.put("throughput_bits_s", 2.0 * size * 8 / median);
        row.put("reps", reps);
        return row;
    }

    private interface Call<T> { T call() throws Exception; }

    private static <T> T call(Call<T> body, Config c, String what) throws WorkloadException {
        try {
            return body.call();
        } catch (java.net.SocketTimeoutException e) {
            throw new WorkloadException("worker " + c.worker + ": " + what + " got no answer within " + c.timeoutS + " s", e,
                    Double.NaN, true);
        } catch (Exception e) {
            throw new WorkloadException("worker " + c.worker + ": " + what + " failed: " + WorkloadException.rootMessage(e), e);
        }
    }
}
