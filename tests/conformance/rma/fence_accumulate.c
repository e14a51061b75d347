/* MPI_Accumulate in fence epochs: every rank accumulates into every rank's window with MPI_SUM (first
 * half) and MPI_MAX (second half), then rank 0 overwrites a last element everywhere with MPI_REPLACE.
 * The results do not depend on the order in which the accumulations arrive. */
#include "../conformance.h"

enum { N = 8 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);

    int memory[2 * N + 1];
    for (int i = 0; i < 2 * N + 1; ++i)
        memory[i] = 0;
    MPI_Win win;
    CALL(MPI_Win_create, memory, (MPI_Aint)sizeof memory, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    int out[N];
    for (int i = 0; i < N; ++i)
        out[i] = (rank + 1) * (i + 1);
    CALL(MPI_Win_fence, MPI_MODE_NOPRECEDE, win);
    for (int target = 0; target < size; ++target) {
        CALL(MPI_Accumulate, out, N, MPI_INT, target, 0, N, MPI_INT, MPI_SUM, win);
        CALL(MPI_Accumulate, out, N, MPI_INT, target, N, N, MPI_INT, MPI_MAX, win);
    }
    CALL(MPI_Win_fence, 0, win);
    for (int i = 0; i < N; ++i) {
        if (memory[i] != (i + 1) * size * (size + 1) / 2)
            conformance_error("sum[%d] = %d, expected %d", i, memory[i], (i + 1) * size * (size + 1) / 2);
        if (memory[N + i] != (i + 1) * size)
            conformance_error("max[%d] = %d, expected %d", i, memory[N + i], (i + 1) * size);
    }

    int replacement = 12345;
    if (rank == 0)
        for (int target = 0; target < size; ++target)
            CALL(MPI_Accumulate, &replacement, 1, MPI_INT, target, 2 * N, 1, MPI_INT, MPI_REPLACE, win);
    CALL(MPI_Win_fence, MPI_MODE_NOSUCCEED, win);
    if (memory[2 * N] != replacement)
        conformance_error("replaced element = %d", memory[2 * N]);

    CALL(MPI_Win_free, &win);
    return conformance_finish();
}
