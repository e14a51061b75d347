/* Non-blocking collectives that move data on two communicators started in opposite orders by
 * different ranks: even ranks start MPI_Iallreduce on their half of a split of the world and then
 * MPI_Ibcast on a duplicate of the world; odd ranks the other way round; one MPI_Waitall completes
 * both; three rounds, the broadcast's root moving. */
#include "coll.h"

enum { N = 5 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    MPI_Comm half, dup;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, rank < size / 2 ? 0 : 1, rank, &half);
    CALL(MPI_Comm_dup, MPI_COMM_WORLD, &dup);
    const int first = rank < size / 2 ? 0 : size / 2, last = rank < size / 2 ? size / 2 - 1 : size - 1;
    for (int round = 0; round < 3; ++round) {
        const int root = (round + 1) % size;
        int buf[N], in = rank + round, sum = -1;
        for (int i = 0; i < N; ++i)
            buf[i] = rank == root ? 100 * round + i : -1;
        MPI_Request requests[2];
        if (rank % 2 == 0) {
            CALL(MPI_Iallreduce, &in, &sum, 1, MPI_INT, MPI_SUM, half, &requests[0]);
            CALL(MPI_Ibcast, buf, N, MPI_INT, root, dup, &requests[1]);
        } else {
            CALL(MPI_Ibcast, buf, N, MPI_INT, root, dup, &requests[1]);
            CALL(MPI_Iallreduce, &in, &sum, 1, MPI_INT, MPI_SUM, half, &requests[0]);
        }
        CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
        int expected = 0;
        for (int r = first; r <= last; ++r)
            expected += r + round;
        if (sum != expected)
            conformance_error("round %d: sum %d, expected %d", round, sum, expected);
        for (int i = 0; i < N; ++i)
            if (buf[i] != 100 * round + i)
                conformance_error("round %d: buf[%d] = %d", round, i, buf[i]);
    }
    CALL(MPI_Comm_free, &dup);
    CALL(MPI_Comm_free, &half);
    return conformance_finish();
}
