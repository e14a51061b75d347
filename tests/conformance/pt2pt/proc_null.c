/* MPI_PROC_NULL as peer: a non-periodic shift where the ends talk to MPI_PROC_NULL (MPI_Send,
 * MPI_Recv, MPI_Isend/MPI_Irecv, MPI_Sendrecv, MPI_Probe, MPI_Iprobe). A receive from MPI_PROC_NULL
 * completes at once with the null status: source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0, and leaves
 * its buffer alone. */
#include "conformance.h"

enum { LENGTH = 4, TAG = 2 };

static void check_null(const MPI_Status *status, const int *buf, const char *what)
{
    int count = -1;
    CALL(MPI_Get_count, status, MPI_INT, &count);
    if (status->MPI_SOURCE != MPI_PROC_NULL || status->MPI_TAG != MPI_ANY_TAG || count != 0)
        conformance_error("%s from MPI_PROC_NULL: status source %d tag %d count %d", what, status->MPI_SOURCE,
                          status->MPI_TAG, count);
    if (buf != NULL && buf[0] != -7)
        conformance_error("%s from MPI_PROC_NULL wrote the buffer", what);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int out[LENGTH], in[LENGTH];
    for (int i = 0; i < LENGTH; ++i)
        out[i] = rank * 10 + i;
    MPI_Status status;
    /* Everybody, to MPI_PROC_NULL and from it. */
    in[0] = -7;
    CALL(MPI_Send, out, LENGTH, MPI_INT, MPI_PROC_NULL, TAG, MPI_COMM_WORLD);
    CALL(MPI_Recv, in, LENGTH, MPI_INT, MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &status);
    check_null(&status, in, "MPI_Recv");
    CALL(MPI_Probe, MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &status);
    check_null(&status, NULL, "MPI_Probe");
    int flag = 0;
    CALL(MPI_Iprobe, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    if (!flag)
        conformance_error("MPI_Iprobe from MPI_PROC_NULL: flag false");
    check_null(&status, NULL, "MPI_Iprobe");
    /* A shift to the right whose ends are MPI_PROC_NULL: blocking, then nonblocking, then MPI_Sendrecv. */
    for (int step = 0; step < 3; ++step) {
        in[0] = -7;
        if (step == 0) {
            if (rank % 2 == 0) {
                CALL(MPI_Send, out, LENGTH, MPI_INT, right, TAG, MPI_COMM_WORLD);
                CALL(MPI_Recv, in, LENGTH, MPI_INT, left, TAG, MPI_COMM_WORLD, &status);
            } else {
                CALL(MPI_Recv, in, LENGTH, MPI_INT, left, TAG, MPI_COMM_WORLD, &status);
                CALL(MPI_Send, out, LENGTH, MPI_INT, right, TAG, MPI_COMM_WORLD);
            }
        } else if (step == 1) {
            MPI_Request requests[2];
            MPI_Status statuses[2];
            CALL(MPI_Irecv, in, LENGTH, MPI_INT, left, TAG, MPI_COMM_WORLD, &requests[0]);
            CALL(MPI_Isend, out, LENGTH, MPI_INT, right, TAG, MPI_COMM_WORLD, &requests[1]);
            CALL(MPI_Waitall, 2, requests, statuses);
            status = statuses[0];
        } else {
            CALL(MPI_Sendrecv, out, LENGTH, MPI_INT, right, TAG, in, LENGTH, MPI_INT, left, TAG, MPI_COMM_WORLD,
                 &status);
        }
        if (left == MPI_PROC_NULL) {
            check_null(&status, in, step == 0 ? "MPI_Recv" : step == 1 ? "MPI_Irecv" : "MPI_Sendrecv");
            continue;
        }
        int count;
        CALL(MPI_Get_count, &status, MPI_INT, &count);
        if (status.MPI_SOURCE != left || status.MPI_TAG != TAG || count != LENGTH)
            conformance_error("step %d: status source %d tag %d count %d", step, status.MPI_SOURCE, status.MPI_TAG,
                              count);
        for (int i = 0; i < LENGTH; ++i)
            if (in[i] != left * 10 + i)
                conformance_error("step %d: [%d] = %d", step, i, in[i]);
    }
    return conformance_finish();
}
