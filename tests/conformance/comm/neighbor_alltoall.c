/* MPI_Neighbor_alltoall on a 2-D Cartesian communicator (periodic in one dimension, MPI_PROC_NULL
 * at the open edges) and on a directed distributed graph of irregular degrees (neighborhood.h):
 * each rank sends a distinct block of two ints to each out-neighbour; each incoming slot must hold
 * the block its neighbour addressed to this rank (the slots of MPI_PROC_NULL untouched). */
#include "neighborhood.h"

enum { COUNT = 2 };

static void run(struct neighbourhood *nb, int rank)
{
    int send[NB_MAX * COUNT], recv[NB_MAX * COUNT];
    for (int k = 0; k < nb->outdegree; ++k)
        for (int i = 0; i < COUNT; ++i)
            send[k * COUNT + i] = nb_value(rank, k, i);
    for (int i = 0; i < NB_MAX * COUNT; ++i)
        recv[i] = -1;
    CALL(MPI_Neighbor_alltoall, send, COUNT, MPI_INT, recv, COUNT, MPI_INT, nb->comm);
    for (int j = 0; j < nb->indegree; ++j)
        for (int i = 0; i < COUNT; ++i) {
            const int s = nb->sources[j];
            const int expected = s == MPI_PROC_NULL ? -1 : nb_value(s, nb->source_slot[j], i);
            if (recv[j * COUNT + i] != expected)
                conformance_error("%s: slot %d (from %d) element %d = %d, expected %d", nb->name, j, s, i,
                                  recv[j * COUNT + i], expected);
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
    run(&graph, rank);
    run(&cart, rank);
    CALL(MPI_Comm_free, &graph.comm);
    CALL(MPI_Comm_free, &cart.comm);
    return conformance_finish();
}
