/* MPI_Igather of 3 ints per rank to rank 0 and to the last rank (non-zero), both outstanding at once
 * and completed by MPI_Waitall, on MPI_COMM_WORLD, on each half of a split and on a duplicate. */
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
        const int roots[2] = {size - 1, 0};
        int mine[2][M], all[2][MAX_RANKS * M];
        MPI_Request requests[2];
        for (int k = 0; k < 2; ++k) {
            for (int i = 0; i < M; ++i)
                mine[k][i] = 1000 * c + 100 * rank + 10 * k + i;
            for (int i = 0; i < MAX_RANKS * M; ++i)
                all[k][i] = -1;
            CALL(MPI_Igather, mine[k], M, MPI_INT, all[k], M, MPI_INT, roots[k], comms[c], &requests[k]);
        }
        CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
        for (int k = 0; k < 2; ++k)
            for (int r = 0; rank == roots[k] && r < size; ++r)
                for (int i = 0; i < M; ++i)
                    if (all[k][r * M + i] != 1000 * c + 100 * r + 10 * k + i)
                        conformance_error("%s root %d: from %d [%d] = %d", coll_comm_names[c], roots[k], r, i,
                                          all[k][r * M + i]);
    }
    coll_free_comms(comms);
    return conformance_finish();
}
