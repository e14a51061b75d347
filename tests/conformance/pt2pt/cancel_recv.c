/* MPI_Cancel of receives that no message can match (a tag nobody sends, from a given source and from
 * MPI_ANY_SOURCE): the cancel wins, MPI_Wait completes the request and MPI_Test_cancelled says so.
 * Messages sent afterwards with that tag go to later receives, not to the cancelled ones. */
#include "conformance.h"

enum { UNUSED_TAG = 70, TAG = 71 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int cancelled_buf[2] = {-7, -7};
    MPI_Request requests[2];
    CALL(MPI_Irecv, &cancelled_buf[0], 1, MPI_INT, left, UNUSED_TAG, MPI_COMM_WORLD, &requests[0]);
    CALL(MPI_Irecv, &cancelled_buf[1], 1, MPI_INT, MPI_ANY_SOURCE, UNUSED_TAG, MPI_COMM_WORLD, &requests[1]);
    for (int k = 0; k < 2; ++k) {
        CALL(MPI_Cancel, &requests[k]);
        MPI_Status status;
        if (k == 0)
            CALL(MPI_Wait, &requests[k], &status);
        else {
            int flag = 0;
            while (!flag)
                CALL(MPI_Test, &requests[k], &flag, &status);
        }
        int cancelled = 0;
        CALL(MPI_Test_cancelled, &status, &cancelled);
        if (!cancelled || requests[k] != MPI_REQUEST_NULL)
            conformance_error("receive %d: the cancel of a receive nothing matches did not win", k);
    }
    /* Everybody's cancels are done: now the tag is used, and the receives made now get it. */
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    int out = rank + 100, in = -1;
    MPI_Status status;
    CALL(MPI_Sendrecv, &out, 1, MPI_INT, right, UNUSED_TAG, &in, 1, MPI_INT, left, UNUSED_TAG, MPI_COMM_WORLD,
         &status);
    if (in != left + 100 || cancelled_buf[0] != -7 || cancelled_buf[1] != -7)
        conformance_error("after the cancels: got %d, cancelled buffers %d %d", in, cancelled_buf[0], cancelled_buf[1]);
    /* A cancel that comes after the receive completed does nothing. */
    MPI_Request request;
    CALL(MPI_Irecv, &in, 1, MPI_INT, left, TAG, MPI_COMM_WORLD, &request);
    CALL(MPI_Send, &out, 1, MPI_INT, right, TAG, MPI_COMM_WORLD);
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    int flag = 0;
    while (!flag)
        CALL(MPI_Request_get_status, request, &flag, &status);
    CALL(MPI_Cancel, &request);
    CALL(MPI_Wait, &request, &status);
    int cancelled = 1;
    CALL(MPI_Test_cancelled, &status, &cancelled);
    if (cancelled || in != left + 100 || status.MPI_SOURCE != left)
        conformance_error("a cancel after completion: cancelled %d value %d source %d", cancelled, in, status.MPI_SOURCE);
    return conformance_finish();
}
