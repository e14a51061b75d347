/* MPI_Neighbor_allgatherv on a 2-D Cartesian communicator (periodic in one dimension, MPI_PROC_NULL
 * at the open edges) and on a directed distributed graph of irregular degrees (neighborhood.h):
 * each rank sends rank % 3 + 1 ints; the receiver places each in-neighbour's block at displacements
 * in reverse slot order with gaps; blocks, gaps and the slots of MPI_PROC_NULL checked. */
#include "neighborhood.h"

static int count_of(int rank) { return rank % 3 + 1; }

static void run(struct neighbourhood *nb, int rank)
{
    int send[3], recv[NB_MAX * 4], counts[NB_MAX], displs[NB_MAX];
    for (int i = 0; i < count_of(rank); ++i)
        send[i] = nb_value(rank, 0, i);
    for (int i = 0; i < NB_MAX * 4; ++i)
        recv[i] = -1;
    /* Slot j at (indegree - 1 - j) * 4: reverse order, a gap after each block. */
    for (int j = 0; j < nb->indegree; ++j) {
        counts[j] = nb->sources[j] == MPI_PROC_NULL ? 2 : count_of(nb->sources[j]);
        displs[j] = (nb->indegree - 1 - j) * 4;
    }
    CALL(MPI_Neighbor_allgatherv, send, count_of(rank), MPI_INT, recv, counts, displs, MPI_INT, nb->comm);
    int filled[NB_MAX * 4] = {0};
    for (int j = 0; j < nb->indegree; ++j) {
        if (nb->sources[j] == MPI_PROC_NULL)
            continue;
        for (int i = 0; i < counts[j]; ++i) {
            filled[displs[j] + i] = 1;
            if (recv[displs[j] + i] != nb_value(nb->sources[j], 0, i))
                conformance_error("%s: slot %d (from %d) element %d = %d", nb->name, j, nb->sources[j], i,
                                  recv[displs[j] + i]);
        }
    }
    for (int i = 0; i < NB_MAX * 4; ++i)
        if (!filled[i] && recv[i] != -1)
            conformance_error("%s: element %d outside every block written (%d)", nb->name, i, recv[i]);
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
