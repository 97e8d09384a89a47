package org.qoslab.workload.matmul;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.qoslab.workload.WorkloadException;

/**
 * The manager of reference 000's distributed matrix multiplication: C = A x B for two n x n
 * integer matrices (entries 0..20, deterministic from the seed) on k workers, by SPA or MCA, over
 * one of the four mechanisms; the product is checked against the sequential one.
 *
 * <p><b>SPA</b> (simple parallel algorithm): A is cut into k bands of consecutive rows (sizes
 * differ by at most one, so n need not be a multiple of k); worker w gets band w and all of B in
 * one call and answers with its band of C: 2k calls.
 *
 * <p><b>MCA</b> (modified Cannon's algorithm): the manager pre-skews A and B into the blocks of a
 * q x q grid of tiles (q = ceil(sqrt(k)); the paper's k = 4 gives 2 x 2, one tile per worker; with
 * other k the q*q tiles are dealt round-robin, tile t to worker t mod k) and sends each tile its
 * blocks and its neighbours' addresses; the tiles then exchange one column of A and one row of B
 * with their neighbours per step, directly worker to worker ({@link MatmulEngine}), and each
 * answers with its C block: 2T + 2T(n - 1) calls for T tiles.
 *
 * <p>Times (seconds; reference 000, section 4.1, names four components of the overall time):
 * {@code total_s} = {@code prepare_s} (partitioning, MCA pre-skew) + the call phase (all tasks
 * in parallel, one thread per task, until the last reply is decoded) + {@code assemble_s}
 * (recombining C). The call phase = {@code comm_s} + {@code compute_s} of its critical path, the
 * task whose reply came last: {@code compute_s} is the time that task's worker spent multiplying,
 * {@code comm_s} everything else in it (marshalling, transfer, unmarshalling both ways, and for
 * MCA the neighbour exchanges including waits for a neighbour's strip), i.e. the paper's
 * "communication time" (Table 4.2) next to its overall time (Table 4.1). Connection set-up
 * (registry lookup, TCP connect, a first datagram round trip to every worker) happens before and
 * is reported as {@code connect_s}, outside {@code total_s}; MCA's worker-to-worker connections
 * are opened during the run and count as communication.
 *
 * <p>{@code retransmits} (datagram only): datagram retransmissions by the manager plus those of
 * the workers while their tasks ran (tiles' pushes); a worker's retransmissions of its reply come
 * after the reply was built and are not in it.
 */
public final class MatmulManager {
    private MatmulManager() { }

    public static final List<String> ALGORITHMS = List.of("spa", "mca");

    /** Run settings. */
    public static final class Config {
        public List<WorkerAddr> workers = new ArrayList<>();
        public String mechanism = "socket", algorithm = "spa";
        public int n = 200;
        public long seed = 1;
        public int dscp = -1;
        /** Seconds the whole call phase (and any single send or wait inside it) may take. */
        public double timeoutS = 120;
        public int connectTimeoutMs = 5000;
    }

    /** One call: SPA band or MCA tile, where its block goes, and its timing. */
    static final class Task {
        int worker, r0, c0, h, w;
        TilePlan plan;   // MCA only
        MatrixNode request, reply;
        long start, end;
    }

    /**
     * Run the multiplication and return the result fields (the JSON line).
     *
     * @throws WorkloadException naming the worker when one is unreachable, fails or overruns the timeout
     */
    public static Map<String, Object> run(Config c) throws WorkloadException {
        check(c);
        int k = c.workers.size();
        int q = Matrices.gridSide(k);
        long timeoutMs = Math.max(1, (long) (c.timeoutS * 1000));
        int[][] a = Matrices.random(c.n, c.seed, 1), b = Matrices.random(c.n, c.seed, 2);
        long job = new SecureRandom().nextLong();

        try (MechanismClient client = open(c, timeoutMs)) {
            int poolSize = Math.max(k, c.algorithm.equals("spa") ? k : q * q);
            ExecutorService pool = Executors.newFixedThreadPool(poolSize, r -> {
                Thread t = new Thread(r, "qoslab-matmul-manager");
                t.setDaemon(true);
                return t;
            });
            try {
                // 0. reach every worker once (outside the timed run)
                long tConn = System.nanoTime();
                hello(c, client, pool, tConn + timeoutMs * 1_000_000L);
                long tPrep0 = System.nanoTime();

                // 1. partition (and pre-skew)
                List<Task> tasks = c.algorithm.equals("spa")
                        ? spaTasks(a, b, k, job, client.externalizable())
                        : mcaTasks(a, b, c, q, job, client, timeoutMs);
                long tCalls0 = System.nanoTime();

                // 2. all tasks at once, one thread each
                runAll(c, client, pool, tasks, tCalls0, tCalls0 + timeoutMs * 1_000_000L);
                // 3. recombine
                long tAsm0 = System.nanoTime();
                int[][] prod = recombine(c, tasks);
                long tEnd = System.nanoTime();

                // 4. check against the sequential product (not timed in total_s)
                long tSeq = System.nanoTime();
                int[][] ref = Matrices.multiply(a, b);
                double sequentialS = (System.nanoTime() - tSeq) / 1e9;
                return result(c, tasks, k, q, prod, ref, client, sequentialS,
                        tPrep0 - tConn, tCalls0 - tPrep0, tAsm0 - tCalls0, tEnd - tAsm0);
            } finally {
                pool.shutdownNow();
            }
        } catch (java.io.IOException e) {
            throw new WorkloadException("cannot open the " + c.mechanism + " mechanism: " + WorkloadException.rootMessage(e), e);
        }
    }

    /** The options' checks, each naming the option. */
    private static void check(Config c) throws WorkloadException {
        int k = c.workers.size();
        if (k == 0) throw new WorkloadException("no workers given");
        if (!ALGORITHMS.contains(c.algorithm)) throw new WorkloadException("--algorithm must be spa or mca, got " + c.algorithm);
        if (!MechanismClient.MECHANISMS.contains(c.mechanism))
            throw new WorkloadException("--mechanism must be one of " + String.join(", ", MechanismClient.MECHANISMS) + ", got " + c.mechanism);
        int q = Matrices.gridSide(k);
        int minN = c.algorithm.equals("spa") ? k : q;
        if (c.n < minN || c.n > Matrices.MAX_N)
            throw new WorkloadException("--size must be " + minN + ".." + Matrices.MAX_N + " for " + c.algorithm + " on " + k + " workers, got " + c.n);
    }

    /** Reach every worker once, in parallel, before {@code deadlineNanos} (System.nanoTime). */
    private static void hello(Config c, MechanismClient client, ExecutorService pool, long deadlineNanos) throws WorkloadException {
        List<Callable<String>> calls = new ArrayList<>();
        List<WorkerAddr> who = new ArrayList<>();
        List<String> what = new ArrayList<>();
        for (int w = 0; w < c.workers.size(); w++) {
            final int wi = w;
            calls.add(() -> client.hello(wi));
            who.add(c.workers.get(w));
            what.add("connect (" + c.mechanism + " port " + client.port(c.workers.get(w)) + ")");
        }
        awaitAll(pool, calls, who, what, deadlineNanos, Double.NaN);
    }

    /** Every task at once, one thread each; each records its call's start and end (System.nanoTime). */
    private static void runAll(Config c, MechanismClient client, ExecutorService pool, List<Task> tasks, long tCalls0,
                               long deadlineNanos) throws WorkloadException {
        List<Callable<Task>> calls = new ArrayList<>();
        List<WorkerAddr> who = new ArrayList<>();
        List<String> what = new ArrayList<>();
        for (Task t : tasks) {
            calls.add(() -> {
                t.start = System.nanoTime();
                t.reply = t.plan == null ? client.spa(t.worker, t.request) : client.mca(t.worker, t.plan, t.request);
                t.end = System.nanoTime();
                return t;
            });
            who.add(c.workers.get(t.worker));
            what.add(t.plan == null ? "SPA task" : "MCA " + t.plan);
        }
        awaitAll(pool, calls, who, what, deadlineNanos, tCalls0);
    }

    /** Runs {@code calls} on {@code pool} and waits for them in the order they end, so a failed call
     *  is named at once, not after the calls before it in the list (as the RayTracer manager's
     *  JobWait.all, issue 53); past {@code deadlineNanos} (System.nanoTime) the first still running
     *  in list order is the timeout. Call i is named by {@code who.get(i)} and {@code what.get(i)}. */
    private static <T> void awaitAll(ExecutorService pool, List<Callable<T>> calls, List<WorkerAddr> who, List<String> what,
                                     long deadlineNanos, double phaseStartNanos) throws WorkloadException {
        CompletionService<T> ended = new ExecutorCompletionService<>(pool);
        Map<Future<T>, Integer> running = new LinkedHashMap<>();
        for (int i = 0; i < calls.size(); i++) running.put(ended.submit(calls.get(i)), i);
        while (!running.isEmpty()) {
            Future<T> f;
            try {
                f = ended.poll(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new WorkloadException("interrupted while waiting for the workers");
            }
            if (f == null) f = running.keySet().iterator().next();  // past the deadline
            Integer i = running.remove(f);
            if (i == null) continue;  // taken above as the first still running, and ended since
            await(f, who.get(i), what.get(i), deadlineNanos, phaseStartNanos);
        }
    }

    /** The product from the tasks' blocks; a block of the wrong shape names its worker. */
    private static int[][] recombine(Config c, List<Task> tasks) throws WorkloadException {
        int[][] prod = new int[c.n][c.n];
        for (Task t : tasks) {
            int[][] blk = t.reply.a;
            if (blk == null || blk.length != t.h || (t.h > 0 && blk[0].length != t.w))
                throw new WorkloadException("worker " + c.workers.get(t.worker) + " answered a block of the wrong shape");
            Matrices.place(prod, blk, t.r0, t.c0);
        }
        return prod;
    }

    private static MechanismClient open(Config c, long timeoutMs) throws java.io.IOException {
        return MechanismClient.open(c.mechanism, c.workers, c.dscp, c.connectTimeoutMs, timeoutMs);
    }

    /** SPA: band w of A's rows and all of B to worker w. */
    static List<Task> spaTasks(int[][] a, int[][] b, int k, long job, boolean ext) {
        int n = a.length;
        int[] h = Matrices.split(n, k), r0 = Matrices.starts(h);
        List<Task> out = new ArrayList<>();
        for (int w = 0; w < k; w++) {
            Task t = new Task();
            t.worker = w;
            t.r0 = r0[w];
            t.h = h[w];
            t.w = n;
            t.request = MatrixNode.create(ext).with(job, w, r0[w], 0, Arrays.copyOfRange(a, r0[w], r0[w] + h[w]), b);
            out.add(t);
        }
        return out;
    }

    /** MCA: the pre-skewed blocks and the plan of every tile of the q x q grid. */
    static List<Task> mcaTasks(int[][] a, int[][] b, Config c, int q, long job, MechanismClient client, long timeoutMs) {
        int n = a.length, k = c.workers.size();
        int[] len = Matrices.split(n, q), start = Matrices.starts(len);
        List<Task> out = new ArrayList<>();
        for (int i = 0; i < q; i++) {
            for (int j = 0; j < q; j++) {
                int id = i * q + j, s = (i + j) % q;
                Task t = new Task();
                t.worker = id % k;
                t.r0 = start[i];
                t.c0 = start[j];
                t.h = len[i];
                t.w = len[j];
                TilePlan p = new TilePlan();
                p.n = n; p.q = q; p.i = i; p.j = j; p.tileId = id;
                p.h = len[i]; p.w = len[j]; p.len = len[s];
                p.leftTile = i * q + (j + q - 1) % q;
                p.upTile = ((i + q - 1) % q) * q + j;
                WorkerAddr left = c.workers.get(p.leftTile % k), up = c.workers.get(p.upTile % k);
                p.leftHost = left.host; p.leftPort = client.port(left);
                p.upHost = up.host; p.upPort = client.port(up);
                p.externalizable = client.externalizable();
                p.timeoutMs = timeoutMs;
                t.plan = p;
                t.request = MatrixNode.create(client.externalizable()).with(job, id, 0, 0,
                        Matrices.block(a, start[i], len[i], start[s], len[s]),
                        Matrices.block(b, start[s], len[s], start[j], len[j]));
                out.add(t);
            }
        }
        return out;
    }

    private static Map<String, Object> result(Config c, List<Task> tasks, int k, int q, int[][] prod, int[][] ref,
                                              MechanismClient client, double sequentialS, long connectNs, long prepNs,
                                              long callsNs, long asmNs) {
        Task last = tasks.get(0);
        long calls = 2L * tasks.size(), retrans = client.retransmits();
        for (Task t : tasks) {
            if (t.end > last.end) last = t;
            calls += t.reply.pushes;
            retrans += t.reply.retransmits;
        }
        double computeS = last.reply.computeNanos / 1e9, commS = (callsNs - last.reply.computeNanos) / 1e9;
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("workload", "matmul");
        out.put("mechanism", c.mechanism);
        out.put("algorithm", c.algorithm);
        out.put("size", c.n);
        out.put("workers", k);
        List<Object> hosts = new ArrayList<>();
        for (WorkerAddr w : c.workers) hosts.add(w.name);
        out.put("hosts", hosts);
        out.put("tasks", tasks.size());
        if (c.algorithm.equals("mca")) out.put("grid", q + "x" + q);
        out.put("seed", c.seed);
        out.put("dscp", c.dscp < 0 ? null : (Object) c.dscp);
        boolean valid = Arrays.deepEquals(prod, ref);
        out.put("valid", valid);
        out.put("checksum", Matrices.checksum(prod));
        out.put("reference", Matrices.checksum(ref));
        double totalS = (prepNs + callsNs + asmNs) / 1e9;
        out.put("total_s", totalS);
        out.put("comm_s", commS);
        out.put("compute_s", computeS);
        out.put("prepare_s", prepNs / 1e9);
        out.put("assemble_s", asmNs / 1e9);
        out.put("connect_s", connectNs / 1e9);
        out.put("sequential_s", sequentialS);
        out.put("calls", calls);
        if (c.mechanism.equals("datagram")) out.put("retransmits", retrans);
        List<Object> per = new ArrayList<>();
        for (int w = 0; w < k; w++) per.add(perWorker(c, tasks, w));
        out.put("per_worker", per);
        out.put("elapsed_s", totalS);
        return out;
    }

    /** Worker {@code w}'s line: its tasks, longest call, compute and exchange times (s). */
    private static Map<String, Object> perWorker(Config c, List<Task> tasks, int w) {
        long callMax = 0, comp = 0, exch = 0;
        int n = 0, pushes = 0;
        for (Task t : tasks) {
            if (t.worker != w) continue;
            n++;
            callMax = Math.max(callMax, t.end - t.start);
            comp += t.reply.computeNanos;
            exch += t.reply.exchangeNanos;
            pushes += t.reply.pushes;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("host", c.workers.get(w).name);
        m.put("tasks", n);
        m.put("call_s", callMax / 1e9);
        m.put("compute_s", comp / 1e9);
        if (c.algorithm.equals("mca")) {
            m.put("exchange_s", exch / 1e9);
            m.put("pushes", pushes);
        }
        return m;
    }

    private static <T> T await(Future<T> f, WorkerAddr who, String what, long deadlineNanos, double phaseStartNanos)
            throws WorkloadException {
        double elapsed = Double.NaN;
        try {
            return f.get(Math.max(1, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            if (!Double.isNaN(phaseStartNanos)) elapsed = (System.nanoTime() - phaseStartNanos) / 1e9;
            throw new WorkloadException("worker " + who + ": " + what + " did not finish within the timeout", null, elapsed, true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new WorkloadException("interrupted while waiting for worker " + who);
        } catch (ExecutionException e) {
            if (!Double.isNaN(phaseStartNanos)) elapsed = (System.nanoTime() - phaseStartNanos) / 1e9;
            boolean timedOut = e.getCause() instanceof java.net.SocketTimeoutException
                    || e.getCause() instanceof java.rmi.UnmarshalException && e.getCause().getCause() instanceof java.net.SocketTimeoutException;
            throw new WorkloadException("worker " + who + ": " + what + " failed: " + WorkloadException.rootMessage(e.getCause()),
                    e.getCause(), elapsed, timedOut);
        }
    }
}
