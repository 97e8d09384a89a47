package org.qoslab.workload.matmul;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;

/** Length-prefixed messages on a buffered TCP stream (the {@code socket} mechanism). */
final class Frames {
    private Frames() { }

    static final int MAX_FRAME = 1 << 30;

    static void write(DataOutputStream out, byte[] msg) throws IOException {
        out.writeInt(msg.length);
        out.write(msg);
        out.flush();
    }

    /** The next message, or null at a clean end of stream (between messages). */
    static byte[] read(DataInputStream in) throws IOException {
        int len;
        try {
            len = in.readInt();
        } catch (EOFException e) {
            return null;
        }
        if (len < 1 || len > MAX_FRAME) throw new IOException("bad frame length " + len);
        byte[] b = new byte[len];
        in.readFully(b);
        return b;
    }
}
