package org.qoslab.workload;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.BindException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.qoslab.workload.matmul.MatmulWorker;
import picocli.CommandLine;

/**
 * The {@code matmul} and {@code pingpong} subcommands as the orchestrator calls them: workers
 * addressed as NAME=ADDRESS:BASEPORT, exactly one JSON line on stdout, exit code 0 when valid,
 * a JSON failure line and exit code 1 otherwise.
 */
class MatmulCliTest {
    static final List<MatmulWorker> workers = new ArrayList<>();
    static final List<Integer> bases = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        java.util.Random r = new java.util.Random();
        while (workers.size() < 2) {
            int base = 20000 + r.nextInt(20000) / 4 * 4;
            MatmulWorker.Options o = new MatmulWorker.Options().base(base);
            o.advertise = "127.0.0.1";
            try {
                workers.add(MatmulWorker.start(o));
                bases.add(base);
            } catch (BindException | java.rmi.server.ExportException e) {
                // taken: try another base
            }
        }
    }

    @AfterAll
    static void stop() { workers.forEach(MatmulWorker::close); }

    /** Run the CLI in this JVM; returns {exit code, stdout}. */
    static Object[] cli(String... args) {
        PrintStream old = System.out;
        // the CLI sets RMI's JVM-wide reply timeout (read once per JVM): do not leak it to other tests
        String rto = System.getProperty(RTO);
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(buf, true));
            int rc = new CommandLine(new Main()).execute(args);
            return new Object[] {rc, buf.toString()};
        } finally {
            System.setOut(old);
            if (rto == null) System.clearProperty(RTO); else System.setProperty(RTO, rto);
        }
    }

    static final String RTO = "sun.rmi.transport.tcp.responseTimeout";

    String workersArg() { return "jp-1=127.0.0.1:" + bases.get(0) + ",jp-2=127.0.0.1:" + bases.get(1); }

    @Test
    void matmulPrintsOneValidJsonLine() {
        for (String mech : List.of("rmi-serializable", "rmi-externalizable", "socket", "datagram")) {
            Object[] r = cli("matmul", "--workers", workersArg(), "--mechanism", mech, "--algorithm", "mca", "--size", "33");
            String out = (String) r[1];
            assertEquals(0, r[0], out);
            assertEquals(1, out.strip().split("\n").length, out);
            assertTrue(out.startsWith("{\"workload\":\"matmul\",\"mechanism\":\"" + mech + "\",\"algorithm\":\"mca\",\"size\":33,"), out);
            assertTrue(out.contains("\"valid\":true") && out.contains("\"calls\":" + (8 + 8 * 32)), out);
            assertTrue(out.strip().endsWith("}") && out.contains("\"elapsed_s\":"), out);
        }
    }

    @Test
    void pingpongPrintsOneValidJsonLine() {
        Object[] r = cli("pingpong", "--worker", "jp-2=127.0.0.1:" + bases.get(1), "--mechanism", "rmi",
                "--max-bytes", "4096", "--reps", "3", "--warmup", "1");
        String out = (String) r[1];
        assertEquals(0, r[0], out);
        assertTrue(out.startsWith("{\"workload\":\"pingpong\",\"mechanism\":\"rmi\",\"worker\":\"jp-2\""), out);
        assertTrue(out.contains("\"bytes\":4096") && out.contains("\"valid\":true"), out);
    }

    @Test
    void failuresPrintAJsonLineAndExitOne() {
        Object[] r = cli("matmul", "--workers", workersArg(), "--mechanism", "pigeon");
        assertEquals(1, r[0]);
        assertTrue(((String) r[1]).contains("\"valid\":false") && ((String) r[1]).contains("\"error\":\"--mechanism must be one of"), (String) r[1]);
        r = cli("matmul", "--workers", "jp-9=127.0.0.1:1", "--mechanism", "socket", "--timeout", "2");
        assertEquals(1, r[0]);
        assertTrue(((String) r[1]).contains("worker jp-9 (127.0.0.1): connect"), (String) r[1]);
        r = cli("pingpong", "--worker", "127.0.0.1:1", "--mechanism", "socket");
        assertEquals(1, r[0]);
        assertTrue(((String) r[1]).contains("\"workload\":\"pingpong\"") && ((String) r[1]).contains("\"valid\":false"), (String) r[1]);
    }
}
