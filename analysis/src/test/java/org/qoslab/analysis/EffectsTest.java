package org.qoslab.analysis;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The added statistics on hand-worked examples and values from scipy 1.17.1 (the full cross-check of
 * every stats.json figure against scipy is tests/unit/test_stats_scipy.py).
 */
class EffectsTest {
    static final double[] A = {1, 2, 3, 4, 5};
    static final double[] B = {2, 4, 6, 8, 10, 12};

    @Test
    void shapiroWilkMatchesScipy() {
        // scipy.stats.shapiro: n = 3 (exact formula), n = 12 (log-normal approximation), n = 20
        double[] r = ShapiroWilk.test(new double[] {2.1, 3.5, 1.0});
        assertEquals(0.9952229299363056, r[0], 1e-12);
        assertEquals(0.8678921677516707, r[1], 1e-12);
        r = ShapiroWilk.test(new double[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 30});
        assertEquals(0.732129826757183, r[0], 1e-12);
        assertEquals(0.0017500812993306624, r[1], 1e-14);
        double[] sq = new double[20];
        for (int i = 0; i < 20; i++) sq[i] = i * i;
        r = ShapiroWilk.test(sq);
        assertEquals(0.8949288620307665, r[0], 1e-12);
        assertEquals(0.03316539297687834, r[1], 1e-13);
        assertNull(ShapiroWilk.test(new double[] {1, 2}));
        assertNull(ShapiroWilk.test(new double[] {3, 3, 3, 3}));
    }

    @Test
    void holmByHand() {
        // p = .01, .04, .03, null: sorted .01*3 = .03, .03*2 = .06, .04*1 -> max(.06, .04) = .06
        List<Double> adj = Effects.holm(Arrays.asList(0.01, 0.04, 0.03, null));
        assertEquals(0.03, adj.get(0), 1e-15);
        assertEquals(0.06, adj.get(1), 1e-15);
        assertEquals(0.06, adj.get(2), 1e-15);
        assertNull(adj.get(3));
        assertEquals(1.0, Effects.holm(List.of(0.6, 0.7)).get(0), 1e-15);  // capped at 1
    }

    @Test
    void effectSizesByHand() {
        // means 3 and 7, variances 2.5 and 14, pooled var (4*2.5 + 5*14)/9 = 80/9
        assertEquals(4 / Math.sqrt(80.0 / 9), Effects.cohensD(A, B), 1e-12);
        // J(9) = Gamma(4.5) / (sqrt(4.5) Gamma(4)) = 0.9138748917925521 (Python math.gamma)
        assertEquals(0.9138748917925521 * 4 / Math.sqrt(80.0 / 9), Effects.hedgesG(A, B), 1e-12);
        // HL: median of the 30 differences b - a; C = round(15 - 1.96 sqrt(30 * 12 / 12)) = round(4.265) = 4
        double[] hl = Effects.hodgesLehmann(A, B, 0.95);
        assertEquals(4.0, hl[0], 1e-12);
        assertEquals(-1.0, hl[1], 1e-12);  // 4th smallest of the differences -3, -2, -1, -1, 0, ...
        assertEquals(9.0, hl[2], 1e-12);   // 4th largest: 11, 10, 9, 9
        Map<String, Object> t = Effects.tukey(new double[] {1, 2, 3, 4, 100});
        assertEquals(2.0, (double) t.get("q1"), 1e-12);
        assertEquals(4.0, (double) t.get("q3"), 1e-12);
        assertEquals(1, t.get("outliers_high"));
        assertEquals(0, t.get("outliers_low"));
    }

    @Test
    void tostAndMdeAgainstScipy() {
        // scipy.stats.ttest_ind(b + 5, a, equal_var=False, alternative='greater').pvalue etc.
        Map<String, Object> t = Effects.tost(A, B, 5.0, 0.05);
        assertEquals(0.000540879494661827, (double) t.get("p_lower"), 1e-14);
        assertEquals(0.2856086420118853, (double) t.get("p_upper"), 1e-12);
        assertEquals(Boolean.FALSE, t.get("equivalent"));
        // (t.ppf(0.975, df) + t.ppf(0.8, df)) * se, Welch df = 6.9723, se = sqrt(2.5/5 + 14/6)
        assertEquals(5.492096651708963, Effects.mde(A, B, 0.05, 0.8), 1e-9);
    }

    @Test
    void bootstrapIsDeterministicPerSeedAndCoversTheStatistic() {
        double[][] s = {A, B};
        Map<String, Object> r1 = Bootstrap.bca(s, m -> m[1] - m[0], 2000, 42, 0.95);
        Map<String, Object> r2 = Bootstrap.bca(s, m -> m[1] - m[0], 2000, 42, 0.95);
        Map<String, Object> r3 = Bootstrap.bca(s, m -> m[1] - m[0], 2000, 43, 0.95);
        assertEquals(r1, r2);
        assertNotEquals(r1.get("ci"), r3.get("ci"));
        @SuppressWarnings("unchecked") List<Double> ci = (List<Double>) r1.get("ci");
        assertTrue(ci.get(0) < 4 && 4 < ci.get(1), ci.toString());
        // an undefined statistic (recovery with no slowdown) gives no interval, never a wrong one
        Map<String, Object> u = Bootstrap.bca(s, m -> m[1] > 100 ? 1 : Double.NaN, 200, 1, 0.95);
        assertNull(u.get("ci"));
        assertEquals(200, u.get("undefined_resamples"));
        assertThrows(IllegalArgumentException.class, () -> Bootstrap.bca(s, m -> 0, 10, 1, 0.95));
    }

    @Test
    void mannWhitneyExactWithoutTiesTieCorrectedWith() {
        // scipy mannwhitneyu(b, a, method='exact') = 0.12554112554112554 (U = 24 of 30)
        Map<String, Object> m = TrialStats.mannWhitney(new double[] {1.5, 2.5, 3.5, 4.5, 5.5}, B);
        assertEquals("exact", m.get("mann_whitney_method"));
        assertEquals(24.0, (double) m.get("mann_whitney_u"), 1e-12);
        assertEquals(0.12554112554112554, (double) m.get("mann_whitney_p"), 1e-15);
        // 2 and 4 tied: the exact permutation p, scipy permutation_test over all 462 splits 0.07792207792207792
        // (the normal approximation, method='asymptotic', said 0.08143973230450288)
        m = TrialStats.mannWhitney(A, B);
        assertEquals(Boolean.TRUE, m.get("mann_whitney_ties"));
        assertEquals("exact permutation, midranks (ties)", m.get("mann_whitney_method"));
        assertEquals(0.07792207792207792, (double) m.get("mann_whitney_p"), 1e-12);
        // issue 48: two constant groups of 3 (10 ms against 20 ms): 2 / C(6, 3) = 0.1, not the normal 0.047
        m = TrialStats.mannWhitney(new double[] {0.010, 0.010, 0.010}, new double[] {0.020, 0.020, 0.020});
        assertEquals(0.1, (double) m.get("mann_whitney_p"), 1e-15);
        assertTrue(Double.isNaN(TrialStats.exactTiedP(new double[200], new double[200], 1_000)));
    }
}
