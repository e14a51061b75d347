/* MPI_Get_accumulate in fence epochs: fetch-and-add of a block in the right neighbour's window
 * (MPI_SUM, result the old values), a read with MPI_NO_OP, and a swap with MPI_REPLACE. */
#include "../conformance.h"

enum { N = 8 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int memory[N];
    for (int i = 0; i < N; ++i)
        memory[i] = rank * 100 + i;
    MPI_Win win;
    CALL(MPI_Win_create, memory, (MPI_Aint)sizeof memory, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    int add[N], result[N];
    for (int i = 0; i < N; ++i)
        add[i] = rank * 10 + 1;
    CALL(MPI_Win_fence, 0, win);
    CALL(MPI_Get_accumulate, add, N, MPI_INT, result, N, MPI_INT, right, 0, N, MPI_INT, MPI_SUM, win);
    CALL(MPI_Win_fence, 0, win);
    for (int i = 0; i < N; ++i) {
        if (result[i] != right * 100 + i)
            conformance_error("fetched [%d] = %d", i, result[i]);
        if (memory[i] != rank * 100 + i + left * 10 + 1)
            conformance_error("after the sum [%d] = %d", i, memory[i]);
    }

    /* Read the left neighbour's window without changing it. */
    CALL(MPI_Get_accumulate, NULL, 0, MPI_INT, result, N, MPI_INT, left, 0, N, MPI_INT, MPI_NO_OP, win);
    CALL(MPI_Win_fence, 0, win);
    const int left_left = (left + size - 1) % size;
    for (int i = 0; i < N; ++i)
        if (result[i] != left * 100 + i + left_left * 10 + 1)
            conformance_error("no-op read [%d] = %d", i, result[i]);

    /* Swap a single element. */
    const int swap_in = -rank - 1;
    int swapped_out = 0;
    CALL(MPI_Get_accumulate, &swap_in, 1, MPI_INT, &swapped_out, 1, MPI_INT, right, N - 1, 1, MPI_INT, MPI_REPLACE, win);
    CALL(MPI_Win_fence, 0, win);
    if (swapped_out != right * 100 + N - 1 + rank * 10 + 1)
        conformance_error("swapped out %d", swapped_out);
    if (memory[N - 1] != -left - 1)
        conformance_error("swapped in %d", memory[N - 1]);

    CALL(MPI_Win_free, &win);
    return conformance_finish();
}
