/* Polling with MPI_Testall: a ring exchange in both directions whose requests are tested together
 * until all are complete (flag true: statuses set, requests null). Rank 0 sends late, after a
 * barrier, so its neighbours poll. */
#include "conformance.h"

enum { LENGTH = 20, ROUNDS = 3 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[LENGTH], from_left[LENGTH], from_right[LENGTH];
    for (int round = 0; round < ROUNDS; ++round) {
        for (int i = 0; i < LENGTH; ++i)
            out[i] = rank * 1000 + round * 100 + i;
        MPI_Request requests[4];
        MPI_Status statuses[4];
        CALL(MPI_Irecv, from_left, LENGTH, MPI_INT, left, 1, MPI_COMM_WORLD, &requests[0]);
        CALL(MPI_Irecv, from_right, LENGTH, MPI_INT, right, 2, MPI_COMM_WORLD, &requests[1]);
        if (rank == 0)
            CALL(MPI_Barrier, MPI_COMM_WORLD);
        CALL(MPI_Isend, out, LENGTH, MPI_INT, right, 1, MPI_COMM_WORLD, &requests[2]);
        CALL(MPI_Isend, out, LENGTH, MPI_INT, left, 2, MPI_COMM_WORLD, &requests[3]);
        if (rank != 0)
            CALL(MPI_Barrier, MPI_COMM_WORLD);
        int flag = 0;
        while (!flag)
            CALL(MPI_Testall, 4, requests, &flag, statuses);
        for (int k = 0; k < 4; ++k)
            if (requests[k] != MPI_REQUEST_NULL)
                conformance_error("round %d: request %d active after MPI_Testall said all done", round, k);
        if (statuses[0].MPI_SOURCE != left || statuses[0].MPI_TAG != 1 || statuses[1].MPI_SOURCE != right ||
            statuses[1].MPI_TAG != 2)
            conformance_error("round %d: statuses (%d, %d) and (%d, %d)", round, statuses[0].MPI_SOURCE,
                              statuses[0].MPI_TAG, statuses[1].MPI_SOURCE, statuses[1].MPI_TAG);
        for (int i = 0; i < LENGTH; ++i)
            if (from_left[i] != left * 1000 + round * 100 + i || from_right[i] != right * 1000 + round * 100 + i) {
                conformance_error("round %d: [%d] = %d, %d", round, i, from_left[i], from_right[i]);
                break;
            }
    }
    return conformance_finish();
}
