/* A cancelled send: every rank sends its right neighbour a message with MPI_Isend that nobody has
 * asked for yet, cancels it, completes it with MPI_Wait and asks MPI_Test_cancelled whether the
 * cancel won. Libraries differ (Open MPI does not cancel sends, MPICH may): each rank tells its right
 * neighbour the outcome (MPI_Sendrecv), and a neighbour whose message was not cancelled receives it.
 * Then MPI_Sendrecv_replace around the ring, whose one buffer is sent and received.
 *
 * Usage: cancel_send */
#include <mpi.h>
#include <stdio.h>

#include "logged_start.h"

enum { LENGTH = 16, TAG_CANCELLED = 11, TAG_OUTCOME = 12, TAG_REPLACE = 13 };

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    const int right = (rank + 1) % size;
    const int left = (rank - 1 + size) % size;
    const long long bytes = LENGTH * (long long)sizeof(int);

    int out[LENGTH], in[LENGTH];
    for (int i = 0; i < LENGTH; ++i)
        out[i] = rank * 100 + i;
    MPI_Request request;
    MPI_Status status;
    MPI_Isend(out, LENGTH, MPI_INT, right, TAG_CANCELLED, MPI_COMM_WORLD, &request);
    MPI_Cancel(&request);
    MPI_Wait(&request, &status);
    int cancelled;
    MPI_Test_cancelled(&status, &cancelled);
    log_send_cancelled("MPI_Isend", bytes, right, TAG_CANCELLED, cancelled);
    log_call("MPI_Cancel", 0);
    log_completion_cancelled("MPI_Wait", 1, cancelled);
    log_call("MPI_Test_cancelled", 0);

    int left_cancelled;
    MPI_Sendrecv(&cancelled, 1, MPI_INT, right, TAG_OUTCOME, &left_cancelled, 1, MPI_INT, left, TAG_OUTCOME,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    log_sendrecv("MPI_Sendrecv", 2 * (long long)sizeof(int), right, TAG_OUTCOME, left, TAG_OUTCOME, 0, 0);
    long long sum = 0;
    if (!left_cancelled) {
        MPI_Recv(in, LENGTH, MPI_INT, left, TAG_CANCELLED, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        log_recv("MPI_Recv", bytes, left, TAG_CANCELLED);
        for (int i = 0; i < LENGTH; ++i)
            sum += in[i];
    }

    MPI_Sendrecv_replace(out, LENGTH, MPI_INT, right, TAG_REPLACE, left, TAG_REPLACE, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    log_sendrecv("MPI_Sendrecv_replace", 2 * bytes, right, TAG_REPLACE, left, TAG_REPLACE, 0, 0);
    for (int i = 0; i < LENGTH; ++i)
        sum += out[i];

    long long total = 0, sends_cancelled = 0, mine = cancelled;
    MPI_Allreduce(&sum, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", sizeof(long long));
    MPI_Allreduce(&mine, &sends_cancelled, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", sizeof(long long));
    /* Whether the library cancels sends is its own business: the checksum says what was received. */
    if (rank == 0)
        printf("cancel_send: ranks %d checksum %lld\n", size, total);
    (void)sends_cancelled;

    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
