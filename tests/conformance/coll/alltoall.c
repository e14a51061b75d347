/* MPI_Alltoall of 2 ints per pair of ranks, on MPI_COMM_WORLD, on each half of a split and on a
 * duplicate. */
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
        int out[MAX_RANKS * M], in[MAX_RANKS * M];
        for (int to = 0; to < size; ++to)
            for (int i = 0; i < M; ++i) {
                out[to * M + i] = 10000 * c + 1000 * rank + 10 * to + i;
                in[to * M + i] = -1;
            }
        CALL(MPI_Alltoall, out, M, MPI_INT, in, M, MPI_INT, comms[c]);
        for (int from = 0; from < size; ++from)
            for (int i = 0; i < M; ++i)
                if (in[from * M + i] != 10000 * c + 1000 * from + 10 * rank + i)
                    conformance_error("%s: from %d [%d] = %d", coll_comm_names[c], from, i, in[from * M + i]);
    }
    coll_free_comms(comms);
    return conformance_finish();
}
