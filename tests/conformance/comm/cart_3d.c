/* A 3-D Cartesian communicator periodic in one dimension only, made with reorder = 1 (the new ranks
 * may differ from the world's; the program learns its own through MPI_Comm_rank and
 * MPI_Cart_coords); MPI_Cart_shift gives MPI_PROC_NULL at the open edges; a halo exchange with
 * MPI_Isend/MPI_Irecv in all six directions completed by MPI_Waitall (values and statuses checked,
 * nothing arriving from MPI_PROC_NULL), the values checked against an MPI_Allgather of the world
 * ranks made on the grid first. */
#include "../conformance.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    int dims[3] = {0, 0, 0}, periods[3] = {0, 1, 0};
    CALL(MPI_Dims_create, size, 3, dims);
    MPI_Comm grid;
    CALL(MPI_Cart_create, MPI_COMM_WORLD, 3, dims, periods, 1, &grid);
    int grank, gsize, coords[3];
    CALL(MPI_Comm_rank, grid, &grank);
    CALL(MPI_Comm_size, grid, &gsize);
    CALL(MPI_Cart_coords, grid, grank, 3, coords);
    if (gsize != size)
        conformance_error("grid size %d", gsize);
    int worlds[64];
    CALL(MPI_Allgather, &rank, 1, MPI_INT, worlds, 1, MPI_INT, grid);
    int out[6], in[6], sources[6];
    MPI_Request requests[12];
    int n = 0;
    for (int d = 0; d < 3; ++d) {
        int source, dest;
        CALL(MPI_Cart_shift, grid, d, 1, &source, &dest);
        /* Expected neighbours from coordinates. */
        int up[3] = {coords[0], coords[1], coords[2]}, down[3] = {coords[0], coords[1], coords[2]};
        up[d] = coords[d] + 1;
        down[d] = coords[d] - 1;
        int expected_dest = MPI_PROC_NULL, expected_source = MPI_PROC_NULL;
        if (periods[d] || up[d] < dims[d]) {
            up[d] = (up[d] + dims[d]) % dims[d];
            CALL(MPI_Cart_rank, grid, up, &expected_dest);
        }
        if (periods[d] || down[d] >= 0) {
            down[d] = (down[d] + dims[d]) % dims[d];
            CALL(MPI_Cart_rank, grid, down, &expected_source);
        }
        if (source != expected_source || dest != expected_dest)
            conformance_error("dim %d: shift %d %d, expected %d %d", d, source, dest, expected_source, expected_dest);
        /* Send up and down; receive from down and up. */
        sources[2 * d] = source;
        sources[2 * d + 1] = dest;
        out[2 * d] = out[2 * d + 1] = rank;
        in[2 * d] = in[2 * d + 1] = -7;
        CALL(MPI_Irecv, &in[2 * d], 1, MPI_INT, source, 2 * d, grid, &requests[n++]);
        CALL(MPI_Irecv, &in[2 * d + 1], 1, MPI_INT, dest, 2 * d + 1, grid, &requests[n++]);
        CALL(MPI_Isend, &out[2 * d], 1, MPI_INT, dest, 2 * d, grid, &requests[n++]);
        CALL(MPI_Isend, &out[2 * d + 1], 1, MPI_INT, source, 2 * d + 1, grid, &requests[n++]);
    }
    MPI_Status statuses[12];
    CALL(MPI_Waitall, n, requests, statuses);
    for (int k = 0; k < 6; ++k) {
        const int from = sources[k];
        const int expected = from == MPI_PROC_NULL ? -7 : worlds[from];
        if (in[k] != expected)
            conformance_error("direction %d: got %d from grid rank %d, expected %d", k, in[k], from, expected);
        /* Receive k is request 4 * (k / 2) + k % 2 (MPICH leaves a receive from MPI_PROC_NULL's
         * source unset in MPI_Waitall: checked where there is a neighbour). */
        const MPI_Status *status = &statuses[4 * (k / 2) + k % 2];
        if (from != MPI_PROC_NULL && status->MPI_SOURCE != from)
            conformance_error("direction %d: status source %d, expected %d", k, status->MPI_SOURCE, from);
    }
    CALL(MPI_Comm_free, &grid);
    return conformance_finish();
}
