package org.qoslab.workload.matmul;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.qoslab.workload.WorkloadException;
import org.qoslab.workload.pingpong.PingPong;

/** Reference 003's ping-pong sweep against a worker's echo: 1 B .. 1 MiB over socket, RMI and datagram. */
class PingPongTest {
    static Workers ws;

    @BeforeAll static void start() throws Exception { ws = Workers.start(1, -1); }

    @AfterAll static void stop() { ws.close(); }

    @ParameterizedTest
    @ValueSource(strings = {"socket", "rmi", "datagram"})
    void sweepFromOneByteToOneMebibyte(String mechanism) throws Exception {
        PingPong.Config c = new PingPong.Config();
        c.worker = ws.addrs.get(0);
        c.mechanism = mechanism;
        c.reps = 5;
        c.warmup = 1;
        Map<String, Object> r = PingPong.run(c);
        assertEquals("pingpong", r.get("workload"));
        assertEquals(Boolean.TRUE, r.get("valid"));
        @SuppressWarnings("unchecked") List<Map<String, Object>> sizes = (List<Map<String, Object>>) r.get("sizes");
        assertEquals(21, sizes.size());
        for (int i = 0; i < sizes.size(); i++) {
            Map<String, Object> s = sizes.get(i);
            assertEquals(1 << i, s.get("bytes"));
            assertEquals(5, s.get("reps"));
            @SuppressWarnings("unchecked") Map<String, Object> rtt = (Map<String, Object>) s.get("rtt_s");
            double med = (Double) rtt.get("median"), min = (Double) rtt.get("min"), p99 = (Double) rtt.get("p99");
            assertTrue(0 < min && min <= med && med <= p99, s.toString());
            assertEquals(2.0 * (1 << i) * 8 / med, (Double) s.get("throughput_bits_s"), 1e-6);
        }
        assertTrue((Double) r.get("elapsed_s") > 0);
    }

    @Test
    void sizesDouble() {
        assertEquals(List.of(512, 1024, 2048), PingPong.sizes(512, 2048));
        assertEquals(List.of(3, 6, 12), PingPong.sizes(3, 20));
        assertEquals(21, PingPong.sizes(1, 1 << 20).size());
    }

    @Test
    void deadWorkerFails() throws Exception {
        PingPong.Config c = new PingPong.Config();
        c.worker = new WorkerAddr("jp-9", "127.0.0.1", Workers.freeTcp(), Workers.freeTcp(), Workers.freeUdp());
        c.mechanism = "socket";
        WorkloadException e = assertThrows(WorkloadException.class, () -> PingPong.run(c));
        assertTrue(e.getMessage().contains("jp-9") && e.getMessage().contains("Connection refused"), e.getMessage());
        c.mechanism = "smoke-signals";
        assertThrows(WorkloadException.class, () -> PingPong.run(c));
    }
}
