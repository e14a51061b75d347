/* Message sizes that drift, as a halo does while an adaptive mesh refines: a ring exchange
 * (MPI_Irecv from the left, MPI_Isend to the right, MPI_Waitall) whose message grows by 3% of its
 * first size every timestep -- timestep t sends BASE_DOUBLES * (1 + 0.03 t) doubles, rounded: 100,
 * 103, 106, ... -- then an MPI_Allreduce of a checksum of what arrived.
 *
 * Without merging no two timesteps are alike and the trace grows with the timesteps; from merge
 * precision 97 down, each size is within the precision of the one before, so the exchange folds
 * into one loop whose byte histogram spans the smallest to the largest size
 * (tests/mpi/check_precision.py).
 *
 * Usage: drifting [TIMESTEPS]    (default 20) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { BASE_DOUBLES = 100, GROWTH_PERCENT_PER_TIMESTEP = 3 };
enum { TAG_HALO = 3 };

/* Numerical Recipes' LCG: the same numbers on every platform. */
static uint32_t lcg_next(uint32_t state)
{
    return state * 1664525u + 1013904223u;
}

/* BASE_DOUBLES * (1 + GROWTH_PERCENT_PER_TIMESTEP / 100 * timestep), rounded to whole doubles. */
static int doubles_at(int timestep)
{
    return BASE_DOUBLES + (BASE_DOUBLES * GROWTH_PERCENT_PER_TIMESTEP * timestep + 50) / 100;
}

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);

    const int timesteps = argc > 1 ? atoi(argv[1]) : 20;
    const int right = (rank + 1) % size;
    const int left = (rank - 1 + size) % size;
    const int largest = doubles_at(timesteps > 0 ? timesteps - 1 : 0);
    double *outgoing = malloc((size_t)largest * sizeof(double));
    double *incoming = malloc((size_t)largest * sizeof(double));

    double checksum = 0.0;
    for (int timestep = 0; timestep < timesteps; ++timestep) {
        const int count = doubles_at(timestep);
        const long long message_bytes = count * (long long)sizeof(double);
        /* Whole numbers below 1000: every sum below is exact, so the printed checksum is too. */
        uint32_t state = (uint32_t)(rank * 7919 + timestep);
        for (int i = 0; i < count; ++i)
            outgoing[i] = (double)(((state = lcg_next(state)) >> 16) % 1000);

        MPI_Request requests[2];
        MPI_Irecv(incoming, count, MPI_DOUBLE, left, TAG_HALO, MPI_COMM_WORLD, &requests[0]);
        log_recv("MPI_Irecv", message_bytes, left, TAG_HALO);
        MPI_Isend(outgoing, count, MPI_DOUBLE, right, TAG_HALO, MPI_COMM_WORLD, &requests[1]);
        log_send("MPI_Isend", message_bytes, right, TAG_HALO);
        MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
        log_completion("MPI_Waitall", 2);

        double local = 0.0, global = 0.0;
        for (int i = 0; i < count; ++i)
            local += incoming[i] * (i % 7 + 1);
        MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        log_call("MPI_Allreduce", sizeof(double));
        checksum += global;
    }

    if (rank == 0)
        printf("drifting: ranks %d timesteps %d doubles %d..%d checksum %.1f\n", size, timesteps, doubles_at(0),
               largest, checksum);

    free(outgoing);
    free(incoming);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
