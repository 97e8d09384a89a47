package org.qoslab.workload.matmul;

import java.io.Serializable;

/**
 * The unit of data that moves between manager and workers (after reference 000's
 * {@code MultiplyDataNode}: two integer matrices and a few integers), in Java's default
 * serialization: this class is the {@code rmi-serializable} mechanism's payload;
 * {@link ExternalMatrixNode} carries the same fields for {@code rmi-externalizable}, and
 * {@link Wire} encodes them for {@code socket} and {@code datagram}.
 *
 * <p>Meaning of the fields by use:
 * <ul>
 * <li>SPA request: {@code a} = a band of rows of A, {@code b} = all of B, {@code step} = the band's
 *     first row; reply: {@code a} = the band of C.</li>
 * <li>MCA request: {@code a} = the tile's pre-skewed A block, {@code b} = its B block (with a
 *     {@link TilePlan}); reply: {@code a} = the tile's C block.</li>
 * <li>Push (worker to worker): {@code kind} {@link #A_COLUMN} or {@link #B_ROW}, {@code a[0]} = the
 *     column or row, {@code step} = the step it was sent after, {@code tile} = destination tile.</li>
 * <li>Replies also carry {@code computeNanos} (multiplication), {@code exchangeNanos} (pushes
 *     sent and waits for the neighbours' strips), {@code pushes} (messages sent to neighbours) and
 *     {@code retransmits} (datagram retransmissions on the worker while the task ran).</li>
 * </ul>
 */
public class MatrixNode implements Serializable {
    private static final long serialVersionUID = 1L;
    public static final int A_COLUMN = 0, B_ROW = 1;

    public long job;
    public int tile, step, kind;
    public int[][] a, b;
    public long computeNanos, exchangeNanos, retransmits;
    public int pushes;

    public MatrixNode() { }

    /** A new, empty node of the mechanism's class: {@link ExternalMatrixNode} when {@code externalizable}. */
    public static MatrixNode create(boolean externalizable) {
        return externalizable ? new ExternalMatrixNode() : new MatrixNode();
    }

    public boolean externalizable() { return false; }

    MatrixNode with(long job, int tile, int step, int kind, int[][] a, int[][] b) {
        this.job = job; this.tile = tile; this.step = step; this.kind = kind; this.a = a; this.b = b;
        return this;
    }
}
