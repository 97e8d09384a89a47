package org.qoslab.analysis;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.qoslab.common.Json;

/** Call-latency quantiles with trials resampled as clusters. */
class CallStatsTest {
    @TempDir Path dir;

    @Test
    void pooledQuantilesByHand() {
        // trials {1,2,3}, {10}, {4,5}: pooled 1 2 3 4 5 10 (n = 6)
        CallStats.Condition c = CallStats.of("x", new double[] {3, 1, 2}, new double[] {10}, new double[] {5, 4});
        int[] ones = {1, 1, 1};
        assertEquals(3.5, CallStats.quantile(c, ones, 0.5), 1e-12);   // h = 2.5: 3 + .5 (4 - 3)
        assertEquals(7.5, CallStats.quantile(c, ones, 0.9), 1e-12);   // h = 4.5: 5 + .5 (10 - 5)
        assertEquals(9.75, CallStats.quantile(c, ones, 0.99), 1e-12); // h = 4.95: 5 + .95 (10 - 5)
        assertEquals(1.0, CallStats.quantile(c, ones, 0), 1e-12);
        assertEquals(10.0, CallStats.quantile(c, ones, 1), 1e-12);
        // trial 1 drawn twice, trial 3 once: 1 1 2 2 3 3 4 5 (n = 8), h = 3.5 -> 2.5
        assertEquals(2.5, CallStats.quantile(c, new int[] {2, 0, 1}, 0.5), 1e-12);
        assertTrue(Double.isNaN(CallStats.quantile(c, new int[] {0, 0, 0}, 0.5)));
        assertEquals(25.0 / 6, CallStats.mean(c, ones), 1e-12);
    }

    @Test
    void weightedQuantileEqualsTheExpandedSortedSample() {
        Random r = new Random(7);
        for (int rep = 0; rep < 200; rep++) {
            int nt = 1 + r.nextInt(6);
            double[][] trials = new double[nt][];
            for (int t = 0; t < nt; t++) {
                trials[t] = new double[1 + r.nextInt(30)];
                for (int i = 0; i < trials[t].length; i++) trials[t][i] = Math.floor(Math.exp(r.nextGaussian() * 2) * 10) / 10; // ties too
            }
            CallStats.Condition c = CallStats.of("r", trials);
            int[] w = new int[nt];
            w[r.nextInt(nt)]++;
            for (int t = 0; t < nt; t++) w[t] += r.nextInt(3);
            List<Double> expanded = new ArrayList<>();
            for (int t = 0; t < nt; t++) for (int k = 0; k < w[t]; k++) for (double x : trials[t]) expanded.add(x);
            double[] s = expanded.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            for (double p : new double[] {0, 0.1, 0.5, 0.9, 0.99, 0.999, 1})
                assertEquals(Bootstrap.quantile7(s, p), CallStats.quantile(c, w, p), 1e-12, "p " + p + " rep " + rep);
        }
    }

    @Test
    void trialsNotCallsAreResampled() {
        // two trials of 100 identical calls each: 1 ms and 100 ms. A cluster resample has both trials
        // (p50 50.5), one of them twice (1 or 100): the interval spans both; resampling the 200 calls
        // as independent would give a narrow interval around 50.5.
        double[] a = new double[100], b = new double[100];
        Arrays.fill(a, 1);
        Arrays.fill(b, 100);
        Map<String, CallStats.Condition> data = Map.of("c", CallStats.of("c", a, b));
        Map<String, Object> out = CallStats.analyse(data, List.of(), List.of(), 2000, 1, 0.95, "latency_ms");
        Map<?, ?> c = (Map<?, ?>) ((Map<?, ?>) out.get("conditions")).get("c");
        assertEquals(50.5, (Double) c.get("p50"), 1e-12);
        assertEquals(List.of(1.0, 100.0), ((Map<?, ?>) c.get("ci95")).get("p50"));
        assertEquals(2, c.get("trials"));
        assertEquals(200, c.get("calls"));
    }

    @Test
    void p99RecoveryAndComparisonOnDegenerateTrials() {
        double[] base = new double[50], cong = new double[50], treat = new double[50];
        Arrays.fill(base, 10);
        Arrays.fill(cong, 110);
        Arrays.fill(treat, 35);
        Map<String, CallStats.Condition> data = new java.util.LinkedHashMap<>();
        data.put("base", CallStats.of("base", base, base, base));
        data.put("cong", CallStats.of("cong", cong, cong, cong));
        data.put("treat", CallStats.of("treat", treat, treat, treat));
        Map<String, Object> out = CallStats.analyse(data, List.<String[]>of(new String[] {"base", "cong"}),
                List.<String[]>of(new String[] {"base", "cong", "treat"}), 500, 3, 0.95, "latency_ms");
        @SuppressWarnings("unchecked") List<Map<String, Object>> rec = (List<Map<String, Object>>) out.get("recovery");
        Map<String, Object> p99 = rec.stream().filter(m -> m.get("statistic").equals("p99")).findFirst().orElseThrow();
        assertEquals(0.75, (Double) p99.get("ratio"), 1e-12); // (110 - 35) / (110 - 10)
        assertEquals(List.of(0.75, 0.75), p99.get("ci95"));
        @SuppressWarnings("unchecked") List<Map<String, Object>> cmp = (List<Map<String, Object>>) out.get("comparisons");
        Map<String, Object> c99 = cmp.stream().filter(m -> m.get("statistic").equals("p99")).findFirst().orElseThrow();
        assertEquals(100.0, (Double) c99.get("difference"), 1e-12);
        assertEquals(11.0, (Double) c99.get("ratio"), 1e-12);
        // no slowdown: the recovery is undefined, never a number
        Map<String, Object> none = CallStats.analyse(data, List.of(), List.<String[]>of(new String[] {"cong", "base", "treat"}),
                200, 3, 0.95, "latency_ms");
        @SuppressWarnings("unchecked") Map<String, Object> r0 = ((List<Map<String, Object>>) none.get("recovery")).get(1);
        assertNull(r0.get("ratio"));
        assertNull(r0.get("ci95"));
        assertEquals(200, r0.get("bootstrap_undefined"));
    }

    @Test
    void seededBootstrapRepeatsAndChangesWithTheSeed() {
        Random r = new Random(3);
        double[][] trials = new double[12][];
        for (int t = 0; t < 12; t++) {
            trials[t] = new double[40];
            for (int i = 0; i < 40; i++) trials[t][i] = Math.exp(r.nextGaussian() + t * 0.05);
        }
        Map<String, CallStats.Condition> data = Map.of("x", CallStats.of("x", trials));
        String a = Json.write(CallStats.analyse(data, List.of(), List.of(), 1000, 5, 0.95, "ms"));
        String b = Json.write(CallStats.analyse(data, List.of(), List.of(), 1000, 5, 0.95, "ms"));
        String c = Json.write(CallStats.analyse(data, List.of(), List.of(), 1000, 6, 0.95, "ms"));
        assertEquals(a, b);
        assertNotEquals(a, c);
        Map<?, ?> x = (Map<?, ?>) ((Map<?, ?>) ((Map<?, ?>) Json.parse(a)).get("conditions")).get("x");
        @SuppressWarnings("unchecked") List<Double> ci = (List<Double>) ((Map<?, ?>) x.get("ci95")).get("p99");
        double p99 = (Double) x.get("p99");
        assertTrue(ci.get(0) <= p99 && p99 <= ci.get(1), ci + " around " + p99);
    }

    @Test
    void readsJsonLinesGroupsByConditionAndTrialAndSkipsIncompleteCalls() throws Exception {
        Path f = dir.resolve("calls.jsonl");
        Files.writeString(f, String.join("\n",
                "{\"condition\":\"fifo\",\"trial\":1,\"latency_ms\":1.5,\"rto\":false,\"retransmitted\":0,\"method\":\"render\"}",
                "{\"condition\":\"fifo\",\"trial\":1,\"latency_ms\":null,\"rto\":false,\"retransmitted\":0,\"method\":\"render\"}",
                "{\"condition\":\"fifo\",\"trial\":2,\"latency_ms\":250.0,\"rto\":true,\"retransmitted\":2,\"method\":\"render\"}",
                "",
                "{\"condition\":\"fifo\",\"trial\":2,\"latency_ms\":9.0,\"rto\":false,\"retransmitted\":0,\"method\":\"lookup\"}",
                "{\"condition\":\"thesis\",\"trial\":3,\"latency_ms\":2,\"rto\":false,\"retransmitted\":0,\"method\":\"render\"}"));
        long[] skipped = new long[1];
        Map<String, CallStats.Condition> d = CallStats.read(List.of(f), List.of("condition"), "trial", "latency_ms",
                Map.of("method", "render"), skipped);
        assertEquals(List.of("fifo", "thesis"), new ArrayList<>(d.keySet()));
        assertEquals(1, skipped[0]);
        assertEquals(2, d.get("fifo").trials());
        assertEquals(2, d.get("fifo").calls());
        Map<String, Object> out = CallStats.analyse(d, List.of(), List.of(), 200, 1, 0.95, "latency_ms");
        Map<?, ?> fifo = (Map<?, ?>) ((Map<?, ?>) out.get("conditions")).get("fifo");
        assertEquals(1L, fifo.get("calls_with_rto"));
        assertEquals(2L, fifo.get("retransmitted_segments"));
        assertEquals(250.0, fifo.get("max"));
        // the CLI end to end
        Path o = dir.resolve("calls-stats.json");
        int rc = new picocli.CommandLine(new Main()).execute("calls", "--calls", f.toString(), "--where", "method=render",
                "--resamples", "200", "--out", o.toString());
        assertEquals(0, rc);
        Map<?, ?> written = (Map<?, ?>) Json.parse(Files.readString(o));
        assertEquals(1L, written.get("skipped_records"));
        assertEquals(Json.write(out.get("conditions")), Json.write(written.get("conditions")));
    }

    @Test
    void jsonParserReadsWhatTheWriterWrites() {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("s", "a\"b\\c\n\u0001é");
        m.put("l", 1700000000000000000L);
        m.put("d", -1.5e-3);
        m.put("t", true);
        m.put("n", null);
        m.put("a", List.of(1L, List.of(), Map.of()));
        assertEquals(m, Json.parse(Json.write(m)));
        assertThrows(IllegalArgumentException.class, () -> Json.parse("{\"a\":1,}"));
        assertThrows(IllegalArgumentException.class, () -> Json.parse("[1 2]"));
        assertThrows(IllegalArgumentException.class, () -> Json.parse("{\"a\":1} x"));
    }
}
