/* MPI_Bcast whose root calls it from another call site than the other ranks (the root fills and sends
 * from one call statement, the others receive with another), from a fixed non-zero root three times,
 * then from a root that moves round the ranks, on MPI_COMM_WORLD. */
#include "coll.h"

enum { N = 8 };

static void bcast_from(int root, int rank, int round)
{
    int buf[N];
    if (rank == root) {
        for (int i = 0; i < N; ++i)
            buf[i] = 1000 * round + 10 * root + i;
        CALL(MPI_Bcast, buf, N, MPI_INT, root, MPI_COMM_WORLD);
    } else {
        for (int i = 0; i < N; ++i)
            buf[i] = -1;
        CALL(MPI_Bcast, buf, N, MPI_INT, root, MPI_COMM_WORLD);
        for (int i = 0; i < N; ++i)
            if (buf[i] != 1000 * round + 10 * root + i)
                conformance_error("round %d root %d: buf[%d] = %d", round, root, i, buf[i]);
    }
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    for (int round = 0; round < 3; ++round)
        bcast_from(1 % size, rank, round);
    for (int round = 3; round < 3 + size; ++round)
        bcast_from(round % size, rank, round);
    return conformance_finish();
}
