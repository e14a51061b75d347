/* Rank 0 hands out TASKS tasks of varying length to the other ranks; a worker receives a task from
 * rank 0, computes, and sends the result back; the master takes results with
 * MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG) and gives that worker the next task, or a stop message when
 * none is left. After a barrier each worker reports how many tasks it did, which the master collects
 * with MPI_Irecv(MPI_ANY_SOURCE) + MPI_Wait (so what matched is known only at the completion call),
 * and the job ends with an MPI_Bcast of the total and an MPI_Gather of each rank's share.
 *
 * Which worker gets which task depends on timing, so message sizes per rank differ from run to run:
 * the call log of the same run is the truth, and the printed output holds only sums, which do not.
 * Exercises: non-SPMD behaviour, wildcard receives (matched at the call and at completion), MPI_ANY_TAG,
 * zero-byte messages, receive capacity larger than the message.
 *
 * Usage: master_worker [TASKS]    (default 40; needs at least 2 ranks) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { MAX_TASK_LENGTH = 64 };
enum { TAG_TASK = 1, TAG_STOP = 2, TAG_RESULT = 3, TAG_REPORT = 4 };

static const long long task_capacity_bytes = MAX_TASK_LENGTH * (long long)sizeof(int);

static int task_length(int task)
{
    return 1 + (task * 7) % MAX_TASK_LENGTH;
}

/* Sends task `task` to `worker`, or a stop message (no data) when all are handed out. */
static void send_task_or_stop(int task, int tasks, int worker)
{
    if (task < tasks) {
        int data[MAX_TASK_LENGTH];
        const int length = task_length(task);
        for (int i = 0; i < length; ++i)
            data[i] = task * 100 + i;
        MPI_Send(data, length, MPI_INT, worker, TAG_TASK, MPI_COMM_WORLD);
        log_send("MPI_Send", length * (long long)sizeof(int), worker, TAG_TASK);
    } else {
        MPI_Send(NULL, 0, MPI_INT, worker, TAG_STOP, MPI_COMM_WORLD);
        log_send("MPI_Send", 0, worker, TAG_STOP);
    }
}

/* Returns {tasks done, sum of results} of this rank: only the master's sum is the total. */
static void master(int size, int tasks, long long share[2])
{
    int next_task = 0;
    for (int worker = 1; worker < size; ++worker)
        send_task_or_stop(next_task++, tasks, worker);

    int busy = 0;
    for (int worker = 1; worker < size; ++worker)
        busy += worker - 1 < tasks;
    long long total = 0;
    while (busy > 0) {
        long long result[2]; /* task, value */
        MPI_Status status;
        MPI_Recv(result, 2, MPI_LONG_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        log_recv_status("MPI_Recv", 2 * sizeof(long long), MPI_ANY_SOURCE, MPI_ANY_TAG, &status);
        total += result[1];
        if (next_task >= tasks)
            --busy;
        send_task_or_stop(next_task++, tasks, status.MPI_SOURCE);
    }

    /* Reports are sent only after this barrier, so the wildcard receives above cannot take one. */
    MPI_Barrier(MPI_COMM_WORLD);
    log_call("MPI_Barrier", 0);
    long long reported = 0;
    for (int worker = 1; worker < size; ++worker) {
        int done;
        MPI_Request request;
        MPI_Status status;
        MPI_Irecv(&done, 1, MPI_INT, MPI_ANY_SOURCE, TAG_REPORT, MPI_COMM_WORLD, &request);
        log_recv("MPI_Irecv", sizeof(int), LOG_ANY_SOURCE, TAG_REPORT);
        MPI_Wait(&request, &status);
        log_completion_matched("MPI_Wait", 1, 1, &status.MPI_SOURCE);
        reported += done;
    }
    share[0] = reported;
    share[1] = total;
}

static void worker(long long share[2])
{
    share[0] = share[1] = 0;
    for (;;) {
        int data[MAX_TASK_LENGTH];
        MPI_Status status;
        MPI_Recv(data, MAX_TASK_LENGTH, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        log_recv_status("MPI_Recv", task_capacity_bytes, 0, MPI_ANY_TAG, &status);
        if (status.MPI_TAG == TAG_STOP)
            break;
        int length;
        MPI_Get_count(&status, MPI_INT, &length);
        log_call("MPI_Get_count", 0);
        long long result[2] = {data[0] / 100, 0};
        for (int i = 0; i < length; ++i)
            result[1] += (long long)data[i] * data[i] % 1009;
        MPI_Send(result, 2, MPI_LONG_LONG, 0, TAG_RESULT, MPI_COMM_WORLD);
        log_send("MPI_Send", 2 * sizeof(long long), 0, TAG_RESULT);
        share[0] += 1;
        share[1] += result[1];
    }
    MPI_Barrier(MPI_COMM_WORLD);
    log_call("MPI_Barrier", 0);
    int done = (int)share[0];
    MPI_Send(&done, 1, MPI_INT, 0, TAG_REPORT, MPI_COMM_WORLD);
    log_send("MPI_Send", sizeof(int), 0, TAG_REPORT);
}

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    if (size < 2) {
        fprintf(stderr, "master_worker: needs at least 2 ranks\n");
        MPI_Finalize();
        log_call("MPI_Finalize", 0);
        call_log_close();
        return 1;
    }

    const int tasks = argc > 1 ? atoi(argv[1]) : 40;
    long long share[2];
    if (rank == 0)
        master(size, tasks, share);
    else
        worker(share);

    /* Everyone learns the total; the master gathers every worker's share to check it against. */
    long long total = share[1];
    MPI_Bcast(&total, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    log_call_peer("MPI_Bcast", sizeof(long long), 0);

    long long *shares = rank == 0 ? malloc(2 * (size_t)size * sizeof(long long)) : NULL;
    MPI_Gather(share, 2, MPI_LONG_LONG, shares, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    /* Send side everywhere; the receive side (recvcount x type) counts only at the root. */
    log_call_peer("MPI_Gather", (rank == 0 ? 4 : 2) * (long long)sizeof(long long), 0);

    if (rank == 0) {
        long long tasks_done = 0, worker_total = 0;
        for (int worker_rank = 1; worker_rank < size; ++worker_rank) {
            tasks_done += shares[2 * worker_rank];
            worker_total += shares[2 * worker_rank + 1];
        }
        printf("master_worker: ranks %d tasks %d reported %lld done %lld result total %lld %s\n", size, tasks,
               shares[0], tasks_done, total, worker_total == total ? "(workers agree)" : "(WORKERS DISAGREE)");
        free(shares);
    }

    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
