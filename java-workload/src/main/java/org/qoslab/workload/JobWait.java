package org.qoslab.workload;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** How the manager waits for its per-worker jobs: one at a time, or all of them in the order they end. */
final class JobWait {
    private JobWait() { }

    /**
     * The result of worker {@code who}'s job {@code f}, waiting at most {@code timeoutS} seconds.
     * Throws WorkloadException naming the worker and {@code what}: "did not finish within T s" (the
     * job is cancelled), "failed: " and the root cause's message, or an interrupt.
     */
    static <T> T await(Future<T> f, Manager.Endpoint who, String what, double timeoutS) throws WorkloadException {
        try {
            return f.get((long) Math.ceil(timeoutS * 1000), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw new WorkloadException("worker " + who + ": " + what + " did not finish within " + timeoutS + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new WorkloadException("interrupted while waiting for worker " + who);
        } catch (ExecutionException e) {
            throw new WorkloadException("worker " + who + ": " + what + " failed: "
                    + WorkloadException.rootMessage(e.getCause()), e.getCause());
        }
    }

    /**
     * Wait for every job, in the order they end: job {@code w} (worker {@code who.get(w)}) puts
     * {@code w} into {@code ended} when it returns or throws, and has {@code budgetS[w]} seconds from
     * {@code t0} ({@link System#nanoTime()}). The first job that fails ends the wait at once, naming
     * its worker (a dead worker is named at its failed call, not after the other workers' jobs: the
     * manager had waited for them in worker order, issue 53); a job still running at the end of its
     * budget is cancelled and "did not finish within" its budget. Throws WorkloadException as
     * {@link #await}.
     */
    static void all(List<? extends Future<?>> jobs, BlockingQueue<Integer> ended, List<Manager.Endpoint> who,
                    String what, double[] budgetS, long t0) throws WorkloadException {
        int n = jobs.size();
        long[] deadline = new long[n];
        for (int w = 0; w < n; w++) deadline[w] = t0 + (long) Math.ceil(budgetS[w] * 1e9);
        boolean[] done = new boolean[n];
        for (int left = n; left > 0; left--) {
            int first = -1;  // the running job whose budget ends first
            for (int w = 0; w < n; w++) if (!done[w] && (first < 0 || deadline[w] < deadline[first])) first = w;
            Integer w;
            try {
                w = ended.poll(Math.max(0, deadline[first] - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new WorkloadException("interrupted while waiting for worker " + who.get(first));
            }
            if (w == null) {  // its budget ended before it did
                jobs.get(first).cancel(true);
                throw new WorkloadException("worker " + who.get(first) + ": " + what + " did not finish within "
                        + budgetS[first] + " s");
            }
            done[w] = true;
            await(jobs.get(w), who.get(w), what, budgetS[w]);  // it ended: its failure, if any
        }
    }
}
