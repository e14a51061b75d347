/* A convergence loop, the shape of an iterative solver: TIMESTEPS timesteps; in each, ranks work in
 * pairs (0-1, 2-3, ...) and exchange with their partner (MPI_Irecv + MPI_Send + MPI_Wait) until the
 * pair "converges", which takes 38..42 iterations depending on the timestep and the pair; then an
 * MPI_Allreduce on MPI_COMM_WORLD of the checksums and iteration counts. Both ranks of a pair compute
 * the same count, so their messages match. With an odd rank count the last rank has no partner and
 * runs the same loop against MPI_PROC_NULL.
 *
 * The count is a hash of (timestep, pair), not a short cycle, as in a real solver: without merging the
 * trace holds one inner loop per timestep and pair; with a merge precision they fold into one loop
 * whose iteration count is a histogram (tests/mpi/check_precision.py checks it against the call log).
 *
 * Usage: convergence [TIMESTEPS]    (default 10) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { MESSAGE_LENGTH = 4 }; /* long longs per message: 32 bytes */
enum { TAG_EXCHANGE = 7 };   /* one tag for every iteration, so the inner loop can fold */
enum { FEWEST_ITERATIONS = 38, ITERATION_SPREAD = 5 };

/* Numerical Recipes' LCG: the same numbers on every platform. */
static uint32_t lcg_next(uint32_t state)
{
    return state * 1664525u + 1013904223u;
}

/* A well-spread number for a pair of small integers: one LCG step from a seed of both, then an
 * xor-shift-multiply mix, since LCG steps alone are affine and give near-periodic counts for
 * consecutive timesteps. */
static uint32_t hash2(uint32_t a, uint32_t b)
{
    uint32_t x = lcg_next(a * 7919u + b * 104729u + 1u);
    x = (x ^ (x >> 16)) * 0x45d9f3bu;
    x = (x ^ (x >> 16)) * 0x45d9f3bu;
    return x ^ (x >> 16);
}

/* Iterations until pair `pair` converges in timestep `timestep`: FEWEST_ITERATIONS .. +SPREAD-1. */
static int iterations_to_converge(int timestep, int pair)
{
    return FEWEST_ITERATIONS + (int)(hash2((uint32_t)timestep, (uint32_t)pair) % ITERATION_SPREAD);
}

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);

    const int timesteps = argc > 1 ? atoi(argv[1]) : 10;
    const int pair = rank / 2;
    const int partner = (rank ^ 1) < size ? rank ^ 1 : MPI_PROC_NULL;
    const long long message_bytes = MESSAGE_LENGTH * (long long)sizeof(long long);

    /* {sum of received values, inner iterations} over all ranks and timesteps so far. */
    long long totals[2] = {0, 0};
    for (int timestep = 0; timestep < timesteps; ++timestep) {
        const int iterations = iterations_to_converge(timestep, pair);
        long long local[2] = {0, iterations};
        for (int iteration = 0; iteration < iterations; ++iteration) {
            /* Values below 2^24 keep every sum far from overflow. */
            long long outgoing[MESSAGE_LENGTH], incoming[MESSAGE_LENGTH] = {0};
            for (int i = 0; i < MESSAGE_LENGTH; ++i)
                outgoing[i] = hash2((uint32_t)(rank * 1000 + timestep), (uint32_t)(iteration * 10 + i)) % (1 << 24);
            MPI_Request request;
            MPI_Irecv(incoming, MESSAGE_LENGTH, MPI_LONG_LONG, partner, TAG_EXCHANGE, MPI_COMM_WORLD, &request);
            log_recv("MPI_Irecv", message_bytes, log_rank(partner), TAG_EXCHANGE);
            MPI_Send(outgoing, MESSAGE_LENGTH, MPI_LONG_LONG, partner, TAG_EXCHANGE, MPI_COMM_WORLD);
            log_send("MPI_Send", message_bytes, log_rank(partner), TAG_EXCHANGE);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            log_completion("MPI_Wait", 1);
            /* A receive from MPI_PROC_NULL leaves `incoming` at zero. */
            for (int i = 0; i < MESSAGE_LENGTH; ++i)
                local[0] += incoming[i];
        }
        long long global[2];
        MPI_Allreduce(local, global, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        log_call("MPI_Allreduce", 2 * sizeof(long long));
        totals[0] += global[0];
        totals[1] += global[1];
    }

    if (rank == 0)
        printf("convergence: ranks %d timesteps %d inner iterations (all ranks) %lld checksum %lld\n", size,
               timesteps, totals[1], totals[0]);

    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
