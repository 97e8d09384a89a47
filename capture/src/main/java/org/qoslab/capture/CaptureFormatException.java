package org.qoslab.capture;

/** A capture file that cannot be read: the message names the file, the byte offset and the problem. */
public final class CaptureFormatException extends Exception {
    private static final long serialVersionUID = 1L;

    public CaptureFormatException(String message) { super(message); }
}
