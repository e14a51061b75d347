/* General active target synchronization: MPI_Win_post/MPI_Win_start/MPI_Win_complete/MPI_Win_wait with
 * groups made by MPI_Group_incl. First a ring (each rank exposes its window to its left neighbour and
 * accesses its right one); then rank 0 accesses every other rank (a group of size - 1), which each
 * expose to a group of rank 0 alone; then MPI_Win_test polls for the end of an exposure epoch. */
#include "../conformance.h"

enum { N = 8 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int memory[2 * N];
    for (int i = 0; i < 2 * N; ++i)
        memory[i] = -1;
    MPI_Win win;
    CALL(MPI_Win_create, memory, (MPI_Aint)sizeof memory, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Group world, left_group, right_group;
    CALL(MPI_Comm_group, MPI_COMM_WORLD, &world);
    CALL(MPI_Group_incl, world, 1, &left, &left_group);
    CALL(MPI_Group_incl, world, 1, &right, &right_group);

    int out[N];
    for (int i = 0; i < N; ++i)
        out[i] = rank * 100 + i;
    CALL(MPI_Win_post, left_group, 0, win);
    CALL(MPI_Win_start, right_group, 0, win);
    CALL(MPI_Put, out, N, MPI_INT, right, 0, N, MPI_INT, win);
    CALL(MPI_Win_complete, win);
    CALL(MPI_Win_wait, win);
    for (int i = 0; i < N; ++i)
        if (memory[i] != left * 100 + i)
            conformance_error("ring: memory[%d] = %d", i, memory[i]);

    /* Rank 0 to everyone else. */
    if (rank == 0) {
        MPI_Group others;
        const int zero = 0;
        CALL(MPI_Group_excl, world, 1, &zero, &others);
        CALL(MPI_Win_start, others, 0, win);
        for (int target = 1; target < size; ++target)
            CALL(MPI_Put, &out[target % N], 1, MPI_INT, target, N + target, 1, MPI_INT, win);
        CALL(MPI_Win_complete, win);
        CALL(MPI_Group_free, &others);
    } else {
        MPI_Group root;
        const int zero = 0;
        CALL(MPI_Group_incl, world, 1, &zero, &root);
        CALL(MPI_Win_post, root, MPI_MODE_NOSTORE, win);
        int flag = 0;
        while (!flag)
            CALL(MPI_Win_test, win, &flag);
        if (memory[N + rank] != rank % N)
            conformance_error("from rank 0: memory[%d] = %d", N + rank, memory[N + rank]);
        CALL(MPI_Group_free, &root);
    }

    CALL(MPI_Group_free, &left_group);
    CALL(MPI_Group_free, &right_group);
    CALL(MPI_Group_free, &world);
    CALL(MPI_Win_free, &win);
    return conformance_finish();
}
