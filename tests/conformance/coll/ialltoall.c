/* MPI_Ialltoall of 2 ints per pair of ranks, two outstanding at once on one communicator (completed by
 * MPI_Waitall), on MPI_COMM_WORLD, on each half of a split and on a duplicate. */
#include "coll.h"

enum { M = 2, MAX_RANKS = 16 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    MPI_Comm comms[COLL_COMMS];
    coll_make_comms(comms);
    for (int c = 0; c < COLL_COMMS; ++c) {
        int rank, size;
        CALL(MPI_Comm_rank, comms[c], &rank);
        CALL(MPI_Comm_size, comms[c], &size);
        int out[2][MAX_RANKS * M], in[2][MAX_RANKS * M];
        MPI_Request requests[2];
        for (int k = 0; k < 2; ++k) {
            for (int to = 0; to < size; ++to)
                for (int i = 0; i < M; ++i) {
                    out[k][to * M + i] = 100000 * k + 10000 * c + 1000 * rank + 10 * to + i;
                    in[k][to * M + i] = -1;
                }
            CALL(MPI_Ialltoall, out[k], M, MPI_INT, in[k], M, MPI_INT, comms[c], &requests[k]);
        }
        CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
        for (int k = 0; k < 2; ++k)
            for (int from = 0; from < size; ++from)
                for (int i = 0; i < M; ++i)
                    if (in[k][from * M + i] != 100000 * k + 10000 * c + 1000 * from + 10 * rank + i)
                        conformance_error("%s #%d: from %d [%d] = %d", coll_comm_names[c], k, from, i,
                                          in[k][from * M + i]);
    }
    coll_free_comms(comms);
    return conformance_finish();
}
