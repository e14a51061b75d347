/* A load imbalance: every iteration each rank computes, then all meet in an MPI_Allreduce. Rank 0
 * computes SLOW_MS milliseconds per iteration, the others FAST_MS, so the others wait for rank 0 in
 * every MPI_Allreduce. Each rank logs the computation time it measured itself before each
 * MPI_Allreduce (compute_us=), from the return of its previous MPI call to the MPI_Allreduce, and
 * the time it spent in the MPI_Allreduce (in_call_us=).
 *
 * Usage: load_imbalance [ITERATIONS [SLOW_MS [FAST_MS]]]    (default 12 10 2) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

/* Busy until `seconds` after `from` on MPI_Wtime's clock: a wall-clock time, whatever else runs. */
static double compute_until(double from, double seconds)
{
    double x = 1.0;
    double now = MPI_Wtime();
    while (now - from < seconds) {
        for (int i = 0; i < 1000; ++i)
            x = x * 1.0000001 + 1e-9;
        now = MPI_Wtime();
    }
    return x;
}

int main(int argc, char **argv)
{
    int rank, size;
    double returned = logged_start(&argc, &argv, &rank, &size); /* the previous MPI call's return */

    const int iterations = argc > 1 ? atoi(argv[1]) : 12;
    const double slow = (argc > 2 ? atof(argv[2]) : 10) * 1e-3;
    const double fast = (argc > 3 ? atof(argv[3]) : 2) * 1e-3;

    double checksum = 0;
    for (int it = 0; it < iterations; ++it) {
        double partial = compute_until(returned, rank == 0 ? slow : fast);
        const double entered = MPI_Wtime();
        const double computed = entered - returned;
        double sum = 0;
        const int allreduce_line = __LINE__ + 1;
        MPI_Allreduce(&partial, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        returned = MPI_Wtime();
        if (call_log_begin("MPI_Allreduce", sizeof(double), 0, NULL, 0, NULL)) {
            call_log_field("compute_us", (long long)(computed * 1e6));
            call_log_field("in_call_us", (long long)((returned - entered) * 1e6));
            call_log_source(__FILE__, allreduce_line);
            call_log_end();
        }
        checksum += sum > 0 ? 1 : 0;
    }

    if (rank == 0)
        printf("load_imbalance: ranks %d iterations %d checksum %.0f\n", size, iterations, checksum);

    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
