package org.qoslab.workload;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.qoslab.common.Json;
import org.qoslab.workload.matmul.WorkerAddr;
import org.qoslab.workload.rmi.MarkingSocketFactory;
import org.qoslab.workload.sort.SortManager;
import org.qoslab.workload.sort.SortServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Reference 002's distributed sort: {@code sort-worker} (one server, all three mechanisms) and
 * {@code sort} (the client: one JSON line on stdout, logs on stderr, exit 1 when not valid).
 */
final class SortCommands {
    /** Default base port of the sort servers (registry; +1 RMI service, +2 socket, +3 IIOP). */
    static final int DEFAULT_BASE = 1300;

    private SortCommands() { }

    static void log(String msg) { System.err.println("[qoslab-workload] " + msg); }

    @Command(name = "sort-worker", mixinStandardHelpOptions = true,
            description = {"Serve reference 002's distributed sort over socket, RMI and CORBA at once; run until killed.",
                    "Ports: RMI registry = --port, RMI service = --port+1, TCP socket = --port+2, IIOP = --port+3."})
    static final class WorkerCmd implements Callable<Integer> {
        @Option(names = "--advertise", required = true, description = "This node's address: bound by every listener, advertised in stubs and IORs.")
        String advertise;
        @Option(names = "--port", defaultValue = "" + DEFAULT_BASE, description = "Base port (default ${DEFAULT-VALUE}).")
        int port;
        @Option(names = "--dscp", defaultValue = "-1", description = "DSCP (0-63) of everything this server sends; -1 = unmarked.")
        int dscp;
        @Option(names = "--timeout", defaultValue = "120", description = "Seconds a reply may take (default ${DEFAULT-VALUE}).")
        double timeout;

        @Override
        public Integer call() throws InterruptedException {
            try {
                MarkingSocketFactory.checkIpv4Stack(dscp);
                MatmulCommands.rmiResponseTimeout(timeout);
                SortServer.start(advertise, port, dscp, timeout);
            } catch (Exception e) {
                log("error: sort worker on " + advertise + " cannot start: " + WorkloadException.rootMessage(e));
                return 1;
            }
            log("sort-worker ready on " + advertise + ": rmi registry " + port + " service " + (port + 1) + ", socket tcp "
                    + (port + 2) + ", iiop " + (port + 3) + (dscp >= 0 ? ", dscp " + dscp : ""));
            new java.util.concurrent.CountDownLatch(1).await(); // serve until killed
            return 0;
        }
    }

    @Command(name = "sort", mixinStandardHelpOptions = true,
            description = "Sort integers on N servers over socket, RMI or CORBA (reference 002) and print one JSON result line.")
    static final class ManagerCmd implements Callable<Integer> {
        @Option(names = "--servers", required = true, split = ",",
                description = "Sort servers as [NAME=]ADDRESS[:BASEPORT], comma-separated (base port default: --port).")
        String[] servers;
        @Option(names = "--port", defaultValue = "" + DEFAULT_BASE, description = "Servers' base port (default ${DEFAULT-VALUE}).")
        int port;
        @Option(names = "--mechanism", defaultValue = "socket", description = "socket | rmi | corba (default ${DEFAULT-VALUE}).")
        String mechanism;
        @Option(names = "--size", defaultValue = "100000", description = "Integers to sort (default ${DEFAULT-VALUE}).")
        int size;
        @Option(names = "--seed", defaultValue = "1", description = "Seed of the integers (default ${DEFAULT-VALUE}).")
        long seed;
        @Option(names = "--dscp", defaultValue = "-1", description = "DSCP (0-63) of everything the client sends; -1 = unmarked.")
        int dscp;
        @Option(names = "--timeout", defaultValue = "120", description = "Seconds one phase may take (default ${DEFAULT-VALUE}).")
        double timeout;
        @Option(names = "--go-file", description = "Start the run only once this file exists (see the manager "
                + "command; the result line then has \"go_wait_s\").")
        java.nio.file.Path goFile;

        @Override
        public Integer call() {
            SortManager.Config c = new SortManager.Config();
            Map<String, Object> result;
            try {
                for (String s : servers) {
                    WorkerAddr a = WorkerAddr.parse(s.trim(), port);
                    c.servers.add(new SortManager.Server(a.name, a.host, a.rmiPort));
                }
                c.mechanism = mechanism;
                c.size = size;
                c.seed = seed;
                c.dscp = dscp;
                c.timeoutS = timeout;
                MarkingSocketFactory.checkIpv4Stack(dscp);
                MatmulCommands.rmiResponseTimeout(timeout);
                double goWait = goFile != null ? GoGate.await(goFile, timeout) : -1;
                result = SortManager.run(c);
                if (goWait >= 0) result.put("go_wait_s", goWait);
            } catch (IllegalArgumentException | IllegalStateException e) {
                return fail(e.getMessage(), null);
            } catch (WorkloadException e) {
                return fail(e.getMessage(), e);
            }
            System.out.println(Json.write(result));
            System.out.flush();
            if (!Boolean.TRUE.equals(result.get("valid"))) {
                log("error: the merged parts differ from the local sort (checksum " + result.get("checksum")
                        + ", reference " + result.get("reference") + ")");
                return 1;
            }
            return 0;
        }

        private int fail(String msg, WorkloadException e) {
            log("error: " + msg);
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("workload", "sort");
            out.put("mechanism", mechanism);
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
}
