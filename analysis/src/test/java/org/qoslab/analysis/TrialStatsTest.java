package org.qoslab.analysis;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Statistics against values computed independently: the thesis's published Tables 3 and 5 (means
 * to 0.01 s), hand-worked examples, and scipy 1.17.1 (scipy.stats.ttest_ind(equal_var=False),
 * scipy.stats.mannwhitneyu(alternative='two-sided', method='asymptotic'), scipy.stats.t.ppf)
 * run on the same Appendix A data.
 */
class TrialStatsTest {
    /** The thesis's Appendix A data: ../shared/data when the checkout sits next to it, else the copy in analysis/data. */
    static final Path DATA = java.nio.file.Files.isDirectory(Path.of(System.getProperty("user.dir")).resolve("../../shared/data"))
            ? Path.of(System.getProperty("user.dir")).resolve("../../shared/data").normalize()
            : Path.of(System.getProperty("user.dir")).resolve("data");
    @TempDir Path tmp;

    @SuppressWarnings("unchecked")
    static Map<String, Object> cond(Map<String, Object> table, String name) {
        return (Map<String, Object>) ((Map<String, Object>) table.get("conditions")).get(name);
    }

    @Test
    @SuppressWarnings("unchecked")
    void thesisMeansReproduceTables3And5AndTheSigmaMismatchesAreFlagged() throws Exception {
        Map<String, Object> t = Main.thesis(DATA, TrialStats.Settings.defaults());
        Map<String, Object> t3 = (Map<String, Object>) t.get("table3"), t5 = (Map<String, Object>) t.get("table5");
        double[][] table3 = {{2, 73.79, 29.09}, {3, 50.78, 18.08}, {4, 38.10, 9.04}, {6, 27.12, 6.01}, {8, 21.45, 3.28}};
        for (double[] row : table3) {
            Map<String, Object> c = cond(t3, "machines=" + (int) row[0]);
            assertEquals(row[1], (double) c.get("mean"), 0.005);
            assertEquals(row[2], (double) c.get("sd"), 0.005);   // raw-data sample sd
            assertEquals(Boolean.TRUE, c.get("mean_matches_published"));
        }
        assertEquals(49, cond(t3, "machines=2").get("n"));        // trial 40 is missing in the source
        assertEquals(Boolean.FALSE, cond(t3, "machines=4").get("sd_matches_published")); // 9.04 vs published 8.82
        assertEquals(Boolean.TRUE, cond(t3, "machines=8").get("sd_matches_published"));
        String[] names = {"no congestion, no QoS", "congestion, no QoS", "no congestion, QoS", "congestion, QoS"};
        double[] means = {38.10, 57.90, 40.05, 44.07}, sds = {9.04, 12.34, 9.32, 8.91};
        boolean[] sdPublished = {false, false, false, true};  // published 8.82, 11.83, 9.37, 8.91
        for (int i = 0; i < 4; i++) {
            Map<String, Object> c = cond(t5, names[i]);
            assertEquals(means[i], (double) c.get("mean"), 0.005, names[i]);
            assertEquals(sds[i], (double) c.get("sd"), 0.005, names[i]);
            assertEquals(sdPublished[i], c.get("sd_matches_published"), names[i]);
        }
        // recovery: (57.90 - 44.07) / (57.90 - 38.10) = 0.698 (the thesis's "70 %")
        Map<String, Object> rec = ((List<Map<String, Object>>) t5.get("recovery")).get(0);
        assertEquals(13.83 / 19.80, (double) rec.get("ratio"), 0.001);
        // comparisons against scipy on the same data
        List<Map<String, Object>> cmp = (List<Map<String, Object>>) t5.get("comparisons");
        assertEquals(1.667968028909513e-14, (double) cmp.get(0).get("welch_t_p"), 1e-16);
        assertEquals(6.1837330596302e-09, (double) cmp.get(1).get("welch_t_p"), 1e-12);
        assertEquals(0.2922381662701041, (double) cmp.get(2).get("welch_t_p"), 1e-9);
        assertEquals(19.80, (double) cmp.get(0).get("difference_s"), 0.01);  // the thesis subtracts rounded means
        assertEquals(-13.83, (double) cmp.get(1).get("difference_s"), 0.01);
        // 95 % CI of the 4-machine mean: BCa (checked against scipy's in tests/unit/test_stats_scipy.py);
        // n = 50 and CV 24 %, so it lies close to the Student t one [35.534, 40.670] (scipy t.ppf(0.975, 49))
        List<Double> ci = (List<Double>) cond(t5, "no congestion, no QoS").get("ci95");
        assertEquals(35.533785053714446, ci.get(0), 0.6);
        assertEquals(40.67021494628555, ci.get(1), 0.6);
    }

    @Test
    void mannWhitneyIsTieCorrectedOnTiedDataAsScipy() throws Exception {
        Map<String, Object> t = Main.thesis(DATA, TrialStats.Settings.defaults());
        @SuppressWarnings("unchecked")
        var cmp = (List<Map<String, Object>>) ((Map<String, Object>) t.get("table5")).get("comparisons");
        // comparisons 0 and 2 have ties (two-decimal times): the exact permutation distribution of the
        // midrank sum (tests/unit/test_stats_scipy.py's exact_tied_p: 3.311975826459205e-14 and
        // 0.17574676945597176; the tie-corrected normal approximation said 4.81e-12 and 0.1755);
        // comparison 1 (the two congested conditions, 100 distinct values) gets the exact p: scipy
        // method='exact' 1.92e-08 (the normal approximation said 8.01e-08)
        assertEquals(3.311975826459205e-14, (double) cmp.get(0).get("mann_whitney_p"), 3.311975826459205e-14 * 1e-6);
        assertEquals(1.92052801725548e-08, (double) cmp.get(1).get("mann_whitney_p"), 1.92052801725548e-08 * 1e-9);
        assertEquals("exact", cmp.get(1).get("mann_whitney_method"));
        assertEquals(0.17574676945597176, (double) cmp.get(2).get("mann_whitney_p"), 1e-9);
        assertEquals(Boolean.TRUE, cmp.get(0).get("mann_whitney_ties"));
    }

    @Test
    void handWorkedExample() {
        // x = 1..5: mean 3, sample sd sqrt(2.5) = 1.5811; the mean's interval is BCa (inside [1, 5])
        Map<String, Object> d = TrialStats.describe(new double[] {1, 2, 3, 4, 5});
        assertEquals(3.0, (double) d.get("mean"), 1e-12);
        assertEquals(Math.sqrt(2.5), (double) d.get("sd"), 1e-12);
        assertEquals(3.0, (double) d.get("median"), 1e-12);
        assertEquals(Math.sqrt(2.5) / 3, (double) d.get("cv"), 1e-12);
        @SuppressWarnings("unchecked") List<Double> ci = (List<Double>) d.get("ci95");
        assertTrue(1 <= ci.get(0) && ci.get(0) < 3 && 3 < ci.get(1) && ci.get(1) <= 5, ci.toString());
        // a skewed sample (one RTO-chain trial among short ones): Student t ran below 0 s, BCa does not
        double[] skewed = {5, 5.2, 5.1, 4.9, 5.3, 83.6, 5.0, 5.2};
        @SuppressWarnings("unchecked") List<Double> sk = (List<Double>) TrialStats.describe(skewed).get("ci95");
        assertTrue(sk.get(0) >= 4.9 && sk.get(1) <= 83.6, sk.toString());
        @SuppressWarnings("unchecked") List<Double> flat = (List<Double>) TrialStats.describe(new double[] {2, 2}).get("ci95");
        assertEquals(List.of(2.0, 2.0), flat);
        // scipy: ttest_ind([1..5], [2,4,...,12], equal_var=False).pvalue = 0.04928433820673053
        Map<String, Object> c = TrialStats.compare("a", new double[] {1, 2, 3, 4, 5}, "b", new double[] {2, 4, 6, 8, 10, 12},
                TrialStats.Settings.defaults(), 0.06);
        assertEquals(0.04928433820673053, (double) c.get("welch_t_p"), 1e-9);
        assertEquals(7.0 / 3.0, (double) c.get("ratio"), 1e-12);
        assertEquals(1.0, TrialStats.recovery(10, 20, 10), 1e-12);
        assertEquals(-0.5, TrialStats.recovery(10, 20, 25), 1e-12);
        assertTrue(Double.isNaN(TrialStats.recovery(10, 9, 8)));
        assertThrows(IllegalArgumentException.class, () -> TrialStats.describe(new double[] {1}));
    }

    /**
     * Issue 45: a metric constant within two compared conditions (a counter, a fixed message count)
     * stopped the statistics ("No bracketing: f(-1.0)=NaN, f(1.0)=NaN", rc 2). The reproduction,
     * the 4-row CSV a,1,10 a,2,10 b,1,20 b,2,20, now gives stats.json with the tests that divide by a
     * standard deviation null and saying why; Mann-Whitney as scipy 1.17.1's
     * mannwhitneyu([20, 20], [10, 10], method='asymptotic') = U 4, p 0.1939308522824107.
     */
    @Test
    @SuppressWarnings("unchecked")
    void aMetricConstantWithinBothConditionsGivesStatisticsThatSayWhatCannotBeComputed() throws Exception {
        Path f = tmp.resolve("c.csv"), out = tmp.resolve("s.json");
        Files.writeString(f, "condition,trial,elapsed_s\na,1,10\na,2,10\nb,1,20\nb,2,20\nc,1,15\nc,2,15\n");
        int rc = new picocli.CommandLine(new Main()).execute("stats", "--csv", f.toString(), "--out", out.toString(),
                "--baseline", "a", "--compare", "a|b", "--compare", "b|c", "--compare", "a|a", "--recovery", "a|b|c");
        assertEquals(0, rc);
        Map<String, Object> s = (Map<String, Object>) org.qoslab.common.Json.parse(Files.readString(out));
        List<Map<String, Object>> cmp = (List<Map<String, Object>>) s.get("comparisons");
        Map<String, Object> ab = cmp.get(0);
        assertEquals(10.0, ((Number) ab.get("difference_s")).doubleValue(), 1e-12);
        assertEquals(List.of(10.0, 10.0), ((List<Number>) ab.get("difference_ci95_s")).stream().map(Number::doubleValue).toList());
        for (String k : new String[] {"welch_t_p", "welch_t", "welch_df", "cohens_d", "hedges_g", "mde_s", "tost", "welch_t_p_holm"})
            assertNull(ab.get(k), k);
        assertTrue(((String) ab.get("not_computable")).contains("no spread"), ab.toString());
        assertEquals(4.0, ((Number) ab.get("mann_whitney_u")).doubleValue(), 1e-12);
        // exact with ties: 2 of the C(4, 2) = 6 splits are as extreme (the normal approximation said 0.194)
        assertEquals(1.0 / 3.0, ((Number) ab.get("mann_whitney_p")).doubleValue(), 1e-12);
        assertNull(cmp.get(2).get("mann_whitney_p"));  // identical samples: no test separates them
        assertNotNull(cmp.get(1).get("mann_whitney_p_holm"));
        Map<String, Object> rec = ((List<Map<String, Object>>) s.get("recovery")).get(0);
        assertEquals(0.5, ((Number) rec.get("ratio")).doubleValue(), 1e-12);  // (20 - 15) / (20 - 10)
        assertEquals(0.0, ((Number) cond(s, "a").get("sd")).doubleValue(), 0);
    }

    @Test
    void csvErrorsNameFileAndLine() throws Exception {
        Path f = tmp.resolve("t.csv");
        Files.writeString(f, "condition,trial,elapsed_s\nfifo,1,3.5\nfifo,2,oops\n");
        var e = assertThrows(java.io.IOException.class, () -> Trials.read(f, List.of("condition"), "elapsed_s", Map.of()));
        assertTrue(e.getMessage().contains("t.csv:3") && e.getMessage().contains("oops"), e.getMessage());
        e = assertThrows(java.io.IOException.class, () -> Trials.read(f, List.of("cond"), "elapsed_s", Map.of()));
        assertTrue(e.getMessage().contains("no column 'cond'"), e.getMessage());
    }
}
