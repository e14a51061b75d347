/* MPI_Gather and MPI_Gatherv with MPI_IN_PLACE at the root (the root's own block already in place in
 * its receive buffer; the others pass no receive buffer), to the last rank (non-zero) and to rank 0, on
 * MPI_COMM_WORLD, on each half of a split and on a duplicate. Gatherv: rank r sends r + 1 ints into
 * blocks one int apart. */
#include "coll.h"

enum { M = 3, MAX_RANKS = 16, TOTAL = MAX_RANKS * (MAX_RANKS + 2) };

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
            counts[r] = r + 1;
            displs[r] = at;
            at += counts[r] + 1;
        }
        const int roots[2] = {size - 1, 0};
        for (int k = 0; k < 2; ++k) {
            const int root = roots[k];
            int mine[MAX_RANKS], all[TOTAL];
            for (int i = 0; i < TOTAL; ++i)
                all[i] = -1;
            for (int i = 0; i < M; ++i)
                mine[i] = value(c, rank, k, i);
            if (rank == root) {
                for (int i = 0; i < M; ++i)
                    all[root * M + i] = value(c, root, k, i);
                /* The ignored send count and type: as the other ranks', then 0 and MPI_DATATYPE_NULL. */
                CALL(MPI_Gather, MPI_IN_PLACE, k == 0 ? M : 0, k == 0 ? MPI_INT : MPI_DATATYPE_NULL, all, M, MPI_INT,
                     root, comms[c]);
            } else {
                CALL(MPI_Gather, mine, M, MPI_INT, NULL, M, MPI_INT, root, comms[c]);
            }
            for (int r = 0; rank == root && r < size; ++r)
                for (int i = 0; i < M; ++i)
                    if (all[r * M + i] != value(c, r, k, i))
                        conformance_error("%s Gather root %d: from %d [%d] = %d", name, root, r, i, all[r * M + i]);

            for (int i = 0; i < TOTAL; ++i)
                all[i] = -1;
            for (int i = 0; i < rank + 1; ++i)
                mine[i] = value(c, rank, k + 2, i);
            if (rank == root) {
                for (int i = 0; i < counts[root]; ++i)
                    all[displs[root] + i] = value(c, root, k + 2, i);
                CALL(MPI_Gatherv, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, counts, displs, MPI_INT, root, comms[c]);
            } else {
                CALL(MPI_Gatherv, mine, rank + 1, MPI_INT, NULL, NULL, NULL, MPI_INT, root, comms[c]);
            }
            for (int r = 0; rank == root && r < size; ++r) {
                for (int i = 0; i < counts[r]; ++i)
                    if (all[displs[r] + i] != value(c, r, k + 2, i))
                        conformance_error("%s Gatherv root %d: from %d [%d] = %d", name, root, r, i,
                                          all[displs[r] + i]);
                if (all[displs[r] + counts[r]] != -1)
                    conformance_error("%s Gatherv root %d: the gap after rank %d's block was written", name, root, r);
            }
        }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
