/* Zero-byte messages: MPI_Send, MPI_Ssend, MPI_Isend and MPI_Sendrecv of count 0 (one from a NULL
 * buffer) into receives that would take more. Each must match (source and tag in the status),
 * MPI_Get_count must say 0, and the receive buffer must stay untouched. */
#include "conformance.h"

enum { TAG = 90 };

static void check(const MPI_Status *status, int source, int tag, const int *buf, const char *what)
{
    int count = -1;
    CALL(MPI_Get_count, status, MPI_INT, &count);
    if (status->MPI_SOURCE != source || status->MPI_TAG != tag || count != 0 || buf[0] != -7)
        conformance_error("%s: status source %d tag %d count %d, buffer %d", what, status->MPI_SOURCE, status->MPI_TAG,
                          count, buf[0]);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[4] = {1, 2, 3, 4}, in[4] = {-7};
    MPI_Status status;
    MPI_Request requests[2];
    /* MPI_Send into a pre-posted MPI_Irecv. */
    CALL(MPI_Irecv, in, 4, MPI_INT, left, TAG, MPI_COMM_WORLD, &requests[0]);
    CALL(MPI_Send, out, 0, MPI_INT, right, TAG, MPI_COMM_WORLD);
    CALL(MPI_Wait, &requests[0], &status);
    check(&status, left, TAG, in, "MPI_Send of 0");
    /* MPI_Ssend from a NULL buffer, even ranks first. */
    if (rank % 2 == 0) {
        CALL(MPI_Ssend, NULL, 0, MPI_INT, right, TAG + 1, MPI_COMM_WORLD);
        CALL(MPI_Recv, in, 4, MPI_INT, left, TAG + 1, MPI_COMM_WORLD, &status);
    } else {
        CALL(MPI_Recv, in, 4, MPI_INT, left, TAG + 1, MPI_COMM_WORLD, &status);
        CALL(MPI_Ssend, NULL, 0, MPI_INT, right, TAG + 1, MPI_COMM_WORLD);
    }
    check(&status, left, TAG + 1, in, "MPI_Ssend of 0");
    /* Nonblocking, both ways. */
    MPI_Status statuses[2];
    CALL(MPI_Irecv, in, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &requests[0]);
    CALL(MPI_Isend, out, 0, MPI_BYTE, right, TAG + 2, MPI_COMM_WORLD, &requests[1]);
    CALL(MPI_Waitall, 2, requests, statuses);
    check(&statuses[0], left, TAG + 2, in, "MPI_Isend of 0");
    /* MPI_Sendrecv of 0, and a zero-count receive of a zero-byte message. */
    CALL(MPI_Sendrecv, out, 0, MPI_INT, right, TAG + 3, in, 4, MPI_INT, left, TAG + 3, MPI_COMM_WORLD, &status);
    check(&status, left, TAG + 3, in, "MPI_Sendrecv of 0");
    CALL(MPI_Sendrecv, out, 0, MPI_INT, right, TAG + 4, in, 0, MPI_INT, left, TAG + 4, MPI_COMM_WORLD, &status);
    check(&status, left, TAG + 4, in, "MPI_Sendrecv of 0 into 0");
    /* Many in a row keep their order: their tags say which. */
    for (int k = 0; k < 10; ++k) {
        CALL(MPI_Isend, out, 0, MPI_INT, right, 200 + k, MPI_COMM_WORLD, &requests[0]);
        CALL(MPI_Request_free, &requests[0]); /* an active send freed: it still goes */
    }
    for (int k = 0; k < 10; ++k) {
        CALL(MPI_Recv, in, 4, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        check(&status, left, 200 + k, in, "one of ten");
    }
    return conformance_finish();
}
