package org.qoslab.workload.rmi;

import java.io.Serializable;

/**
 * Rendered rows as returned by a worker, in Java's default serialization (the "serializable"
 * codec): {@code rows} (row indices), {@code pixels} (rows.length x width ARGB ints),
 * {@code checksum} (sum of R+G+B over these pixels), {@code busyNanos} (worker render time).
 */
public class RowBlock implements Serializable {
    private static final long serialVersionUID = 1L;
    public int[] rows;
    public int[] pixels;
    public long checksum;
    public long busyNanos;

    public RowBlock() { }

    public RowBlock(int[] rows, int[] pixels, long checksum, long busyNanos) {
        this.rows = rows; this.pixels = pixels; this.checksum = checksum; this.busyNanos = busyNanos;
    }

    /** A block in the requested codec: "serializable" or "externalizable". */
    public static RowBlock of(String codec, int[] rows, int[] pixels, long checksum, long busyNanos) {
        switch (codec) {
            case "serializable": return new RowBlock(rows, pixels, checksum, busyNanos);
            case "externalizable": return new ExternalizableRowBlock(rows, pixels, checksum, busyNanos);
            default: throw new IllegalArgumentException("unknown codec " + codec + " (serializable|externalizable)");
        }
    }
}
