/* MPI_THREAD_MULTIPLE requested and provided, but only the main thread communicates (a helper thread
 * computes meanwhile, calling MPI_Query_thread and MPI_Is_thread_main only): MPI_Isend/MPI_Irecv with
 * both neighbours completed by MPI_Waitall, and an MPI_Reduce; the control case of the family. */
#include "../conformance.h"

enum { ITERATIONS = 4, N = 64 };

static double helper_result;

static void *helper(void *argument)
{
    (void)argument;
    int level = -1, is_main = 1;
    CALL(MPI_Query_thread, &level);
    CALL(MPI_Is_thread_main, &is_main);
    if (level != MPI_THREAD_MULTIPLE || is_main)
        conformance_error("helper thread: query_thread %d, is_thread_main %d", level, is_main);
    double sum = 0;
    for (int i = 1; i <= 100000; ++i)
        sum += 1.0 / i;
    helper_result = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    conformance_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        conformance_error("MPI_THREAD_MULTIPLE not provided (%d)", provided);
        return conformance_finish();
    }
    pthread_t thread;
    pthread_create(&thread, NULL, helper, NULL);

    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int iteration = 0; iteration < ITERATIONS; ++iteration) {
        int to_right[N], to_left[N], from_left[N], from_right[N];
        for (int i = 0; i < N; ++i) {
            to_right[i] = rank * 1000 + iteration * 100 + i;
            to_left[i] = -to_right[i];
        }
        MPI_Request requests[4];
        CALL(MPI_Irecv, from_left, N, MPI_INT, left, 1, MPI_COMM_WORLD, &requests[0]);
        CALL(MPI_Irecv, from_right, N, MPI_INT, right, 2, MPI_COMM_WORLD, &requests[1]);
        CALL(MPI_Isend, to_right, N, MPI_INT, right, 1, MPI_COMM_WORLD, &requests[2]);
        CALL(MPI_Isend, to_left, N, MPI_INT, left, 2, MPI_COMM_WORLD, &requests[3]);
        CALL(MPI_Waitall, 4, requests, MPI_STATUSES_IGNORE);
        for (int i = 0; i < N; ++i)
            if (from_left[i] != left * 1000 + iteration * 100 + i || from_right[i] != -(right * 1000 + iteration * 100 + i)) {
                conformance_error("iteration %d: element %d from left %d, from right %d", iteration, i, from_left[i],
                                  from_right[i]);
                break;
            }
        int mine = rank, sum = -1;
        CALL(MPI_Reduce, &mine, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0 && sum != size * (size - 1) / 2)
            conformance_error("iteration %d: reduce %d", iteration, sum);
    }
    pthread_join(thread, NULL);
    if (helper_result < 12.0 || helper_result > 12.1)
        conformance_error("helper computed %g", helper_result);
    return conformance_finish();
}
