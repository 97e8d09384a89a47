package org.qoslab.workload;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.qoslab.common.Json;
import org.qoslab.workload.matmul.MatmulManager;
import org.qoslab.workload.matmul.MatmulWorker;
import org.qoslab.workload.matmul.WorkerAddr;
import org.qoslab.workload.pingpong.PingPong;
import org.qoslab.workload.rmi.MarkingSocketFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The subcommands of reference 000's matrix multiplication and reference 003's ping-pong:
 * {@code matmul-worker} (serve all four mechanisms and the echo), {@code matmul} and
 * {@code pingpong} (managers: one JSON line on stdout, logs on stderr, exit 1 when not valid).
 */
final class MatmulCommands {
    private MatmulCommands() { }

    static void log(String msg) { System.err.println("[qoslab-workload] " + msg); }

    /** The RMI reply timeout is a JVM-wide JDK property (ms). */
    static void rmiResponseTimeout(double timeoutS) {
        System.setProperty("sun.rmi.transport.tcp.responseTimeout", Long.toString((long) (timeoutS * 1000)));
    }

    @Command(name = "matmul-worker", mixinStandardHelpOptions = true,
            description = {"Serve the matmul workload (reference 000) and the pingpong echo over all mechanisms; run until killed.",
                    "Ports: RMI registry = --port, RMI service = --port+1, TCP socket = --port+2, UDP datagram = --port+3."})
    static final class WorkerCmd implements Callable<Integer> {
        @Option(names = "--advertise", required = true, description = "This node's address: bound by every listener, advertised in RMI stubs.")
        String advertise;
        @Option(names = "--port", defaultValue = "" + WorkerAddr.DEFAULT_BASE, description = "Base port (default ${DEFAULT-VALUE}).")
        int port;
        @Option(names = "--registry-port", description = "RMI registry port (default: --port).") Integer registryPort;
        @Option(names = "--export-port", description = "RMI service port (default: --port + 1).") Integer exportPort;
        @Option(names = "--socket-port", description = "TCP port of the socket mechanism (default: --port + 2).") Integer socketPort;
        @Option(names = "--datagram-port", description = "UDP port of the datagram mechanism (default: --port + 3).") Integer datagramPort;
        @Option(names = "--dscp", defaultValue = "-1", description = "DSCP (0-63) of everything this worker sends, every mechanism; -1 = unmarked.")
        int dscp;
        @Option(names = "--timeout", defaultValue = "120", description = "Seconds an RMI reply / datagram reply may take (default ${DEFAULT-VALUE}).")
        double timeout;

        @Override
        public Integer call() throws InterruptedException {
            MatmulWorker.Options o = new MatmulWorker.Options().base(port);
            o.advertise = advertise;
            if (registryPort != null) o.registryPort = registryPort;
            if (exportPort != null) o.exportPort = exportPort;
            if (socketPort != null) o.socketPort = socketPort;
            if (datagramPort != null) o.datagramPort = datagramPort;
            o.dscp = dscp;
            o.replyTimeoutMs = (long) (timeout * 1000);
            try {
                MarkingSocketFactory.checkIpv4Stack(dscp);
                rmiResponseTimeout(timeout);
                MatmulWorker.start(o);
            } catch (Exception e) {
                log("error: matmul worker on " + advertise + " cannot start: " + Manager.rootMessage(e));
                return 1;
            }
            log("matmul-worker ready on " + advertise + ": rmi registry " + o.registryPort + " service " + o.exportPort
                    + ", socket tcp " + o.socketPort + ", datagram udp " + o.datagramPort + (dscp >= 0 ? ", dscp " + dscp : ""));
            new java.util.concurrent.CountDownLatch(1).await(); // serve until killed
            return 0;
        }
    }

    @Command(name = "matmul", mixinStandardHelpOptions = true,
            description = "Multiply two n x n matrices on the workers (SPA or MCA, reference 000) and print one JSON result line.")
    static final class ManagerCmd implements Callable<Integer> {
        @Option(names = "--workers", required = true, split = ",",
                description = "Workers as [NAME=]ADDRESS[:BASEPORT], comma-separated (base port default: --port).")
        String[] workers;
        @Option(names = "--port", defaultValue = "" + WorkerAddr.DEFAULT_BASE, description = "Workers' base port (default ${DEFAULT-VALUE}).")
        int port;
        @Option(names = "--mechanism", defaultValue = "socket",
                description = "rmi-serializable | rmi-externalizable | socket | datagram (default ${DEFAULT-VALUE}).")
        String mechanism;
        @Option(names = "--algorithm", defaultValue = "spa", description = "spa (few large calls) | mca (many small calls) (default ${DEFAULT-VALUE}).")
        String algorithm;
        @Option(names = "--size", defaultValue = "200", description = "Matrix order n (default ${DEFAULT-VALUE}).")
        int size;
        @Option(names = "--seed", defaultValue = "1", description = "Seed of the matrices (default ${DEFAULT-VALUE}).")
        long seed;
        @Option(names = "--dscp", defaultValue = "-1", description = "DSCP (0-63) of everything the manager sends; -1 = unmarked.")
        int dscp;
        @Option(names = "--timeout", defaultValue = "120", description = "Seconds the run's call phase may take (default ${DEFAULT-VALUE}).")
        double timeout;
        @Option(names = "--go-file", description = "Start the run only once this file exists (see the manager "
                + "command; the result line then has \"go_wait_s\").")
        java.nio.file.Path goFile;

        @Override
        public Integer call() {
            MatmulManager.Config c = new MatmulManager.Config();
            Map<String, Object> result;
            try {
                for (String w : workers) c.workers.add(WorkerAddr.parse(w.trim(), port));
                c.mechanism = mechanism;
                c.algorithm = algorithm;
                c.n = size;
                c.seed = seed;
                c.dscp = dscp;
                c.timeoutS = timeout;
                MarkingSocketFactory.checkIpv4Stack(dscp);
                rmiResponseTimeout(timeout);
                double goWait = goFile != null ? GoGate.await(goFile, timeout) : -1;
                result = MatmulManager.run(c);
                if (goWait >= 0) result.put("go_wait_s", goWait);
            } catch (IllegalArgumentException | IllegalStateException e) {
                return fail(e.getMessage(), null);
            } catch (WorkloadException e) {
                return fail(e.getMessage(), e);
            }
            System.out.println(Json.write(result));
            System.out.flush();
            if (!Boolean.TRUE.equals(result.get("valid"))) {
                log("error: the distributed product differs from the sequential one (checksum " + result.get("checksum")
                        + ", reference " + result.get("reference") + ")");
                return 1;
            }
            return 0;
        }

        private int fail(String msg, WorkloadException e) {
            log("error: " + msg);
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("workload", "matmul");
            out.put("mechanism", mechanism);
            out.put("algorithm", algorithm);
            out.put("size", size);
            out.put("valid", false);
            out.put("error", msg);
            if (e != null && !Double.isNaN(e.renderElapsedS())) {
                out.put("failed_after_s", e.renderElapsedS());
                out.put("call_timeout", e.callTimeout());
            }
            System.out.println(Json.write(out));
            System.out.flush();
            return 1;
        }
    }

    @Command(name = "pingpong", mixinStandardHelpOptions = true,
            description = "Round trips of 1 B .. 1 MiB messages to a matmul worker's echo (reference 003); one JSON result line.")
    static final class PingPongCmd implements Callable<Integer> {
        @Option(names = "--worker", required = true, description = "The echoing matmul worker as [NAME=]ADDRESS[:BASEPORT].")
        String worker;
        @Option(names = "--port", defaultValue = "" + WorkerAddr.DEFAULT_BASE, description = "Worker's base port (default ${DEFAULT-VALUE}).")
        int port;
        @Option(names = "--mechanism", defaultValue = "socket", description = "socket | rmi | datagram (default ${DEFAULT-VALUE}).")
        String mechanism;
        @Option(names = "--min-bytes", defaultValue = "1", description = "Smallest message (default ${DEFAULT-VALUE}).")
        int minBytes;
        @Option(names = "--max-bytes", defaultValue = "1048576", description = "Largest message; sizes double (default ${DEFAULT-VALUE}).")
        int maxBytes;
        @Option(names = "--reps", defaultValue = "25", description = "Timed round trips per size (default ${DEFAULT-VALUE}, as reference 003's loop).")
        int reps;
        @Option(names = "--warmup", defaultValue = "5", description = "Untimed round trips per size first (default ${DEFAULT-VALUE}).")
        int warmup;
        @Option(names = "--seed", defaultValue = "1", description = "Seed of the payload bytes (default ${DEFAULT-VALUE}).")
        long seed;
        @Option(names = "--dscp", defaultValue = "-1", description = "DSCP (0-63) of the manager's packets; -1 = unmarked.")
        int dscp;
        @Option(names = "--timeout", defaultValue = "120", description = "Seconds one round trip may take (default ${DEFAULT-VALUE}).")
        double timeout;
        @Option(names = "--go-file", description = "Start the run only once this file exists (see the manager "
                + "command; the result line then has \"go_wait_s\").")
        java.nio.file.Path goFile;

        @Override
        public Integer call() {
            PingPong.Config c = new PingPong.Config();
            Map<String, Object> result;
            try {
                c.worker = WorkerAddr.parse(worker.trim(), port);
                c.mechanism = mechanism;
                c.minBytes = minBytes;
                c.maxBytes = maxBytes;
                c.reps = reps;
                c.warmup = warmup;
                c.seed = seed;
                c.dscp = dscp;
                c.timeoutS = timeout;
                MarkingSocketFactory.checkIpv4Stack(dscp);
                rmiResponseTimeout(timeout);
                double goWait = goFile != null ? GoGate.await(goFile, timeout) : -1;
                result = PingPong.run(c);
                if (goWait >= 0) result.put("go_wait_s", goWait);
            } catch (IllegalArgumentException | IllegalStateException | WorkloadException e) {
                log("error: " + e.getMessage());
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("workload", "pingpong");
                out.put("mechanism", mechanism);
                out.put("valid", false);
                out.put("error", e.getMessage());
                System.out.println(Json.write(out));
                return 1;
            }
            System.out.println(Json.write(result));
            System.out.flush();
            if (!Boolean.TRUE.equals(result.get("valid"))) {
                log("error: an echo differed from the message sent");
                return 1;
            }
            return 0;
        }
    }
}
