package org.qoslab.analysis;

import java.util.Arrays;

/**
 * The Shapiro-Wilk test of normality by Royston's algorithm: P. Royston (1995), "Remark AS R94: A
 * remark on Algorithm AS 181: The W-test for normality", Applied Statistics 44(4), 547-551. The
 * coefficients, the polynomial approximations of the null distribution of log(1 - W) and the helper
 * approximations (normal quantiles by AS 111, Beasley and Springer 1977; normal tail areas by AS 66,
 * Hill 1973) are those of the published algorithm, which is also what scipy.stats.shapiro computes,
 * so the two agree to rounding. Uncensored samples only; 3 <= n (p-values beyond n = 5000 are not
 * accurate, as the algorithm says).
 */
public final class ShapiroWilk {
    private ShapiroWilk() { }

    // AS R94 polynomial coefficients (constant term first)
    private static final double[] C1 = {0.0, 0.221157, -0.147981, -2.071190, 4.434685, -2.706056};
    private static final double[] C2 = {0.0, 0.042981, -0.293762, -1.752461, 5.682633, -3.582633};
    private static final double[] C3 = {0.5440, -0.39978, 0.025054, -6.714e-4};
    private static final double[] C4 = {1.3822, -0.77857, 0.062767, -0.0020322};
    private static final double[] C5 = {-1.5861, -0.31082, -0.083751, 0.0038915};
    private static final double[] C6 = {-0.4803, -0.082676, 0.0030302};
    private static final double[] G = {-2.273, 0.459};
    /** The p-value AS R94 returns when W is beyond its small-sample approximation (n <= 11). */
    static final double SMALL = 1e-19;

    /**
     * W and its p-value (upper tail of the normalised log(1 - W)) for the sample {@code x} (any order).
     *
     * @return {W, p}; null when n < 3 or all values are equal (W is undefined)
     */
    public static double[] test(double[] x) {
        int n = x.length;
        if (n < 3) return null;
        double[] y = x.clone();
        Arrays.sort(y);
        double range = y[n - 1] - y[0];
        if (range < SMALL) return null;
        double[] a = coefficients(n);
        // W as 1 - w1 in Royston's cancellation-free form, on data scaled by the range
        double sa = 0, sx = 0;
        for (int i = 0; i < n; i++) {
            sa += a[i];
            sx += y[i] / range;
        }
        sa /= n;
        sx /= n;
        double ssa = 0, ssx = 0, sax = 0;
        for (int i = 0; i < n; i++) {
            double asa = a[i] - sa, xsx = y[i] / range - sx;
            ssa += asa * asa;
            ssx += xsx * xsx;
            sax += asa * xsx;
        }
        double ssassx = Math.sqrt(ssa * ssx);
        double w1 = (ssassx - sax) * (ssassx + sax) / (ssa * ssx);
        double w = 1 - w1;
        if (n == 3) {   // exact: p = 1 - (6 / pi) acos(sqrt(W)), W >= 3/4
            return w < 0.75 ? new double[] {0.75, 0.0} : new double[] {w, 1 - 6 / Math.PI * Math.acos(Math.sqrt(w))};
        }
        double yv = Math.log(w1), m, s;
        if (n <= 11) {
            double gamma = poly(G, n);
            if (yv >= gamma) return new double[] {w, SMALL};
            yv = -Math.log(gamma - yv);
            m = poly(C3, n);
            s = Math.exp(poly(C4, n));
        } else {
            double ln = Math.log(n);
            m = poly(C5, ln);
            s = Math.exp(poly(C6, ln));
        }
        return new double[] {w, upperTail((yv - m) / s)};
    }

    /** The n antisymmetric AS R94 coefficients, lowest order statistic first (negative), middle 0 for odd n. */
    static double[] coefficients(int n) {
        int half = n / 2;
        double[] m = new double[half];
        if (n == 3) {
            m[0] = Math.sqrt(0.5);
        } else {
            double summ2 = 0;
            for (int i = 0; i < half; i++) {
                m[i] = ppnd((i + 1 - 0.375) / (n + 0.25));   // Blom scores
                summ2 += m[i] * m[i];
            }
            summ2 *= 2;
            double ssumm2 = Math.sqrt(summ2), rsn = 1 / Math.sqrt(n);
            double a1 = poly(C1, rsn) - m[0] / ssumm2;
            int first;
            double fac;
            if (n > 5) {
                double a2 = -m[1] / ssumm2 + poly(C2, rsn);
                fac = Math.sqrt((summ2 - 2 * m[0] * m[0] - 2 * m[1] * m[1]) / (1 - 2 * a1 * a1 - 2 * a2 * a2));
                m[1] = a2;
                first = 2;
            } else {
                fac = Math.sqrt((summ2 - 2 * m[0] * m[0]) / (1 - 2 * a1 * a1));
                first = 1;
            }
            m[0] = a1;
            for (int i = first; i < half; i++) m[i] = -m[i] / fac;
        }
        // m[i] > 0 is the weight of the (n-1-i)-th order statistic; the i-th gets -m[i]
        double[] a = new double[n];
        for (int i = 0; i < half; i++) {
            a[i] = -m[i];
            a[n - 1 - i] = m[i];
        }
        return a;
    }

    /** c[0] + c[1] x + c[2] x^2 + ... */
    static double poly(double[] c, double x) {
        double r = 0;
        for (int i = c.length - 1; i >= 0; i--) r = r * x + c[i];
        return r;
    }

    /** Normal quantile, AS 111 (Beasley and Springer 1977): about 7 digits, as AS R94 uses it. */
    static double ppnd(double p) {
        double q = p - 0.5;
        if (Math.abs(q) <= 0.42) {
            double r = q * q;
            return q * (((-25.44106049637 * r + 41.39119773534) * r - 18.61500062529) * r + 2.50662823884)
                    / ((((3.13082909833 * r - 21.06224101826) * r + 23.08336743743) * r - 8.47351093090) * r + 1);
        }
        double r = q > 0 ? 1 - p : p;
        if (r <= 0) return 0;
        r = Math.sqrt(-Math.log(r));
        double v = (((2.32121276858 * r + 4.85014127135) * r - 2.29796479134) * r - 2.78718931138)
                / ((1.63706781897 * r + 3.54388924762) * r + 1);
        return q < 0 ? -v : v;
    }

    /** Upper normal tail area from z, AS 66 (Hill 1973) with the extended upper range of its 2001 revision. */
    static double upperTail(double z) {
        boolean upper = true;
        if (!(z > 0)) {
            upper = false;
            z = -z;
        }
        if (!(z <= 7 || (upper && z <= 38))) return upper ? 0 : 1;
        double y = 0.5 * z * z, t;
        if (z <= 1.28) {
            t = 0.5 - z * (0.398942280444 - 0.399903438504 * y
                    / (y + 5.75885480458 - 29.8213557808 / (y + 2.62433121679 + 48.6959930692 / (y + 5.92885724438))));
        } else {
            t = 0.398942280385 * Math.exp(-y) / (z - 3.8052e-8 + 1.00000615302 / (z + 3.98064794e-4 + 1.98615381364
                    / (z - 0.151679116635 + 5.29330324926 / (z + 4.8385912808 - 15.1508972451
                    / (z + 0.742380924027 + 30.789933034 / (z + 3.99019417011))))));
        }
        return upper ? t : 1 - t;
    }
}
