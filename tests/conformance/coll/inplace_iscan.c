/* MPI_Iscan with SUM and MAX and MPI_Iexscan with SUM, with MPI_IN_PLACE (each rank's input in its
 * receive buffer, replaced by its prefix; rank 0's Iexscan result is undefined and not checked), the
 * three outstanding at once and completed by MPI_Waitall, on MPI_COMM_WORLD, on each half of a split
 * and on a duplicate. */
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
        int sum[N], max[N], ex[N];
        for (int i = 0; i < N; ++i) {
            sum[i] = ex[i] = coll_input(0, rank, i);
            max[i] = coll_input(2, rank, i);
        }
        MPI_Request requests[3];
        CALL(MPI_Iscan, MPI_IN_PLACE, sum, N, MPI_INT, MPI_SUM, comms[c], &requests[0]);
        CALL(MPI_Iscan, MPI_IN_PLACE, max, N, MPI_INT, MPI_MAX, comms[c], &requests[1]);
        CALL(MPI_Iexscan, MPI_IN_PLACE, ex, N, MPI_INT, MPI_SUM, comms[c], &requests[2]);
        CALL(MPI_Waitall, 3, requests, MPI_STATUSES_IGNORE);
        for (int i = 0; i < N; ++i) {
            if (sum[i] != coll_fold(0, 0, rank, i))
                conformance_error("%s Iscan SUM: [%d] = %d", name, i, sum[i]);
            if (max[i] != coll_fold(2, 0, rank, i))
                conformance_error("%s Iscan MAX: [%d] = %d", name, i, max[i]);
            if (rank > 0 && ex[i] != coll_fold(0, 0, rank - 1, i))
                conformance_error("%s Iexscan SUM: [%d] = %d", name, i, ex[i]);
        }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
