/* MPI_Graph_create (reorder = 0) of an irregular graph: a ring with one chord from rank 0 to rank
 * size/2; MPI_Topo_test, MPI_Graphdims_get, MPI_Graph_get, MPI_Graph_neighbors_count and
 * MPI_Graph_neighbors checked against the edge list; each rank then sends its rank to every
 * neighbour with MPI_Isend and receives from each with MPI_Irecv (MPI_Waitall), checked; ranks
 * outside the graph (the last, with a graph of size - 1 nodes) get MPI_COMM_NULL. */
#include "../conformance.h"

enum { MAX = 16 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int nnodes = size - 1; /* the last rank stays out */
    int adjacency[MAX][MAX], degree[MAX] = {0};
    for (int i = 0; i < nnodes; ++i) {
        adjacency[i][degree[i]++] = (i + nnodes - 1) % nnodes;
        adjacency[i][degree[i]++] = (i + 1) % nnodes;
    }
    adjacency[0][degree[0]++] = nnodes / 2;
    adjacency[nnodes / 2][degree[nnodes / 2]++] = 0;
    int index[MAX], edges[MAX * MAX], nedges = 0;
    for (int i = 0; i < nnodes; ++i) {
        for (int k = 0; k < degree[i]; ++k)
            edges[nedges++] = adjacency[i][k];
        index[i] = nedges;
    }
    MPI_Comm graph;
    CALL(MPI_Graph_create, MPI_COMM_WORLD, nnodes, index, edges, 0, &graph);
    if (rank >= nnodes) {
        if (graph != MPI_COMM_NULL)
            conformance_error("rank outside the graph got a communicator");
        return conformance_finish();
    }
    int kind, got_nnodes, got_nedges;
    CALL(MPI_Topo_test, graph, &kind);
    CALL(MPI_Graphdims_get, graph, &got_nnodes, &got_nedges);
    if (kind != MPI_GRAPH || got_nnodes != nnodes || got_nedges != nedges)
        conformance_error("topo %d nnodes %d nedges %d", kind, got_nnodes, got_nedges);
    int got_index[MAX], got_edges[MAX * MAX];
    CALL(MPI_Graph_get, graph, MAX, MAX * MAX, got_index, got_edges);
    for (int i = 0; i < nedges; ++i)
        if (got_edges[i] != edges[i])
            conformance_error("graph_get edge %d = %d", i, got_edges[i]);
    int count, neighbours[MAX];
    CALL(MPI_Graph_neighbors_count, graph, rank, &count);
    CALL(MPI_Graph_neighbors, graph, rank, MAX, neighbours);
    if (count != degree[rank])
        conformance_error("neighbours count %d, expected %d", count, degree[rank]);
    int in[MAX], out = rank * 3;
    MPI_Request requests[2 * MAX];
    for (int k = 0; k < count; ++k) {
        if (neighbours[k] != adjacency[rank][k])
            conformance_error("neighbour %d = %d, expected %d", k, neighbours[k], adjacency[rank][k]);
        in[k] = -1;
        CALL(MPI_Irecv, &in[k], 1, MPI_INT, neighbours[k], 0, graph, &requests[k]);
    }
    for (int k = 0; k < count; ++k)
        CALL(MPI_Isend, &out, 1, MPI_INT, neighbours[k], 0, graph, &requests[count + k]);
    CALL(MPI_Waitall, 2 * count, requests, MPI_STATUSES_IGNORE);
    for (int k = 0; k < count; ++k)
        if (in[k] != neighbours[k] * 3)
            conformance_error("from neighbour %d got %d", neighbours[k], in[k]);
    CALL(MPI_Comm_free, &graph);
    return conformance_finish();
}
