/* MPI_Win_lock_all epoch with flushes: a put to the right neighbour completed at the target by
 * MPI_Win_flush and read back by a get; a put to the left neighbour completed locally by
 * MPI_Win_flush_local (its buffer then reused); everything completed by MPI_Win_flush_all; the
 * window read after MPI_Win_sync and a barrier. */
#include "../conformance.h"

enum { N = 4 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int *memory = NULL;
    MPI_Win win;
    CALL(MPI_Win_allocate, (MPI_Aint)(2 * N * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &memory, &win);
    for (int i = 0; i < 2 * N; ++i)
        memory[i] = -1;
    CALL(MPI_Barrier, MPI_COMM_WORLD);

    int out[N], in[N];
    CALL(MPI_Win_lock_all, 0, win);
    for (int i = 0; i < N; ++i)
        out[i] = rank * 10 + i;
    CALL(MPI_Put, out, N, MPI_INT, right, 0, N, MPI_INT, win);
    CALL(MPI_Win_flush, right, win);
    CALL(MPI_Get, in, N, MPI_INT, right, 0, N, MPI_INT, win);
    CALL(MPI_Win_flush, right, win);
    for (int i = 0; i < N; ++i)
        if (in[i] != rank * 10 + i)
            conformance_error("read back from right [%d] = %d", i, in[i]);

    for (int i = 0; i < N; ++i)
        out[i] = 500 + rank * 10 + i;
    CALL(MPI_Put, out, N, MPI_INT, left, N, N, MPI_INT, win);
    CALL(MPI_Win_flush_local, left, win);
    for (int i = 0; i < N; ++i)
        out[i] = -7; /* the put's buffer may be reused: the put already took it */
    CALL(MPI_Win_flush_all, win);
    CALL(MPI_Win_sync, win);
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    CALL(MPI_Win_sync, win);
    for (int i = 0; i < N; ++i) {
        if (memory[i] != left * 10 + i)
            conformance_error("put by left [%d] = %d", i, memory[i]);
        if (memory[N + i] != 500 + right * 10 + i)
            conformance_error("put by right [%d] = %d", i, memory[N + i]);
    }
    CALL(MPI_Win_unlock_all, win);

    CALL(MPI_Win_free, &win);
    return conformance_finish();
}
