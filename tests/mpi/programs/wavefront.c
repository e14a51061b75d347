/* Pipelined wavefront sweeps, the shape of NPB LU's SSOR: ranks form a 1-D chain, and each iteration
 * sweeps PLANES planes forward and then backward. Forward, for each plane a rank receives the plane's
 * boundary from rank - 1 (MPI_Recv; rank 0 has no upstream), computes, and sends its own boundary to
 * rank + 1 (MPI_Send; the last rank has no downstream); backward, the same in the other direction.
 * An MPI_Allreduce of a checksum closes each iteration.
 *
 * The computation per plane is a deterministic update of the rank's slab, then a busy wait of
 * COMPUTE_US microseconds measured with MPI_Wtime (0: none), so the program serves timing benchmarks
 * of replay (how a pipeline's start-up and drain come back) while its output stays deterministic: it
 * prints sums of whole numbers, never times. The chain has no cycle, so blocking sends cannot
 * deadlock even if each waits for its receive.
 *
 * Usage: wavefront [ITERATIONS [PLANES [COMPUTE_US [PLANE_DOUBLES]]]]    (defaults 4, 16, 0, 64) */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { TAG_FORWARD = 1, TAG_BACKWARD = 2 };
static const double PRIME = 1000003.0; /* every value stays a whole number below it: sums are exact */

/* Busy, as a solver computing: the rank does not give its core away. */
static void compute_for(double microseconds)
{
    const double start = MPI_Wtime();
    while ((MPI_Wtime() - start) * 1e6 < microseconds) {
    }
}

/* The plane's update on this rank from the boundary that came in; `out` is the boundary to pass on. */
static void update(double *slab, const double *in, double *out, int n, int salt)
{
    for (int i = 0; i < n; ++i) {
        slab[i] = fmod(slab[i] * 3.0 + in[i] + (double)(salt + i), PRIME);
        out[i] = slab[n - 1 - i];
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);

    const int iterations = argc > 1 ? atoi(argv[1]) : 4;
    const int planes = argc > 2 ? atoi(argv[2]) : 16;
    const double compute_us = argc > 3 ? atof(argv[3]) : 0.0;
    const int n = argc > 4 && atoi(argv[4]) > 0 ? atoi(argv[4]) : 64;
    const long long plane_bytes = n * (long long)sizeof(double);
    const int upstream = rank - 1, downstream = rank + 1 < size ? rank + 1 : -1;

    double *slab = malloc((size_t)planes * n * sizeof(double));
    double *in = malloc((size_t)n * sizeof(double)), *out = malloc((size_t)n * sizeof(double));
    for (int k = 0; k < planes; ++k)
        for (int i = 0; i < n; ++i)
            slab[(size_t)k * n + i] = (double)((rank * 7919 + k * 131 + i) % 1000);

    double checksum = 0.0;
    for (int iteration = 0; iteration < iterations; ++iteration) {
        for (int k = 0; k < planes; ++k) {
            if (upstream >= 0) {
                MPI_Recv(in, n, MPI_DOUBLE, upstream, TAG_FORWARD, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                log_recv("MPI_Recv", plane_bytes, upstream, TAG_FORWARD);
            } else {
                for (int i = 0; i < n; ++i)
                    in[i] = (double)(iteration + k);
            }
            update(&slab[(size_t)k * n], in, out, n, rank + k);
            compute_for(compute_us);
            if (downstream >= 0) {
                MPI_Send(out, n, MPI_DOUBLE, downstream, TAG_FORWARD, MPI_COMM_WORLD);
                log_send("MPI_Send", plane_bytes, downstream, TAG_FORWARD);
            }
        }
        for (int k = planes - 1; k >= 0; --k) {
            if (downstream >= 0) {
                MPI_Recv(in, n, MPI_DOUBLE, downstream, TAG_BACKWARD, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                log_recv("MPI_Recv", plane_bytes, downstream, TAG_BACKWARD);
            } else {
                for (int i = 0; i < n; ++i)
                    in[i] = (double)(iteration * 2 + k);
            }
            update(&slab[(size_t)k * n], in, out, n, 3 * rank + k);
            compute_for(compute_us);
            if (upstream >= 0) {
                MPI_Send(out, n, MPI_DOUBLE, upstream, TAG_BACKWARD, MPI_COMM_WORLD);
                log_send("MPI_Send", plane_bytes, upstream, TAG_BACKWARD);
            }
        }

        double local = 0.0, global = 0.0;
        for (size_t i = 0; i < (size_t)planes * n; ++i)
            local += slab[i];
        MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        log_call("MPI_Allreduce", sizeof(double));
        checksum = fmod(checksum * 7.0 + global, PRIME);
    }

    if (rank == 0)
        printf("wavefront: ranks %d iterations %d planes %d doubles %d compute %g us checksum %.0f\n", size, iterations,
               planes, n, compute_us, checksum);

    free(slab);
    free(in);
    free(out);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
