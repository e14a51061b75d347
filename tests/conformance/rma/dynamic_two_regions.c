/* A dynamic window with two regions: rank 0 attaches two regions of different sizes and broadcasts
 * their addresses (MPI_Get_address, MPI_Bcast); the other ranks read both with MPI_Get under a shared
 * lock and write their slot of the second with MPI_Put under an exclusive lock; rank 0 detaches the
 * first region, the others read the second again, then rank 0 detaches the second. */
#include "../conformance.h"

enum { A = 16, B = 64 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);

    MPI_Win win;
    CALL(MPI_Win_create_dynamic, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int *first = NULL, *second = NULL;
    MPI_Aint addresses[2] = {0, 0};
    if (rank == 0) {
        first = malloc(A * sizeof(int));
        second = malloc(B * sizeof(int));
        for (int i = 0; i < A; ++i)
            first[i] = 500 + i;
        for (int i = 0; i < B; ++i)
            second[i] = 700 + i;
        CALL(MPI_Win_attach, win, first, (MPI_Aint)(A * sizeof(int)));
        CALL(MPI_Win_attach, win, second, (MPI_Aint)(B * sizeof(int)));
        CALL(MPI_Get_address, first, &addresses[0]);
        CALL(MPI_Get_address, second, &addresses[1]);
    }
    CALL(MPI_Bcast, addresses, 2, MPI_AINT, 0, MPI_COMM_WORLD);

    int in[B];
    if (rank != 0) {
        CALL(MPI_Win_lock, MPI_LOCK_SHARED, 0, 0, win);
        CALL(MPI_Get, in, A, MPI_INT, 0, addresses[0], A, MPI_INT, win);
        CALL(MPI_Get, in + A, 4, MPI_INT, 0, addresses[1] + (MPI_Aint)((B - 4) * sizeof(int)), 4, MPI_INT, win);
        CALL(MPI_Win_unlock, 0, win);
        for (int i = 0; i < A; ++i)
            if (in[i] != 500 + i)
                conformance_error("first region [%d] = %d", i, in[i]);
        for (int i = 0; i < 4; ++i)
            if (in[A + i] != 700 + B - 4 + i)
                conformance_error("second region [%d] = %d", B - 4 + i, in[A + i]);
        const int value = -rank;
        CALL(MPI_Win_lock, MPI_LOCK_EXCLUSIVE, 0, 0, win);
        CALL(MPI_Put, &value, 1, MPI_INT, 0, addresses[1] + (MPI_Aint)(rank * sizeof(int)), 1, MPI_INT, win);
        CALL(MPI_Win_unlock, 0, win);
    }
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    if (rank == 0)
        CALL(MPI_Win_detach, win, first);
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    if (rank != 0) {
        CALL(MPI_Win_lock, MPI_LOCK_SHARED, 0, 0, win);
        CALL(MPI_Get, in, size, MPI_INT, 0, addresses[1], size, MPI_INT, win);
        CALL(MPI_Win_unlock, 0, win);
        for (int i = 1; i < size; ++i)
            if (in[i] != -i)
                conformance_error("second region [%d] = %d after the puts", i, in[i]);
        if (in[0] != 700)
            conformance_error("second region [0] = %d", in[0]);
    }
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    if (rank == 0) {
        CALL(MPI_Win_detach, win, second);
        free(first);
        free(second);
    }
    CALL(MPI_Win_free, &win);
    return conformance_finish();
}
