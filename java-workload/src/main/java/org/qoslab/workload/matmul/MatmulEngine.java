package org.qoslab.workload.matmul;

import java.util.ArrayDeque;
import java.util.concurrent.TimeoutException;

/**
 * The worker's computations, whatever the mechanism: SPA (a band of A times all of B) and one MCA
 * tile (the modified Cannon's algorithm of reference 000, section 2.4.3). The mechanism supplies
 * a {@link Pusher} that sends a strip to a neighbour; strips from neighbours arrive through
 * {@link #deliver}.
 *
 * <p>MCA, as the paper describes and counts it: k tiles on a q x q grid (q*q = k for the paper's
 * k = 4). The manager pre-skews: tile (i, j) holds the window of indices
 * K = segment (i + j) mod q of 0..n-1: the A block (rows of band i, columns K) and the B block
 * (rows K, columns of band j). Each of the n steps multiplies the window's first column of A by
 * its first row of B into the tile's C block (a rank-1 update: the paper's "multiplication by
 * element"); then, n - 1 times, the tile sends that column to its left neighbour and that row to
 * its upper neighbour, and receives a new column from its right neighbour and a new row from the
 * one below, which it appends to its window. Every tile thus sees all n indices once; it makes
 * 2 (n - 1) pushes, and with one request and one reply per tile the run makes
 * 2k + 2k(n - 1) calls (the paper's Table 2.1: 4000 for k = 4, n = 500).
 */
public final class MatmulEngine {
    /** Sends one strip (a column of A to the left neighbour, or a row of B to the upper one). */
    public interface Pusher {
        void push(TilePlan plan, MatrixNode strip) throws Exception;
    }

    final Mailbox mailbox = new Mailbox();

    /** Accept a strip pushed by a neighbour. */
    public void deliver(MatrixNode strip) { mailbox.put(strip); }

    /** Strips waiting for their tile (0 after clean runs). */
    public int pending() { return mailbox.size(); }

    /** SPA: the band of C = {@code task.a} (rows of A) x {@code task.b} (all of B). */
    public MatrixNode spa(MatrixNode task) {
        if (task.a == null || task.b == null) throw new IllegalArgumentException("SPA task without matrices");
        int n = task.b.length;
        for (int[] row : task.a)
            if (row.length != n) throw new IllegalArgumentException("A band has " + row.length + " columns, B has " + n + " rows");
        long t0 = System.nanoTime();
        int[][] c = Matrices.multiply(task.a, task.b);
        MatrixNode r = MatrixNode.create(task.externalizable()).with(task.job, task.tile, task.step, 0, c, null);
        r.computeNanos = System.nanoTime() - t0;
        return r;
    }

    /** MCA: run one tile to the end and return its C block. */
    public MatrixNode mca(TilePlan p, MatrixNode blocks, Pusher pusher) throws Exception {
        check(p, blocks);
        long t0 = System.nanoTime(), exchange = 0, timeout = p.timeoutMs * 1_000_000L;
        ArrayDeque<int[]> aWin = new ArrayDeque<>(p.len + 1), bWin = new ArrayDeque<>(p.len + 1);
        for (int k = 0; k < p.len; k++) {
            int[] col = new int[p.h];
            for (int r = 0; r < p.h; r++) col[r] = blocks.a[r][k];
            aWin.add(col);
            bWin.add(blocks.b[k]);
        }
        int[][] c = new int[p.h][p.w];
        int pushes = 0;
        for (int step = 0; step < p.n; step++) {
            int[] col = aWin.poll(), row = bWin.poll();
            for (int r = 0; r < p.h; r++) {
                int ar = col[r];
                if (ar == 0) continue;
                int[] cr = c[r];
                for (int x = 0; x < p.w; x++) cr[x] += ar * row[x];
            }
            if (step == p.n - 1) break;
            long e0 = System.nanoTime();
            pusher.push(p, MatrixNode.create(p.externalizable).with(blocks.job, p.leftTile, step, MatrixNode.A_COLUMN,
                    new int[][] {col}, null));
            pusher.push(p, MatrixNode.create(p.externalizable).with(blocks.job, p.upTile, step, MatrixNode.B_ROW,
                    new int[][] {row}, null));
            pushes += 2;
            try {
                aWin.add(mailbox.take(blocks.job, p.tileId, MatrixNode.A_COLUMN, step, timeout));
                bWin.add(mailbox.take(blocks.job, p.tileId, MatrixNode.B_ROW, step, timeout));
            } catch (TimeoutException e) {
                throw new TimeoutException(p + ": no strip from a neighbour for step " + step + " within "
                        + p.timeoutMs + " ms");
            }
            exchange += System.nanoTime() - e0;
        }
        long total = System.nanoTime() - t0;
        MatrixNode r = MatrixNode.create(blocks.externalizable()).with(blocks.job, p.tileId, 0, 0, c, null);
        r.exchangeNanos = exchange;
        r.computeNanos = total - exchange;
        r.pushes = pushes;
        return r;
    }

    private static void check(TilePlan p, MatrixNode blocks) {
        if (p.n < 1 || p.h < 0 || p.w < 0 || p.len < 1 || p.len > p.n || p.timeoutMs < 1)
            throw new IllegalArgumentException("bad tile plan: " + p);
        if (blocks.a == null || blocks.a.length != p.h || blocks.b == null || blocks.b.length != p.len)
            throw new IllegalArgumentException(p + ": blocks do not match the plan");
        for (int[] r : blocks.a) if (r.length != p.len) throw new IllegalArgumentException(p + ": A block is not h x len");
        for (int[] r : blocks.b) if (r.length != p.w) throw new IllegalArgumentException(p + ": B block is not len x w");
    }
}
