/* MPI_Ialltoallv with a different count per pair (rank r sends r + 2 j + 1 ints to rank j) from and
 * into blocks one int apart (the gaps must stay untouched), completed by MPI_Wait, on MPI_COMM_WORLD,
 * on each half of a split and on a duplicate. */
#include "coll.h"

enum { MAX_RANKS = 16, TOTAL = MAX_RANKS * (3 * MAX_RANKS + 1) };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    MPI_Comm comms[COLL_COMMS];
    coll_make_comms(comms);
    for (int c = 0; c < COLL_COMMS; ++c) {
        int rank, size;
        CALL(MPI_Comm_rank, comms[c], &rank);
        CALL(MPI_Comm_size, comms[c], &size);
        int sendcounts[MAX_RANKS], sdispls[MAX_RANKS], recvcounts[MAX_RANKS], rdispls[MAX_RANKS];
        for (int j = 0, sat = 0, rat = 0; j < size; ++j) {
            sendcounts[j] = rank + 2 * j + 1;
            recvcounts[j] = j + 2 * rank + 1;
            sdispls[j] = sat;
            rdispls[j] = rat;
            sat += sendcounts[j] + 1;
            rat += recvcounts[j] + 1;
        }
        int out[TOTAL], in[TOTAL];
        for (int i = 0; i < TOTAL; ++i)
            out[i] = in[i] = -1;
        for (int j = 0; j < size; ++j)
            for (int i = 0; i < sendcounts[j]; ++i)
                out[sdispls[j] + i] = 10000 * c + 1000 * rank + 10 * j + i;
        MPI_Request request;
        CALL(MPI_Ialltoallv, out, sendcounts, sdispls, MPI_INT, in, recvcounts, rdispls, MPI_INT, comms[c],
             &request);
        CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
        for (int j = 0; j < size; ++j) {
            for (int i = 0; i < recvcounts[j]; ++i)
                if (in[rdispls[j] + i] != 10000 * c + 1000 * j + 10 * rank + i)
                    conformance_error("%s: from %d [%d] = %d", coll_comm_names[c], j, i, in[rdispls[j] + i]);
            if (in[rdispls[j] + recvcounts[j]] != -1)
                conformance_error("%s: the gap after rank %d's block was written", coll_comm_names[c], j);
        }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
