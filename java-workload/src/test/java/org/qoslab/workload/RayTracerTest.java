package org.qoslab.workload;

import org.qoslab.common.Json;

import static org.junit.jupiter.api.Assertions.*;

import java.rmi.registry.Registry;
import java.rmi.server.UnicastRemoteObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.qoslab.workload.render.Rays;
import org.qoslab.workload.render.Renderer;
import org.qoslab.workload.render.Scene;
import org.qoslab.workload.rmi.RenderService;
import org.qoslab.workload.rmi.RowBlock;

/**
 * The JGF checksums through real RMI on loopback: 4 workers exported in this JVM, each with its
 * own registry, and the manager distributing rows cyclically over 1..4 of them.
 */
class RayTracerTest {
    static final List<Registry> registries = new ArrayList<>();
    static final List<Integer> ports = new ArrayList<>();

    static int freePort() throws Exception {
        return TestPorts.freeTcp();  // below the ephemeral range (TestPorts)
    }

    @BeforeAll
    static void startWorkers() throws Exception {
        for (int i = 0; i < 4; i++) {
            int reg = freePort(), exp = freePort();
            registries.add(Worker.serve("127.0.0.1", reg, exp, -1, 2000));
            ports.add(reg);
        }
    }

    @AfterAll
    static void stopWorkers() throws Exception {
        for (Registry r : registries) UnicastRemoteObject.unexportObject(r, true);
    }

    static Manager.Config config(int workers, int width, int rowsPerCall, String codec) {
        Manager.Config c = new Manager.Config();
        for (int i = 0; i < workers; i++) c.workers.add(new Manager.Endpoint("w" + i, "127.0.0.1", ports.get(i)));
        c.width = width;
        c.rowsPerCall = rowsPerCall;
        c.codec = codec;
        c.callTimeoutS = 60;
        return c;
    }

    @Test
    void sequentialRenderMatchesJgfReferenceA() {
        Map<String, Object> r = Manager.runSequential(150, 1);
        assertEquals(2676692L, r.get("checksum"));
        assertEquals(Boolean.TRUE, r.get("valid"));
    }

    /**
     * Every worker count and both call modes at size A; size B (JGF's 500 x 500, 3.4-6.5 s a render
     * here) once per call mode, on 3 workers (which do not divide its 500 rows) and on 4: how rows
     * are dealt does not depend on the size, and its 8 renders had
     * been 35 of the Java tests' 75 s on the critical path of make test's set-up (issue 53).
     */
    @ParameterizedTest(name = "size {0}, {1} workers, rows per call {2}")
    @CsvSource({"150,1,1", "150,2,1", "150,3,1", "150,4,1", "150,1,0", "150,2,0", "150,3,0", "150,4,0",
                "500,3,1", "500,4,0"})
    void distributedChecksumEqualsJgfReference(int width, int workers, int rowsPerCall) throws Exception {
        Map<String, Object> r = Manager.run(config(workers, width, rowsPerCall, "serializable"));
        long ref = width == 150 ? Manager.REFVAL_A : Manager.REFVAL_B;
        assertEquals(ref, r.get("checksum"));
        assertEquals(Boolean.TRUE, r.get("valid"));
        assertEquals(workers, r.get("workers"));
        @SuppressWarnings("unchecked") List<Map<String, Object>> per = (List<Map<String, Object>>) r.get("per_worker");
        assertEquals(width, per.stream().mapToInt(m -> (Integer) m.get("rows")).sum());
        long calls = per.stream().mapToLong(m -> (Long) m.get("calls")).sum();
        assertEquals(rowsPerCall == 1 ? width : workers, calls);
        assertTrue((Long) r.get("bytes_received") > 0);
    }

    @Test
    void bothCodecsGiveIdenticalImages() throws Exception {
        Scene scene = Scene.jgf();
        RenderService s = new org.qoslab.workload.rmi.RenderServiceImpl("local");
        s.prepare(scene, 150, 1);
        int[] rows = Manager.rowsOf(1, 3, 150);
        RowBlock a = s.render(rows, "serializable");
        RowBlock b = s.render(rows, "externalizable");
        assertArrayEquals(a.pixels, b.pixels);
        // and over RMI, the externalizable codec validates too
        Map<String, Object> r = Manager.run(config(2, 150, 7, "externalizable"));
        assertEquals(Boolean.TRUE, r.get("valid"));
        assertEquals("externalizable", r.get("codec"));
    }

    @Test
    void framesRepeatTheRenderAndEachFrameValidates() throws Exception {
        Map<String, Object> r = Manager.run(config(2, 150, 0, "serializable"));
        Map<String, Object> r3 = Manager.run(copyFrames(config(2, 150, 0, "serializable"), 3));
        assertEquals(r.get("checksum"), r3.get("checksum"));
        assertEquals(3, r3.get("frames"));
        @SuppressWarnings("unchecked") List<Map<String, Object>> per = (List<Map<String, Object>>) r3.get("per_worker");
        assertEquals(3L, per.get(0).get("calls"));
    }

    static Manager.Config copyFrames(Manager.Config c, int frames) { c.frames = frames; return c; }

    @Test
    void callLogRecordsEveryRemoteCallWithWallClockTimesAndBytes() throws Exception {
        Manager.Config c = config(2, 150, 25, "serializable");
        c.callLog = new CallLog();
        long before = System.currentTimeMillis() * 1_000_000L;
        Map<String, Object> r = Manager.run(c);
        long after = (System.currentTimeMillis() + 1) * 1_000_000L;
        List<Map<String, Object>> calls = c.callLog.records();
        assertEquals(((Number) r.get("rmi_calls")).longValue(), calls.size(), "lookup + prepare + render calls per worker");
        assertFalse(r.containsKey("calls"), "Manager.run's result is unchanged; the CLI adds calls only with --calls-out");
        assertTrue(c.callLog.anchorUncertaintyNs < 1_000_000L, "anchor bracket " + c.callLog.anchorUncertaintyNs + " ns");
        long renders = 0, start = Long.MIN_VALUE;
        for (Map<String, Object> m : calls) {
            long s = (Long) m.get("start_ns_wall"), e = (Long) m.get("end_ns_wall");
            assertTrue(s >= before - 2_000_000L && e <= after + 2_000_000L && s <= e, m.toString());
            assertTrue(s >= start, "ordered by start");
            start = s;
            assertEquals(Boolean.TRUE, m.get("ok"));
            assertEquals((e - s) / 1e6, (Double) m.get("latency_ms"), 1e-9);
            if (m.get("method").equals("render")) {
                renders++;
                int rows = (Integer) m.get("rows");
                assertTrue((Long) m.get("reply_bytes") >= rows * 150L * 4, "the pixels travel in the reply: " + m);
                assertTrue((Long) m.get("request_bytes") > 0, m.toString());
            }
        }
        assertEquals(2 * 3, renders, "75 rows per worker in calls of 25");
        // per worker: lookup (index 0), prepare (1), then renders 2, 3, 4 in order
        for (String w : List.of("w0", "w1")) {
            List<Object> idx = new ArrayList<>();
            for (Map<String, Object> m : calls) if (m.get("worker").equals(w)) idx.add(m.get("index"));
            assertEquals(List.of(0, 1, 2, 3, 4), idx.stream().sorted().collect(java.util.stream.Collectors.toList()));
        }
        java.nio.file.Path f = java.nio.file.Files.createTempFile("calls", ".jsonl");
        c.callLog.write(f);
        assertEquals(calls.size(), java.nio.file.Files.readAllLines(f).size());
        java.nio.file.Files.delete(f);
    }

    @Test
    void cyclicRowDistribution() {
        assertArrayEquals(new int[] {1, 4, 7}, Manager.rowsOf(1, 3, 9));
        assertArrayEquals(new int[] {2, 5}, Manager.rowsOf(2, 3, 8));
        assertEquals(0, Manager.rowsOf(5, 6, 4).length);
        List<int[]> calls = Manager.chunks(Manager.rowsOf(0, 2, 10), 2);
        assertEquals(3, calls.size());
        assertArrayEquals(new int[] {8}, calls.get(2));
        assertEquals(1, Manager.chunks(Manager.rowsOf(0, 2, 10), 0).size());
    }

    @Test
    void customSizeHasNoReferenceAndChecksumDetectsCorruption() {
        // a custom size has no JGF reference: valid is null (consistency only), never true
        Map<String, Object> r = Manager.runSequential(40, 2);
        assertNull(r.get("reference"));
        assertNull(r.get("valid"));
        int[] px = new int[40 * 40];
        Renderer rr = new Renderer(Scene.jgf(), 40);
        long sum = 0;
        for (int y = 0; y < 40; y++) sum += rr.renderRow(y, px, y * 40);
        assertEquals(sum, r.get("checksum"));
        px[5] ^= 0x010101;
        assertNotEquals(sum, Renderer.checksum(px, 0, px.length));
    }

    @Test
    void supersamplingGrowsComputeNotBytesAndHasItsOwnReference() {
        // k = 2 at size A: qoslab's reference (Manager.QOSLAB_REFVAL_A), reached again when a fresh
        // renderer does the rows in reverse order (any row distribution gives the same image)
        Map<String, Object> r = Manager.runSequential(150, 1, 2);
        assertEquals(Manager.referenceChecksum(150, 4), r.get("checksum"));
        assertEquals(Boolean.TRUE, r.get("valid"));
        Renderer rr = new Renderer(Scene.jgf(), 150, 2);
        int[] px = new int[150 * 150];
        long sum = 0;
        for (int y = 149; y >= 0; y--) sum += rr.renderRow(y, px, y * 150);
        assertEquals(r.get("checksum"), sum);
        // same image size as k = 1, a different image (the JGF reference holds only for k = 1)
        assertNotEquals(Manager.REFVAL_A, sum);
        assertEquals(Manager.REFVAL_A, Manager.referenceChecksum(150, 1));
        assertNull(Manager.referenceChecksum(150, 17));
        assertNull(Manager.referenceChecksum(151, 4));
        assertThrows(IllegalArgumentException.class, () -> new Renderer(Scene.jgf(), 150, 0));
    }

    @Test
    void raysPerPixelAreAFinerKnobOnASubPixelGridAndKTimesKIsSupersampleK() {
        // issue 48: n rays on a cols x rows grid, rows the largest divisor <= sqrt(n)
        assertArrayEquals(new int[] {1, 1}, Rays.grid(1));
        assertArrayEquals(new int[] {2, 1}, Rays.grid(2));
        assertArrayEquals(new int[] {3, 2}, Rays.grid(6));
        assertArrayEquals(new int[] {3, 3}, Rays.grid(9));
        assertArrayEquals(new int[] {7, 1}, Rays.grid(7));
        assertThrows(IllegalArgumentException.class, () -> Rays.grid(0));
        assertThrows(IllegalArgumentException.class, () -> Rays.grid(Rays.MAX + 1));
        // k * k rays is supersample k, pixel for pixel
        int w = 40;
        int[] a = new int[w * w], b = new int[w * w];
        Renderer sq = new Renderer(Scene.jgf(), w, 3), rays = Renderer.withRays(Scene.jgf(), w, 9);
        for (int y = 0; y < w; y++) { sq.renderRow(y, a, y * w); rays.renderRow(y, b, y * w); }
        assertArrayEquals(a, b);
        assertEquals(9, rays.rays());
        // 2 rays: its own image, between 1 and 4 rays', and its committed reference in one JVM
        Map<String, Object> seq = Manager.runSequentialRays(150, 1, 2);
        assertEquals(Rays.referenceA(2), seq.get("checksum"));
        assertEquals(Boolean.TRUE, seq.get("valid"));
        assertNull(seq.get("supersample"));
        assertNotEquals(Manager.REFVAL_A, seq.get("checksum"));
        assertNotEquals(Manager.referenceChecksum(150, 4), seq.get("checksum"));
        for (int n = 2; n <= 16; n++) assertNotNull(Rays.referenceA(n), "reference of " + n + " rays");
    }

    @Test
    void distributedRenderWithRaysIsCheckedAgainstItsReference() throws Exception {
        Manager.Config c = config(4, 150, 5, "serializable");
        c.rays = 3;
        Map<String, Object> r = Manager.run(c);
        assertEquals(3, r.get("rays"));
        assertEquals(Rays.referenceA(3), r.get("reference"));
        assertEquals(r.get("reference"), r.get("checksum"));
        assertEquals(Boolean.TRUE, r.get("valid"));
        Manager.Config both = config(1, 150, 5, "serializable");
        both.rays = 4;
        both.supersample = 2;
        assertThrows(WorkloadException.class, () -> Manager.run(both));
    }

    @Test
    void validityRules() {
        assertEquals(Boolean.TRUE, Manager.validity(2676692L, true, 2676692L));
        assertEquals(Boolean.FALSE, Manager.validity(2676692L, true, 2676693L));
        assertEquals(Boolean.FALSE, Manager.validity(2676692L, false, 2676692L));
        assertNull(Manager.validity(null, true, 5));
        assertEquals(Boolean.FALSE, Manager.validity(null, false, 5));
    }

    @Test
    void unreachableWorkerFailsNamingIt() throws Exception {
        Manager.Config c = config(1, 150, 0, "serializable");
        int dead = freePort();
        c.workers.add(new Manager.Endpoint("jp-9", "127.0.0.1", dead));
        long t0 = System.nanoTime();
        WorkloadException e = assertThrows(WorkloadException.class, () -> Manager.run(c));
        assertTrue(e.getMessage().contains("worker jp-9 (127.0.0.1:" + dead + ")"), e.getMessage());
        assertTrue(e.getMessage().contains("Connection refused"), e.getMessage());
        assertTrue(System.nanoTime() - t0 < 10_000_000_000L);
    }

    /** A worker whose render never answers in time: it sleeps {@code sleepMs} first. */
    static final class SlowService implements RenderService {
        final long sleepMs;
        SlowService(long sleepMs) { this.sleepMs = sleepMs; }
        @Override public void prepare(Scene scene, int width, int supersample) { }
        @Override public RowBlock render(int[] rows, String codec) throws java.rmi.RemoteException {
            try { Thread.sleep(sleepMs); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
            throw new java.rmi.RemoteException("slow worker gave up");
        }
        @Override public String describe() { return "slow"; }
    }

    @Test
    void renderOverrunningTheCallTimeoutIsACensoredCallTimeoutWithItsElapsedTime() throws Exception {
        SlowService slow = new SlowService(3000);
        int reg = freePort();
        Registry r = java.rmi.registry.LocateRegistry.createRegistry(reg);
        try {
            r.rebind(RenderService.NAME, UnicastRemoteObject.exportObject(slow, 0));
            Manager.Config c = config(0, 150, 0, "serializable");
            c.workers.add(new Manager.Endpoint("jp-3", "127.0.0.1", reg));
            c.callTimeoutS = 0.5;
            WorkloadException e = assertThrows(WorkloadException.class, () -> Manager.run(c));
            assertTrue(e.getMessage().contains("worker jp-3") && e.getMessage().contains("did not finish within 0.5 s"),
                    e.getMessage());
            assertTrue(e.callTimeout());
            assertTrue(e.renderElapsedS() >= 0.5 && e.renderElapsedS() < 2.5, "render elapsed " + e.renderElapsedS());
        } finally {
            UnicastRemoteObject.unexportObject(slow, true);
            UnicastRemoteObject.unexportObject(r, true);
        }
    }

    /** A worker whose every render call fails at once (a worker that died between calls answers so). */
    static final class FailingService implements RenderService {
        @Override public void prepare(Scene scene, int width, int supersample) { }
        @Override public RowBlock render(int[] rows, String codec) throws java.rmi.RemoteException {
            throw new java.rmi.RemoteException("worker gone");
        }
        @Override public String describe() { return "failing"; }
    }

    @Test
    void aFailingWorkerEndsTheRenderAtOnceNotAfterTheOthersCalls() throws Exception {
        // worker 0 answers each call after 3 s (then gives up); worker 1 fails its first call: the
        // manager names worker 1 at once (it had waited for worker 0's job first: 3 s, naming worker 0)
        SlowService slow = new SlowService(3000);
        FailingService failing = new FailingService();
        int reg = freePort();
        Registry r = java.rmi.registry.LocateRegistry.createRegistry(reg);
        int reg2 = freePort();
        Registry r2 = java.rmi.registry.LocateRegistry.createRegistry(reg2);
        try {
            r.rebind(RenderService.NAME, UnicastRemoteObject.exportObject(slow, 0));
            r2.rebind(RenderService.NAME, UnicastRemoteObject.exportObject(failing, 0));
            Manager.Config c = config(0, 150, 0, "serializable");
            c.workers.add(new Manager.Endpoint("jp-2", "127.0.0.1", reg));
            c.workers.add(new Manager.Endpoint("jp-3", "127.0.0.1", reg2));
            long t0 = System.nanoTime();
            WorkloadException e = assertThrows(WorkloadException.class, () -> Manager.run(c));
            double s = (System.nanoTime() - t0) / 1e9;
            assertTrue(e.getMessage().contains("worker jp-3") && e.getMessage().contains("worker gone"), e.getMessage());
            assertFalse(e.callTimeout());
            assertTrue(s < 2.5, "the manager took " + s + " s to name the failed worker");
        } finally {
            UnicastRemoteObject.unexportObject(slow, true);
            UnicastRemoteObject.unexportObject(failing, true);
            UnicastRemoteObject.unexportObject(r, true);
            UnicastRemoteObject.unexportObject(r2, true);
        }
    }

    @Test
    void callTimeoutIsReadTimedOutOrAnOverrunNotAnyOtherFailure() {
        Exception readTimeout = new java.rmi.UnmarshalException("error unmarshalling return",
                new java.net.SocketTimeoutException("Read timed out"));
        assertTrue(Manager.isCallTimeout(new WorkloadException("worker jp-3: render failed", readTimeout)));
        assertFalse(Manager.isCallTimeout(new WorkloadException("worker jp-3: render failed",
                new java.net.SocketTimeoutException("connect timed out"))));
        assertFalse(Manager.isCallTimeout(new WorkloadException("worker jp-3: render failed",
                new java.net.ConnectException("Connection refused"))));
        assertTrue(Manager.isCallTimeout(new WorkloadException("worker jp-3: render did not finish within 120 s")));
        assertFalse(Manager.isCallTimeout(new WorkloadException("pixel checksum 1 != reported 2")));
        WorkloadException before = new WorkloadException("no workers given");
        assertTrue(Double.isNaN(before.renderElapsedS()));
        assertFalse(before.callTimeout());
    }

    @Test
    void endpointParsingAndSizes() {
        Manager.Endpoint e = Manager.Endpoint.parse("jp-3=198.18.0.3:2099");
        assertEquals("jp-3", e.name);
        assertEquals("198.18.0.3", e.address);
        assertEquals(2099, e.port);
        assertEquals(0, Manager.Endpoint.parse("198.18.0.4").port);
        assertEquals(150, Manager.parseSize("a"));
        assertEquals(500, Manager.parseSize("B"));
        assertThrows(IllegalArgumentException.class, () -> Manager.parseSize("C"));
    }

    @Test
    void jsonWriterEscapes() {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("a", "x\"y\n");
        m.put("b", java.util.Arrays.asList(1, 2.5, null, true));
        assertEquals("{\"a\":\"x\\\"y\\n\",\"b\":[1,2.5,null,true]}", Json.write(m));
    }
}
