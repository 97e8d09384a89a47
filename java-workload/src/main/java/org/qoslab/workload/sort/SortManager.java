package org.qoslab.workload.sort;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.omg.CORBA.ORB;
import org.qoslab.workload.WorkloadException;

/**
 * Reference 002's distributed sort, client side: {@code size} integers from {@code seed} cut
 * into one contiguous part per server (sizes differ by at most one); one thread per server
 * (the paper's threaded client) runs each phase, and a phase ends when its last server is done:
 * <ol>
 *   <li>{@code distribute_s}: every part sent and acknowledged;</li>
 *   <li>{@code sort_s}: every server sorted its part ({@code sort_max_s}: the longest sort as
 *       the server timed it);</li>
 *   <li>{@code collect_s}: every sorted part back;</li>
 *   <li>{@code merge_s}: the client's k-way merge of the sorted parts.</li>
 * </ol>
 * {@code total_s} (= {@code elapsed_s}) is their sum: the paper's "communication and computation
 * time" (Figure 2, in ms there). {@code connect_s} (connections, look-ups) comes before and is
 * not in it. The merged array is checked element for element against {@code Arrays.sort} of the
 * same data in this JVM ({@code sequential_s}, not in the total): {@code valid}; {@code checksum}
 * and {@code reference} are position-weighted sums (sum of a[i] x (i + 1), 64-bit wrap-around).
 */
public final class SortManager {
    private SortManager() { }

    /** One sort server: a name for the result and where it listens (base port). */
    public record Server(String name, String host, int base) { }

    /** What to run. */
    public static final class Config {
        /** The servers (2, 4, 8 in reference 002's table). */
        public final List<Server> servers = new ArrayList<>();
        /** socket | rmi | corba. */
        public String mechanism = "socket";
        /** Integers to sort (20,000 .. 400,000 in reference 002's table). */
        public int size = 100_000;
        /** Seed of the integers. */
        public long seed = 1;
        /** DSCP of the client's packets; -1 = unmarked. */
        public int dscp = -1;
        /** Seconds one phase may take. */
        public double timeoutS = 120;
    }

    /** The data of a run: {@code size} uniformly random 32-bit integers from {@code seed}. */
    public static int[] data(int size, long seed) {
        Random r = new Random(seed);
        int[] a = new int[size];
        for (int i = 0; i < size; i++) a[i] = r.nextInt();
        return a;
    }

    /** Position-weighted sum of {@code a}: sum of a[i] x (i + 1), wrapping at 64 bits. */
    public static long checksum(int[] a) {
        long s = 0;
        for (int i = 0; i < a.length; i++) s += (long) a[i] * (i + 1);
        return s;
    }

    /** Run once; the result line's fields (see the class doc). Throws when a server fails. */
    public static Map<String, Object> run(Config c) throws WorkloadException {
        if (c.servers.isEmpty()) throw new IllegalArgumentException("no sort servers given");
        if (c.size < c.servers.size()) throw new IllegalArgumentException("--size " + c.size + " is below the server count");
        Arrays.asList(SortClient.MECHANISMS).stream().filter(c.mechanism::equals).findAny()
                .orElseThrow(() -> new IllegalArgumentException("--mechanism must be socket, rmi or corba, got " + c.mechanism));
        MarkingOrbSocketFactory.setDscp(c.dscp);
        int[] all = data(c.size, c.seed);
        int k = c.servers.size();
        int[][] parts = new int[k][];
        for (int i = 0, from = 0; i < k; i++) {
            int len = c.size / k + (i < c.size % k ? 1 : 0);
            parts[i] = Arrays.copyOfRange(all, from, from + len);
            from += len;
        }
        ORB orb = c.mechanism.equals("corba") ? Orbs.client(c.timeoutS) : null;
        ExecutorService pool = Executors.newFixedThreadPool(k);
        long session = new Random().nextLong();
        SortClient[] clients = new SortClient[k];
        long t0 = 0;
        try {
            Phases p = new Phases(pool, k, c.timeoutS);
            p.run("connect", i -> {
                Server s = c.servers.get(i);
                clients[i] = SortClient.open(c.mechanism, s.host(), s.base(), session, c.dscp, c.timeoutS, orb);
                return null;
            }, c.servers);
            t0 = System.nanoTime();
            p.run("distribute", i -> { clients[i].put(parts[i]); return null; }, c.servers);
            long[] sortNs = new long[k];
            p.run("sort", i -> { sortNs[i] = clients[i].sort(); return null; }, c.servers);
            int[][] sorted = new int[k][];
            p.run("collect", i -> { sorted[i] = clients[i].take(); return null; }, c.servers);
            long m0 = System.nanoTime();
            int[] merged = merge(sorted);
            double mergeS = (System.nanoTime() - m0) / 1e9;
            return result(c, all, merged, p, sortNs, mergeS, sorted);
        } catch (WorkloadException e) {
            // a failure after the connections: the run's time is censored at the failure (as matmul's)
            if (t0 == 0) throw e;
            throw new WorkloadException(e.getMessage(), e.getCause(), (System.nanoTime() - t0) / 1e9, e.callTimeout());
        } finally {
            for (SortClient cl : clients) if (cl != null) cl.close();
            pool.shutdownNow();
            if (orb != null) orb.shutdown(false);
        }
    }

    private static Map<String, Object> result(Config c, int[] all, int[] merged, Phases p, long[] sortNs, double mergeS,
                                              int[][] sorted) {
        long s0 = System.nanoTime();
        int[] reference = all.clone();
        Arrays.sort(reference);
        double sequentialS = (System.nanoTime() - s0) / 1e9;
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("workload", "sort");
        r.put("mechanism", c.mechanism);
        r.put("servers", c.servers.size());
        r.put("hosts", c.servers.stream().map(Server::name).toList());
        r.put("size", c.size);
        r.put("seed", c.seed);
        r.put("dscp", c.dscp >= 0 ? c.dscp : null);
        r.put("valid", Arrays.equals(merged, reference));
        r.put("checksum", checksum(merged));
        r.put("reference", checksum(reference));
        double total = p.seconds("distribute") + p.seconds("sort") + p.seconds("collect") + mergeS;
        r.put("connect_s", p.seconds("connect"));
        r.put("distribute_s", p.seconds("distribute"));
        r.put("sort_s", p.seconds("sort"));
        r.put("sort_max_s", Arrays.stream(sortNs).max().orElse(0) / 1e9);
        r.put("collect_s", p.seconds("collect"));
        r.put("merge_s", mergeS);
        r.put("total_s", total);
        r.put("sequential_s", sequentialS);
        List<Map<String, Object>> per = new ArrayList<>();
        for (int i = 0; i < c.servers.size(); i++) {
            Map<String, Object> w = new LinkedHashMap<>();
            w.put("host", c.servers.get(i).name());
            w.put("items", sorted[i].length);
            w.put("distribute_s", p.taskSeconds("distribute", i));
            w.put("sort_call_s", p.taskSeconds("sort", i));
            w.put("sort_s", sortNs[i] / 1e9);
            w.put("collect_s", p.taskSeconds("collect", i));
            per.add(w);
        }
        r.put("per_server", per);
        r.put("elapsed_s", total);
        return r;
    }

    /** K-way merge of sorted arrays (a binary heap of the heads would not pay for k <= 8: linear scan). */
    static int[] merge(int[][] sorted) {
        int n = 0;
        for (int[] a : sorted) n += a.length;
        int[] out = new int[n];
        int[] at = new int[sorted.length];
        for (int o = 0; o < n; o++) {
            int best = -1;
            for (int j = 0; j < sorted.length; j++) {
                if (at[j] < sorted[j].length && (best < 0 || sorted[j][at[j]] < sorted[best][at[best]])) best = j;
            }
            out[o] = sorted[best][at[best]++];
        }
        return out;
    }

    /** Runs one step on every server at once and times the phase and each server's step. */
    static final class Phases {
        /** One server's step. */
        interface Step { Void call(int server) throws Exception; }

        private final ExecutorService pool;
        private final int k;
        private final double timeoutS;
        private final Map<String, Double> phase = new LinkedHashMap<>();
        private final Map<String, double[]> tasks = new LinkedHashMap<>();

        Phases(ExecutorService pool, int k, double timeoutS) {
            this.pool = pool;
            this.k = k;
            this.timeoutS = timeoutS;
        }

        double seconds(String name) { return phase.get(name); }

        double taskSeconds(String name, int i) { return tasks.get(name)[i]; }

        void run(String name, Step step, List<Server> servers) throws WorkloadException {
            double[] each = new double[k];
            List<Future<?>> fs = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < k; i++) {
                final int idx = i;
                fs.add(pool.submit(() -> {
                    long s = System.nanoTime();
                    step.call(idx);
                    each[idx] = (System.nanoTime() - s) / 1e9;
                    return null;
                }));
            }
            long deadline = t0 + (long) (timeoutS * 1e9);
            for (int i = 0; i < k; i++) {
                try {
                    fs.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    throw new WorkloadException(name + " on " + servers.get(i).name() + " took over " + timeoutS + " s", null,
                            Double.NaN, true);
                } catch (java.util.concurrent.ExecutionException e) {
                    throw new WorkloadException(name + " on " + servers.get(i).name() + " failed: "
                            + WorkloadException.rootMessage(e), e.getCause(), Double.NaN, timedOut(e));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new WorkloadException(name + " interrupted");
                }
            }
            phase.put(name, (System.nanoTime() - t0) / 1e9);
            tasks.put(name, each);
        }

        /** A call that got no reply in time: socket read timeout, RMI response timeout, CORBA's wait-for-response timeout. */
        private static boolean timedOut(Throwable e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof java.net.SocketTimeoutException || t instanceof org.omg.CORBA.TIMEOUT) return true;
            }
            return false;
        }
    }
}
