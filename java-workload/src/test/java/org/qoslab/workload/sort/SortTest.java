package org.qoslab.workload.sort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.qoslab.workload.WorkloadException;

/** Reference 002's sort on loopback: two servers in this JVM, each mechanism end to end. */
class SortTest {
    private static final int BASE_A = 23300, BASE_B = 23310;
    private static SortServer a, b;

    @BeforeAll
    static void start() throws Exception {
        a = SortServer.start("127.0.0.1", BASE_A, -1, 30);
        b = SortServer.start("127.0.0.1", BASE_B, -1, 30);
    }

    @AfterAll
    static void stop() {
        if (a != null) a.close();
        if (b != null) b.close();
    }

    private static SortManager.Config config(String mechanism, int size) {
        SortManager.Config c = new SortManager.Config();
        c.servers.add(new SortManager.Server("a", "127.0.0.1", BASE_A));
        c.servers.add(new SortManager.Server("b", "127.0.0.1", BASE_B));
        c.mechanism = mechanism;
        c.size = size;
        c.seed = 7;
        c.timeoutS = 30;
        return c;
    }

    @ParameterizedTest
    @ValueSource(strings = {"socket", "rmi", "corba"})
    void every_mechanism_sorts_exactly_and_times_its_phases(String mechanism) throws WorkloadException {
        Map<String, Object> r = SortManager.run(config(mechanism, 20_001));
        assertEquals(true, r.get("valid"));
        int[] expected = SortManager.data(20_001, 7);
        Arrays.sort(expected);
        assertEquals(SortManager.checksum(expected), r.get("checksum"));
        assertEquals(r.get("reference"), r.get("checksum"));
        double sum = (double) r.get("distribute_s") + (double) r.get("sort_s") + (double) r.get("collect_s")
                + (double) r.get("merge_s");
        assertEquals(sum, (double) r.get("total_s"), 1e-9);
        assertEquals(r.get("total_s"), r.get("elapsed_s"));
        assertTrue((double) r.get("sort_max_s") <= (double) r.get("sort_s"), "server sort time within the sort phase");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> per = (List<Map<String, Object>>) r.get("per_server");
        assertEquals(List.of(10_001, 10_000), per.stream().map(w -> w.get("items")).toList(), "parts differ by at most one");
    }

    @Test
    void the_servers_forget_a_collected_part() throws Exception {
        SortStore s = new SortStore();
        s.put(1, new int[] {3, 1, 2});
        assertTrue(s.sort(1) >= 0);
        assertArrayEquals(new int[] {1, 2, 3}, s.take(1));
        assertEquals(0, s.size());
        assertThrows(IllegalStateException.class, () -> s.take(1));
    }

    @Test
    void merge_interleaves_sorted_parts() {
        int[] m = SortManager.merge(new int[][] {{1, 4, 9}, {}, {2, 3, 10, 11}, {Integer.MIN_VALUE}});
        assertArrayEquals(new int[] {Integer.MIN_VALUE, 1, 2, 3, 4, 9, 10, 11}, m);
    }

    @Test
    void an_unknown_mechanism_is_one_clear_error() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SortManager.run(config("mpi", 10)));
        assertEquals("--mechanism must be socket, rmi or corba, got mpi", e.getMessage());
    }

    @Test
    void a_dead_server_fails_the_connect_phase_naming_it() {
        SortManager.Config c = config("socket", 100);
        c.servers.set(1, new SortManager.Server("gone", "127.0.0.1", 23390));
        WorkloadException e = assertThrows(WorkloadException.class, () -> SortManager.run(c));
        assertTrue(e.getMessage().startsWith("connect on gone failed: ConnectException"), e.getMessage());
    }
}
