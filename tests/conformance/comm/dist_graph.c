/* MPI_Dist_graph_create (reorder = 0) where each rank names edges that are not its own: rank r
 * declares the edges r+1 -> r and r+1 -> r+3 (modulo the size, unweighted) and rank 0 alone also
 * declares 0 -> every odd rank; so in- and out-degrees differ across ranks. MPI_Topo_test and
 * MPI_Dist_graph_neighbors_count are checked against the edge set, MPI_Dist_graph_neighbors'
 * lists compared as sets; then every edge carries one message (MPI_Isend to each destination,
 * MPI_Irecv from each source, MPI_Waitall), checked, and an MPI_Allreduce counts the edges. */
#include "../conformance.h"

/* Open MPI's MPI_UNWEIGHTED points into an array of size 0, which GCC takes for a buffer too small. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

enum { MAX = 32 };

/* The edge set, as a list of (source, destination) pairs, in the same order on every rank. */
static int edge_list(int size, int *from, int *to)
{
    int n = 0;
    for (int r = 0; r < size; ++r) {
        from[n] = (r + 1) % size, to[n++] = r;
        from[n] = (r + 1) % size, to[n++] = (r + 3) % size;
    }
    for (int r = 1; r < size; r += 2)
        from[n] = 0, to[n++] = r;
    return n;
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    /* What this rank declares: two edges from rank + 1, and rank 0 the edges to the odd ranks. */
    int sources[MAX], degrees[MAX], destinations[MAX], nsources = 0, ndest = 0;
    sources[nsources] = (rank + 1) % size;
    degrees[nsources++] = 2;
    destinations[ndest++] = rank;
    destinations[ndest++] = (rank + 3) % size;
    if (rank == 0) {
        sources[nsources] = 0;
        degrees[nsources] = 0;
        for (int r = 1; r < size; r += 2)
            destinations[ndest++] = r, ++degrees[nsources];
        ++nsources;
    }
    MPI_Comm graph;
    CALL(MPI_Dist_graph_create, MPI_COMM_WORLD, nsources, sources, degrees, destinations, MPI_UNWEIGHTED,
         MPI_INFO_NULL, 0, &graph);
    int from[MAX], to[MAX];
    const int nedges = edge_list(size, from, to);
    int expected_in = 0, expected_out = 0;
    for (int e = 0; e < nedges; ++e)
        expected_in += to[e] == rank, expected_out += from[e] == rank;
    int kind, indegree, outdegree, weighted;
    CALL(MPI_Topo_test, graph, &kind);
    CALL(MPI_Dist_graph_neighbors_count, graph, &indegree, &outdegree, &weighted);
    if (kind != MPI_DIST_GRAPH || indegree != expected_in || outdegree != expected_out || weighted)
        conformance_error("topo %d in %d (expected %d) out %d (expected %d) weighted %d", kind, indegree, expected_in,
                          outdegree, expected_out, weighted);
    int in_list[MAX], out_list[MAX];
    CALL(MPI_Dist_graph_neighbors, graph, indegree, in_list, MPI_UNWEIGHTED, outdegree, out_list, MPI_UNWEIGHTED);
    /* Each neighbour appears as often as edges to/from it (multiset comparison by counting). */
    for (int r = 0; r < size; ++r) {
        int want_in = 0, want_out = 0, got_in = 0, got_out = 0;
        for (int e = 0; e < nedges; ++e)
            want_in += to[e] == rank && from[e] == r, want_out += from[e] == rank && to[e] == r;
        for (int i = 0; i < indegree; ++i)
            got_in += in_list[i] == r;
        for (int i = 0; i < outdegree; ++i)
            got_out += out_list[i] == r;
        if (want_in != got_in || want_out != got_out)
            conformance_error("neighbour %d: in %d (expected %d) out %d (expected %d)", r, got_in, want_in, got_out,
                              want_out);
    }
    /* One message per edge; several edges between the same pair carry the same value. */
    int in[MAX], out = 1000 + rank;
    MPI_Request requests[2 * MAX];
    for (int i = 0; i < indegree; ++i)
        CALL(MPI_Irecv, &in[i], 1, MPI_INT, in_list[i], 0, graph, &requests[i]);
    for (int i = 0; i < outdegree; ++i)
        CALL(MPI_Isend, &out, 1, MPI_INT, out_list[i], 0, graph, &requests[indegree + i]);
    CALL(MPI_Waitall, indegree + outdegree, requests, MPI_STATUSES_IGNORE);
    for (int i = 0; i < indegree; ++i)
        if (in[i] != 1000 + in_list[i])
            conformance_error("from %d got %d", in_list[i], in[i]);
    int total = 0;
    CALL(MPI_Allreduce, &outdegree, &total, 1, MPI_INT, MPI_SUM, graph);
    if (total != nedges)
        conformance_error("edges %d, expected %d", total, nedges);
    CALL(MPI_Comm_free, &graph);
    return conformance_finish();
}
