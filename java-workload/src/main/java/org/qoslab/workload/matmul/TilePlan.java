package org.qoslab.workload.matmul;

import java.io.Serializable;

/**
 * What one MCA tile must know besides its blocks: the problem order {@code n}, its place
 * ({@code i}, {@code j}) in the {@code q} x {@code q} grid and its id, the shape of its C block
 * ({@code h} x {@code w}) and of its window ({@code len} columns of A = rows of B), and where its
 * left and upper neighbours are (tile id, host, port of this run's mechanism on that worker).
 * {@code externalizable} picks the class of RMI pushes; {@code timeoutMs} bounds every wait for
 * a neighbour's strip and every send.
 */
public final class TilePlan implements Serializable {
    private static final long serialVersionUID = 1L;

    public int n, q, i, j, tileId, h, w, len;
    public int leftTile, upTile;
    public String leftHost, upHost;
    public int leftPort, upPort;
    public boolean externalizable;
    public long timeoutMs;

    @Override public String toString() {
        return "tile " + tileId + " (" + i + "," + j + ") of " + q + "x" + q + ", n " + n;
    }
}
