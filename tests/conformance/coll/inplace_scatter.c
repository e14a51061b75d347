/* MPI_Scatter and MPI_Scatterv with MPI_IN_PLACE as the root's receive buffer (the root's own block
 * stays where it is in its send buffer; the others pass no send buffer), from the last rank (non-zero)
 * and from rank 0, on MPI_COMM_WORLD, on each half of a split and on a duplicate. Scatterv: rank r
 * receives r + 1 ints from blocks one int apart. */
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
            int all[TOTAL], mine[MAX_RANKS + 1];
            for (int i = 0; i <= MAX_RANKS; ++i)
                mine[i] = -1;
            if (rank == root) {
                for (int r = 0; r < size; ++r)
                    for (int i = 0; i < M; ++i)
                        all[r * M + i] = value(c, r, k, i);
                /* The ignored receive count and type: as the other ranks', then 0 and MPI_DATATYPE_NULL. */
                CALL(MPI_Scatter, all, M, MPI_INT, MPI_IN_PLACE, k == 0 ? M : 0, k == 0 ? MPI_INT : MPI_DATATYPE_NULL,
                     root, comms[c]);
                for (int r = 0; r < size; ++r)
                    for (int i = 0; i < M; ++i)
                        if (all[r * M + i] != value(c, r, k, i))
                            conformance_error("%s Scatter root %d: its send buffer changed", name, root);
            } else {
                CALL(MPI_Scatter, NULL, M, MPI_INT, mine, M, MPI_INT, root, comms[c]);
                for (int i = 0; i < M; ++i)
                    if (mine[i] != value(c, rank, k, i))
                        conformance_error("%s Scatter root %d: [%d] = %d", name, root, i, mine[i]);
            }

            for (int i = 0; i <= MAX_RANKS; ++i)
                mine[i] = -1;
            if (rank == root) {
                for (int i = 0; i < TOTAL; ++i)
                    all[i] = -2;
                for (int r = 0; r < size; ++r)
                    for (int i = 0; i < counts[r]; ++i)
                        all[displs[r] + i] = value(c, r, k + 2, i);
                CALL(MPI_Scatterv, all, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comms[c]);
                for (int i = 0; i < counts[root]; ++i)
                    if (all[displs[root] + i] != value(c, root, k + 2, i))
                        conformance_error("%s Scatterv root %d: its own block changed", name, root);
            } else {
                CALL(MPI_Scatterv, NULL, NULL, NULL, MPI_INT, mine, rank + 1, MPI_INT, root, comms[c]);
                for (int i = 0; i < rank + 1; ++i)
                    if (mine[i] != value(c, rank, k + 2, i))
                        conformance_error("%s Scatterv root %d: [%d] = %d", name, root, i, mine[i]);
                if (mine[rank + 1] != -1)
                    conformance_error("%s Scatterv root %d: written past the count", name, root);
            }
        }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
