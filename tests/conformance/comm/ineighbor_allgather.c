/* MPI_Ineighbor_allgather on a 2-D Cartesian communicator (periodic in one dimension, MPI_PROC_NULL
 * at the open edges) and on a directed distributed graph of irregular degrees (neighborhood.h),
 * both started before either completes, completed by one MPI_Waitall; every slot checked (the
 * slots of MPI_PROC_NULL untouched). Twice, the second time completed by two MPI_Waits in reverse. */
#include "neighborhood.h"

enum { COUNT = 3 };

static void check(const struct neighbourhood *nb, const int *recv, int salt)
{
    for (int j = 0; j < nb->indegree; ++j)
        for (int i = 0; i < COUNT; ++i) {
            const int expected = nb->sources[j] == MPI_PROC_NULL ? -1 : nb_value(nb->sources[j], 0, i) + salt;
            if (recv[j * COUNT + i] != expected)
                conformance_error("%s: slot %d (from %d) element %d = %d, expected %d", nb->name, j, nb->sources[j], i,
                                  recv[j * COUNT + i], expected);
        }
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    struct neighbourhood nbs[2];
    nb_make_cart(&nbs[0]);
    nb_make_graph(&nbs[1]);
    for (int round = 0; round < 2; ++round) {
        int send[COUNT], recv[2][NB_MAX * COUNT];
        MPI_Request requests[2];
        for (int i = 0; i < COUNT; ++i)
            send[i] = nb_value(rank, 0, i) + round;
        for (int c = 0; c < 2; ++c) {
            for (int i = 0; i < NB_MAX * COUNT; ++i)
                recv[c][i] = -1;
            CALL(MPI_Ineighbor_allgather, send, COUNT, MPI_INT, recv[c], COUNT, MPI_INT, nbs[c].comm, &requests[c]);
        }
        if (round == 0)
            CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
        else {
            CALL(MPI_Wait, &requests[1], MPI_STATUS_IGNORE);
            CALL(MPI_Wait, &requests[0], MPI_STATUS_IGNORE);
        }
        for (int c = 0; c < 2; ++c)
            check(&nbs[c], recv[c], round);
    }
    CALL(MPI_Comm_free, &nbs[1].comm);
    CALL(MPI_Comm_free, &nbs[0].comm);
    return conformance_finish();
}
