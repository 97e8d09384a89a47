package org.qoslab.workload;

/** A run failed for a reason the user must see (unreachable or dead worker, timeout, bad option). */
public final class WorkloadException extends Exception {
    private static final long serialVersionUID = 1L;

    public WorkloadException(String message) { super(message); }

    public WorkloadException(String message, Throwable cause) { super(message, cause); }
}
