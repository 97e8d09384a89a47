/* Two one-core speed probes side by side (bench/README.md, "Why the quiet reference moves"):
 * with BYTES > 0, a pointer chase over a random cycle of BYTES (each step waits for one load: the
 * latency of the cache level or memory that holds BYTES); with BYTES = 0, a loop of dependent
 * floating-point operations in registers (touches no memory). Prints the seconds of each of
 * ROUNDS rounds (4 000 000 steps, or 60 000 000 operations).
 *
 *   gcc -O2 -o /tmp/memchase bench/probes/memchase.c
 *   taskset -c 1 /tmp/memchase 4000000 30    # 4 MB: about the L3 share of a vCPU
 *   taskset -c 1 /tmp/memchase 0 40          # registers only
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s BYTES ROUNDS\n", argv[0]);
        return 2;
    }
    long n = atol(argv[1]) / (long)sizeof(long);
    int rounds = atoi(argv[2]);
    if (n < 0 || rounds < 1) {
        fprintf(stderr, "%s: BYTES must be >= 0 and ROUNDS >= 1\n", argv[0]);
        return 2;
    }
    if (n == 0) {
        volatile double x = 1.0;
        for (int k = 0; k < rounds; k++) {
            double t0 = now();
            for (long i = 0; i < 60000000; i++) x = x * 1.0000001 + 1e-9;
            printf("%.3f ", now() - t0);
            fflush(stdout);
        }
        printf("\n");
        return 0;
    }
    long *a = malloc(n * sizeof(long));
    if (a == NULL) {
        fprintf(stderr, "%s: cannot allocate %ld bytes\n", argv[0], n * (long)sizeof(long));
        return 1;
    }
    for (long i = 0; i < n; i++) a[i] = i;
    srand(1);
    for (long i = n - 1; i > 0; i--) { /* Sattolo's shuffle: one cycle through every slot */
        long j = rand() % i;
        long t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
    long p = 0;
    for (int k = 0; k < rounds; k++) {
        double t0 = now();
        for (long i = 0; i < 4000000; i++) p = a[p];
        printf("%.3f ", now() - t0);
        fflush(stdout);
    }
    printf("(end %ld)\n", p);
    free(a);
    return 0;
}
