/* MPI_Gather and MPI_Gatherv whose root calls them from other call sites than the other ranks (the
 * root's calls with a receive buffer, the others' without), to a fixed non-zero root three times,
 * then to a root that moves round the ranks, on MPI_COMM_WORLD. */
#include "coll.h"

enum { M = 2, MAX_RANKS = 16 };

static void gather_to(int root, int rank, int size, int round)
{
    int mine[MAX_RANKS], all[MAX_RANKS * MAX_RANKS], counts[MAX_RANKS], displs[MAX_RANKS];
    for (int i = 0; i < MAX_RANKS; ++i)
        mine[i] = 1000 * round + 10 * rank + i;
    for (int i = 0; i < MAX_RANKS * MAX_RANKS; ++i)
        all[i] = -1;
    if (rank == root)
        CALL(MPI_Gather, mine, M, MPI_INT, all, M, MPI_INT, root, MPI_COMM_WORLD);
    else
        CALL(MPI_Gather, mine, M, MPI_INT, NULL, 0, MPI_INT, root, MPI_COMM_WORLD);
    for (int r = 0; rank == root && r < size; ++r)
        for (int i = 0; i < M; ++i)
            if (all[r * M + i] != 1000 * round + 10 * r + i)
                conformance_error("round %d Gather root %d: from %d [%d] = %d", round, root, r, i, all[r * M + i]);

    for (int r = 0; r < size; ++r) {
        counts[r] = r + 1;
        displs[r] = r * MAX_RANKS;
    }
    if (rank == root)
        CALL(MPI_Gatherv, mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, root, MPI_COMM_WORLD);
    else
        CALL(MPI_Gatherv, mine, rank + 1, MPI_INT, NULL, NULL, NULL, MPI_INT, root, MPI_COMM_WORLD);
    for (int r = 0; rank == root && r < size; ++r)
        for (int i = 0; i < counts[r]; ++i)
            if (all[displs[r] + i] != 1000 * round + 10 * r + i)
                conformance_error("round %d Gatherv root %d: from %d [%d] = %d", round, root, r, i,
                                  all[displs[r] + i]);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    for (int round = 0; round < 3; ++round)
        gather_to(size - 1, rank, size, round);
    for (int round = 3; round < 3 + size; ++round)
        gather_to(round % size, rank, size, round);
    return conformance_finish();
}
