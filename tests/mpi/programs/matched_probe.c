/* Matched probes: each step every rank sends its neighbours messages whose size it chose, and
 * receives them the way codes do that cannot know the size beforehand: MPI_Mprobe from
 * MPI_ANY_SOURCE, MPI_Get_count, MPI_Mrecv of that message; then MPI_Improbe polled until it finds
 * the second one (tag chosen by the sender, probed with MPI_ANY_TAG) and MPI_Imrecv of it, completed
 * by MPI_Wait. A probe of MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC, received like any message.
 *
 * Usage: matched_probe [STEPS]    (default 5) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { MOST = 64, TAG_SIZED = 7, TAG_FIRST_FREE = 100 };

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    const int steps = argc > 1 ? atoi(argv[1]) : 5;
    const int right = (rank + 1) % size;
    const int left = (rank - 1 + size) % size;
    const long long int_bytes = sizeof(int);

    int out[2][MOST], in[MOST];
    long long sum = 0;
    for (int step = 0; step < steps; ++step) {
        const int to_right = 1 + (rank * 7 + step * 3) % MOST;
        const int to_left = 1 + (rank * 5 + step * 11) % MOST;
        const int tag_left = TAG_FIRST_FREE + step;
        for (int i = 0; i < MOST; ++i)
            out[0][i] = out[1][i] = rank + step + i;
        MPI_Request sends[2];
        MPI_Isend(out[0], to_right, MPI_INT, right, TAG_SIZED, MPI_COMM_WORLD, &sends[0]);
        log_send("MPI_Isend", to_right * int_bytes, right, TAG_SIZED);
        MPI_Isend(out[1], to_left, MPI_INT, left, tag_left, MPI_COMM_WORLD, &sends[1]);
        log_send("MPI_Isend", to_left * int_bytes, left, tag_left);

        MPI_Message message;
        MPI_Status status;
        MPI_Mprobe(MPI_ANY_SOURCE, TAG_SIZED, MPI_COMM_WORLD, &message, &status);
        log_recv_status("MPI_Mprobe", 0, MPI_ANY_SOURCE, TAG_SIZED, &status);
        int count;
        MPI_Get_count(&status, MPI_INT, &count);
        log_call("MPI_Get_count", 0);
        const int from = status.MPI_SOURCE;
        MPI_Mrecv(in, count, MPI_INT, &message, &status);
        log_recv("MPI_Mrecv", count * int_bytes, from, TAG_SIZED);
        for (int i = 0; i < count; ++i)
            sum += in[i];

        int found = 0;
        while (!found) {
            MPI_Improbe(right, MPI_ANY_TAG, MPI_COMM_WORLD, &found, &message, &status);
            if (found)
                log_recv_status("MPI_Improbe", 0, right, MPI_ANY_TAG, &status);
            else
                log_recv("MPI_Improbe", 0, right, LOG_ANY_TAG);
        }
        MPI_Get_count(&status, MPI_INT, &count);
        log_call("MPI_Get_count", 0);
        const int tag = status.MPI_TAG;
        MPI_Request receive;
        MPI_Imrecv(in, count, MPI_INT, &message, &receive);
        log_recv("MPI_Imrecv", count * int_bytes, right, tag);
        MPI_Wait(&receive, MPI_STATUS_IGNORE);
        log_completion("MPI_Wait", 1);
        for (int i = 0; i < count; ++i)
            sum += in[i] * (tag - TAG_FIRST_FREE + 1);

        MPI_Waitall(2, sends, MPI_STATUSES_IGNORE);
        log_completion("MPI_Waitall", 2);
    }

    MPI_Message nothing;
    MPI_Status status;
    MPI_Mprobe(MPI_PROC_NULL, TAG_SIZED, MPI_COMM_WORLD, &nothing, &status);
    log_recv_status("MPI_Mprobe", 0, MPI_PROC_NULL, TAG_SIZED, &status);
    MPI_Mrecv(in, MOST, MPI_INT, &nothing, MPI_STATUS_IGNORE);
    log_recv("MPI_Mrecv", MOST * int_bytes, LOG_PROC_NULL, LOG_ANY_TAG);

    long long total = 0;
    MPI_Allreduce(&sum, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", sizeof(long long));
    if (rank == 0)
        printf("matched_probe: ranks %d steps %d checksum %lld\n", size, steps, total);

    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
