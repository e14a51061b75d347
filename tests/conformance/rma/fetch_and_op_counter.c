/* A shared counter: rank 0's window holds a counter that every rank increments K times with
 * MPI_Fetch_and_op (MPI_SUM) under a shared lock; the values fetched, gathered on rank 0, must be
 * 0 .. size*K - 1, each once, and the counter size*K (read with MPI_Fetch_and_op and MPI_NO_OP). */
#include "../conformance.h"

enum { K = 4 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);

    long counter = 0;
    MPI_Win win;
    CALL(MPI_Win_create, &counter, rank == 0 ? (MPI_Aint)sizeof counter : 0, sizeof counter, MPI_INFO_NULL,
         MPI_COMM_WORLD, &win);
    CALL(MPI_Barrier, MPI_COMM_WORLD);

    long fetched[K];
    const long one = 1;
    for (int k = 0; k < K; ++k) {
        CALL(MPI_Win_lock, MPI_LOCK_SHARED, 0, 0, win);
        CALL(MPI_Fetch_and_op, &one, &fetched[k], MPI_LONG, 0, 0, MPI_SUM, win);
        CALL(MPI_Win_unlock, 0, win);
    }
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    long final = -1;
    CALL(MPI_Win_lock, MPI_LOCK_SHARED, 0, 0, win);
    CALL(MPI_Fetch_and_op, NULL, &final, MPI_LONG, 0, 0, MPI_NO_OP, win);
    CALL(MPI_Win_unlock, 0, win);
    if (final != (long)size * K)
        conformance_error("final counter %ld, expected %ld", final, (long)size * K);

    long *all = rank == 0 ? malloc(sizeof(long) * K * size) : NULL;
    CALL(MPI_Gather, fetched, K, MPI_LONG, all, K, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        char *seen = calloc((size_t)size * K, 1);
        for (int i = 0; i < size * K; ++i) {
            if (all[i] < 0 || all[i] >= (long)size * K || seen[all[i]])
                conformance_error("fetched value %ld twice or out of range", all[i]);
            else
                seen[all[i]] = 1;
        }
        free(seen);
        free(all);
    }
    for (int k = 1; k < K; ++k)
        if (fetched[k] <= fetched[k - 1])
            conformance_error("fetched values not increasing: %ld then %ld", fetched[k - 1], fetched[k]);

    CALL(MPI_Win_free, &win);
    return conformance_finish();
}
