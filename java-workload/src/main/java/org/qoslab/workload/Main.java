package org.qoslab.workload;

import org.qoslab.common.Json;

import java.util.Map;
import java.util.concurrent.Callable;
import org.qoslab.workload.rmi.MarkingSocketFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code qoslab-workload}: the distributed JGF RayTracer. Subcommands: {@code worker} (serve rows
 * over RMI), {@code manager} (distribute a render and print one JSON result line),
 * {@code sequential} (the in-process baseline); and reference 000's matrix multiplication and
 * reference 003's ping-pong: {@code matmul-worker}, {@code matmul}, {@code pingpong}; reference 002's sort: {@code sort-worker}, {@code sort} ({@link SortCommands})
 * ({@link MatmulCommands}). Logs go to stderr, the result to stdout.
 */
@Command(name = "qoslab-workload", mixinStandardHelpOptions = true, version = "qoslab-workload 0.1.0",
        description = {"Distributed Java RMI RayTracer (Java Grande Forum section 3);",
                "matrix multiplication over four Java mechanisms (reference 000) and ping-pong (reference 003)."},
        subcommands = {Main.WorkerCmd.class, Main.ManagerCmd.class, Main.SequentialCmd.class,
                MatmulCommands.WorkerCmd.class, MatmulCommands.ManagerCmd.class, MatmulCommands.PingPongCmd.class,
                SortCommands.WorkerCmd.class, SortCommands.ManagerCmd.class, MpjCommands.PortsCmd.class})
public final class Main implements Runnable {
    @Override public void run() { CommandLine.usage(this, System.err); }

    public static void main(String[] args) {
        int rc = new CommandLine(new Main()).execute(args);
        if (rc != 0 || !(args.length > 0 && args[0].equals("worker"))) System.exit(rc);
    }

    static void log(String msg) { System.err.println("[qoslab-workload] " + msg); }

    @Command(name = "worker", mixinStandardHelpOptions = true,
            description = "Export the render service and bind it in an RMI registry; run until killed.")
    static final class WorkerCmd implements Callable<Integer> {
        @Option(names = "--advertise", required = true, description = "This node's address (java.rmi.server.hostname).")
        String advertise;
        @Option(names = "--registry-port", defaultValue = "1099", description = "RMI registry port (default ${DEFAULT-VALUE}).")
        int registryPort;
        @Option(names = "--export-port", defaultValue = "1100", description = "Render service port (default ${DEFAULT-VALUE}).")
        int exportPort;
        @Option(names = "--dscp", defaultValue = "-1", description = "DSCP (0-63) for all RMI sockets; -1 = unmarked.")
        int dscp;

        @Override
        public Integer call() {
            try {
                Worker.serve(advertise, registryPort, exportPort, dscp, 5000);
                log("worker ready on " + advertise + " registry " + registryPort + " export " + exportPort
                        + (dscp >= 0 ? " dscp " + dscp : ""));
                return 0;
            } catch (Exception e) {
                log("error: worker on " + advertise + " cannot start: " + Manager.rootMessage(e));
                return 1;
            }
        }
    }

    @Command(name = "manager", mixinStandardHelpOptions = true,
            description = "Render the scene on the workers and print one JSON result line.")
    static final class ManagerCmd implements Callable<Integer> {
        @Option(names = "--workers", required = true, split = ",",
                description = "Workers as NAME=ADDRESS or ADDRESS, comma-separated (one per host, head node included).")
        String[] workers;
        @Option(names = "--size", defaultValue = "A", description = "A (150x150), B (500x500) or a width in pixels.")
        String size;
        @Option(names = "--rows-per-call", defaultValue = "all", description = "Rows per RMI call, or 'all'.")
        String rowsPerCall;
        @Option(names = "--codec", defaultValue = "serializable", description = "serializable | externalizable")
        String codec;
        @Option(names = "--frames", defaultValue = "1", description = "Render the scene this many times.")
        int frames;
        @Option(names = "--supersample", defaultValue = "1",
                description = "k x k rays per pixel (1 = the JGF benchmark): compute grows k^2-fold, bytes do not.")
        int supersample;
        @Option(names = "--rays", defaultValue = "0",
                description = "Rays per pixel on a cols x rows grid of sub-pixels (4 = --supersample 2; 2, 3, 6: finer steps); "
                        + "compute grows n-fold, bytes do not. 0 = --supersample's k x k.")
        int rays;
        @Option(names = "--registry-port", defaultValue = "1099") int registryPort;
        @Option(names = "--dscp", defaultValue = "-1", description = "DSCP (0-63) for the manager's RMI sockets.")
        int dscp;
        @Option(names = "--timeout", defaultValue = "120", description = "Seconds one RMI call may take (default ${DEFAULT-VALUE}).")
        double timeout;
        @Option(names = "--calls-out", description = "Write every remote call's client-side start/end (JSON lines) to this file; "
                + "the result line then has \"calls\": the number of records.")
        java.nio.file.Path callsOut;
        @Option(names = "--go-file", description = "Start the run only once this file exists (the JVM starts "
                + "meanwhile; waits at most --timeout seconds; content 'abort' ends without a run). "
                + "The result line then has \"go_wait_s\".")
        java.nio.file.Path goFile;

        @Override
        public Integer call() {
            Manager.Config c = new Manager.Config();
            double goWait = -1;
            Map<String, Object> result;
            try {
                c.width = Manager.parseSize(size);
                c.rowsPerCall = rowsPerCall.equalsIgnoreCase("all") ? 0 : Integer.parseInt(rowsPerCall);
                if (c.rowsPerCall < 0) throw new IllegalArgumentException("--rows-per-call must be >= 1 or 'all'");
                if (!codec.equals("serializable") && !codec.equals("externalizable"))
                    throw new IllegalArgumentException("--codec must be serializable or externalizable, got " + codec);
                MarkingSocketFactory.checkIpv4Stack(dscp);
                for (String w : workers) c.workers.add(Manager.Endpoint.parse(w.trim()));
                c.codec = codec;
                c.frames = frames;
                c.supersample = supersample;
                c.rays = rays;
                c.registryPort = registryPort;
                c.dscp = dscp;
                c.callTimeoutS = timeout;
                if (callsOut != null) c.callLog = new CallLog();
                // a reply that does not come within the timeout fails the call (ms; JDK RMI property)
                System.setProperty("sun.rmi.transport.tcp.responseTimeout", Long.toString((long) (timeout * 1000)));
                if (goFile != null) goWait = GoGate.await(goFile, timeout);
                result = Manager.run(c);
                if (goWait >= 0) result.put("go_wait_s", goWait);
            } catch (NumberFormatException e) {
                return fail("--rows-per-call must be a number or 'all', got " + rowsPerCall);
            } catch (IllegalArgumentException | IllegalStateException e) {
                return fail(e.getMessage());
            } catch (WorkloadException e) {
                if (c.callLog != null) writeCalls(c.callLog); // a failed render keeps the calls it made
                return fail(e.getMessage(), e);
            }
            if (c.callLog != null) {
                String err = writeCalls(c.callLog);
                if (err != null) return fail(err);
                result.put("calls", c.callLog.size());
            }
            System.out.println(Json.write(result));
            System.out.flush();
            if (Boolean.FALSE.equals(result.get("valid"))) {
                log("error: checksum " + result.get("checksum") + " != JGF reference " + result.get("reference"));
                return 1;
            }
            return 0;
        }

        private int fail(String msg) {
            return fail(msg, null);
        }

        /** Write --calls-out; an error message, or null when written. */
        private String writeCalls(CallLog log) {
            try {
                log.write(callsOut);
                return null;
            } catch (java.io.IOException e) {
                return "cannot write --calls-out " + callsOut + ": " + e.getMessage();
            }
        }

        /** Print the failure line; a render-phase failure adds elapsed_render_s (to the failure) and call_timeout. */
        private int fail(String msg, WorkloadException e) {
            log("error: " + msg);
            Map<String, Object> out = new java.util.LinkedHashMap<>();
            out.put("mode", "rmi");
            out.put("valid", false);
            out.put("error", msg);
            if (e != null && !Double.isNaN(e.renderElapsedS())) {
                out.put("elapsed_render_s", e.renderElapsedS());
                out.put("call_timeout", e.callTimeout());
                out.put("call_timeout_s", timeout);
            }
            System.out.println(Json.write(out));
            System.out.flush();
            return 1;
        }
    }

    @Command(name = "sequential", mixinStandardHelpOptions = true,
            description = "Render in this JVM without RMI (baseline); print one JSON result line.")
    static final class SequentialCmd implements Callable<Integer> {
        @Option(names = "--size", defaultValue = "A") String size;
        @Option(names = "--frames", defaultValue = "1") int frames;
        @Option(names = "--supersample", defaultValue = "1") int supersample;
        @Option(names = "--rays", defaultValue = "0", description = "Rays per pixel (0 = --supersample's k x k).") int rays;

        @Override
        public Integer call() {
            Map<String, Object> r;
            try {
                if (rays > 0 && supersample > 1) throw new IllegalArgumentException("--rays and --supersample: give one");
                if (supersample < 1 || supersample > 16) throw new IllegalArgumentException("--supersample must be 1-16");
                r = Manager.runSequentialRays(Manager.parseSize(size), frames, rays > 0 ? rays : supersample * supersample);
            } catch (IllegalArgumentException e) {
                log("error: " + e.getMessage());
                return 1;
            }
            System.out.println(Json.write(r));
            return Boolean.FALSE.equals(r.get("valid")) ? 1 : 0;
        }
    }
}
