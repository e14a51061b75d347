/* Non-blocking collectives whose ranks start them from different call sites: MPI_Ibcast started by
 * the root from one call statement and by the others from another, and MPI_Iallreduce started by even
 * and odd ranks from two call statements, both completed by one MPI_Waitall; a fixed non-zero root
 * three times, then a root that moves round the ranks; on MPI_COMM_WORLD. */
#include "coll.h"

enum { N = 6 };

static void round_from(int root, int rank, int size, int round)
{
    int buf[N], in = rank + round, sum = -1;
    MPI_Request requests[2];
    for (int i = 0; i < N; ++i)
        buf[i] = rank == root ? 1000 * round + 10 * root + i : -1;
    if (rank == root)
        CALL(MPI_Ibcast, buf, N, MPI_INT, root, MPI_COMM_WORLD, &requests[0]);
    else
        CALL(MPI_Ibcast, buf, N, MPI_INT, root, MPI_COMM_WORLD, &requests[0]);
    if (rank % 2 == 0)
        CALL(MPI_Iallreduce, &in, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &requests[1]);
    else
        CALL(MPI_Iallreduce, &in, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &requests[1]);
    CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
    for (int i = 0; i < N; ++i)
        if (buf[i] != 1000 * round + 10 * root + i)
            conformance_error("round %d root %d: buf[%d] = %d", round, root, i, buf[i]);
    if (sum != size * (size - 1) / 2 + size * round)
        conformance_error("round %d: sum %d", round, sum);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    for (int round = 0; round < 3; ++round)
        round_from(size - 1, rank, size, round);
    for (int round = 3; round < 3 + size; ++round)
        round_from(round % size, rank, size, round);
    return conformance_finish();
}
