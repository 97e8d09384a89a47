/* An OSU-style MPI micro-benchmark for qoslab's `mpi` workload (examples/mpi-osu/README.md):
 * per operation (ping-pong between ranks 0 and 1, allreduce and barrier over all ranks) it times
 * --iters operations after --warmup untimed ones, each on rank 0, and prints ONE JSON line on
 * stdout (the qoslab result contract): elapsed_s (wall seconds of the whole run), valid, and per
 * operation its p50, p99 and max latency in milliseconds, declared in `metrics` (the primary one:
 * --primary, default allreduce_p99_ms). Build: mpicc -O2 -o osu-qoslab osu_qoslab.c */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(double *v, int n, double q) { /* type-7 quantile of sorted v */
    double h = (n - 1) * q;
    int lo = (int)h;
    return lo + 1 < n ? v[lo] + (h - lo) * (v[lo + 1] - v[lo]) : v[n - 1];
}

static void report(const char *op, double *t, int n, int *first) {
    qsort(t, n, sizeof(double), cmp);
    printf("%s\"%s_p50_ms\": %.6f, \"%s_p99_ms\": %.6f, \"%s_max_ms\": %.6f", *first ? "" : ", ", op,
           quantile(t, n, 0.5) * 1e3, op, quantile(t, n, 0.99) * 1e3, op, t[n - 1] * 1e3);
    *first = 0;
}

int main(int argc, char **argv) {
    int iters = 200, warmup = 20, bytes = 8;
    const char *primary = "allreduce_p99_ms";
    MPI_Init(&argc, &argv);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--iters")) iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--warmup")) warmup = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--bytes")) bytes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--primary")) primary = argv[i + 1];
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (iters < 1 || bytes < 1 || size < 2) {
        if (rank == 0) printf("{\"elapsed_s\": 0, \"valid\": false, \"error\": \"needs >= 2 ranks, iters, bytes\"}\n");
        MPI_Finalize();
        return 1;
    }
    char *buf = calloc(bytes, 1);
    double *in = calloc(bytes / sizeof(double) + 1, sizeof(double)), *out = calloc(bytes / sizeof(double) + 1, sizeof(double));
    int count = bytes / (int)sizeof(double) > 0 ? bytes / (int)sizeof(double) : 1;
    double *t = calloc(iters, sizeof(double));
    char names[64][MPI_MAX_PROCESSOR_NAME] = {{0}}, me[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0;
    MPI_Get_processor_name(me, &len);
    if (size <= 64) MPI_Gather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
                               MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int first = 1;
    if (rank == 0) printf("{");
    /* ping-pong: round-trip time between ranks 0 and 1 */
    for (int i = -warmup; i < iters; i++) {
        double s = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
        if (i >= 0) t[i] = MPI_Wtime() - s;
    }
    if (rank == 0) report("pingpong", t, iters, &first);
    double check = 0.0;
    for (int i = -warmup; i < iters; i++) { /* allreduce of count doubles */
        for (int k = 0; k < count; k++) in[k] = rank + k;
        MPI_Barrier(MPI_COMM_WORLD);
        double s = MPI_Wtime();
        MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (i >= 0) t[i] = MPI_Wtime() - s;
        check = out[0];
    }
    if (rank == 0) report("allreduce", t, iters, &first);
    for (int i = -warmup; i < iters; i++) {
        double s = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        if (i >= 0) t[i] = MPI_Wtime() - s;
    }
    if (rank == 0) {
        report("barrier", t, iters, &first);
        int valid = check == (double)size * (size - 1) / 2; /* sum of ranks: the allreduce was right */
        printf(", \"nodes\": [");
        for (int r = 0; r < size && r < 64; r++) printf("%s\"%s\"", r ? ", " : "", names[r]);
        printf("]");
        printf(", \"elapsed_s\": %.6f, \"valid\": %s, \"ranks\": %d, \"iters\": %d, \"bytes\": %d, "
               "\"metrics\": {\"%s\": {\"unit\": \"ms\", \"primary\": true}", MPI_Wtime() - t0,
               valid ? "true" : "false", size, iters, bytes, primary);
        const char *ops[] = {"pingpong", "allreduce", "barrier"};
        for (int o = 0; o < 3; o++)
            for (int q = 0; q < 2; q++) {
                char name[64];
                snprintf(name, sizeof name, "%s_%s_ms", ops[o], q ? "p99" : "p50");
                if (strcmp(name, primary)) printf(", \"%s\": {\"unit\": \"ms\"}", name);
            }
        printf("}}\n");
        fflush(stdout);
    }
    free(buf); free(in); free(out); free(t);
    MPI_Finalize();
    return 0;
}
