package org.qoslab.workload.matmul;

import java.util.SplittableRandom;

/**
 * Integer matrices of the matmul workload: deterministic from a seed, values 0..20 as in
 * reference 000 (section 3: "randomly generated integers with values ranging from 0 to 20"),
 * products in exact int arithmetic (no rounding: a distributed product must equal the sequential
 * one element for element, whatever order the sums were taken in), and the checksum.
 */
public final class Matrices {
    private Matrices() { }

    /** Largest order accepted: entries stay below 400 n, far from int overflow; memory decides. */
    public static final int MAX_N = 20000;

    /** The {@code n} x {@code n} matrix {@code which} (1 = A, 2 = B) of {@code seed}: entries 0..20. */
    public static int[][] random(int n, long seed, int which) {
        SplittableRandom r = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + which);
        int[][] m = new int[n][n];
        for (int[] row : m) for (int j = 0; j < n; j++) row[j] = r.nextInt(21);
        return m;
    }

    /** The sequential product (the classic triple loop, i-k-j order for the cache). */
    public static int[][] multiply(int[][] a, int[][] b) {
        int rows = a.length, inner = b.length, cols = inner == 0 ? 0 : b[0].length;
        int[][] c = new int[rows][cols];
        for (int i = 0; i < rows; i++) {
            int[] ci = c[i], ai = a[i];
            for (int k = 0; k < inner; k++) {
                int aik = ai[k];
                if (aik == 0) continue;
                int[] bk = b[k];
                for (int j = 0; j < cols; j++) ci[j] += aik * bk[j];
            }
        }
        return c;
    }

    /**
     * Position-weighted checksum: sum over all entries of C[i][j] * (i*n + j + 1), in 64-bit
     * arithmetic (wrapping). Unlike a plain sum it also changes when blocks land in the wrong place.
     */
    public static long checksum(int[][] c) {
        long sum = 0;
        int n = c.length;
        for (int i = 0; i < n; i++) {
            int[] row = c[i];
            long base = (long) i * row.length + 1;
            for (int j = 0; j < row.length; j++) sum += row[j] * (base + j);
        }
        return sum;
    }

    /** Cut {@code n} into {@code parts} consecutive lengths differing by at most one (the larger first). */
    public static int[] split(int n, int parts) {
        int[] len = new int[parts];
        for (int p = 0; p < parts; p++) len[p] = n / parts + (p < n % parts ? 1 : 0);
        return len;
    }

    /** Start offsets of the pieces of {@link #split}. */
    public static int[] starts(int[] lengths) {
        int[] s = new int[lengths.length];
        for (int p = 1; p < lengths.length; p++) s[p] = s[p - 1] + lengths[p - 1];
        return s;
    }

    /** Copy of the block rows [r0, r0+h) x columns [c0, c0+w). */
    public static int[][] block(int[][] m, int r0, int h, int c0, int w) {
        int[][] out = new int[h][];
        for (int i = 0; i < h; i++) out[i] = java.util.Arrays.copyOfRange(m[r0 + i], c0, c0 + w);
        return out;
    }

    /** Write {@code blk} into {@code m} at row r0, column c0. */
    public static void place(int[][] m, int[][] blk, int r0, int c0) {
        for (int i = 0; i < blk.length; i++) System.arraycopy(blk[i], 0, m[r0 + i], c0, blk[i].length);
    }

    /** Smallest q with q*q >= k: the side of the square grid of MCA tiles for k workers. */
    public static int gridSide(int k) {
        int q = (int) Math.sqrt(k);
        while (q * q < k) q++;
        return Math.max(1, q);
    }
}
