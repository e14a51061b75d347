/* Windows made and freed in a loop: each iteration creates a window (MPI_Win_create) of a size that
 * grows with the iteration, puts into the right neighbour in a fence epoch, checks, and frees it
 * (MPI_Win_free): handles are freed and given out again. */
#include "../conformance.h"

enum { ITERATIONS = 8, N = 4 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    for (int iteration = 0; iteration < ITERATIONS; ++iteration) {
        const int count = N * (iteration + 1);
        int *memory = malloc(count * sizeof(int));
        int *out = malloc(count * sizeof(int));
        for (int i = 0; i < count; ++i) {
            memory[i] = -1;
            out[i] = rank * 10000 + iteration * 100 + i;
        }
        MPI_Win win;
        CALL(MPI_Win_create, memory, (MPI_Aint)(count * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        CALL(MPI_Win_fence, 0, win);
        CALL(MPI_Put, out, count, MPI_INT, right, 0, count, MPI_INT, win);
        CALL(MPI_Win_fence, 0, win);
        for (int i = 0; i < count; ++i)
            if (memory[i] != left * 10000 + iteration * 100 + i)
                conformance_error("iteration %d: memory[%d] = %d", iteration, i, memory[i]);
        CALL(MPI_Win_free, &win);
        if (win != MPI_WIN_NULL)
            conformance_error("iteration %d: MPI_Win_free left the handle", iteration);
        free(memory);
        free(out);
    }
    return conformance_finish();
}
