/* MPI_THREAD_MULTIPLE: three threads per rank exchange with both neighbours on MPI_COMM_WORLD at the
 * same time with blocking MPI_Sendrecv of 64 KiB (above the eager limit: each waits for its partner),
 * told apart by tag only (thread t sends right and receives from the left with tag 20 + t); the
 * threads' calls interleave differently on every rank. */
#include "../conformance.h"

enum { THREADS = 3, ROUNDS = 3, N = 16384 };

static int rank, size;

static void *exchange(void *argument)
{
    const int id = *(const int *)argument, tag = 20 + id;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *out = malloc(N * sizeof(int)), *in = malloc(N * sizeof(int));
    for (int round = 0; round < ROUNDS; ++round) {
        for (int i = 0; i < N; ++i)
            out[i] = id * 1000000 + rank * 100000 + round * 20000 + i;
        MPI_Status status;
        CALL(MPI_Sendrecv, out, N, MPI_INT, right, tag, in, N, MPI_INT, left, tag, MPI_COMM_WORLD, &status);
        int count = 0;
        CALL(MPI_Get_count, &status, MPI_INT, &count);
        if (status.MPI_TAG != tag || status.MPI_SOURCE != left || count != N)
            conformance_error("thread %d round %d: tag %d source %d count %d", id, round, status.MPI_TAG,
                              status.MPI_SOURCE, count);
        for (int i = 0; i < N; ++i)
            if (in[i] != id * 1000000 + left * 100000 + round * 20000 + i) {
                conformance_error("thread %d round %d: in[%d] = %d", id, round, i, in[i]);
                break;
            }
    }
    free(out);
    free(in);
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
