/* MPI_Ineighbor_alltoall on a 2-D Cartesian communicator (periodic in one dimension, MPI_PROC_NULL
 * at the open edges) and on a directed distributed graph of irregular degrees (neighborhood.h):
 * a distinct block of two ints to each out-neighbour; three rounds, each starting both operations
 * and completing them with MPI_Waitall; each incoming slot must hold the block its neighbour
 * addressed to this rank in that round. */
#include "neighborhood.h"

enum { COUNT = 2, ROUNDS = 3 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    struct neighbourhood nbs[2];
    nb_make_cart(&nbs[0]);
    nb_make_graph(&nbs[1]);
    for (int round = 0; round < ROUNDS; ++round) {
        int send[2][NB_MAX * COUNT], recv[2][NB_MAX * COUNT];
        MPI_Request requests[2];
        for (int c = 0; c < 2; ++c) {
            for (int k = 0; k < nbs[c].outdegree; ++k)
                for (int i = 0; i < COUNT; ++i)
                    send[c][k * COUNT + i] = nb_value(rank, k, i) + 10 * round;
            for (int i = 0; i < NB_MAX * COUNT; ++i)
                recv[c][i] = -1;
            CALL(MPI_Ineighbor_alltoall, send[c], COUNT, MPI_INT, recv[c], COUNT, MPI_INT, nbs[c].comm, &requests[c]);
        }
        CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
        for (int c = 0; c < 2; ++c)
            for (int j = 0; j < nbs[c].indegree; ++j)
                for (int i = 0; i < COUNT; ++i) {
                    const int s = nbs[c].sources[j];
                    const int expected = s == MPI_PROC_NULL ? -1 : nb_value(s, nbs[c].source_slot[j], i) + 10 * round;
                    if (recv[c][j * COUNT + i] != expected)
                        conformance_error("%s round %d: slot %d (from %d) element %d = %d, expected %d", nbs[c].name,
                                          round, j, s, i, recv[c][j * COUNT + i], expected);
                }
    }
    CALL(MPI_Comm_free, &nbs[1].comm);
    CALL(MPI_Comm_free, &nbs[0].comm);
    return conformance_finish();
}
