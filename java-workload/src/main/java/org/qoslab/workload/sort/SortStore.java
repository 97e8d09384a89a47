package org.qoslab.workload.sort;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** A sort server's parts by session, shared by the RMI and CORBA servants (the socket mechanism keeps its part per connection). */
public final class SortStore {
    private final Map<Long, int[]> parts = new ConcurrentHashMap<>();

    /** Keep a part (replaces an earlier one of the same session). */
    public void put(long session, int[] part) {
        parts.put(session, part);
    }

    /** Sort the session's part in place; the sort's duration in nanoseconds. */
    public long sort(long session) {
        int[] part = require(session);
        long t0 = System.nanoTime();
        Arrays.sort(part);
        return System.nanoTime() - t0;
    }

    /** The session's part, removed from the store. */
    public int[] take(long session) {
        int[] part = require(session);
        parts.remove(session);
        return part;
    }

    /** Parts held now (sessions not yet collected). */
    public int size() {
        return parts.size();
    }

    private int[] require(long session) {
        int[] part = parts.get(session);
        if (part == null) throw new IllegalStateException("no part for session " + Long.toHexString(session));
        return part;
    }
}
