/* MPI_Iscatter and MPI_Iscatterv with MPI_IN_PLACE as the root's receive buffer (the root's own block
 * stays where it is in its send buffer; the others pass no send buffer), from the last rank (non-zero)
 * and from rank 0, the four outstanding at once and completed by MPI_Waitall, on MPI_COMM_WORLD, on
 * each half of a split and on a duplicate. Iscatterv: rank r receives r + 1 ints from blocks one int
 * apart. (A user reported in-place at the root of MPI_Iscatter recorded as a 0-byte receive and
 * replayed without it: truncation.) */
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
        int all[4][TOTAL], mine[4][MAX_RANKS + 1];
        MPI_Request requests[4];
        for (int k = 0; k < 2; ++k) {
            const int root = roots[k];
            int *fixed = all[2 * k], *varying = all[2 * k + 1];
            for (int i = 0; i <= MAX_RANKS; ++i)
                mine[2 * k][i] = mine[2 * k + 1][i] = -1;
            if (rank == root) {
                for (int i = 0; i < TOTAL; ++i)
                    fixed[i] = varying[i] = -2;
                for (int r = 0; r < size; ++r) {
                    for (int i = 0; i < M; ++i)
                        fixed[r * M + i] = value(c, r, k, i);
                    for (int i = 0; i < counts[r]; ++i)
                        varying[displs[r] + i] = value(c, r, k + 2, i);
                }
                /* The ignored receive count and type: as the other ranks', then 0 and MPI_DATATYPE_NULL. */
                CALL(MPI_Iscatter, fixed, M, MPI_INT, MPI_IN_PLACE, k == 0 ? M : 0,
                     k == 0 ? MPI_INT : MPI_DATATYPE_NULL, root, comms[c], &requests[2 * k]);
                CALL(MPI_Iscatterv, varying, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root,
                     comms[c], &requests[2 * k + 1]);
            } else {
                CALL(MPI_Iscatter, NULL, M, MPI_INT, mine[2 * k], M, MPI_INT, root, comms[c], &requests[2 * k]);
                CALL(MPI_Iscatterv, NULL, NULL, NULL, MPI_INT, mine[2 * k + 1], rank + 1, MPI_INT, root, comms[c],
                     &requests[2 * k + 1]);
            }
        }
        CALL(MPI_Waitall, 4, requests, MPI_STATUSES_IGNORE);
        for (int k = 0; k < 2; ++k) {
            const int root = roots[k];
            if (rank == root) {
                for (int i = 0; i < M; ++i)
                    if (all[2 * k][root * M + i] != value(c, root, k, i))
                        conformance_error("%s Iscatter root %d: its own block changed", name, root);
                for (int i = 0; i < counts[root]; ++i)
                    if (all[2 * k + 1][displs[root] + i] != value(c, root, k + 2, i))
                        conformance_error("%s Iscatterv root %d: its own block changed", name, root);
                continue;
            }
            for (int i = 0; i < M; ++i)
                if (mine[2 * k][i] != value(c, rank, k, i))
                    conformance_error("%s Iscatter root %d: [%d] = %d", name, root, i, mine[2 * k][i]);
            for (int i = 0; i < rank + 1; ++i)
                if (mine[2 * k + 1][i] != value(c, rank, k + 2, i))
                    conformance_error("%s Iscatterv root %d: [%d] = %d", name, root, i, mine[2 * k + 1][i]);
            if (mine[2 * k + 1][rank + 1] != -1)
                conformance_error("%s Iscatterv root %d: written past the count", name, root);
        }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
