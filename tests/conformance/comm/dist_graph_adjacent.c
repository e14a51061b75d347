/* MPI_Dist_graph_create_adjacent of a directed graph with weights (each rank sends to rank + 1 and
 * rank + 2, and so receives from rank - 1 and rank - 2, modulo the size), reorder = 0;
 * MPI_Topo_test, MPI_Dist_graph_neighbors_count and MPI_Dist_graph_neighbors (sources,
 * destinations and weights) checked; then each rank sends its rank to its destinations with MPI_Send
 * and receives from its sources with MPI_Recv in the order the graph gives them, checked. */
#include "../conformance.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    int sources[2] = {(rank + size - 1) % size, (rank + size - 2) % size};
    int destinations[2] = {(rank + 1) % size, (rank + 2) % size};
    int source_weights[2] = {10 + sources[0], 20 + sources[1]};
    int destination_weights[2] = {10 + rank, 20 + rank};
    MPI_Comm graph;
    CALL(MPI_Dist_graph_create_adjacent, MPI_COMM_WORLD, 2, sources, source_weights, 2, destinations,
         destination_weights, MPI_INFO_NULL, 0, &graph);
    int kind, indegree, outdegree, weighted;
    CALL(MPI_Topo_test, graph, &kind);
    CALL(MPI_Dist_graph_neighbors_count, graph, &indegree, &outdegree, &weighted);
    if (kind != MPI_DIST_GRAPH || indegree != 2 || outdegree != 2 || !weighted)
        conformance_error("topo %d in %d out %d weighted %d", kind, indegree, outdegree, weighted);
    int got_sources[2], got_sw[2], got_destinations[2], got_dw[2];
    CALL(MPI_Dist_graph_neighbors, graph, 2, got_sources, got_sw, 2, got_destinations, got_dw);
    for (int i = 0; i < 2; ++i)
        if (got_sources[i] != sources[i] || got_sw[i] != source_weights[i] || got_destinations[i] != destinations[i] ||
            got_dw[i] != destination_weights[i])
            conformance_error("neighbour %d: source %d (%d) destination %d (%d)", i, got_sources[i], got_sw[i],
                              got_destinations[i], got_dw[i]);
    /* Non-blocking sends, blocking receives in the graph's order of sources. */
    MPI_Request requests[2];
    int out[2] = {rank * 100 + 1, rank * 100 + 2};
    for (int i = 0; i < 2; ++i)
        CALL(MPI_Isend, &out[i], 1, MPI_INT, got_destinations[i], i, graph, &requests[i]);
    for (int i = 0; i < 2; ++i) {
        int in = -1;
        MPI_Status status;
        CALL(MPI_Recv, &in, 1, MPI_INT, got_sources[i], i, graph, &status);
        if (in != got_sources[i] * 100 + i + 1 || status.MPI_SOURCE != got_sources[i])
            conformance_error("from source %d got %d", got_sources[i], in);
    }
    CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
    CALL(MPI_Comm_free, &graph);
    return conformance_finish();
}
