/* A periodic 2-D Cartesian communicator (MPI_Dims_create, MPI_Cart_create with reorder = 0: ranks
 * kept), MPI_Topo_test, MPI_Cartdim_get and MPI_Cart_get; a halo exchange along each dimension in
 * both directions with MPI_Cart_shift and MPI_Sendrecv (each rank's value checked against its
 * neighbour's coordinates through MPI_Cart_rank), and an MPI_Allreduce on the grid. */
#include "../conformance.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    CALL(MPI_Dims_create, size, 2, dims);
    MPI_Comm grid;
    CALL(MPI_Cart_create, MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    int status_kind, ndims, grank;
    CALL(MPI_Topo_test, grid, &status_kind);
    CALL(MPI_Cartdim_get, grid, &ndims);
    CALL(MPI_Comm_rank, grid, &grank);
    if (status_kind != MPI_CART || ndims != 2 || grank != rank)
        conformance_error("topo %d ndims %d rank %d", status_kind, ndims, grank);
    int gdims[2], gperiods[2], coords[2];
    CALL(MPI_Cart_get, grid, 2, gdims, gperiods, coords);
    if (gdims[0] != dims[0] || gdims[1] != dims[1] || !gperiods[0] || !gperiods[1])
        conformance_error("cart_get dims %d %d periods %d %d", gdims[0], gdims[1], gperiods[0], gperiods[1]);
    /* Row-major: rank = coords[0] * dims[1] + coords[1]. */
    if (coords[0] * dims[1] + coords[1] != grank)
        conformance_error("coords %d %d for rank %d", coords[0], coords[1], grank);
    for (int d = 0; d < 2; ++d) {
        for (int disp = 1; disp >= -1; disp -= 2) {
            int source, dest;
            CALL(MPI_Cart_shift, grid, d, disp, &source, &dest);
            int expected_coords[2] = {coords[0], coords[1]};
            expected_coords[d] = (coords[d] + disp + dims[d]) % dims[d];
            int expected_dest;
            CALL(MPI_Cart_rank, grid, expected_coords, &expected_dest);
            if (dest != expected_dest)
                conformance_error("shift dim %d disp %d: dest %d, expected %d", d, disp, dest, expected_dest);
            int out[2] = {grank, d * 10 + disp}, in[2] = {-1, -1};
            MPI_Status status;
            CALL(MPI_Sendrecv, out, 2, MPI_INT, dest, d, in, 2, MPI_INT, source, d, grid, &status);
            if (in[0] != source || in[1] != d * 10 + disp || status.MPI_SOURCE != source)
                conformance_error("halo dim %d disp %d: got %d %d from %d, expected from %d", d, disp, in[0], in[1],
                                  status.MPI_SOURCE, source);
        }
    }
    int sum = 0;
    CALL(MPI_Allreduce, &grank, &sum, 1, MPI_INT, MPI_SUM, grid);
    if (sum != size * (size - 1) / 2)
        conformance_error("allreduce %d", sum);
    CALL(MPI_Comm_free, &grid);
    return conformance_finish();
}
