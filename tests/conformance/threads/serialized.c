/* MPI_THREAD_SERIALIZED: two threads per rank take turns calling MPI, one at a time, in a fixed order
 * (a mutex and a condition variable pass the turn: thread 0, thread 1, thread 0, ...). Each turn is a
 * ring exchange (MPI_Sendrecv) on MPI_COMM_WORLD with the thread's tag, then an MPI_Allreduce; since
 * every rank's threads alternate alike, the ranks' calls match. */
#include "../conformance.h"

enum { THREADS = 2, TURNS = 6, N = 8 };

static int rank, size;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int turn; /* the number of turns taken: thread turn % THREADS goes next */

static void *take_turns(void *argument)
{
    const int id = *(const int *)argument;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (;;) {
        pthread_mutex_lock(&mutex);
        while (turn < TURNS && turn % THREADS != id)
            pthread_cond_wait(&changed, &mutex);
        if (turn >= TURNS) {
            pthread_mutex_unlock(&mutex);
            return NULL;
        }
        const int now = turn;
        pthread_mutex_unlock(&mutex);

        int out[N], in[N];
        for (int i = 0; i < N; ++i)
            out[i] = rank * 1000 + now * 10 + i;
        MPI_Status status;
        CALL(MPI_Sendrecv, out, N, MPI_INT, right, id, in, N, MPI_INT, left, id, MPI_COMM_WORLD, &status);
        for (int i = 0; i < N; ++i)
            if (in[i] != left * 1000 + now * 10 + i)
                conformance_error("thread %d turn %d: in[%d] = %d", id, now, i, in[i]);
        int count = 0, total = 0;
        count = now;
        CALL(MPI_Allreduce, &count, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (total != now * size)
            conformance_error("thread %d turn %d: allreduce %d", id, now, total);

        pthread_mutex_lock(&mutex);
        ++turn;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&mutex);
    }
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    conformance_init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_SERIALIZED)
        conformance_error("MPI_THREAD_SERIALIZED not provided (%d)", provided);
    pthread_t threads[THREADS];
    int ids[THREADS];
    for (int t = 0; t < THREADS; ++t) {
        ids[t] = t;
        pthread_create(&threads[t], NULL, take_turns, &ids[t]);
    }
    for (int t = 0; t < THREADS; ++t)
        pthread_join(threads[t], NULL);
    return conformance_finish();
}
