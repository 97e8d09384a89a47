package org.qoslab.capture;

/**
 * A call matcher met more calls waiting for their replies at once than its limit
 * ({@code --max-open-calls}): a pathological stream (millions of requests never answered) would
 * otherwise fill the tool's heap. The message names the limit, where it was met and the option that
 * raises it. Unchecked: it leaves the packet loop, and the file's row (or the live capture) fails with it.
 */
public final class CallLimitException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Default of {@code --max-open-calls}: calls waiting for replies at once per matcher (about 200 bytes of heap each). */
    public static final int DEFAULT_MAX_OPEN = 100_000;

    /**
     * @param what what was counted ("GIOP requests", "MPJ messages")
     * @param limit the limit met
     * @param where the connection and frame at which it was met
     */
    public CallLimitException(String what, int limit, String where) {
        super("more than " + limit + " " + what + " wait for their replies at once (" + where + "): a pathological "
                + "stream, stopped before it fills the heap; --max-open-calls N raises the limit (about 200 bytes each)");
    }
}
