package org.qoslab.workload.matmul;

import java.io.Externalizable;
import java.io.IOException;
import java.io.ObjectInput;
import java.io.ObjectOutput;

/**
 * {@link MatrixNode} for the {@code rmi-externalizable} mechanism: the fields written by hand
 * (reference 000, Fig. 5.2: the programmer forwards the matrices' sizes, then the entries), no
 * class descriptions of the int arrays, no per-row object handles.
 */
public final class ExternalMatrixNode extends MatrixNode implements Externalizable {
    private static final long serialVersionUID = 1L;

    public ExternalMatrixNode() { }

    @Override public boolean externalizable() { return true; }

    @Override
    public void writeExternal(ObjectOutput out) throws IOException {
        out.writeLong(job);
        out.writeInt(tile);
        out.writeInt(step);
        out.writeInt(kind);
        out.writeLong(computeNanos);
        out.writeLong(exchangeNanos);
        out.writeLong(retransmits);
        out.writeInt(pushes);
        writeMatrix(out, a);
        writeMatrix(out, b);
    }

    @Override
    public void readExternal(ObjectInput in) throws IOException {
        job = in.readLong();
        tile = in.readInt();
        step = in.readInt();
        kind = in.readInt();
        computeNanos = in.readLong();
        exchangeNanos = in.readLong();
        retransmits = in.readLong();
        pushes = in.readInt();
        a = readMatrix(in);
        b = readMatrix(in);
    }

    private static void writeMatrix(ObjectOutput out, int[][] m) throws IOException {
        if (m == null) { out.writeInt(-1); return; }
        int cols = m.length == 0 ? 0 : m[0].length;
        out.writeInt(m.length);
        out.writeInt(cols);
        for (int[] row : m) {
            if (row.length != cols) throw new IOException("ragged matrix");
            for (int v : row) out.writeInt(v);
        }
    }

    private static int[][] readMatrix(ObjectInput in) throws IOException {
        int rows = in.readInt();
        if (rows < 0) return null;
        int cols = in.readInt();
        if (cols < 0 || (long) rows * cols > Wire.MAX_ENTRIES) throw new IOException("bad matrix " + rows + "x" + cols);
        int[][] m = new int[rows][cols];
        for (int[] row : m) for (int j = 0; j < cols; j++) row[j] = in.readInt();
        return m;
    }
}
