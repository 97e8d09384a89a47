package org.qoslab.workload.mpj;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** MPJ Express without mpjrun: the rendezvous's protocol, and three real ranks on loopback. */
class MpjTest {
    private static final String MPJ = "/usr/share/java/mpj.jar", LOG4J = "/usr/share/java/log4j-1.2.jar";

    @Test
    void the_port_server_hands_every_rank_the_table_in_rank_order() throws Exception {
        int port = 24400;
        Thread server = new Thread(() -> {
            try {
                PortServer.serve("127.0.0.1", port, 2, 10);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        server.start();
        Thread.sleep(300);
        List<String> answers = new ArrayList<>();
        Socket[] s = new Socket[2];
        for (int rank : new int[] {1, 0}) { // ranks may register in any order
            s[rank] = new Socket("127.0.0.1", port);
            DataOutputStream out = new DataOutputStream(s[rank].getOutputStream());
            out.writeUTF("Sending Info");
            out.writeInt(30000 + rank); // write port
            out.writeInt(31000 + rank); // read port
            out.writeInt(rank);
            out.flush();
        }
        for (Socket sock : s) answers.add(new DataInputStream(sock.getInputStream()).readUTF());
        server.join(5000);
        String table = "#Peer Information;127.0.0.1@31000@30000@0@0;127.0.0.1@31001@30001@1@0";
        assertEquals(List.of(table, table), answers);
        assertEquals("#Number of Processes;4;#Protocol Switch Limit;131072;#Server Name;198.18.0.1;#Server Port;1400",
                PortServer.conf(4, "198.18.0.1", 1400));
    }

    @Test
    void percentiles_are_nearest_rank_and_sizes_double() {
        double[] s = new double[100];
        for (int i = 0; i < 100; i++) s[i] = i + 1;
        assertEquals(50.0, Latencies.nearestRank(s, 50));
        assertEquals(99.0, Latencies.nearestRank(s, 99));
        assertEquals(1.0, Latencies.nearestRank(new double[] {1}, 99));
        assertArrayEquals(new int[] {1, 2, 4, 8}, Latencies.doubling(1, 8));
        assertArrayEquals(new int[] {3, 6}, Latencies.doubling(3, 10));
    }

    @Test
    void three_ranks_on_loopback_measure_every_operation(@TempDir Path tmp) throws Exception {
        Assumptions.assumeTrue(Files.exists(Path.of(MPJ)), "libmpj-java not installed (scripts/setup.sh installs it)");
        String cp = System.getProperty("java.class.path") + ":" + MPJ + ":" + LOG4J;
        String conf = PortServer.conf(3, "127.0.0.1", 24410);
        Thread server = new Thread(() -> {
            try {
                PortServer.serve("127.0.0.1", 24410, 3, 60);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        server.start();
        List<Process> ranks = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            ProcessBuilder pb = new ProcessBuilder("java", "-Djava.net.preferIPv4Stack=true", "-Xmx128m", "-cp", cp,
                    MpjBench.class.getName(), Integer.toString(r), conf, "niodev", "--max-bytes", "1024", "--reps", "5",
                    "--warmup", "1", "--socket-peer", "127.0.0.1:24420");
            pb.environment().put("MPJ_HOME", "/usr/share/mpj");
            pb.redirectError(tmp.resolve("rank" + r + ".log").toFile());
            pb.redirectOutput(tmp.resolve("rank" + r + ".out").toFile());
            ranks.add(pb.start());
        }
        for (Process p : ranks) {
            assertTrue(p.waitFor(90, TimeUnit.SECONDS), "a rank did not finish");
            assertEquals(0, p.exitValue(), Files.readString(tmp.resolve("rank0.log")));
        }
        String out = Files.readString(tmp.resolve("rank0.out")).strip();
        assertTrue(out.startsWith("{\"workload\":\"mpj\",\"ranks\":3,"), out);
        assertTrue(out.contains("\"valid\":true"), out);
        for (String key : new String[] {"\"pingpong\":", "\"socket_pingpong\":", "\"barrier\":", "\"bcast\":", "\"allreduce\":"})
            assertTrue(out.contains(key), key + " missing in " + out);
        assertEquals("", Files.readString(tmp.resolve("rank1.out")), "only rank 0 prints a result");
    }
}
