package org.qoslab.workload;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.qoslab.common.Json;
import org.qoslab.workload.rmi.MarkingSocketFactory;

/**
 * The manager's own view of every remote call: start and end on the monotonic clock
 * ({@link System#nanoTime}), turned into wall-clock ns since the epoch through one anchor (a
 * wall-clock reading taken between two monotonic readings, the tightest of several), so they can be
 * set beside capture timestamps. Thread-safe.
 */
public final class CallLog {
    /** Monotonic time of the anchor (ns) and the wall clock at that moment (ns since the epoch). */
    public final long anchorMono, anchorWall;
    /** Half the width of the tightest bracket around the anchor's wall-clock reading (ns). */
    public final long anchorUncertaintyNs;
    private final List<Map<String, Object>> records = new ArrayList<>();

    public CallLog() {
        long bestWidth = Long.MAX_VALUE, mono = 0, wall = 0;
        for (int i = 0; i < 16; i++) {
            long n0 = System.nanoTime();
            Instant w = Instant.now();
            long n1 = System.nanoTime();
            if (n1 - n0 < bestWidth) {
                bestWidth = n1 - n0;
                mono = n0 + (n1 - n0) / 2;
                wall = w.getEpochSecond() * 1_000_000_000L + w.getNano();
            }
        }
        anchorMono = mono;
        anchorWall = wall;
        anchorUncertaintyNs = (bestWidth + 1) / 2;
    }

    /** Wall-clock ns since the epoch of a {@link System#nanoTime} reading. */
    public long wall(long mono) { return anchorWall + (mono - anchorMono); }

    /** A call in progress: its start, and the calling thread's socket byte counts at that moment. */
    public static final class Pending {
        final long start;
        final long sent, received;

        Pending() {
            long[] b = MarkingSocketFactory.THREAD_BYTES.get();
            sent = b[0];
            received = b[1];
            start = System.nanoTime();
        }
    }

    /** Start timing a call (on the thread that makes it). */
    public Pending begin() { return new Pending(); }

    /**
     * The call that {@code p} started has returned (or failed with {@code error}).
     *
     * @param frame frame number (-1 for set-up calls), {@code index} the call's number for this worker
     */
    public void end(Pending p, String worker, String address, String method, int frame, int index, int rows, String error) {
        long end = System.nanoTime();
        long[] b = MarkingSocketFactory.THREAD_BYTES.get();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("worker", worker);
        m.put("address", address);
        m.put("method", method);
        m.put("frame", frame < 0 ? null : (Object) frame);
        m.put("index", index);
        m.put("rows", rows < 0 ? null : (Object) rows);
        m.put("start_ns_wall", wall(p.start));
        m.put("end_ns_wall", wall(end));
        m.put("latency_ms", (end - p.start) / 1e6);
        m.put("request_bytes", b[0] - p.sent);
        m.put("reply_bytes", b[1] - p.received);
        m.put("ok", error == null);
        m.put("error", error);
        m.put("start_ns_mono", p.start);
        m.put("anchor_uncertainty_ns", anchorUncertaintyNs);
        synchronized (records) {
            records.add(m);
        }
    }

    public int size() {
        synchronized (records) {
            return records.size();
        }
    }

    /** The records, ordered by start time. */
    public List<Map<String, Object>> records() {
        List<Map<String, Object>> out;
        synchronized (records) {
            out = new ArrayList<>(records);
        }
        out.sort((a, b) -> Long.compare((Long) a.get("start_ns_wall"), (Long) b.get("start_ns_wall")));
        return out;
    }

    /** Write one JSON line per call, ordered by start. */
    public void write(Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) Files.createDirectories(parent);
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file))) {
            for (Map<String, Object> r : records()) w.println(Json.write(r));
        }
    }
}
