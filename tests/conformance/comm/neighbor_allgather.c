/* MPI_Neighbor_allgather on a 2-D Cartesian communicator (periodic in one dimension: MPI_PROC_NULL
 * neighbours at the open edges, whose blocks stay untouched) and on a directed distributed graph of
 * irregular degrees (neighborhood.h): each rank's block of three ints arrives at each of its
 * out-neighbours in the slot of its in-neighbour order, checked; run twice on each. */
#include "neighborhood.h"

enum { COUNT = 3, REPEAT = 2 };

static void run(struct neighbourhood *nb, int rank, int salt)
{
    int send[COUNT], recv[NB_MAX * COUNT];
    for (int i = 0; i < COUNT; ++i)
        send[i] = nb_value(rank, 0, i) + salt;
    for (int i = 0; i < NB_MAX * COUNT; ++i)
        recv[i] = -1;
    CALL(MPI_Neighbor_allgather, send, COUNT, MPI_INT, recv, COUNT, MPI_INT, nb->comm);
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
    struct neighbourhood cart, graph;
    nb_make_cart(&cart);
    nb_make_graph(&graph);
    for (int r = 0; r < REPEAT; ++r) {
        run(&cart, rank, r * 7);
        run(&graph, rank, r * 7);
    }
    CALL(MPI_Comm_free, &graph.comm);
    CALL(MPI_Comm_free, &cart.comm);
    return conformance_finish();
}
