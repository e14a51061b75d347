/* Active target with fences: MPI_Win_create over a buffer of the program's own, then MPI_Put of a block
 * to the right neighbour (at a displacement that follows the origin's rank) and MPI_Get of a block from
 * the left neighbour, each in its own MPI_Win_fence epoch; data checked after each epoch. */
#include "../conformance.h"

enum { N = 16 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int *memory = malloc(sizeof(int) * N * size);
    for (int i = 0; i < N * size; ++i)
        memory[i] = -1;
    MPI_Win win;
    CALL(MPI_Win_create, memory, (MPI_Aint)(sizeof(int) * N * size), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    int out[N], in[N];
    for (int i = 0; i < N; ++i)
        out[i] = rank * 100 + i;
    CALL(MPI_Win_fence, MPI_MODE_NOPRECEDE, win);
    CALL(MPI_Put, out, N, MPI_INT, right, (MPI_Aint)rank * N, N, MPI_INT, win);
    CALL(MPI_Win_fence, 0, win);
    for (int s = 0; s < size; ++s)
        for (int i = 0; i < N; ++i) {
            const int expected = s == left ? left * 100 + i : -1;
            if (memory[s * N + i] != expected)
                conformance_error("after put: memory[%d] = %d, expected %d", s * N + i, memory[s * N + i], expected);
        }

    /* The left neighbour's window holds, at the slot of its own left neighbour, what that one put. */
    const int left_left = (left + size - 1) % size;
    for (int i = 0; i < N; ++i)
        in[i] = -2;
    CALL(MPI_Get, in, N, MPI_INT, left, (MPI_Aint)left_left * N, N, MPI_INT, win);
    CALL(MPI_Win_fence, MPI_MODE_NOSUCCEED, win);
    for (int i = 0; i < N; ++i)
        if (in[i] != left_left * 100 + i)
            conformance_error("after get: in[%d] = %d, expected %d", i, in[i], left_left * 100 + i);

    CALL(MPI_Win_free, &win);
    free(memory);
    return conformance_finish();
}
