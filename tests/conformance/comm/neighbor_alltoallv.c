/* MPI_Neighbor_alltoallv on a 2-D Cartesian communicator (periodic in one dimension, MPI_PROC_NULL
 * at the open edges) and on a directed distributed graph of irregular degrees (neighborhood.h):
 * rank r sends (r + k) % 3 + 1 ints to its out-slot k, from send displacements in reverse slot
 * order; receive displacements with gaps; every block checked against what its neighbour addressed
 * to this rank. */
#include "neighborhood.h"

static int count_of(int rank, int slot) { return (rank + slot) % 3 + 1; }

static void run(struct neighbourhood *nb, int rank)
{
    int send[NB_MAX * 3], recv[NB_MAX * 4];
    int scounts[NB_MAX], sdispls[NB_MAX], rcounts[NB_MAX], rdispls[NB_MAX];
    for (int k = 0; k < nb->outdegree; ++k) {
        scounts[k] = count_of(rank, k);
        sdispls[k] = (nb->outdegree - 1 - k) * 3;
        for (int i = 0; i < scounts[k]; ++i)
            send[sdispls[k] + i] = nb_value(rank, k, i);
    }
    for (int j = 0; j < nb->indegree; ++j) {
        const int s = nb->sources[j];
        rcounts[j] = s == MPI_PROC_NULL ? 1 : count_of(s, nb->source_slot[j]);
        rdispls[j] = j * 4;
    }
    for (int i = 0; i < NB_MAX * 4; ++i)
        recv[i] = -1;
    CALL(MPI_Neighbor_alltoallv, send, scounts, sdispls, MPI_INT, recv, rcounts, rdispls, MPI_INT, nb->comm);
    for (int j = 0; j < nb->indegree; ++j) {
        const int s = nb->sources[j];
        for (int i = 0; i < 4; ++i) {
            const int expected = s != MPI_PROC_NULL && i < rcounts[j] ? nb_value(s, nb->source_slot[j], i) : -1;
            if (recv[j * 4 + i] != expected)
                conformance_error("%s: slot %d (from %d) element %d = %d, expected %d", nb->name, j, s, i,
                                  recv[j * 4 + i], expected);
        }
    }
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    struct neighbourhood cart, graph;
    nb_make_cart(&cart);
    nb_make_graph(&graph);
    run(&cart, rank);
    run(&graph, rank);
    CALL(MPI_Comm_free, &graph.comm);
    CALL(MPI_Comm_free, &cart.comm);
    return conformance_finish();
}
