/* MPI_Ibcast from rank 0 and from the last rank (non-zero) on MPI_COMM_WORLD, on each half of a split
 * and on a duplicate: both broadcasts outstanding at once, completed by MPI_Waitall; then one more
 * from the last rank completed by MPI_Wait. */
#include "coll.h"

enum { N = 10 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    MPI_Comm comms[COLL_COMMS];
    coll_make_comms(comms);
    for (int c = 0; c < COLL_COMMS; ++c) {
        int rank, size;
        CALL(MPI_Comm_rank, comms[c], &rank);
        CALL(MPI_Comm_size, comms[c], &size);
        const int roots[2] = {0, size - 1};
        int ints[2][N];
        MPI_Request requests[2];
        for (int k = 0; k < 2; ++k) {
            for (int i = 0; i < N; ++i)
                ints[k][i] = rank == roots[k] ? 1000 * c + 100 * k + i : -1;
            CALL(MPI_Ibcast, ints[k], N, MPI_INT, roots[k], comms[c], &requests[k]);
        }
        CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
        for (int k = 0; k < 2; ++k)
            for (int i = 0; i < N; ++i)
                if (ints[k][i] != 1000 * c + 100 * k + i)
                    conformance_error("%s root %d: ints[%d] = %d", coll_comm_names[c], roots[k], i, ints[k][i]);

        double doubles[N];
        for (int i = 0; i < N; ++i)
            doubles[i] = rank == size - 1 ? 0.25 * i + c : -1.0;
        MPI_Request request;
        CALL(MPI_Ibcast, doubles, N, MPI_DOUBLE, size - 1, comms[c], &request);
        CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; ++i)
            if (doubles[i] != 0.25 * i + c)
                conformance_error("%s: doubles[%d] = %g", coll_comm_names[c], i, doubles[i]);
    }
    coll_free_comms(comms);
    return conformance_finish();
}
