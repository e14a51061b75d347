/* MPI_Iscatter of 3 ints per rank from the last rank (non-zero) and from rank 0, both outstanding at
 * once and completed by MPI_Waitall, on MPI_COMM_WORLD, on each half of a split and on a duplicate. */
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
        int all[2][MAX_RANKS * M], mine[2][M];
        MPI_Request requests[2];
        for (int k = 0; k < 2; ++k) {
            for (int r = 0; r < size; ++r)
                for (int i = 0; i < M; ++i)
                    all[k][r * M + i] = rank == roots[k] ? 1000 * c + 100 * r + 10 * k + i : -2;
            for (int i = 0; i < M; ++i)
                mine[k][i] = -1;
            CALL(MPI_Iscatter, all[k], M, MPI_INT, mine[k], M, MPI_INT, roots[k], comms[c], &requests[k]);
        }
        CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
        for (int k = 0; k < 2; ++k)
            for (int i = 0; i < M; ++i)
                if (mine[k][i] != 1000 * c + 100 * rank + 10 * k + i)
                    conformance_error("%s root %d: [%d] = %d", coll_comm_names[c], roots[k], i, mine[k][i]);
    }
    coll_free_comms(comms);
    return conformance_finish();
}
