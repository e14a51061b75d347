/* MPI_Iscan with SUM and MAX and MPI_Iexscan with SUM (rank 0's result is undefined and not checked),
 * all three outstanding at once and completed by MPI_Waitall, on MPI_COMM_WORLD, on each half of a
 * split and on a duplicate. */
#include "coll.h"

enum { N = 5 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    MPI_Comm comms[COLL_COMMS];
    coll_make_comms(comms);
    for (int c = 0; c < COLL_COMMS; ++c) {
        const char *name = coll_comm_names[c];
        int rank;
        CALL(MPI_Comm_rank, comms[c], &rank);
        int in[3][N], out[3][N];
        const int op_of[3] = {0, 2, 0};
        for (int k = 0; k < 3; ++k)
            for (int i = 0; i < N; ++i) {
                in[k][i] = coll_input(op_of[k], rank, i);
                out[k][i] = -1;
            }
        MPI_Request requests[3];
        CALL(MPI_Iscan, in[0], out[0], N, MPI_INT, MPI_SUM, comms[c], &requests[0]);
        CALL(MPI_Iscan, in[1], out[1], N, MPI_INT, MPI_MAX, comms[c], &requests[1]);
        CALL(MPI_Iexscan, in[2], out[2], N, MPI_INT, MPI_SUM, comms[c], &requests[2]);
        CALL(MPI_Waitall, 3, requests, MPI_STATUSES_IGNORE);
        for (int i = 0; i < N; ++i) {
            if (out[0][i] != coll_fold(0, 0, rank, i))
                conformance_error("%s Iscan SUM: out[%d] = %d", name, i, out[0][i]);
            if (out[1][i] != coll_fold(2, 0, rank, i))
                conformance_error("%s Iscan MAX: out[%d] = %d", name, i, out[1][i]);
            if (rank > 0 && out[2][i] != coll_fold(0, 0, rank - 1, i))
                conformance_error("%s Iexscan SUM: out[%d] = %d", name, i, out[2][i]);
        }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
