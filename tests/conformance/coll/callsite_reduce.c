/* MPI_Reduce whose root calls it from another call site than the other ranks (two separate call
 * statements: the root's with a receive buffer, the others' without), to a fixed non-zero root three
 * times, then to a root that moves round the ranks, on MPI_COMM_WORLD. (A user reported that at p = 100
 * such a collective is split by the merge into several events and replayed on subsets: MPI_ERR_ROOT.) */
#include "coll.h"

enum { N = 4 };

static void reduce_to(int root, int rank, int size, int round)
{
    int in[N], out[N] = {-1, -1, -1, -1};
    for (int i = 0; i < N; ++i)
        in[i] = 100 * round + 10 * rank + i;
    if (rank == root)
        CALL(MPI_Reduce, in, out, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    else
        CALL(MPI_Reduce, in, NULL, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    for (int i = 0; rank == root && i < N; ++i)
        if (out[i] != 100 * round * size + 10 * size * (size - 1) / 2 + size * i)
            conformance_error("round %d root %d: out[%d] = %d", round, root, i, out[i]);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    for (int round = 0; round < 3; ++round)
        reduce_to(size > 2 ? 2 : size - 1, rank, size, round);
    for (int round = 3; round < 3 + size; ++round)
        reduce_to(round % size, rank, size, round);
    return conformance_finish();
}
