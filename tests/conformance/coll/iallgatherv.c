/* MPI_Iallgatherv with a different count per rank (rank r contributes 2 r + 1 ints) into blocks one
 * int apart (the gaps must stay untouched), completed by MPI_Wait, on MPI_COMM_WORLD, on each half of a
 * split and on a duplicate. */
#include "coll.h"

enum { MAX_RANKS = 16, TOTAL = MAX_RANKS * (2 * MAX_RANKS + 2) };

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
            counts[r] = 2 * r + 1;
            displs[r] = at;
            at += counts[r] + 1;
        }
        int mine[2 * MAX_RANKS + 1], all[TOTAL];
        for (int i = 0; i < counts[rank]; ++i)
            mine[i] = 1000 * c + 100 * rank + i;
        for (int i = 0; i < TOTAL; ++i)
            all[i] = -1;
        MPI_Request request;
        CALL(MPI_Iallgatherv, mine, counts[rank], MPI_INT, all, counts, displs, MPI_INT, comms[c], &request);
        CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
        for (int r = 0; r < size; ++r) {
            for (int i = 0; i < counts[r]; ++i)
                if (all[displs[r] + i] != 1000 * c + 100 * r + i)
                    conformance_error("%s: from %d [%d] = %d", coll_comm_names[c], r, i, all[displs[r] + i]);
            if (all[displs[r] + counts[r]] != -1)
                conformance_error("%s: the gap after rank %d's block was written", coll_comm_names[c], r);
        }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
