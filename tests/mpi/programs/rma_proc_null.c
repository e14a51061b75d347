/* One-sided calls aimed at MPI_PROC_NULL beside real ones. A window of MPI_Win_create over every
 * rank's memory; per iteration a fence epoch with MPI_Put to the right neighbour, MPI_Get from the left
 * one and MPI_Accumulate to rank 0, each with a twin aimed at MPI_PROC_NULL (the last rank's right and
 * the first rank's left neighbour are MPI_PROC_NULL too: an open chain); then an MPI_Win_lock_all epoch
 * with the same three calls, real and to MPI_PROC_NULL, MPI_Win_flush_all and MPI_Win_unlock_all.
 * MPI_PROC_NULL as a target is valid in every RMA call and moves nothing, but the epoch must still be
 * closed.
 * Exercises: a replay must pass MPI_PROC_NULL as MPI_PROC_NULL (the value the trace stores for it,
 * passed as a rank, gave MPI_ERR_RANK).
 *
 * Usage: rma_proc_null [ITERATIONS]    (default 3) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { N = 16 };

/* A one-sided call on `target` (a world rank, or MPI_PROC_NULL) moving `bytes` at origin and target
 * together, as one_sided.c logs them. */
static void log_rma(const char *function, long long bytes, int target)
{
    log_call_peer(function, bytes, log_rank(target));
}

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    const int iterations = argc > 1 ? atoi(argv[1]) : 3;
    const int right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    const long long INT_BYTES = sizeof(int);

    int *memory = calloc(N, sizeof(int));
    MPI_Win win;
    MPI_Win_create(memory, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    log_call("MPI_Win_create", N * INT_BYTES);

    long long checksum = 0;
    int out[N], in[N], nowhere[N];
    for (int iteration = 0; iteration < iterations; ++iteration) {
        for (int i = 0; i < N; ++i) {
            out[i] = rank * 100 + iteration + i;
            in[i] = nowhere[i] = 0;
        }
        MPI_Win_fence(0, win);
        log_call("MPI_Win_fence", 0);
        MPI_Put(out, 4, MPI_INT, right, 0, 4, MPI_INT, win);
        log_rma("MPI_Put", 2 * 4 * INT_BYTES, right);
        MPI_Put(out, 3, MPI_INT, MPI_PROC_NULL, 0, 3, MPI_INT, win);
        log_rma("MPI_Put", 2 * 3 * INT_BYTES, MPI_PROC_NULL);
        MPI_Get(in, 2, MPI_INT, left, 8, 2, MPI_INT, win);
        log_rma("MPI_Get", 2 * 2 * INT_BYTES, left);
        MPI_Get(nowhere, 5, MPI_INT, MPI_PROC_NULL, 0, 5, MPI_INT, win);
        log_rma("MPI_Get", 2 * 5 * INT_BYTES, MPI_PROC_NULL);
        MPI_Accumulate(out, 1, MPI_INT, 0, 12, 1, MPI_INT, MPI_SUM, win);
        log_rma("MPI_Accumulate", 2 * INT_BYTES, 0);
        MPI_Accumulate(out, 2, MPI_INT, MPI_PROC_NULL, 12, 2, MPI_INT, MPI_SUM, win);
        log_rma("MPI_Accumulate", 2 * 2 * INT_BYTES, MPI_PROC_NULL);
        MPI_Win_fence(0, win);
        log_call("MPI_Win_fence", 0);
        checksum += in[0] + in[1] + nowhere[0];

        MPI_Win_lock_all(0, win);
        log_call("MPI_Win_lock_all", 0);
        MPI_Put(out, 2, MPI_INT, MPI_PROC_NULL, 4, 2, MPI_INT, win);
        log_rma("MPI_Put", 2 * 2 * INT_BYTES, MPI_PROC_NULL);
        MPI_Put(out, 2, MPI_INT, right, 4, 2, MPI_INT, win);
        log_rma("MPI_Put", 2 * 2 * INT_BYTES, right);
        MPI_Get(nowhere, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win);
        log_rma("MPI_Get", 2 * INT_BYTES, MPI_PROC_NULL);
        MPI_Get(in, 3, MPI_INT, left, 13, 3, MPI_INT, win);
        log_rma("MPI_Get", 2 * 3 * INT_BYTES, left);
        MPI_Accumulate(out, 1, MPI_INT, MPI_PROC_NULL, 15, 1, MPI_INT, MPI_BOR, win);
        log_rma("MPI_Accumulate", 2 * INT_BYTES, MPI_PROC_NULL);
        MPI_Accumulate(out, 1, MPI_INT, size - 1, 15, 1, MPI_INT, MPI_BOR, win);
        log_rma("MPI_Accumulate", 2 * INT_BYTES, size - 1);
        MPI_Win_flush_all(win);
        log_call("MPI_Win_flush_all", 0);
        MPI_Win_unlock_all(win);
        log_call("MPI_Win_unlock_all", 0);
        checksum += nowhere[0] + (left != MPI_PROC_NULL);
    }
    MPI_Win_fence(0, win);
    log_call("MPI_Win_fence", 0);
    for (int i = 0; i < 12; ++i)
        checksum += memory[i];
    MPI_Win_free(&win);
    log_call("MPI_Win_free", 0);
    free(memory);

    long long total = 0;
    MPI_Reduce(&checksum, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    log_call_peer("MPI_Reduce", sizeof(long long), 0);
    if (rank == 0)
        printf("rma_proc_null: ranks %d iterations %d checksum %lld\n", size, iterations, total);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
