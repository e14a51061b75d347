/* MPI_Request_get_status: it says whether a request is complete without freeing it. Each rank polls
 * its receive with MPI_Request_get_status until the flag is set (the status then names the sender),
 * checks the request is still there, and completes it with MPI_Wait; its send likewise. The
 * partner sends only after a barrier, so the first poll of each receiver sees "not yet". */
#include "conformance.h"

enum { LENGTH = 5, TAG = 11 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[LENGTH], in[LENGTH];
    for (int i = 0; i < LENGTH; ++i)
        out[i] = rank * 10 + i;
    MPI_Request receive, send;
    MPI_Status status;
    int flag = 1;
    CALL(MPI_Irecv, in, LENGTH, MPI_INT, left, TAG, MPI_COMM_WORLD, &receive);
    CALL(MPI_Request_get_status, receive, &flag, &status);
    if (flag)
        conformance_error("MPI_Request_get_status: complete before anything was sent");
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    CALL(MPI_Isend, out, LENGTH, MPI_INT, right, TAG, MPI_COMM_WORLD, &send);
    flag = 0;
    while (!flag)
        CALL(MPI_Request_get_status, receive, &flag, &status);
    int count;
    CALL(MPI_Get_count, &status, MPI_INT, &count);
    if (receive == MPI_REQUEST_NULL || status.MPI_SOURCE != left || status.MPI_TAG != TAG || count != LENGTH)
        conformance_error("MPI_Request_get_status: source %d tag %d count %d, request %s", status.MPI_SOURCE,
                          status.MPI_TAG, count, receive == MPI_REQUEST_NULL ? "freed" : "kept");
    for (int i = 0; i < LENGTH; ++i)
        if (in[i] != left * 10 + i)
            conformance_error("[%d] = %d", i, in[i]);
    /* Asked again, still complete, still there. */
    CALL(MPI_Request_get_status, receive, &flag, MPI_STATUS_IGNORE);
    if (!flag || receive == MPI_REQUEST_NULL)
        conformance_error("MPI_Request_get_status asked again: flag %d", flag);
    CALL(MPI_Wait, &receive, &status);
    if (receive != MPI_REQUEST_NULL || status.MPI_SOURCE != left)
        conformance_error("MPI_Wait after MPI_Request_get_status: source %d", status.MPI_SOURCE);
    flag = 0;
    while (!flag)
        CALL(MPI_Request_get_status, send, &flag, MPI_STATUS_IGNORE);
    CALL(MPI_Wait, &send, MPI_STATUS_IGNORE);
    return conformance_finish();
}
