package org.qoslab.workload;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free ports for tests that must name a port before the socket that binds it exists (an RMI
 * registry, a worker's export port). A port the kernel gives for port 0 comes from its ephemeral
 * range ({@code net.ipv4.ip_local_port_range}, 32768-60999 by default), where any outgoing
 * connection of the machine may take it before the test binds it again: in make test's set-up uv
 * downloads beside these tests, and an RMI export failed with "Port already in use" (2026-11-30).
 * These ports come from below that range (10000 up to its start), where no outgoing connection
 * lands; one is returned only after a bind of it succeeded.
 */
public final class TestPorts {
    private TestPorts() {}

    /** The first port of the kernel's ephemeral range (32768 when it cannot be read). */
    static int ephemeralStart() {
        // a line reader: Files.readString of this proc file read "3" here (JDK 17; procfs reports size 0)
        try (BufferedReader r = Files.newBufferedReader(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
            int start = Integer.parseInt(r.readLine().trim().split("\\s+")[0]);
            return start > 2048 && start <= 65535 ? start : 32768;
        } catch (IOException | RuntimeException e) {
            return 32768;
        }
    }

    /** A TCP port on 127.0.0.1 nothing listens on now, below the ephemeral range. */
    public static int freeTcp() throws IOException {
        return pick(true);
    }

    /** A UDP port on 127.0.0.1 nothing is bound to now, below the ephemeral range. */
    public static int freeUdp() throws IOException {
        return pick(false);
    }

    private static int pick(boolean tcp) throws IOException {
        int hi = ephemeralStart();
        int lo = Math.min(10000, hi - 1000);
        InetAddress lb = InetAddress.getLoopbackAddress();
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(Math.max(1024, lo), hi);
            try {
                if (tcp) {
                    try (ServerSocket s = new ServerSocket(port, 1, lb)) { return s.getLocalPort(); }
                }
                try (DatagramSocket s = new DatagramSocket(port, lb)) { return s.getLocalPort(); }
            } catch (IOException taken) {
                // in use: another
            }
        }
        throw new IOException("no free " + (tcp ? "TCP" : "UDP") + " port below " + hi + " after 200 tries");
    }
}
