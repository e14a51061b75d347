/* The two topologies of the neighbourhood collective programs, made the same way in each:
 *
 * - a 2-D Cartesian communicator of MPI_Dims_create's dimensions (3 x 2 at 6 ranks), periodic in
 *   the first dimension only, reorder = 0: its neighbours, in the standard's order, are for each
 *   dimension the -1 then the +1 neighbour of MPI_Cart_shift (MPI_PROC_NULL at the open edges).
 *   Periodic dimensions of size 1 or 2 (where a rank is both neighbours, which MPI-3.1 leaves
 *   ambiguous) are avoided: run at 6 ranks.
 * - a directed distributed graph (MPI_Dist_graph_create_adjacent, weights 1, reorder = 0) of
 *   irregular degrees: rank r sends to r+1, the even ranks also to r+2, rank 1 also to 4 (modulo
 *   the size); each rank lists its sources in increasing order.
 *
 * For each, `source_slot[j]` says which of the source's outgoing blocks arrives in incoming slot j,
 * so a program can check what each neighbour sent it. Header-only; every MPI call through CALL. */
#ifndef CONFORMANCE_NEIGHBORHOOD_H
#define CONFORMANCE_NEIGHBORHOOD_H

#include "../conformance.h"

enum { NB_MAX = 8 };

struct neighbourhood {
    const char *name;
    MPI_Comm comm;
    int indegree, outdegree;
    int sources[NB_MAX], destinations[NB_MAX], source_slot[NB_MAX];
};

static inline void nb_make_cart(struct neighbourhood *nb)
{
    int size;
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    CALL(MPI_Dims_create, size, 2, dims);
    nb->name = "cart";
    CALL(MPI_Cart_create, MPI_COMM_WORLD, 2, dims, periods, 0, &nb->comm);
    nb->indegree = nb->outdegree = 4;
    for (int d = 0; d < 2; ++d) {
        int minus, plus;
        CALL(MPI_Cart_shift, nb->comm, d, 1, &minus, &plus);
        nb->sources[2 * d] = nb->destinations[2 * d] = minus;
        nb->sources[2 * d + 1] = nb->destinations[2 * d + 1] = plus;
        /* My -1 neighbour sent me its +1 block, and the other way round. */
        nb->source_slot[2 * d] = 2 * d + 1;
        nb->source_slot[2 * d + 1] = 2 * d;
    }
}

/* Rank r's out-neighbours in the graph. */
static inline int nb_graph_out(int r, int size, int *list)
{
    int n = 0;
    list[n++] = (r + 1) % size;
    if (r % 2 == 0)
        list[n++] = (r + 2) % size;
    if (r == 1)
        list[n++] = 4 % size;
    return n;
}

static inline void nb_make_graph(struct neighbourhood *nb)
{
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    nb->name = "graph";
    nb->outdegree = nb_graph_out(rank, size, nb->destinations);
    nb->indegree = 0;
    for (int s = 0; s < size; ++s) {
        int list[NB_MAX];
        const int n = nb_graph_out(s, size, list);
        for (int k = 0; k < n; ++k)
            if (list[k] == rank) {
                nb->sources[nb->indegree] = s;
                nb->source_slot[nb->indegree++] = k;
            }
    }
    int source_weights[NB_MAX], destination_weights[NB_MAX];
    for (int i = 0; i < NB_MAX; ++i)
        source_weights[i] = destination_weights[i] = 1;
    CALL(MPI_Dist_graph_create_adjacent, MPI_COMM_WORLD, nb->indegree, nb->sources, source_weights, nb->outdegree,
         nb->destinations, destination_weights, MPI_INFO_NULL, 0, &nb->comm);
    int indegree, outdegree, weighted;
    CALL(MPI_Dist_graph_neighbors_count, nb->comm, &indegree, &outdegree, &weighted);
    if (indegree != nb->indegree || outdegree != nb->outdegree)
        conformance_error("graph: degrees %d %d, expected %d %d", indegree, outdegree, nb->indegree, nb->outdegree);
}

/* The value element i of the block a rank `source` sends to its out-slot `slot`. */
static inline int nb_value(int source, int slot, int i) { return source * 1000 + slot * 100 + i; }

#endif
