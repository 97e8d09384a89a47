package org.qoslab.workload.rmi;

import java.io.Externalizable;
import java.io.IOException;
import java.io.ObjectInput;
import java.io.ObjectOutput;

/**
 * The "externalizable" codec: the same fields written by hand (counts, then raw ints), no
 * per-field type information (the comparison of reference 000: Serializable vs Externalizable).
 */
public final class ExternalizableRowBlock extends RowBlock implements Externalizable {
    private static final long serialVersionUID = 1L;

    public ExternalizableRowBlock() { }

    public ExternalizableRowBlock(int[] rows, int[] pixels, long checksum, long busyNanos) {
        super(rows, pixels, checksum, busyNanos);
    }

    @Override
    public void writeExternal(ObjectOutput out) throws IOException {
        out.writeLong(checksum);
        out.writeLong(busyNanos);
        out.writeInt(rows.length);
        for (int r : rows) out.writeInt(r);
        out.writeInt(pixels.length);
        for (int p : pixels) out.writeInt(p);
    }

    @Override
    public void readExternal(ObjectInput in) throws IOException {
        checksum = in.readLong();
        busyNanos = in.readLong();
        int n = in.readInt();
        if (n < 0 || n > 1 << 20) throw new IOException("bad row count " + n);
        rows = new int[n];
        for (int i = 0; i < n; i++) rows[i] = in.readInt();
        int m = in.readInt();
        if (m < 0 || m > 1 << 28) throw new IOException("bad pixel count " + m);
        pixels = new int[m];
        for (int i = 0; i < m; i++) pixels[i] = in.readInt();
    }
}
