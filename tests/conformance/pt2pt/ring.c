/* Blocking MPI_Send/MPI_Recv around a ring: every rank sends its right neighbour a message and
 * receives its left neighbour's, at once (even ranks send first, odd ranks receive first, which cannot
 * deadlock, even on an odd ring), several rounds; data and status are checked. */
#include "conformance.h"

enum { ROUNDS = 6, LENGTH = 16, TAG = 3 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[LENGTH], in[LENGTH];
    for (int round = 0; round < ROUNDS; ++round) {
        for (int i = 0; i < LENGTH; ++i) {
            out[i] = rank * 10000 + round * 100 + i;
            in[i] = -1;
        }
        MPI_Status status;
        if (rank % 2 == 0) {
            CALL(MPI_Send, out, LENGTH, MPI_INT, right, TAG, MPI_COMM_WORLD);
            CALL(MPI_Recv, in, LENGTH, MPI_INT, left, TAG, MPI_COMM_WORLD, &status);
        } else {
            CALL(MPI_Recv, in, LENGTH, MPI_INT, left, TAG, MPI_COMM_WORLD, &status);
            CALL(MPI_Send, out, LENGTH, MPI_INT, right, TAG, MPI_COMM_WORLD);
        }
        int count;
        CALL(MPI_Get_count, &status, MPI_INT, &count);
        if (status.MPI_SOURCE != left || status.MPI_TAG != TAG || count != LENGTH)
            conformance_error("round %d: status source %d tag %d count %d, expected %d %d %d", round,
                              status.MPI_SOURCE, status.MPI_TAG, count, left, TAG, LENGTH);
        for (int i = 0; i < LENGTH; ++i)
            if (in[i] != left * 10000 + round * 100 + i) {
                conformance_error("round %d: in[%d] = %d", round, i, in[i]);
                break;
            }
    }
    return conformance_finish();
}
