/* Polling one request with MPI_Test: each odd rank posts an MPI_Irecv and tests it until it
 * completes (the status is set only then); its even partner sends after a barrier, so the receiver
 * polls at least once before. Then the other way round with an MPI_Isend tested to completion. */
#include "conformance.h"

enum { LENGTH = 100, TAG = 8 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int partner = rank ^ 1;
    const int paired = partner < size;
    double buf[LENGTH];
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Status status;
    int flag = 0, polls = 0;
    if (paired && rank % 2 == 1) {
        CALL(MPI_Irecv, buf, LENGTH, MPI_DOUBLE, partner, TAG, MPI_COMM_WORLD, &request);
        CALL(MPI_Test, &request, &flag, &status);
        ++polls;
        if (flag)
            conformance_error("MPI_Test completed a receive whose message was not sent yet");
    }
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    if (paired && rank % 2 == 0) {
        for (int i = 0; i < LENGTH; ++i)
            buf[i] = rank + i * 0.5;
        CALL(MPI_Isend, buf, LENGTH, MPI_DOUBLE, partner, TAG, MPI_COMM_WORLD, &request);
        while (!flag)
            CALL(MPI_Test, &request, &flag, MPI_STATUS_IGNORE);
        if (request != MPI_REQUEST_NULL)
            conformance_error("MPI_Test completed the send but left its request");
    } else if (paired) {
        while (!flag) {
            CALL(MPI_Test, &request, &flag, &status);
            ++polls;
        }
        int count;
        CALL(MPI_Get_count, &status, MPI_DOUBLE, &count);
        if (status.MPI_SOURCE != partner || status.MPI_TAG != TAG || count != LENGTH || request != MPI_REQUEST_NULL)
            conformance_error("status source %d tag %d count %d after %d polls", status.MPI_SOURCE, status.MPI_TAG,
                              count, polls);
        for (int i = 0; i < LENGTH; ++i)
            if (buf[i] != partner + i * 0.5) {
                conformance_error("[%d] = %g", i, buf[i]);
                break;
            }
    }
    return conformance_finish();
}
