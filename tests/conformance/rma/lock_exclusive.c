/* Passive target with exclusive locks: each rank, in turn per target, locks every rank's window
 * (MPI_LOCK_EXCLUSIVE), puts its block at its own slot, unlocks; after a barrier each rank reads its own
 * window under an exclusive lock of itself, then gets a slot of the left neighbour's window. */
#include "../conformance.h"

enum { N = 8 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int left = (rank + size - 1) % size;

    int *memory = malloc(sizeof(int) * N * size);
    for (int i = 0; i < N * size; ++i)
        memory[i] = -1;
    MPI_Win win;
    CALL(MPI_Win_create, memory, (MPI_Aint)(sizeof(int) * N * size), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    CALL(MPI_Barrier, MPI_COMM_WORLD);

    int out[N], in[N];
    for (int i = 0; i < N; ++i)
        out[i] = rank * 100 + i;
    for (int k = 0; k < size; ++k) {
        const int target = (rank + k) % size;
        CALL(MPI_Win_lock, MPI_LOCK_EXCLUSIVE, target, 0, win);
        CALL(MPI_Put, out, N, MPI_INT, target, (MPI_Aint)rank * N, N, MPI_INT, win);
        CALL(MPI_Win_unlock, target, win);
    }
    CALL(MPI_Barrier, MPI_COMM_WORLD);

    CALL(MPI_Win_lock, MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int s = 0; s < size; ++s)
        for (int i = 0; i < N; ++i)
            if (memory[s * N + i] != s * 100 + i)
                conformance_error("own window [%d] = %d", s * N + i, memory[s * N + i]);
    CALL(MPI_Win_unlock, rank, win);

    const int slot = (rank + 2) % size;
    CALL(MPI_Win_lock, MPI_LOCK_EXCLUSIVE, left, 0, win);
    CALL(MPI_Get, in, N, MPI_INT, left, (MPI_Aint)slot * N, N, MPI_INT, win);
    CALL(MPI_Win_unlock, left, win);
    for (int i = 0; i < N; ++i)
        if (in[i] != slot * 100 + i)
            conformance_error("get from left, slot %d [%d] = %d", slot, i, in[i]);

    CALL(MPI_Barrier, MPI_COMM_WORLD);
    CALL(MPI_Win_free, &win);
    free(memory);
    return conformance_finish();
}
