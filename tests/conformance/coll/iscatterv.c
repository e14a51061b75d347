/* MPI_Iscatterv with a different count per rank (rank r receives r + 1 ints) from blocks two ints
 * apart, from the last rank (non-zero) and from rank 0, both outstanding at once and completed by
 * MPI_Waitall, on MPI_COMM_WORLD, on each half of a split and on a duplicate. */
#include "coll.h"

enum { MAX_RANKS = 16, TOTAL = MAX_RANKS * (MAX_RANKS + 3) };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    MPI_Comm comms[COLL_COMMS];
    coll_make_comms(comms);
    for (int c = 0; c < COLL_COMMS; ++c) {
        int rank, size;
        CALL(MPI_Comm_rank, comms[c], &rank);
        CALL(MPI_Comm_size, comms[c], &size);
        int counts[MAX_RANKS], displs[MAX_RANKS];
        for (int r = 0, at = 0; r < size; ++r) {
            counts[r] = r + 1;
            displs[r] = at;
            at += counts[r] + 2;
        }
        const int roots[2] = {size - 1, 0};
        int all[2][TOTAL], mine[2][MAX_RANKS + 1];
        MPI_Request requests[2];
        for (int k = 0; k < 2; ++k) {
            for (int i = 0; i < TOTAL; ++i)
                all[k][i] = -2;
            for (int r = 0; rank == roots[k] && r < size; ++r)
                for (int i = 0; i < counts[r]; ++i)
                    all[k][displs[r] + i] = 1000 * c + 100 * r + 10 * k + i;
            for (int i = 0; i <= MAX_RANKS; ++i)
                mine[k][i] = -1;
            CALL(MPI_Iscatterv, all[k], counts, displs, MPI_INT, mine[k], rank + 1, MPI_INT, roots[k], comms[c],
                 &requests[k]);
        }
        CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
        for (int k = 0; k < 2; ++k) {
            for (int i = 0; i < rank + 1; ++i)
                if (mine[k][i] != 1000 * c + 100 * rank + 10 * k + i)
                    conformance_error("%s root %d: [%d] = %d", coll_comm_names[c], roots[k], i, mine[k][i]);
            if (mine[k][rank + 1] != -1)
                conformance_error("%s root %d: written past the count", coll_comm_names[c], roots[k]);
        }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
