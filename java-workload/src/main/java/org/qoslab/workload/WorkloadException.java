package org.qoslab.workload;

/**
 * A run failed for a reason the user must see (unreachable or dead worker, timeout, bad option).
 *
 * <p>A failure in the render phase also carries {@link #renderElapsedS()} (seconds from the start of
 * the render to the failure; NaN before it) and {@link #callTimeout()} (a render call got no reply
 * within the call timeout). Such a run's render time is right-censored: it is at least
 * {@code renderElapsedS}; the campaign's statistics use that bound in their censoring sensitivity.
 */
public final class WorkloadException extends Exception {
    private static final long serialVersionUID = 1L;
    private final double renderElapsedS;
    private final boolean callTimeout;

    public WorkloadException(String message) { this(message, null); }

    public WorkloadException(String message, Throwable cause) { this(message, cause, Double.NaN, false); }

    /** A render-phase failure after {@code renderElapsedS} seconds; {@code callTimeout} when a call got no reply in time. */
    public WorkloadException(String message, Throwable cause, double renderElapsedS, boolean callTimeout) {
        super(message, cause);
        this.renderElapsedS = renderElapsedS;
        this.callTimeout = callTimeout;
    }

    /** Seconds from the start of the render phase to the failure, NaN when it failed before the render. */
    public double renderElapsedS() { return renderElapsedS; }

    /** True when a render call got no reply within the call timeout (the render time is censored). */
    public boolean callTimeout() { return callTimeout; }

    /** The innermost cause's class and message, e.g. "ConnectException: Connection refused" (for messages to the user). */
    public static String rootMessage(Throwable t) {
        Throwable r = t;
        while (r.getCause() != null && r.getCause() != r) r = r.getCause();
        String msg = r.getMessage();
        return r.getClass().getSimpleName() + (msg == null ? "" : ": " + msg);
    }
}
