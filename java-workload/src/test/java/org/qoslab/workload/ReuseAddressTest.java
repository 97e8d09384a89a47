package org.qoslab.workload;

import static org.junit.jupiter.api.Assertions.*;

import java.io.BufferedReader;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.qoslab.workload.net.Marked;
import org.qoslab.workload.rmi.MarkingSocketFactory;

/**
 * The workers' servers bind with SO_REUSEADDR, so a worker that starts where a killed one had
 * listened binds its port although the old connections on it are in TIME-WAIT: qoslab's runner
 * does not wait 60 s for them before it starts the raytracer's or the matmul/pingpong/sort
 * workers (the Python backends' {@code binds_reuse_address}, qoslab.campaign.portwait).
 */
class ReuseAddressTest {

    /** Leave a connection in TIME-WAIT on the server's port (the server closes first), then close it. */
    static int timeWaitOn(ServerSocket server) throws Exception {
        int port = server.getLocalPort();
        try (Socket c = new Socket()) {
            c.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            try (Socket a = server.accept()) {
                // the accepting side closes first: its end goes to TIME-WAIT on the listening port
            }
            c.getInputStream().read(); // the FIN arrived
        }
        server.close();
        return port;
    }

    static boolean timeWaitListed(int port) throws Exception {
        String hex = String.format(":%04X", port);
        try (BufferedReader r = Files.newBufferedReader(Path.of("/proc/net/tcp"))) {
            return r.lines().map(l -> l.trim().split("\\s+")).anyMatch(f -> f.length > 3 && f[1].endsWith(hex) && f[3].equals("06"));
        }
    }

    @Test
    void theRmiServerSocketRebindsAPortInTimeWait() throws Exception {
        MarkingSocketFactory f = new MarkingSocketFactory(-1, 2000, "127.0.0.1");
        ServerSocket first = f.createServerSocket(TestPorts.freeTcp());
        assertTrue(first.getReuseAddress());
        int port = timeWaitOn(first);
        assertTrue(timeWaitListed(port), "no TIME-WAIT socket on port " + port);
        try (ServerSocket again = f.createServerSocket(port)) {
            assertEquals(port, again.getLocalPort());
        }
    }

    @Test
    void theSocketServersRebindAPortInTimeWait() throws Exception {
        ServerSocket first = Marked.listen("127.0.0.1", TestPorts.freeTcp(), -1);
        assertTrue(first.getReuseAddress());
        int port = timeWaitOn(first);
        assertTrue(timeWaitListed(port), "no TIME-WAIT socket on port " + port);
        try (ServerSocket again = Marked.listen("127.0.0.1", port, -1)) {
            assertEquals(port, again.getLocalPort());
        }
    }
}
