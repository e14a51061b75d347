/* MPI_Alltoallw with a datatype per pair of ranks (MPI_INT where r + j is even, MPI_DOUBLE where it is
 * odd) and r + j + 1 elements from rank r to rank j, at byte displacements with a gap of one double
 * between blocks, on MPI_COMM_WORLD, on each half of a split and on a duplicate. */
#include "coll.h"

enum { MAX_RANKS = 16, TOTAL = MAX_RANKS * (2 * MAX_RANKS + 1) };

static double expected(int c, int from, int to, int i)
{
    return 10000 * c + 1000 * from + 10 * to + i;
}

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
        MPI_Datatype types[MAX_RANKS];
        double out[TOTAL], in[TOTAL]; /* blocks of ints or doubles, each at a multiple of 8 bytes */
        for (int i = 0; i < TOTAL; ++i)
            out[i] = in[i] = -1;
        for (int j = 0, at = 0; j < size; ++j) {
            counts[j] = rank + j + 1;
            types[j] = (rank + j) % 2 == 0 ? MPI_INT : MPI_DOUBLE;
            displs[j] = at * (int)sizeof(double);
            for (int i = 0; i < counts[j]; ++i) {
                if ((rank + j) % 2 == 0)
                    ((int *)&out[at])[i] = (int)expected(c, rank, j, i);
                else
                    out[at + i] = expected(c, rank, j, i);
            }
            at += counts[j] + 1;
        }
        CALL(MPI_Alltoallw, out, counts, displs, types, in, counts, displs, types, comms[c]);
        for (int j = 0; j < size; ++j) {
            const int at = displs[j] / (int)sizeof(double);
            for (int i = 0; i < counts[j]; ++i) {
                const double got = (rank + j) % 2 == 0 ? ((int *)&in[at])[i] : in[at + i];
                if (got != expected(c, j, rank, i))
                    conformance_error("%s: from %d [%d] = %g", coll_comm_names[c], j, i, got);
            }
            if (in[at + counts[j]] != -1)
                conformance_error("%s: the gap after rank %d's block was written", coll_comm_names[c], j);
        }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
