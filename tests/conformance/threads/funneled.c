/* MPI_THREAD_FUNNELED: worker threads compute partial sums of the rank's part of a series (no MPI
 * calls); only the main thread calls MPI (MPI_Is_thread_main checked, MPI_Query_thread), combining
 * the threads' results with MPI_Allreduce and exchanging them around the ring, several steps. */
#include "../conformance.h"

enum { THREADS = 3, STEPS = 3, TERMS = 3000 };

static int rank, size, step;
static long partial[THREADS];

static void *work(void *argument)
{
    const int id = *(const int *)argument;
    long sum = 0;
    for (int i = id; i < TERMS; i += THREADS)
        sum += (long)(rank * TERMS + i) * (step + 1);
    partial[id] = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    conformance_init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_FUNNELED)
        conformance_error("MPI_THREAD_FUNNELED not provided (%d)", provided);
    int is_main = 0, level = -1;
    CALL(MPI_Is_thread_main, &is_main);
    CALL(MPI_Query_thread, &level);
    if (!is_main || level != provided)
        conformance_error("is_thread_main %d, query_thread %d, provided %d", is_main, level, provided);

    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const long n = (long)size * TERMS;
    for (step = 0; step < STEPS; ++step) {
        pthread_t threads[THREADS];
        int ids[THREADS];
        for (int t = 0; t < THREADS; ++t) {
            ids[t] = t;
            pthread_create(&threads[t], NULL, work, &ids[t]);
        }
        for (int t = 0; t < THREADS; ++t)
            pthread_join(threads[t], NULL);
        long local = 0, total = 0, from_left = -1;
        for (int t = 0; t < THREADS; ++t)
            local += partial[t];
        CALL(MPI_Allreduce, &local, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (total != n * (n - 1) / 2 * (step + 1))
            conformance_error("step %d: total %ld", step, total);
        CALL(MPI_Sendrecv, &local, 1, MPI_LONG, right, step, &from_left, 1, MPI_LONG, left, step, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
        const long expected = ((long)left * TERMS * TERMS + (long)TERMS * (TERMS - 1) / 2) * (step + 1);
        if (from_left != expected)
            conformance_error("step %d: from left %ld, expected %ld", step, from_left, expected);
    }
    return conformance_finish();
}
