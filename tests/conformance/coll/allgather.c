/* MPI_Allgather of 3 ints per rank, then of 2 doubles per rank, on MPI_COMM_WORLD, on each half of a
 * split and on a duplicate. */
#include "coll.h"

enum { M = 3, MAX_RANKS = 16 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    MPI_Comm comms[COLL_COMMS];
    coll_make_comms(comms);
    for (int c = 0; c < COLL_COMMS; ++c) {
        int rank, size;
        CALL(MPI_Comm_rank, comms[c], &rank);
        CALL(MPI_Comm_size, comms[c], &size);
        int mine[M], all[MAX_RANKS * M];
        for (int i = 0; i < M; ++i)
            mine[i] = 1000 * c + 100 * rank + i;
        for (int i = 0; i < MAX_RANKS * M; ++i)
            all[i] = -1;
        CALL(MPI_Allgather, mine, M, MPI_INT, all, M, MPI_INT, comms[c]);
        for (int r = 0; r < size; ++r)
            for (int i = 0; i < M; ++i)
                if (all[r * M + i] != 1000 * c + 100 * r + i)
                    conformance_error("%s ints: from %d [%d] = %d", coll_comm_names[c], r, i, all[r * M + i]);
        double dmine[2] = {rank + 0.25, -rank - 0.5}, dall[MAX_RANKS * 2];
        CALL(MPI_Allgather, dmine, 2, MPI_DOUBLE, dall, 2, MPI_DOUBLE, comms[c]);
        for (int r = 0; r < size; ++r)
            if (dall[2 * r] != r + 0.25 || dall[2 * r + 1] != -r - 0.5)
                conformance_error("%s doubles: from %d: %g %g", coll_comm_names[c], r, dall[2 * r], dall[2 * r + 1]);
    }
    coll_free_comms(comms);
    return conformance_finish();
}
