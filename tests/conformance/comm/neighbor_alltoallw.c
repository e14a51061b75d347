/* MPI_Neighbor_alltoallw on a 2-D Cartesian communicator (periodic in one dimension, MPI_PROC_NULL
 * at the open edges) and on a directed distributed graph of irregular degrees (neighborhood.h):
 * rank r sends (r + k) % 3 + 1 ints to its out-slot k, as MPI_INTs for even k and as one strided
 * vector (every other int of its buffer) for odd k, at byte displacements; the receiver takes
 * plain MPI_INTs at byte displacements in reverse slot order; every block checked. */
#include "neighborhood.h"

static int count_of(int rank, int slot) { return (rank + slot) % 3 + 1; }

static void run(struct neighbourhood *nb, int rank)
{
    int send[NB_MAX * 6], recv[NB_MAX * 4];
    int scounts[NB_MAX], rcounts[NB_MAX];
    MPI_Aint sdispls[NB_MAX], rdispls[NB_MAX];
    MPI_Datatype stypes[NB_MAX], rtypes[NB_MAX], vectors[NB_MAX];
    for (int i = 0; i < NB_MAX * 6; ++i)
        send[i] = -2;
    for (int k = 0; k < nb->outdegree; ++k) {
        const int n = count_of(rank, k);
        sdispls[k] = (MPI_Aint)(k * 6 * sizeof(int));
        if (k % 2 == 0) {
            scounts[k] = n;
            stypes[k] = MPI_INT;
            for (int i = 0; i < n; ++i)
                send[k * 6 + i] = nb_value(rank, k, i);
        } else {
            CALL(MPI_Type_vector, n, 1, 2, MPI_INT, &vectors[k]);
            CALL(MPI_Type_commit, &vectors[k]);
            scounts[k] = 1;
            stypes[k] = vectors[k];
            for (int i = 0; i < n; ++i)
                send[k * 6 + 2 * i] = nb_value(rank, k, i);
        }
    }
    for (int j = 0; j < nb->indegree; ++j) {
        const int s = nb->sources[j];
        rcounts[j] = s == MPI_PROC_NULL ? 1 : count_of(s, nb->source_slot[j]);
        rdispls[j] = (MPI_Aint)((nb->indegree - 1 - j) * 4 * sizeof(int));
        rtypes[j] = MPI_INT;
    }
    for (int i = 0; i < NB_MAX * 4; ++i)
        recv[i] = -1;
    CALL(MPI_Neighbor_alltoallw, send, scounts, sdispls, stypes, recv, rcounts, rdispls, rtypes, nb->comm);
    for (int k = 1; k < nb->outdegree; k += 2)
        CALL(MPI_Type_free, &vectors[k]);
    for (int j = 0; j < nb->indegree; ++j) {
        const int s = nb->sources[j];
        const int at = (nb->indegree - 1 - j) * 4;
        for (int i = 0; i < 4; ++i) {
            const int expected = s != MPI_PROC_NULL && i < rcounts[j] ? nb_value(s, nb->source_slot[j], i) : -1;
            if (recv[at + i] != expected)
                conformance_error("%s: slot %d (from %d) element %d = %d, expected %d", nb->name, j, s, i, recv[at + i],
                                  expected);
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
    run(&graph, rank);
    run(&cart, rank);
    CALL(MPI_Comm_free, &graph.comm);
    CALL(MPI_Comm_free, &cart.comm);
    return conformance_finish();
}
