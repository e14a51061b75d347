/* MPI_Iallgather and MPI_Iallgatherv with MPI_IN_PLACE (each rank's own block already in place in the
 * receive buffer), both outstanding at once and completed by MPI_Waitall, on MPI_COMM_WORLD, on each
 * half of a split and on a duplicate. Iallgatherv: rank r contributes 2 r + 1 ints into blocks one int
 * apart. */
#include "coll.h"

enum { M = 3, MAX_RANKS = 16, TOTAL = MAX_RANKS * (2 * MAX_RANKS + 2) };

static int value(int c, int rank, int k, int i) { return 1000 * c + 100 * rank + 10 * k + i; }

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    MPI_Comm comms[COLL_COMMS];
    coll_make_comms(comms);
    for (int c = 0; c < COLL_COMMS; ++c) {
        const char *name = coll_comm_names[c];
        int rank, size;
        CALL(MPI_Comm_rank, comms[c], &rank);
        CALL(MPI_Comm_size, comms[c], &size);
        int counts[MAX_RANKS], displs[MAX_RANKS];
        for (int r = 0, at = 0; r < size; ++r) {
            counts[r] = 2 * r + 1;
            displs[r] = at;
            at += counts[r] + 1;
        }
        int fixed[TOTAL], varying[TOTAL];
        for (int i = 0; i < TOTAL; ++i)
            fixed[i] = varying[i] = -1;
        for (int i = 0; i < M; ++i)
            fixed[rank * M + i] = value(c, rank, 0, i);
        for (int i = 0; i < counts[rank]; ++i)
            varying[displs[rank] + i] = value(c, rank, 1, i);
        MPI_Request requests[2];
        CALL(MPI_Iallgather, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, fixed, M, MPI_INT, comms[c], &requests[0]);
        CALL(MPI_Iallgatherv, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, varying, counts, displs, MPI_INT, comms[c],
             &requests[1]);
        CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
        for (int r = 0; r < size; ++r) {
            for (int i = 0; i < M; ++i)
                if (fixed[r * M + i] != value(c, r, 0, i))
                    conformance_error("%s Iallgather: from %d [%d] = %d", name, r, i, fixed[r * M + i]);
            for (int i = 0; i < counts[r]; ++i)
                if (varying[displs[r] + i] != value(c, r, 1, i))
                    conformance_error("%s Iallgatherv: from %d [%d] = %d", name, r, i, varying[displs[r] + i]);
            if (varying[displs[r] + counts[r]] != -1)
                conformance_error("%s Iallgatherv: the gap after rank %d's block was written", name, r);
        }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
