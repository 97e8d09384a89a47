package org.qoslab.workload;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code --go-file}: the manager's JVM starts (class loading, option parsing) while the harness
 * is still preparing the trial (a campaign starts and settles its flood meanwhile), and the run
 * itself begins only when the file appears. The time spent waiting is reported as
 * {@code go_wait_s} in the result line, so the harness can tell its own cost from the workload's.
 * A file whose content starts with {@code abort} ends the manager without a run.
 *
 * <p>When it starts to wait it creates {@code FILE.ready} (empty; best effort): the harness can
 * tell that the JVM has booted. On the embedded testbed with a CPU model the manager boots outside
 * its host's CPU budget and the harness moves it into the budget when the file appears, before the
 * go (qoslab.workloads.gate, issue 53): a JVM's boot at a fraction of a core is not the workload.
 */
public final class GoGate {
    /** Seconds between two looks for the file (0.5 ms: the wait ends at most this late). */
    static final long POLL_NANOS = 500_000L;

    private GoGate() {}

    /**
     * Wait until {@code file} exists; returns the seconds waited.
     *
     * @throws IllegalStateException when it has not appeared within {@code timeoutS} seconds, or
     *     the harness wrote {@code abort} into it
     */
    public static double await(Path file, double timeoutS) {
        long t0 = System.nanoTime();
        try {
            Files.write(file.resolveSibling(file.getFileName() + ".ready"), new byte[0]); // made or emptied
        } catch (IOException | UnsupportedOperationException e) {
            // no marker: the harness then gives the go without waiting for the boot (as before)
        }
        long deadline = t0 + (long) (timeoutS * 1e9);
        while (!Files.exists(file)) {
            if (System.nanoTime() > deadline)
                throw new IllegalStateException("--go-file " + file + " did not appear within " + timeoutS + " s");
            LockSupport.parkNanos(POLL_NANOS);
        }
        double waited = (System.nanoTime() - t0) / 1e9;
        String content;
        try {
            content = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            content = ""; // removed again at once: it appeared, which is the signal
        }
        if (content.startsWith("abort"))
            throw new IllegalStateException("aborted by the harness before the run (--go-file " + file + ")");
        return waited;
    }
}
