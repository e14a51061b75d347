/* Collectives between polls of a wildcard receive with MPI_Testany, and a cancelled receive at the end:
 * the shape of HPCC's RandomAccess. Each of STEPS steps, every rank posts an MPI_Irecv from
 * MPI_ANY_SOURCE and MPI_ANY_TAG, polls it 1 + (7 * rank + step) % 13 times with MPI_Testany (none can
 * complete: no rank sends before the collective), joins an MPI_Allreduce of 8 to 64 bytes, sends its
 * right neighbour one message of as many bytes (MPI_Send, tag step % 3) and completes its receive with
 * MPI_Wait. How often a rank polls differs by rank and step, so ranks fold their steps into loops of
 * different shapes. At the end a wildcard receive that nothing matches is cancelled (MPI_Cancel,
 * MPI_Wait, MPI_Test_cancelled).
 * Exercises: at p = 0 the ranks' loops of different counts around the MPI_Allreduce merge into counts
 * drawn for all, or leave it in parts; replay must still make about as many MPI_Allreduce calls as
 * the program (one rank's count for all made 5 to 400% of them; parts were left out) and not stall.
 *
 * Usage: polled_collectives [STEPS]    (default 200) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { TAG_NEVER_SENT = 99, MOST = 8 };

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    const int steps = argc > 1 ? atoi(argv[1]) : 200;
    const int right = (rank + 1) % size;
    const long long DOUBLE_BYTES = sizeof(double);
    double checksum = 0;
    MPI_Status status_ignored_for_polls;

    for (int step = 0; step < steps; ++step) {
        double in[MOST] = {0}, out[MOST], sum[MOST];
        const int count = 1 + step % MOST;
        for (int i = 0; i < MOST; ++i)
            out[i] = rank + step + i;
        MPI_Request request;
        MPI_Irecv(in, MOST, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &request);
        log_recv("MPI_Irecv", MOST * DOUBLE_BYTES, LOG_ANY_SOURCE, LOG_ANY_TAG);
        const int polls = 1 + (7 * rank + step) % 13;
        for (int poll = 0; poll < polls; ++poll) {
            int index, flag;
            MPI_Testany(1, &request, &index, &flag, &status_ignored_for_polls);
            log_completion("MPI_Testany", flag && index != MPI_UNDEFINED);
        }
        MPI_Allreduce(out, sum, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        log_call("MPI_Allreduce", count * DOUBLE_BYTES);
        MPI_Send(out, count, MPI_DOUBLE, right, step % 3, MPI_COMM_WORLD);
        log_send("MPI_Send", count * DOUBLE_BYTES, right, step % 3);
        MPI_Status status;
        MPI_Wait(&request, &status);
        log_completion_matched("MPI_Wait", 1, 1, &status.MPI_SOURCE);
        checksum += sum[0] + in[0];
    }

    int never;
    MPI_Request request;
    MPI_Status status;
    MPI_Irecv(&never, 1, MPI_INT, MPI_ANY_SOURCE, TAG_NEVER_SENT, MPI_COMM_WORLD, &request);
    MPI_Cancel(&request);
    MPI_Wait(&request, &status);
    int cancelled;
    MPI_Test_cancelled(&status, &cancelled);
    log_recv_cancelled("MPI_Irecv", sizeof(int), LOG_ANY_SOURCE, TAG_NEVER_SENT, cancelled);
    log_call("MPI_Cancel", 0);
    log_completion_cancelled("MPI_Wait", 1, cancelled);
    log_call("MPI_Test_cancelled", 0);

    MPI_Barrier(MPI_COMM_WORLD);
    log_call("MPI_Barrier", 0);
    if (rank == 0)
        printf("polled_collectives: ranks %d steps %d checksum %.0f\n", size, steps, checksum);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
