/* A spin lock made of MPI_Compare_and_swap: rank 0's window holds a lock word and a counter. In a
 * lock_all epoch each rank K times acquires the lock (MPI_Compare_and_swap 0 -> rank+1, polled with
 * MPI_Win_flush until it succeeds: the polling is the point), increments the counter with MPI_Get and
 * MPI_Put, and releases the lock (MPI_Fetch_and_op with MPI_REPLACE). The counter ends at size*K. */
#include "../conformance.h"

enum { K = 3 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);

    int *memory = NULL; /* [0] lock word, [1] counter */
    MPI_Win win;
    CALL(MPI_Win_allocate, (MPI_Aint)(2 * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &memory, &win);
    memory[0] = memory[1] = 0;
    CALL(MPI_Barrier, MPI_COMM_WORLD);

    const int free_word = 0, mine = rank + 1;
    CALL(MPI_Win_lock_all, 0, win);
    for (int k = 0; k < K; ++k) {
        int previous = -1;
        do {
            CALL(MPI_Compare_and_swap, &mine, &free_word, &previous, MPI_INT, 0, 0, win);
            CALL(MPI_Win_flush, 0, win);
        } while (previous != free_word);
        int counter = -1;
        CALL(MPI_Get, &counter, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
        CALL(MPI_Win_flush, 0, win);
        ++counter;
        CALL(MPI_Put, &counter, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
        CALL(MPI_Win_flush, 0, win);
        int released = -1;
        CALL(MPI_Fetch_and_op, &free_word, &released, MPI_INT, 0, 0, MPI_REPLACE, win);
        CALL(MPI_Win_flush, 0, win);
        if (released != mine)
            conformance_error("released a lock held by %d", released);
    }
    CALL(MPI_Win_unlock_all, win);
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    if (rank == 0 && (memory[1] != size * K || memory[0] != 0))
        conformance_error("counter %d (expected %d), lock word %d", memory[1], size * K, memory[0]);

    CALL(MPI_Win_free, &win);
    return conformance_finish();
}
