/* Request-based one-sided calls in a lock_all epoch: MPI_Rput completed by MPI_Wait, then MPI_Rget,
 * MPI_Raccumulate and MPI_Rget_accumulate completed together by MPI_Waitall; remote completion by
 * MPI_Win_unlock_all, checked after a barrier. */
#include "../conformance.h"

enum { N = 4 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* [0, N): put by the left neighbour; [N, 2N): read by it; [2N]: sum of all; [2N+1, 3N+1): fetch-added by left */
    int *memory = NULL;
    MPI_Win win;
    CALL(MPI_Win_allocate, (MPI_Aint)((3 * N + 1) * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &memory, &win);
    for (int i = 0; i < N; ++i) {
        memory[i] = -1;
        memory[N + i] = rank * 7 + i;
        memory[2 * N + 1 + i] = rank * 1000 + i;
    }
    memory[2 * N] = 0;
    CALL(MPI_Barrier, MPI_COMM_WORLD);

    int out[N], in[N], add[N], fetched[N];
    for (int i = 0; i < N; ++i) {
        out[i] = rank * 100 + i;
        add[i] = rank + 1;
    }
    const int one = rank + 1;
    MPI_Request requests[3];
    CALL(MPI_Win_lock_all, 0, win);
    CALL(MPI_Rput, out, N, MPI_INT, right, 0, N, MPI_INT, win, &requests[0]);
    CALL(MPI_Wait, &requests[0], MPI_STATUS_IGNORE);
    CALL(MPI_Rget, in, N, MPI_INT, right, N, N, MPI_INT, win, &requests[0]);
    CALL(MPI_Raccumulate, &one, 1, MPI_INT, 0, 2 * N, 1, MPI_INT, MPI_SUM, win, &requests[1]);
    CALL(MPI_Rget_accumulate, add, N, MPI_INT, fetched, N, MPI_INT, right, 2 * N + 1, N, MPI_INT, MPI_SUM, win,
         &requests[2]);
    CALL(MPI_Waitall, 3, requests, MPI_STATUSES_IGNORE);
    for (int i = 0; i < N; ++i) {
        if (in[i] != right * 7 + i)
            conformance_error("rget [%d] = %d", i, in[i]);
        if (fetched[i] != right * 1000 + i)
            conformance_error("rget_accumulate fetched [%d] = %d", i, fetched[i]);
    }
    CALL(MPI_Win_unlock_all, win);
    CALL(MPI_Barrier, MPI_COMM_WORLD);

    CALL(MPI_Win_lock, MPI_LOCK_SHARED, rank, 0, win);
    for (int i = 0; i < N; ++i) {
        if (memory[i] != left * 100 + i)
            conformance_error("rput by left [%d] = %d", i, memory[i]);
        if (memory[2 * N + 1 + i] != rank * 1000 + i + left + 1)
            conformance_error("rget_accumulate by left [%d] = %d", i, memory[2 * N + 1 + i]);
    }
    if (rank == 0 && memory[2 * N] != size * (size + 1) / 2)
        conformance_error("raccumulate sum %d", memory[2 * N]);
    CALL(MPI_Win_unlock, rank, win);

    CALL(MPI_Win_free, &win);
    return conformance_finish();
}
