/* One-sided calls aimed at MPI_PROC_NULL do nothing and succeed: MPI_Put, MPI_Get and MPI_Accumulate
 * to MPI_PROC_NULL inside a fence epoch (next to a real put to the right neighbour), and MPI_Put,
 * MPI_Get, MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op, MPI_Compare_and_swap and MPI_Rput
 * (completed by MPI_Wait) to MPI_PROC_NULL inside a lock_all epoch. Buffers must stay untouched. */
#include "../conformance.h"

enum { N = 4 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int memory[N];
    for (int i = 0; i < N; ++i)
        memory[i] = -1;
    MPI_Win win;
    CALL(MPI_Win_create, memory, (MPI_Aint)sizeof memory, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    int out[N], in[N];
    for (int i = 0; i < N; ++i) {
        out[i] = rank * 10 + i;
        in[i] = -5;
    }
    CALL(MPI_Win_fence, 0, win);
    CALL(MPI_Put, out, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win);
    CALL(MPI_Get, in, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win);
    CALL(MPI_Accumulate, out, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, MPI_SUM, win);
    CALL(MPI_Put, out, N, MPI_INT, right, 0, N, MPI_INT, win);
    CALL(MPI_Win_fence, 0, win);
    for (int i = 0; i < N; ++i) {
        if (in[i] != -5)
            conformance_error("get from MPI_PROC_NULL wrote in[%d] = %d", i, in[i]);
        if (memory[i] != left * 10 + i)
            conformance_error("fence: memory[%d] = %d", i, memory[i]);
    }

    int result[N], one = 1, fetched = -5, compare = 0, swapped = -5;
    for (int i = 0; i < N; ++i)
        result[i] = -5;
    MPI_Request request;
    CALL(MPI_Win_lock_all, 0, win);
    CALL(MPI_Put, out, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win);
    CALL(MPI_Get, in, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win);
    CALL(MPI_Accumulate, out, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, MPI_SUM, win);
    CALL(MPI_Get_accumulate, out, N, MPI_INT, result, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, MPI_SUM, win);
    CALL(MPI_Fetch_and_op, &one, &fetched, MPI_INT, MPI_PROC_NULL, 0, MPI_SUM, win);
    CALL(MPI_Compare_and_swap, &one, &compare, &swapped, MPI_INT, MPI_PROC_NULL, 0, win);
    CALL(MPI_Rput, out, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win, &request);
    CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
    CALL(MPI_Win_flush_all, win);
    CALL(MPI_Win_unlock_all, win);
    for (int i = 0; i < N; ++i)
        if (in[i] != -5 || result[i] != -5)
            conformance_error("lock_all: in[%d] = %d, result[%d] = %d", i, in[i], i, result[i]);
    if (fetched != -5 || swapped != -5)
        conformance_error("lock_all: fetched %d, swapped %d", fetched, swapped);
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    for (int i = 0; i < N; ++i)
        if (memory[i] != left * 10 + i)
            conformance_error("after lock_all: memory[%d] = %d", i, memory[i]);

    CALL(MPI_Win_free, &win);
    return conformance_finish();
}
