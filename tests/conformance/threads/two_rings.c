/* MPI_THREAD_MULTIPLE: two threads per rank, each passing its own token around the ring on its own
 * duplicate of MPI_COMM_WORLD (MPI_Comm_dup, made by the main thread before the threads start), with
 * blocking MPI_Send/MPI_Recv, several laps; the two rings run at the same time. */
#include "../conformance.h"

enum { THREADS = 2, LAPS = 4, N = 16384 }; /* 64 KiB tokens: above the eager limit, MPI_Send waits for the receive */

static int rank, size;

struct ring {
    int id;
    MPI_Comm comm;
};

static void *run_ring(void *argument)
{
    const struct ring *ring = argument;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *token = malloc(N * sizeof(int));
    for (int lap = 0; lap < LAPS; ++lap) {
        MPI_Status status;
        if (rank == 0) {
            for (int i = 0; i < N; ++i)
                token[i] = ring->id * 1000 + lap * 10 + i;
            CALL(MPI_Send, token, N, MPI_INT, right, lap, ring->comm);
            CALL(MPI_Recv, token, N, MPI_INT, left, lap, ring->comm, &status);
        } else {
            CALL(MPI_Recv, token, N, MPI_INT, left, lap, ring->comm, &status);
            CALL(MPI_Send, token, N, MPI_INT, right, lap, ring->comm);
        }
        if (status.MPI_SOURCE != left || status.MPI_TAG != lap)
            conformance_error("ring %d lap %d: source %d tag %d", ring->id, lap, status.MPI_SOURCE, status.MPI_TAG);
        for (int i = 0; i < N; ++i)
            if (token[i] != ring->id * 1000 + lap * 10 + i) {
                conformance_error("ring %d lap %d: token[%d] = %d", ring->id, lap, i, token[i]);
                break;
            }
    }
    free(token);
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
    struct ring rings[THREADS];
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; ++t) {
        rings[t].id = t;
        CALL(MPI_Comm_dup, MPI_COMM_WORLD, &rings[t].comm);
    }
    for (int t = 0; t < THREADS; ++t)
        pthread_create(&threads[t], NULL, run_ring, &rings[t]);
    for (int t = 0; t < THREADS; ++t)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < THREADS; ++t)
        CALL(MPI_Comm_free, &rings[t].comm);
    return conformance_finish();
}
