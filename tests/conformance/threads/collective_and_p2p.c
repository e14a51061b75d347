/* MPI_THREAD_MULTIPLE: a second thread does collectives (MPI_Bcast, MPI_Allreduce) on its own
 * duplicate of MPI_COMM_WORLD while the main thread does point-to-point (MPI_Sendrecv with both
 * neighbours) on MPI_COMM_WORLD, at the same time. */
#include "../conformance.h"

enum { ITERATIONS = 5, N = 32 };

static int rank, size;
static MPI_Comm collective_comm;

static void *collectives(void *argument)
{
    (void)argument;
    for (int iteration = 0; iteration < ITERATIONS; ++iteration) {
        const int root = iteration % size;
        int data[N];
        for (int i = 0; i < N; ++i)
            data[i] = rank == root ? iteration * 100 + i : -1;
        CALL(MPI_Bcast, data, N, MPI_INT, root, collective_comm);
        for (int i = 0; i < N; ++i)
            if (data[i] != iteration * 100 + i) {
                conformance_error("bcast %d: data[%d] = %d", iteration, i, data[i]);
                break;
            }
        long mine = rank + iteration, sum = 0;
        CALL(MPI_Allreduce, &mine, &sum, 1, MPI_LONG, MPI_SUM, collective_comm);
        if (sum != (long)size * (size - 1) / 2 + (long)size * iteration)
            conformance_error("allreduce %d: sum %ld", iteration, sum);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    conformance_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        conformance_error("MPI_THREAD_MULTIPLE not provided (%d)", provided);
        return conformance_finish();
    }
    CALL(MPI_Comm_dup, MPI_COMM_WORLD, &collective_comm);
    pthread_t thread;
    pthread_create(&thread, NULL, collectives, NULL);

    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int iteration = 0; iteration < ITERATIONS; ++iteration) {
        double out[N], in[N];
        for (int i = 0; i < N; ++i)
            out[i] = rank + iteration * 0.5 + i * 0.001;
        MPI_Status status;
        CALL(MPI_Sendrecv, out, N, MPI_DOUBLE, right, iteration, in, N, MPI_DOUBLE, left, iteration, MPI_COMM_WORLD,
             &status);
        for (int i = 0; i < N; ++i)
            if (in[i] != left + iteration * 0.5 + i * 0.001) {
                conformance_error("sendrecv %d: in[%d] = %g", iteration, i, in[i]);
                break;
            }
    }
    pthread_join(thread, NULL);
    CALL(MPI_Comm_free, &collective_comm);
    return conformance_finish();
}
