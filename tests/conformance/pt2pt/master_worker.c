/* Master and workers: rank 0 hands out tasks and receives results with MPI_ANY_SOURCE/MPI_ANY_TAG,
 * sending the next task to whichever worker answered (the status says which); a stop tag ends each
 * worker. Which worker does which task depends on timing; the results do not: each task is done once
 * and its result checked, and the workers' counts add up. */
#include "conformance.h"

enum { TASKS = 60, TAG_TASK = 1, TAG_RESULT = 2, TAG_STOP = 3 };

static long long work(int task) { return (long long)task * task + 17; }

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    int my_tasks = 0;
    if (rank == 0) {
        int next = 0, done[TASKS] = {0};
        for (int worker = 1; worker < size; ++worker) {
            if (next < TASKS) {
                CALL(MPI_Send, &next, 1, MPI_INT, worker, TAG_TASK, MPI_COMM_WORLD);
                ++next;
            } else
                CALL(MPI_Send, &next, 1, MPI_INT, worker, TAG_STOP, MPI_COMM_WORLD);
        }
        for (int received = 0; received < TASKS; ++received) {
            long long result[2];
            MPI_Status status;
            CALL(MPI_Recv, result, 2, MPI_LONG_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
            const int task = (int)result[0];
            if (status.MPI_TAG != TAG_RESULT || status.MPI_SOURCE < 1 || task < 0 || task >= TASKS || done[task]++ ||
                result[1] != work(task))
                conformance_error("result (%lld, %lld) from %d tag %d", result[0], result[1], status.MPI_SOURCE,
                                  status.MPI_TAG);
            const int tag = next < TASKS ? TAG_TASK : TAG_STOP;
            CALL(MPI_Send, &next, 1, MPI_INT, status.MPI_SOURCE, tag, MPI_COMM_WORLD);
            if (tag == TAG_TASK)
                ++next;
        }
    } else {
        for (;;) {
            int task;
            MPI_Status status;
            CALL(MPI_Recv, &task, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
            if (status.MPI_TAG == TAG_STOP)
                break;
            long long result[2] = {task, work(task)};
            CALL(MPI_Send, result, 2, MPI_LONG_LONG, 0, TAG_RESULT, MPI_COMM_WORLD);
            ++my_tasks;
        }
    }
    int total = 0;
    CALL(MPI_Reduce, &my_tasks, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && total != TASKS)
        conformance_error("the workers did %d tasks, not %d", total, TASKS);
    return conformance_finish();
}
