package org.qoslab.workload.matmul;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.qoslab.workload.WorkloadException;

/**
 * Reference 000's distributed matrix multiplication on loopback: every mechanism x algorithm with
 * 2-4 in-process workers and orders that are no multiple of the worker count, checked against the
 * sequential product; the MCA schedule on its own (no network); the codecs.
 */
class MatmulTest {
    static Workers workers;

    @BeforeAll
    static void start() throws Exception { workers = Workers.start(4, -1); }

    @AfterAll
    static void stop() { workers.close(); }

    static MatmulManager.Config config(String mechanism, String algorithm, int n, int k) {
        MatmulManager.Config c = new MatmulManager.Config();
        c.workers = workers.first(k);
        c.mechanism = mechanism;
        c.algorithm = algorithm;
        c.n = n;
        c.seed = 7;
        c.timeoutS = 60;
        return c;
    }

    /** Calls as reference 000 counts them: SPA 2k; MCA 2T + 2T(n - 1) for T tiles. */
    static long expectedCalls(String algorithm, int n, int k) {
        if (algorithm.equals("spa")) return 2L * k;
        int q = Matrices.gridSide(k), t = q * q;
        return 2L * t + 2L * t * (n - 1);
    }

    static List<Arguments> everyPair() {
        List<Arguments> out = new ArrayList<>();
        int[][] shapes = {{64, 3}, {100, 3}, {101, 4}, {67, 2}};
        for (String m : MechanismClient.MECHANISMS)
            for (String a : MatmulManager.ALGORITHMS)
                for (int[] s : shapes) out.add(Arguments.of(m, a, s[0], s[1]));
        return out;
    }

    @ParameterizedTest(name = "{0} {1} n={2} on {3} workers")
    @MethodSource("everyPair")
    void productIsValidForEveryMechanismAndAlgorithm(String mechanism, String algorithm, int n, int k) throws Exception {
        Map<String, Object> r = MatmulManager.run(config(mechanism, algorithm, n, k));
        assertEquals(Boolean.TRUE, r.get("valid"), r.toString());
        assertEquals(r.get("reference"), r.get("checksum"));
        assertEquals("matmul", r.get("workload"));
        assertEquals(mechanism, r.get("mechanism"));
        assertEquals(algorithm, r.get("algorithm"));
        assertEquals(n, r.get("size"));
        assertEquals(expectedCalls(algorithm, n, k), r.get("calls"));
        double total = (Double) r.get("total_s"), comm = (Double) r.get("comm_s"), compute = (Double) r.get("compute_s");
        double parts = (Double) r.get("prepare_s") + comm + compute + (Double) r.get("assemble_s");
        assertTrue(comm > 0 && compute >= 0 && total > 0, r.toString());
        assertEquals(total, parts, 1e-6, "total = prepare + comm + compute + assemble");
        assertEquals(total, (Double) r.get("elapsed_s"));
        assertEquals(mechanism.equals("datagram"), r.containsKey("retransmits"));
        @SuppressWarnings("unchecked") List<Map<String, Object>> per = (List<Map<String, Object>>) r.get("per_worker");
        assertEquals(k, per.size());
        int tasks = per.stream().mapToInt(m -> (Integer) m.get("tasks")).sum();
        assertEquals(algorithm.equals("spa") ? k : Matrices.gridSide(k) * Matrices.gridSide(k), tasks);
        assertEquals(0, workers.pendingStrips(), "no strip left behind");
    }

    /** A neighbour restarted between runs (a pool renewing its JVMs): the next MCA run must not
     *  use a stale stub or a dead connection cached from the last one. */
    @Test
    void mcaRunsAfterANeighbourRestarted() throws Exception {
        try (Workers ws = Workers.start(2, -1)) {
            for (String mech : MechanismClient.MECHANISMS) {
                MatmulManager.Config c = new MatmulManager.Config();
                c.workers = ws.addrs;
                c.mechanism = mech;
                c.algorithm = "mca";
                c.n = 30;
                c.timeoutS = 10;
                assertEquals(Boolean.TRUE, MatmulManager.run(c).get("valid"), mech);
                ws.restart(1);
                assertEquals(Boolean.TRUE, MatmulManager.run(c).get("valid"), mech + " after a restart");
            }
        }
    }

    @Test
    void paperTable21CallCountForFourWorkers() {
        // reference 000, Table 2.1: k = 4, n = 500: SPA 8 calls, MCA 4000 calls
        assertEquals(8, expectedCalls("spa", 500, 4));
        assertEquals(4000, expectedCalls("mca", 500, 4));
    }

    @Test
    void seedMakesTheMatricesAndADifferentSeedAnotherProduct() throws Exception {
        assertArrayEquals(Matrices.random(30, 5, 1), Matrices.random(30, 5, 1));
        assertFalse(java.util.Arrays.deepEquals(Matrices.random(30, 5, 1), Matrices.random(30, 6, 1)));
        assertFalse(java.util.Arrays.deepEquals(Matrices.random(30, 5, 1), Matrices.random(30, 5, 2)));
        for (int[] row : Matrices.random(50, 3, 2)) for (int v : row) assertTrue(v >= 0 && v <= 20);
        MatmulManager.Config c = config("socket", "spa", 40, 2);
        Map<String, Object> r1 = MatmulManager.run(c);
        c.seed = 8;
        Map<String, Object> r2 = MatmulManager.run(c);
        assertNotEquals(r1.get("checksum"), r2.get("checksum"));
        assertEquals(Boolean.TRUE, r2.get("valid"));
    }

    @Test
    void checksumSeesMisplacedBlocks() {
        int[][] c = {{1, 2}, {3, 4}}, swapped = {{3, 4}, {1, 2}};
        assertNotEquals(Matrices.checksum(c), Matrices.checksum(swapped));
        assertEquals(1 * 1 + 2 * 2 + 3 * 3 + 4 * 4, Matrices.checksum(c));
    }

    @Test
    void splitsAndGrid() {
        assertArrayEquals(new int[] {34, 33, 33}, Matrices.split(100, 3));
        assertArrayEquals(new int[] {0, 34, 67}, Matrices.starts(Matrices.split(100, 3)));
        assertEquals(1, Matrices.gridSide(1));
        assertEquals(2, Matrices.gridSide(2));
        assertEquals(2, Matrices.gridSide(4));
        assertEquals(3, Matrices.gridSide(5));
        assertEquals(3, Matrices.gridSide(9));
        assertEquals(4, Matrices.gridSide(10));
    }

    /** The MCA schedule alone: q x q tiles in threads, strips handed over in memory. */
    @Test
    void mcaScheduleGivesTheProductForManyShapes() throws Exception {
        int[][] shapes = {{1, 1}, {5, 1}, {2, 2}, {7, 2}, {10, 3}, {11, 3}, {9, 4}, {23, 5}};
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            for (int[] s : shapes) {
                int n = s[0], q = s[1];
                int[][] a = Matrices.random(n, n, 1), b = Matrices.random(n, n, 2);
                MatmulEngine engine = new MatmulEngine();
                MatmulManager.Config c = new MatmulManager.Config();
                for (int w = 0; w < q * q; w++) c.workers.add(new WorkerAddr("t" + w, "local", 1, 2, 3));
                MechanismClient none = MechanismClient.open("rmi-serializable", c.workers, -1, 1000, 10_000);
                List<Future<MatrixNode>> runs = new ArrayList<>();
                List<TilePlan> plans = new ArrayList<>();
                for (var t : MatmulManager.mcaTasks(a, b, c, q, 42, none, 10_000)) {
                    plans.add(t.plan);
                    runs.add(pool.submit(() -> engine.mca(t.plan, t.request, (p, strip) -> engine.deliver(strip))));
                }
                int[][] prod = new int[n][n];
                int[] len = Matrices.split(n, q), st = Matrices.starts(len);
                for (int i = 0; i < runs.size(); i++) {
                    MatrixNode r = runs.get(i).get();
                    TilePlan p = plans.get(i);
                    assertEquals(n == 1 ? 0 : 2 * (n - 1), r.pushes);
                    Matrices.place(prod, r.a, st[p.i], st[p.j]);
                }
                assertArrayEquals(Matrices.multiply(a, b), prod, "n=" + n + " q=" + q);
                assertEquals(0, engine.pending());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void codecsRoundTrip() throws Exception {
        MatrixNode n = MatrixNode.create(true).with(9, 3, 4, MatrixNode.B_ROW, new int[][] {{1, 2, 3}, {4, 5, 6}}, null);
        n.computeNanos = 11;
        n.exchangeNanos = 12;
        n.pushes = 13;
        n.retransmits = 14;
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        try (ObjectOutputStream oo = new ObjectOutputStream(bo)) { oo.writeObject(n); }
        MatrixNode back = (MatrixNode) new ObjectInputStream(new ByteArrayInputStream(bo.toByteArray())).readObject();
        assertTrue(back instanceof ExternalMatrixNode);
        check(n, back);
        // the externalizable form is smaller than the default serialization of the same node
        MatrixNode plain = MatrixNode.create(false).with(9, 3, 4, MatrixNode.B_ROW, new int[50][50], new int[50][50]);
        MatrixNode ext = MatrixNode.create(true).with(9, 3, 4, MatrixNode.B_ROW, new int[50][50], new int[50][50]);
        assertTrue(serializedSize(ext) < serializedSize(plain), serializedSize(ext) + " vs " + serializedSize(plain));

        Wire.Msg m = Wire.decode(Wire.node(Wire.PUSH, n));
        assertEquals(Wire.PUSH, m.type);
        check(n, m.node);
        TilePlan p = new TilePlan();
        p.n = 100; p.q = 2; p.i = 1; p.j = 0; p.tileId = 2; p.h = 50; p.w = 50; p.len = 50;
        p.leftTile = 3; p.upTile = 0; p.leftHost = "198.18.0.4"; p.upHost = "jp-1"; p.leftPort = 1202; p.upPort = 1203;
        p.externalizable = true; p.timeoutMs = 1234;
        Wire.Msg mm = Wire.decode(Wire.mca(p, n));
        assertEquals(Wire.MCA, mm.type);
        assertEquals("198.18.0.4", mm.plan.leftHost);
        assertEquals("jp-1", mm.plan.upHost);
        assertEquals(1203, mm.plan.upPort);
        assertEquals(1234, mm.plan.timeoutMs);
        assertTrue(mm.plan.externalizable);
        check(n, mm.node);
        Wire.Msg e = Wire.decode(Wire.error(5, 6, "boom"));
        assertEquals("boom", e.error);
        assertEquals(5, e.job);
        assertEquals(6, e.tile);
        assertThrows(java.io.IOException.class, () -> Wire.decode(new byte[] {Wire.REPLY, 0, 0}));
    }

    private static void check(MatrixNode want, MatrixNode got) {
        assertEquals(want.job, got.job);
        assertEquals(want.tile, got.tile);
        assertEquals(want.step, got.step);
        assertEquals(want.kind, got.kind);
        assertEquals(want.computeNanos, got.computeNanos);
        assertEquals(want.exchangeNanos, got.exchangeNanos);
        assertEquals(want.pushes, got.pushes);
        assertEquals(want.retransmits, got.retransmits);
        assertArrayEquals(want.a, got.a);
        assertArrayEquals(want.b, got.b);
    }

    private static int serializedSize(Object o) throws Exception {
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        try (ObjectOutputStream oo = new ObjectOutputStream(bo)) { oo.writeObject(o); }
        return bo.size();
    }

    @Test
    void badSettingsAreRefused() {
        assertThrows(WorkloadException.class, () -> MatmulManager.run(config("carrier-pigeon", "spa", 10, 2)));
        assertThrows(WorkloadException.class, () -> MatmulManager.run(config("socket", "strassen", 10, 2)));
        WorkloadException e = assertThrows(WorkloadException.class, () -> MatmulManager.run(config("socket", "spa", 2, 3)));
        assertTrue(e.getMessage().contains("--size must be 3.."), e.getMessage());
    }

    @Test
    void deadWorkerFailsNamingIt() throws Exception {
        for (String mech : List.of("socket", "rmi-serializable", "datagram")) {
            MatmulManager.Config c = config(mech, "spa", 20, 1);
            c.workers.add(new WorkerAddr("jp-9", "127.0.0.1", Workers.freeTcp(), Workers.freeTcp(), Workers.freeUdp()));
            c.timeoutS = 1.5;
            long t0 = System.nanoTime();
            WorkloadException e = assertThrows(WorkloadException.class, () -> MatmulManager.run(c));
            assertTrue(e.getMessage().contains("worker jp-9 (127.0.0.1)") && e.getMessage().contains("connect"), e.getMessage());
            assertTrue(System.nanoTime() - t0 < 10_000_000_000L);
        }
    }

    /** A worker that fails is named at once, not after a slow worker before it in the list has
     *  used the whole timeout (the calls are waited for in the order they end). */
    @Test
    void aFailingWorkerIsNamedBeforeASlowOneAheadOfIt() throws Exception {
        try (java.net.ServerSocket hole = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            Thread accept = new Thread(() -> {  // accepts and never answers
                List<java.net.Socket> held = new ArrayList<>();
                try { while (true) held.add(hole.accept()); } catch (java.io.IOException end) { /* closed */ }
            });
            accept.setDaemon(true);
            accept.start();
            MatmulManager.Config c = config("socket", "spa", 20, 0);
            c.workers.add(new WorkerAddr("slow", "127.0.0.1", Workers.freeTcp(), hole.getLocalPort(), Workers.freeUdp()));
            c.workers.add(new WorkerAddr("jp-9", "127.0.0.1", Workers.freeTcp(), Workers.freeTcp(), Workers.freeUdp()));
            c.timeoutS = 6;
            long t0 = System.nanoTime();
            WorkloadException e = assertThrows(WorkloadException.class, () -> MatmulManager.run(c));
            double s = (System.nanoTime() - t0) / 1e9;
            assertTrue(e.getMessage().contains("worker jp-9 (127.0.0.1)"), e.getMessage());
            assertTrue(s < 3.0, "named after " + s + " s, the timeout is 6 s");
        }
    }

    @Test
    void workerAddressesFromTheBasePort() {
        WorkerAddr w = WorkerAddr.parse("jp-3=198.18.0.3:2000", 1200);
        assertEquals("jp-3", w.name);
        assertEquals("198.18.0.3", w.host);
        assertEquals(2000, w.port("rmi-serializable"));
        assertEquals(2002, w.port("socket"));
        assertEquals(2003, w.port("datagram"));
        WorkerAddr d = WorkerAddr.parse("198.18.0.4", 1200);
        assertEquals("198.18.0.4", d.name);
        assertEquals(1200, d.rmiPort);
        assertEquals(1202, d.socketPort);
        assertThrows(IllegalArgumentException.class, () -> WorkerAddr.parse("x:y", 1200));
    }
}
