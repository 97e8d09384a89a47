package org.qoslab.workload.matmul;

import static org.junit.jupiter.api.Assertions.*;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import org.qoslab.workload.net.ReliableDatagram;

/**
 * The datagram mechanism survives loss: a relay in front of every worker drops every 7th packet
 * (data and acks, both directions, manager-worker and worker-worker), and the product is still
 * the sequential one; the retransmissions show in the result.
 */
class DatagramLossTest {

    @ParameterizedTest(name = "{0} n={1} on {2} workers, every {3}th packet dropped")
    @CsvSource({"spa,100,4,7", "mca,64,4,7", "mca,65,3,7", "spa,101,3,5"})
    void productIsValidThroughALossyRelay(String algorithm, int n, int k, int dropEvery) throws Exception {
        try (Workers ws = Workers.start(k, -1)) {
            List<DroppingRelay> relays = new ArrayList<>();
            try {
                MatmulManager.Config c = new MatmulManager.Config();
                for (WorkerAddr w : ws.addrs) {
                    DroppingRelay r = new DroppingRelay(new InetSocketAddress(w.host, w.datagramPort), dropEvery);
                    relays.add(r);
                    c.workers.add(new WorkerAddr(w.name, w.host, w.rmiPort, w.socketPort, r.port()));
                }
                c.mechanism = "datagram";
                c.algorithm = algorithm;
                c.n = n;
                c.timeoutS = 120;
                Map<String, Object> res = MatmulManager.run(c);
                long dropped = relays.stream().mapToLong(r -> r.dropped.get()).sum();
                assertEquals(Boolean.TRUE, res.get("valid"), res.toString());
                assertEquals(res.get("reference"), res.get("checksum"));
                assertTrue(dropped > 0, "the relay dropped nothing");
                // the result counts the manager's retransmissions and the workers' during their tasks
                // (a retransmitted reply cannot count itself): the endpoints' counters see them all
                long workerRetrans = ws.workers.stream().mapToLong(w -> w.datagramEndpoint().retransmits.sum()).sum();
                assertTrue((Long) res.get("retransmits") + workerRetrans > 0, res.toString());
                assertEquals(MatmulTest.expectedCalls(algorithm, n, k), res.get("calls"));
            } finally {
                relays.forEach(DroppingRelay::close);
            }
        }
    }

    @Test
    void largeMessageIsCutInto63KbPacketsAndArrivesOnceThroughLoss() throws Exception {
        CompletableFuture<byte[]> got = new CompletableFuture<>();
        List<byte[]> all = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (ReliableDatagram rx = new ReliableDatagram("127.0.0.1", 0, -1, (from, m) -> { all.add(m); got.complete(m); }, "rx");
             ReliableDatagram tx = new ReliableDatagram("127.0.0.1", 0, -1, (from, m) -> { }, "tx");
             DroppingRelay relay = new DroppingRelay(new InetSocketAddress("127.0.0.1", rx.localAddress().getPort()), 3)) {
            byte[] msg = new byte[200_000];
            new java.util.Random(1).nextBytes(msg);
            tx.send(new InetSocketAddress("127.0.0.1", relay.port()), msg, System.nanoTime() + 30_000_000_000L);
            assertArrayEquals(msg, got.get(10, TimeUnit.SECONDS));
            // 200000 bytes = 3 packets of 64512 + one of 6464: 4 distinct packets, each acknowledged
            assertEquals(4, rx.packetsReceived.sum() - rx.duplicates.sum());
            assertTrue(tx.retransmits.sum() > 0);
            assertEquals(tx.packetsSent.sum(), 4 + tx.retransmits.sum());
            Thread.sleep(300); // late duplicates must not deliver the message twice
            assertEquals(1, all.size());
            // a small message goes in one packet of its own size
            tx.send(new InetSocketAddress("127.0.0.1", rx.localAddress().getPort()), new byte[5], System.nanoTime() + 5_000_000_000L);
        }
    }

    @Test
    void sendToNobodyFailsAtTheDeadline() throws Exception {
        try (ReliableDatagram tx = new ReliableDatagram("127.0.0.1", 0, -1, (from, m) -> { }, "tx")) {
            long t0 = System.nanoTime();
            java.net.SocketTimeoutException e = assertThrows(java.net.SocketTimeoutException.class,
                    () -> tx.send(new InetSocketAddress("127.0.0.1", Workers.freeUdp()), new byte[10], System.nanoTime() + 800_000_000L));
            double s = (System.nanoTime() - t0) / 1e9;
            assertTrue(s >= 0.75 && s < 3, "gave up after " + s + " s");
            assertTrue(e.getMessage().contains("packet 1/1"), e.getMessage());
        }
    }
}
