/* Windows whose sizes differ per rank: rank r exposes r*1024 bytes (rank 0 none). In a fence epoch
 * every rank puts a 256-byte block into every rank r > 0, at a displacement that follows the origin's
 * rank; then every rank gets each window r > 0 whole (r*1024 bytes) and checks it. */
#include "../conformance.h"

enum { BYTES_PER_RANK = 1024, BLOCK = 64 /* ints: 256 bytes */ };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    if (size > 5 && rank == 0)
        conformance_error("at most 5 ranks: the blocks must fit in rank 1's window");

    const int ints = rank * BYTES_PER_RANK / (int)sizeof(int);
    int *memory = ints > 0 ? malloc(ints * sizeof(int)) : NULL;
    for (int i = 0; i < ints; ++i)
        memory[i] = -1;
    MPI_Win win;
    CALL(MPI_Win_create, memory, (MPI_Aint)ints * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    int out[BLOCK];
    for (int i = 0; i < BLOCK; ++i)
        out[i] = rank * 1000 + i;
    CALL(MPI_Win_fence, 0, win);
    for (int target = 1; target < size; ++target)
        CALL(MPI_Put, out, BLOCK, MPI_INT, target, (MPI_Aint)rank * BLOCK, BLOCK, MPI_INT, win);
    CALL(MPI_Win_fence, 0, win);

    int *in = malloc((size_t)size * BYTES_PER_RANK);
    for (int target = 1; target < size; ++target) {
        const int count = target * BYTES_PER_RANK / (int)sizeof(int);
        for (int i = 0; i < count; ++i)
            in[i] = -9;
        CALL(MPI_Get, in, count, MPI_INT, target, 0, count, MPI_INT, win);
        CALL(MPI_Win_fence, 0, win);
        for (int i = 0; i < count; ++i) {
            const int origin = i / BLOCK;
            const int expected = origin < size ? origin * 1000 + i % BLOCK : -1;
            if (in[i] != expected) {
                conformance_error("window of rank %d [%d] = %d, expected %d", target, i, in[i], expected);
                break;
            }
        }
    }

    CALL(MPI_Win_free, &win);
    free(in);
    free(memory);
    return conformance_finish();
}
