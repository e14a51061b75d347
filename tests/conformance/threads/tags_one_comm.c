/* MPI_THREAD_MULTIPLE: two threads per rank exchange with both neighbours on MPI_COMM_WORLD at the
 * same time, told apart by tag only (thread t uses tag 10 + t): MPI_Isend to the right, MPI_Recv from
 * the left, MPI_Wait, several rounds; each receive must get its own thread's messages. */
#include "../conformance.h"

enum { THREADS = 2, ROUNDS = 5, N = 16 };

static int rank, size;

static void *exchange(void *argument)
{
    const int id = *(const int *)argument, tag = 10 + id;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[N], in[N];
    for (int round = 0; round < ROUNDS; ++round) {
        for (int i = 0; i < N; ++i)
            out[i] = id * 100000 + rank * 1000 + round * 20 + i;
        MPI_Request request;
        MPI_Status status;
        CALL(MPI_Isend, out, N, MPI_INT, right, tag, MPI_COMM_WORLD, &request);
        CALL(MPI_Recv, in, N, MPI_INT, left, tag, MPI_COMM_WORLD, &status);
        CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
        if (status.MPI_TAG != tag || status.MPI_SOURCE != left)
            conformance_error("thread %d round %d: tag %d source %d", id, round, status.MPI_TAG, status.MPI_SOURCE);
        for (int i = 0; i < N; ++i)
            if (in[i] != id * 100000 + left * 1000 + round * 20 + i) {
                conformance_error("thread %d round %d: in[%d] = %d", id, round, i, in[i]);
                break;
            }
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
    int ids[THREADS];
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; ++t) {
        ids[t] = t;
        pthread_create(&threads[t], NULL, exchange, &ids[t]);
    }
    for (int t = 0; t < THREADS; ++t)
        pthread_join(threads[t], NULL);
    return conformance_finish();
}
