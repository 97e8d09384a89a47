package org.qoslab.workload.matmul;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Strips pushed to a worker's tiles, by (job, tile, kind, step): a strip may arrive before its
 * tile starts (a neighbour ran ahead) or before the tile asks for it; whichever comes first waits.
 */
final class Mailbox {
    private record Key(long job, int tile, int kind, int step) { }

    private final ConcurrentHashMap<Key, CompletableFuture<int[]>> slots = new ConcurrentHashMap<>();

    void put(MatrixNode strip) {
        if (strip.a == null || strip.a.length != 1) throw new IllegalArgumentException("a push carries exactly one strip");
        slots.computeIfAbsent(new Key(strip.job, strip.tile, strip.kind, strip.step), k -> new CompletableFuture<>())
                .complete(strip.a[0]);
    }

    int[] take(long job, int tile, int kind, int step, long timeoutNanos) throws TimeoutException, InterruptedException {
        Key k = new Key(job, tile, kind, step);
        CompletableFuture<int[]> f = slots.computeIfAbsent(k, x -> new CompletableFuture<>());
        try {
            return f.get(Math.max(1, timeoutNanos), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } finally {
            slots.remove(k);
        }
    }

    /** Strips waiting (tests: nothing is left behind after a run). */
    int size() { return slots.size(); }
}
