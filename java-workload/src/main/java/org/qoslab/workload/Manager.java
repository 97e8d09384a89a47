package org.qoslab.workload;

import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import org.qoslab.workload.render.Rays;
import org.qoslab.workload.render.Renderer;
import org.qoslab.workload.render.Scene;
import org.qoslab.workload.rmi.MarkingSocketFactory;
import org.qoslab.workload.rmi.RenderService;
import org.qoslab.workload.rmi.RowBlock;

/**
 * The manager of a distributed render: finds one worker per host through its RMI registry, sends
 * the scene once, asks each worker for its rows (row y goes to worker y mod N, as in the JGF
 * parallel versions) in calls of {@code rowsPerCall} rows, assembles the image and checks the
 * JGF checksum of every frame.
 */
public final class Manager {
    /** JGF section 3 validation checksums (JGFRayTracerBench.JGFvalidate refval): size A, size B. */
    public static final long REFVAL_A = 2676692L, REFVAL_B = 29827635L;

    /** A worker: a name for messages (e.g. jp-3), the address of its registry, and its registry
     * port (0 = the run's {@code registryPort}). */
    public static final class Endpoint {
        public final String name, address;
        public final int port;

        public Endpoint(String name, String address, int port) { this.name = name; this.address = address; this.port = port; }

        /** {@code jp-3=198.18.0.3}, {@code jp-3=198.18.0.3:1099} or a bare address[:port]. */
        public static Endpoint parse(String spec) {
            int eq = spec.indexOf('=');
            String name = eq < 0 ? null : spec.substring(0, eq), addr = spec.substring(eq + 1);
            int port = 0, colon = addr.lastIndexOf(':');
            if (colon > 0) {
                try {
                    port = Integer.parseInt(addr.substring(colon + 1));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("bad worker " + spec + ": port is not a number");
                }
                addr = addr.substring(0, colon);
            }
            if (addr.isEmpty()) throw new IllegalArgumentException("bad worker " + spec + ": no address");
            return new Endpoint(name == null ? addr : name, addr, port);
        }

        @Override public String toString() {
            String a = port > 0 ? address + ":" + port : address;
            return name.equals(address) ? a : name + " (" + a + ")";
        }
    }

    /** Run settings. {@code rowsPerCall} 0 = all of a worker's rows in one call per frame. */
    public static final class Config {
        public List<Endpoint> workers = new ArrayList<>();
        public int width = 150;
        public int rowsPerCall = 0;
        public String codec = "serializable";
        public int frames = 1;
        /** k x k rays per pixel (1 = the JGF benchmark): compute grows k^2-fold, bytes do not. */
        public int supersample = 1;
        /** Rays per pixel on a cols x rows grid ({@code render.Rays}, issue 48); 0 = supersample^2. */
        public int rays = 0;

        /** The rays per pixel the workers trace: {@link #rays}, or supersample^2 when it is 0. */
        public int raysPerPixel() { return rays > 0 ? rays : supersample * supersample; }
        public int registryPort = 1099;
        public int dscp = -1;
        /** Seconds a single RMI call (lookup, prepare or render) may take before the run fails. */
        public double callTimeoutS = 120;
        public int connectTimeoutMs = 5000;
        /** Where every remote call's client-side times go (null: not recorded). */
        public CallLog callLog;
    }

    /** JGF reference checksum for a width, or null when the size is not a JGF size (150 or 500). */
    public static Long referenceChecksum(int width) {
        return width == 150 ? Long.valueOf(REFVAL_A) : width == 500 ? Long.valueOf(REFVAL_B) : null;
    }

    /**
     * Reference checksum for a width and a number of rays per pixel: JGF's for one ray; for 2..16
     * qoslab's own (size A; 4, 9, 16 = supersample 2, 3, 4), computed with {@code java -jar
     * qoslab-workload.jar sequential --size A --rays N} (one JVM, no RMI; {@link Rays#referenceA});
     * null otherwise.
     */
    public static Long referenceChecksum(int width, int rays) {
        if (rays == 1) return referenceChecksum(width);
        return width == 150 ? Rays.referenceA(rays) : null;
    }

    /** Rows of worker {@code w} of {@code n} in a {@code width}-row image (cyclic distribution). */
    public static int[] rowsOf(int w, int n, int width) {
        int count = w < width ? (width - w + n - 1) / n : 0;
        int[] rows = new int[count];
        for (int i = 0; i < count; i++) rows[i] = w + i * n;
        return rows;
    }

    /** The calls of one worker per frame: its rows cut into chunks of {@code rowsPerCall} (0 = one chunk). */
    public static List<int[]> chunks(int[] rows, int rowsPerCall) {
        List<int[]> out = new ArrayList<>();
        int step = rowsPerCall <= 0 ? Math.max(1, rows.length) : rowsPerCall;
        for (int i = 0; i < rows.length; i += step)
            out.add(java.util.Arrays.copyOfRange(rows, i, Math.min(rows.length, i + step)));
        return out;
    }

    private static final class WorkerStats {
        int rows;
        long calls, busyNanos;
    }

    /** What the render phase fills: the image, each worker's per-frame checksums and counts. */
    private static final class Render {
        final int[] image;
        final long[][] frameSums;
        final WorkerStats[] stats;

        Render(Config c, int n) {
            image = new int[c.width * c.width];
            frameSums = new long[n][c.frames];
            stats = new WorkerStats[n];
            for (int w = 0; w < n; w++) {
                stats[w] = new WorkerStats();
                stats[w].rows = rowsOf(w, n, c.width).length;
            }
        }
    }

    /**
     * Run the render and return the result fields (as printed in the JSON line).
     *
     * @throws WorkloadException naming the worker when one is unreachable, fails or overruns the call timeout
     */
    public static Map<String, Object> run(Config c) throws WorkloadException {
        int n = c.workers.size();
        if (n == 0) throw new WorkloadException("no workers given");
        if (c.frames < 1) throw new WorkloadException("--frames must be >= 1");
        if (c.supersample < 1 || c.supersample > 16) throw new WorkloadException("--supersample must be 1-16");
        if (c.rays < 0 || c.rays > Rays.MAX) throw new WorkloadException("--rays must be 1-" + Rays.MAX);
        if (c.rays > 0 && c.supersample > 1) throw new WorkloadException("--rays and --supersample: give one");
        long tStart = System.nanoTime();
        MarkingSocketFactory csf = new MarkingSocketFactory(c.dscp, c.connectTimeoutMs);
        ExecutorService pool = Executors.newFixedThreadPool(n, r -> {
            Thread t = new Thread(r, "qoslab-manager");
            t.setDaemon(true);
            return t;
        });
        try {
            // 1. find the workers and send the scene once
            List<RenderService> services = lookUp(c, csf, pool);
            // 2. render: one thread per worker, calls in sequence, rows cyclic
            long tRender = System.nanoTime();
            Render r = new Render(c, n);
            List<Future<?>> jobs = new ArrayList<>();
            BlockingQueue<Integer> ended = new LinkedBlockingQueue<>();
            for (int w = 0; w < n; w++) {
                final int wi = w;
                List<int[]> calls = chunks(rowsOf(w, n, c.width), c.rowsPerCall);
                jobs.add(pool.submit(() -> {
                    try {
                        renderCalls(c, r, wi, services.get(wi), calls);
                    } finally {
                        ended.add(wi);
                    }
                    return null;
                }));
            }
            awaitRender(c, jobs, ended, tRender);
            long tEnd = System.nanoTime();
            // 3. validate every frame
            return result(c, r, tEnd - tStart, tEnd - tRender);
        } finally {
            pool.shutdownNow();
        }
    }

    /** Every worker's registry lookup and prepare (the scene sent once), in parallel. */
    private static List<RenderService> lookUp(Config c, MarkingSocketFactory csf, ExecutorService pool) throws WorkloadException {
        Scene scene = Scene.jgf();
        List<Future<RenderService>> found = new ArrayList<>();
        for (Endpoint e : c.workers) {
            found.add(pool.submit(() -> {
                Registry reg = LocateRegistry.getRegistry(e.address, e.port > 0 ? e.port : c.registryPort, csf);
                RenderService s = timed(c.callLog, e, "lookup", -1, 0, -1,
                        () -> (RenderService) reg.lookup(RenderService.NAME));
                timed(c.callLog, e, "prepare", -1, 1, -1, () -> { s.prepare(scene, c.width, c.raysPerPixel()); return null; });
                return s;
            }));
        }
        List<RenderService> services = new ArrayList<>();
        for (int w = 0; w < c.workers.size(); w++)
            services.add(JobWait.await(found.get(w), c.workers.get(w), "lookup/prepare at registry port " + c.registryPort,
                    c.callTimeoutS));
        return services;
    }

    /** Worker {@code wi}'s render calls, frame after frame, each checked and copied into the image. */
    private static void renderCalls(Config c, Render r, int wi, RenderService service, List<int[]> calls) throws Exception {
        int index = 2; // after lookup and prepare
        for (int f = 0; f < c.frames; f++) {
            for (int[] rows : calls) {
                RowBlock b = timed(c.callLog, c.workers.get(wi), "render", f, index++, rows.length,
                        () -> service.render(rows, c.codec));
                if (b.rows.length != rows.length || b.pixels.length != rows.length * c.width)
                    throw new WorkloadException("answered " + b.rows.length + " rows for " + rows.length);
                long sum = Renderer.checksum(b.pixels, 0, b.pixels.length);
                if (sum != b.checksum)
                    throw new WorkloadException("pixel checksum " + sum + " != reported " + b.checksum);
                for (int i = 0; i < rows.length; i++)
                    System.arraycopy(b.pixels, i * c.width, r.image, rows[i] * c.width, c.width);
                r.frameSums[wi][f] += sum;
                r.stats[wi].calls++;
                r.stats[wi].busyNanos += b.busyNanos;
            }
        }
    }

    /**
     * Wait for every worker's job in the order they end ({@link JobWait#all}): the first that fails
     * ends the render at once, a job past its budget (its calls times the call timeout, from the
     * render's start) is a call timeout. A failure carries the render's elapsed time.
     */
    private static void awaitRender(Config c, List<Future<?>> jobs, BlockingQueue<Integer> ended, long tRender)
            throws WorkloadException {
        int n = jobs.size();
        double[] budgetS = new double[n];
        for (int w = 0; w < n; w++)
            budgetS[w] = c.callTimeoutS * Math.max(1, (long) c.frames * chunks(rowsOf(w, n, c.width), c.rowsPerCall).size());
        try {
            JobWait.all(jobs, ended, c.workers, "render", budgetS, tRender);
        } catch (WorkloadException e) {
            throw new WorkloadException(e.getMessage(), e.getCause(), (System.nanoTime() - tRender) / 1e9,
                    isCallTimeout(e));
        }
    }

    /** Validate every frame and build the result fields (times in ns in, seconds out). */
    private static Map<String, Object> result(Config c, Render r, long totalNs, long renderNs) {
        int n = c.workers.size();
        Long ref = referenceChecksum(c.width, c.raysPerPixel());
        long[] perFrame = new long[c.frames];
        for (int f = 0; f < c.frames; f++) for (int w = 0; w < n; w++) perFrame[f] += r.frameSums[w][f];
        long imageSum = Renderer.checksum(r.image, 0, r.image.length);
        boolean consistent = imageSum == perFrame[c.frames - 1];
        for (long s : perFrame) consistent &= s == perFrame[0];
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("mode", "rmi");
        out.put("size", sizeLabel(c.width));
        out.put("width", c.width);
        out.put("workers", n);
        out.put("hosts", c.workers.stream().map(e -> e.name).collect(java.util.stream.Collectors.toList()));
        out.put("rows_per_call", c.rowsPerCall <= 0 ? "all" : (Object) c.rowsPerCall);
        out.put("codec", c.codec);
        out.put("frames", c.frames);
        out.put("supersample", c.supersample);
        out.put("rays", c.raysPerPixel());
        out.put("dscp", c.dscp < 0 ? null : (Object) c.dscp);
        out.put("elapsed_render_s", renderNs / 1e9);
        out.put("elapsed_total_s", totalNs / 1e9);
        out.put("checksum", perFrame[0]);
        out.put("reference", ref);
        out.put("valid", validity(ref, consistent, perFrame[0]));
        List<Object> per = new ArrayList<>();
        long totalCalls = 0;
        for (int w = 0; w < n; w++) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("host", c.workers.get(w).name);
            m.put("rows", r.stats[w].rows);
            m.put("calls", r.stats[w].calls);
            m.put("busy_s", r.stats[w].busyNanos / 1e9);
            per.add(m);
            totalCalls += r.stats[w].calls;
        }
        out.put("per_worker", per);
        out.put("rmi_calls", totalCalls + 2L * n); // render calls + lookup + prepare per worker
        out.put("bytes_sent", MarkingSocketFactory.BYTES_SENT.sum());
        out.put("bytes_received", MarkingSocketFactory.BYTES_RECEIVED.sum());
        return out;
    }

    /** A remote call. */
    interface RemoteCall<T> {
        T call() throws Exception;
    }

    /** Make {@code call}, recording its client-side start and end in {@code log} (when not null), failed calls included. */
    static <T> T timed(CallLog log, Endpoint who, String method, int frame, int index, int rows, RemoteCall<T> call)
            throws Exception {
        if (log == null) return call.call();
        CallLog.Pending p = log.begin();
        try {
            T v = call.call();
            log.end(p, who.name, who.address, method, frame, index, rows, null);
            return v;
        } catch (Exception e) {
            log.end(p, who.name, who.address, method, frame, index, rows, rootMessage(e));
            throw e;
        }
    }

    /**
     * True when a render failure is a call timeout: a reply not read within the RMI response timeout
     * ({@code sun.rmi.transport.tcp.responseTimeout}, set to the call timeout: SocketTimeoutException
     * "Read timed out") or a worker's whole job overrunning its calls times the call timeout.
     */
    static boolean isCallTimeout(WorkloadException e) {
        if (e.getCause() == null) return e.getMessage() != null && e.getMessage().contains("did not finish within");
        for (Throwable t = e.getCause(); t != null; t = t.getCause() == t ? null : t.getCause())
            if (t instanceof java.net.SocketTimeoutException && "Read timed out".equals(t.getMessage())) return true;
        return false;
    }

    /** The innermost cause's class and message, e.g. "ConnectException: Connection refused". */
    public static String rootMessage(Throwable t) { return WorkloadException.rootMessage(t); }

    /**
     * Validity of a run: TRUE when every frame agrees and equals the JGF reference, FALSE when frames
     * disagree or differ from the reference, null for a custom size (no reference) whose frames agree.
     */
    static Boolean validity(Long ref, boolean framesAgree, long checksum) {
        if (!framesAgree) return Boolean.FALSE;
        if (ref == null) return null;
        return checksum == ref.longValue();
    }

    /** "A" for 150, "B" for 500, else the width as text. */
    public static String sizeLabel(int width) {
        return width == 150 ? "A" : width == 500 ? "B" : Integer.toString(width);
    }

    /** "A" -> 150, "B" -> 500, a number -> that width. Throws IllegalArgumentException otherwise. */
    public static int parseSize(String s) {
        if (s.equalsIgnoreCase("A")) return 150;
        if (s.equalsIgnoreCase("B")) return 500;
        try {
            int w = Integer.parseInt(s);
            if (w > 0 && w <= 20000) return w;
        } catch (NumberFormatException ignored) { }
        throw new IllegalArgumentException("size must be A (150x150), B (500x500) or a width in pixels, got " + s);
    }

    /** Render in this JVM without RMI (the sequential baseline): same rows, same checksum rules. */
    public static Map<String, Object> runSequential(int width, int frames) {
        return runSequential(width, frames, 1);
    }

    /** {@link #runSequential(int, int)} with {@code supersample} x {@code supersample} rays per pixel. */
    public static Map<String, Object> runSequential(int width, int frames, int supersample) {
        return runSequentialRays(width, frames, supersample * supersample);
    }

    /** {@link #runSequential(int, int)} with {@code rays} rays per pixel ({@link Rays#grid}). */
    public static Map<String, Object> runSequentialRays(int width, int frames, int rays) {
        long t0 = System.nanoTime();
        Renderer r = Renderer.withRays(Scene.jgf(), width, rays);
        int[] image = new int[width * width];
        long first = -1;
        boolean consistent = true;
        for (int f = 0; f < frames; f++) {
            long sum = 0;
            for (int y = 0; y < width; y++) sum += r.renderRow(y, image, y * width);
            if (first < 0) first = sum; else consistent &= sum == first;
        }
        long t1 = System.nanoTime();
        Long ref = referenceChecksum(width, rays);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("mode", "sequential");
        int k = (int) Math.round(Math.sqrt(rays));
        out.put("supersample", k * k == rays ? (Object) k : null);
        out.put("rays", rays);
        out.put("size", sizeLabel(width));
        out.put("width", width);
        out.put("workers", 0);
        out.put("frames", frames);
        out.put("elapsed_render_s", (t1 - t0) / 1e9);
        out.put("elapsed_total_s", (t1 - t0) / 1e9);
        out.put("checksum", first);
        out.put("reference", ref);
        out.put("valid", validity(ref, consistent, first));
        return out;
    }
}
