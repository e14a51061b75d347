/* MPI_Ineighbor_allgatherv on a 2-D Cartesian communicator (periodic in one dimension, MPI_PROC_NULL
 * at the open edges) and on a directed distributed graph of irregular degrees (neighborhood.h):
 * each rank sends rank % 3 + 1 ints, the receiver places the blocks in reverse slot order with
 * gaps; the graph's operation is started first and completed by MPI_Wait after an MPI_Sendrecv
 * ring on the world, then the Cartesian one; blocks and gaps checked. */
#include "neighborhood.h"

static int count_of(int rank) { return rank % 3 + 1; }

struct pending {
    int send[3], recv[NB_MAX * 4], counts[NB_MAX], displs[NB_MAX];
    MPI_Request request;
};

static void start(const struct neighbourhood *nb, struct pending *p, int rank)
{
    for (int i = 0; i < count_of(rank); ++i)
        p->send[i] = nb_value(rank, 0, i);
    for (int i = 0; i < NB_MAX * 4; ++i)
        p->recv[i] = -1;
    for (int j = 0; j < nb->indegree; ++j) {
        p->counts[j] = nb->sources[j] == MPI_PROC_NULL ? 2 : count_of(nb->sources[j]);
        p->displs[j] = (nb->indegree - 1 - j) * 4;
    }
    CALL(MPI_Ineighbor_allgatherv, p->send, count_of(rank), MPI_INT, p->recv, p->counts, p->displs, MPI_INT, nb->comm,
         &p->request);
}

static void finish(const struct neighbourhood *nb, struct pending *p)
{
    CALL(MPI_Wait, &p->request, MPI_STATUS_IGNORE);
    int filled[NB_MAX * 4] = {0};
    for (int j = 0; j < nb->indegree; ++j) {
        if (nb->sources[j] == MPI_PROC_NULL)
            continue;
        for (int i = 0; i < p->counts[j]; ++i) {
            filled[p->displs[j] + i] = 1;
            if (p->recv[p->displs[j] + i] != nb_value(nb->sources[j], 0, i))
                conformance_error("%s: slot %d (from %d) element %d = %d", nb->name, j, nb->sources[j], i,
                                  p->recv[p->displs[j] + i]);
        }
    }
    for (int i = 0; i < NB_MAX * 4; ++i)
        if (!filled[i] && p->recv[i] != -1)
            conformance_error("%s: element %d outside every block written (%d)", nb->name, i, p->recv[i]);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    struct neighbourhood cart, graph;
    nb_make_cart(&cart);
    nb_make_graph(&graph);
    static struct pending on_graph, on_cart;
    start(&graph, &on_graph, rank);
    start(&cart, &on_cart, rank);
    int got = -1;
    CALL(MPI_Sendrecv, &rank, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size, 0,
         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (got != (rank + size - 1) % size)
        conformance_error("world ring got %d", got);
    finish(&graph, &on_graph);
    finish(&cart, &on_cart);
    CALL(MPI_Comm_free, &graph.comm);
    CALL(MPI_Comm_free, &cart.comm);
    return conformance_finish();
}
