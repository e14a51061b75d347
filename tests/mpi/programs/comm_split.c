/* MPI_COMM_WORLD split into rows of COLS ranks (color = rank / COLS; the last row may be shorter) and
 * duplicated. Per iteration: an MPI_Sendrecv ring inside the row, an MPI_Allreduce and an MPI_Bcast from
 * the row's rank 0 in the row, and an MPI_Barrier on the duplicate. Then an MPI_Reduce on the duplicate,
 * a split into halves by parity (freed at once) and MPI_Comm_free of both.
 * Exercises: peers given in sub-communicator ranks that the trace must report as world ranks,
 * collectives on communicators other than MPI_COMM_WORLD, and ranks in new communicators that follow
 * the world rank (the splits log the rank they got).
 *
 * Usage: comm_split [COLS [ITERATIONS]]    (defaults 3, 5) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { RING_LENGTH = 3 }; /* ints per ring message */

/* MPI_Comm_split with the colour it gave and the rank in the new communicator that the MPI_Comm_rank
 * after it returned, then that MPI_Comm_rank. */
static void log_split(int color, int new_rank)
{
    if (call_log_begin("MPI_Comm_split", 0, 0, NULL, 0, NULL)) {
        call_log_field("color", color);
        call_log_field("new_rank", new_rank);
        call_log_end();
    }
    log_call("MPI_Comm_rank", 0);
}

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);

    const int cols = argc > 1 ? atoi(argv[1]) : 3;
    const int iterations = argc > 2 ? atoi(argv[2]) : 5;

    MPI_Comm row, dup;
    int row_rank, row_size;
    MPI_Comm_split(MPI_COMM_WORLD, rank / cols, rank, &row);
    MPI_Comm_rank(row, &row_rank);
    log_split(rank / cols, row_rank);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    log_call("MPI_Comm_dup", 0);
    MPI_Comm_size(row, &row_size);
    log_call("MPI_Comm_size", 0);

    /* The world rank of every row member, once, for the log. */
    MPI_Group world_group, row_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    log_call("MPI_Comm_group", 0);
    MPI_Comm_group(row, &row_group);
    log_call("MPI_Comm_group", 0);
    int *row_ranks = malloc(row_size * sizeof(int));
    int *world_of = malloc(row_size * sizeof(int));
    for (int i = 0; i < row_size; ++i)
        row_ranks[i] = i;
    MPI_Group_translate_ranks(row_group, row_size, row_ranks, world_group, world_of);
    log_call("MPI_Group_translate_ranks", 0);
    MPI_Group_free(&row_group);
    log_call("MPI_Group_free", 0);
    MPI_Group_free(&world_group);
    log_call("MPI_Group_free", 0);

    const int right = (row_rank + 1) % row_size;
    const int left = (row_rank - 1 + row_size) % row_size;
    const long long ring_bytes = RING_LENGTH * (long long)sizeof(int);
    long long checksum = 0;
    for (int iteration = 0; iteration < iterations; ++iteration) {
        int outgoing[RING_LENGTH], incoming[RING_LENGTH];
        for (int i = 0; i < RING_LENGTH; ++i)
            outgoing[i] = rank * 10 + iteration + i;
        MPI_Sendrecv(outgoing, RING_LENGTH, MPI_INT, right, iteration, incoming, RING_LENGTH, MPI_INT, left, iteration,
                     row, MPI_STATUS_IGNORE);
        log_sendrecv("MPI_Sendrecv", 2 * ring_bytes, world_of[right], iteration, world_of[left], iteration, 0, 0);

        long long row_sum = 0, mine = incoming[0] + incoming[RING_LENGTH - 1];
        MPI_Allreduce(&mine, &row_sum, 1, MPI_LONG_LONG, MPI_SUM, row);
        log_call("MPI_Allreduce", sizeof(long long));

        double scale[2] = {row_rank == 0 ? 1.0 + iteration : 0.0, row_rank == 0 ? 0.5 : 0.0};
        MPI_Bcast(scale, 2, MPI_DOUBLE, 0, row);
        log_call_peer("MPI_Bcast", 2 * sizeof(double), world_of[0]);

        MPI_Barrier(dup);
        log_call("MPI_Barrier", 0);
        checksum += row_sum * (long long)(scale[0] + scale[1] + 0.5);
    }

    long long total = 0;
    MPI_Reduce(&checksum, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, dup);
    log_call_peer("MPI_Reduce", sizeof(long long), 0); /* rank 0 of the duplicate is world rank 0 */

    if (rank == 0)
        printf("comm_split: ranks %d in rows of %d, iterations %d, checksum %lld\n", size, cols, iterations, total);

    /* Halves by parity in world order: a rank's rank in its half is rank / 2, a value that follows the
     * rank (tests/mpi/check_rank_values.py). */
    MPI_Comm half;
    int half_rank;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_rank(half, &half_rank);
    log_split(rank % 2, half_rank);
    MPI_Comm_free(&half);
    log_call("MPI_Comm_free", 0);

    MPI_Comm_free(&row);
    log_call("MPI_Comm_free", 0);
    MPI_Comm_free(&dup);
    log_call("MPI_Comm_free", 0);
    free(row_ranks);
    free(world_of);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
