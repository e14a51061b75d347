/* MPI_Ineighbor_alltoallv on a 2-D Cartesian communicator (periodic in one dimension, MPI_PROC_NULL
 * at the open edges) and on a directed distributed graph of irregular degrees (neighborhood.h):
 * rank r sends (r + k) % 3 + 1 ints to its out-slot k from displacements in reverse slot order;
 * receive displacements with gaps; each operation completed by its own MPI_Wait while the other is
 * in flight; every block checked. */
#include "neighborhood.h"

static int count_of(int rank, int slot) { return (rank + slot) % 3 + 1; }

struct pending {
    int send[NB_MAX * 3], recv[NB_MAX * 4];
    int scounts[NB_MAX], sdispls[NB_MAX], rcounts[NB_MAX], rdispls[NB_MAX];
    MPI_Request request;
};

static void start(const struct neighbourhood *nb, struct pending *p, int rank)
{
    for (int k = 0; k < nb->outdegree; ++k) {
        p->scounts[k] = count_of(rank, k);
        p->sdispls[k] = (nb->outdegree - 1 - k) * 3;
        for (int i = 0; i < p->scounts[k]; ++i)
            p->send[p->sdispls[k] + i] = nb_value(rank, k, i);
    }
    for (int j = 0; j < nb->indegree; ++j) {
        const int s = nb->sources[j];
        p->rcounts[j] = s == MPI_PROC_NULL ? 1 : count_of(s, nb->source_slot[j]);
        p->rdispls[j] = j * 4;
    }
    for (int i = 0; i < NB_MAX * 4; ++i)
        p->recv[i] = -1;
    CALL(MPI_Ineighbor_alltoallv, p->send, p->scounts, p->sdispls, MPI_INT, p->recv, p->rcounts, p->rdispls, MPI_INT,
         nb->comm, &p->request);
}

static void finish(const struct neighbourhood *nb, struct pending *p)
{
    CALL(MPI_Wait, &p->request, MPI_STATUS_IGNORE);
    for (int j = 0; j < nb->indegree; ++j) {
        const int s = nb->sources[j];
        for (int i = 0; i < 4; ++i) {
            const int expected = s != MPI_PROC_NULL && i < p->rcounts[j] ? nb_value(s, nb->source_slot[j], i) : -1;
            if (p->recv[j * 4 + i] != expected)
                conformance_error("%s: slot %d (from %d) element %d = %d, expected %d", nb->name, j, s, i,
                                  p->recv[j * 4 + i], expected);
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
    static struct pending on_cart, on_graph;
    start(&cart, &on_cart, rank);
    start(&graph, &on_graph, rank);
    finish(&cart, &on_cart);
    finish(&graph, &on_graph);
    CALL(MPI_Comm_free, &graph.comm);
    CALL(MPI_Comm_free, &cart.comm);
    return conformance_finish();
}
