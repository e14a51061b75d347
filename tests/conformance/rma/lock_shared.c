/* Passive target with shared locks: every rank reads rank 0's window under MPI_LOCK_SHARED at the
 * same time, then every rank's window (each filled before the window was made) with one shared-lock
 * epoch per target; MPI_MODE_NOCHECK on the second round. */
#include "../conformance.h"

enum { N = 12 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);

    int memory[N];
    for (int i = 0; i < N; ++i)
        memory[i] = rank * 1000 + i;
    MPI_Win win;
    CALL(MPI_Win_create, memory, (MPI_Aint)sizeof memory, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    int in[N];
    CALL(MPI_Win_lock, MPI_LOCK_SHARED, 0, 0, win);
    CALL(MPI_Get, in, N, MPI_INT, 0, 0, N, MPI_INT, win);
    CALL(MPI_Win_unlock, 0, win);
    for (int i = 0; i < N; ++i)
        if (in[i] != i)
            conformance_error("rank 0's window [%d] = %d", i, in[i]);

    for (int target = 0; target < size; ++target) {
        const int count = 1 + target % N;
        CALL(MPI_Win_lock, MPI_LOCK_SHARED, target, target % 2 ? MPI_MODE_NOCHECK : 0, win);
        CALL(MPI_Get, in, count, MPI_INT, target, N - count, count, MPI_INT, win);
        CALL(MPI_Win_unlock, target, win);
        for (int i = 0; i < count; ++i)
            if (in[i] != target * 1000 + N - count + i)
                conformance_error("rank %d's window [%d] = %d", target, N - count + i, in[i]);
    }

    CALL(MPI_Win_free, &win);
    return conformance_finish();
}
