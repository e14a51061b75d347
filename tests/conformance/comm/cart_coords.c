/* MPI_Dims_create with free and fixed dimensions (checked: product, fixed entries kept, free ones
 * non-increasing), then a 2-D grid not periodic made with reorder = 1 and a 1-D periodic ring made
 * with MPI_Cart_create on fewer ranks than the world (the others get MPI_COMM_NULL): MPI_Cart_coords
 * and MPI_Cart_rank round trips for every rank (periodic coordinates out of range wrap), and an
 * MPI_Gather of each grid rank's coordinates to grid rank 0, checked. */
#include "../conformance.h"

static void check_dims(int nnodes, int ndims, const int *in)
{
    int dims[4];
    memcpy(dims, in, sizeof(int) * (size_t)ndims);
    CALL(MPI_Dims_create, nnodes, ndims, dims);
    int product = 1;
    for (int i = 0; i < ndims; ++i) {
        product *= dims[i];
        if (in[i] > 0 && dims[i] != in[i])
            conformance_error("dims_create(%d, %d): fixed dims[%d] changed to %d", nnodes, ndims, i, dims[i]);
    }
    int last_free = 1 << 30;
    for (int i = 0; i < ndims; ++i)
        if (in[i] == 0) {
            if (dims[i] > last_free)
                conformance_error("dims_create(%d, %d): free dims not non-increasing", nnodes, ndims);
            last_free = dims[i];
        }
    if (product != nnodes)
        conformance_error("dims_create(%d, %d): product %d", nnodes, ndims, product);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int free2[2] = {0, 0}, free3[3] = {0, 0, 0}, fixed3[3] = {0, 3, 0}, fixed4[4] = {2, 0, 0, 1};
    check_dims(12, 2, free2);
    check_dims(24, 3, free3);
    check_dims(12, 3, fixed3);
    check_dims(16, 4, fixed4);
    check_dims(7, 2, free2);
    int dims[2] = {0, 0}, periods[2] = {0, 0};
    CALL(MPI_Dims_create, size, 2, dims);
    MPI_Comm grid;
    CALL(MPI_Cart_create, MPI_COMM_WORLD, 2, dims, periods, 1, &grid);
    int grank;
    CALL(MPI_Comm_rank, grid, &grank);
    for (int r = 0; r < size; ++r) {
        int coords[2], back = -1;
        CALL(MPI_Cart_coords, grid, r, 2, coords);
        CALL(MPI_Cart_rank, grid, coords, &back);
        if (back != r || coords[0] != r / dims[1] || coords[1] != r % dims[1])
            conformance_error("grid rank %d: coords %d %d back %d", r, coords[0], coords[1], back);
    }
    int mine[2], all[128];
    CALL(MPI_Cart_coords, grid, grank, 2, mine);
    CALL(MPI_Gather, mine, 2, MPI_INT, all, 2, MPI_INT, 0, grid);
    if (grank == 0)
        for (int r = 0; r < size; ++r)
            if (all[2 * r] != r / dims[1] || all[2 * r + 1] != r % dims[1])
                conformance_error("gathered coords of %d: %d %d", r, all[2 * r], all[2 * r + 1]);
    CALL(MPI_Comm_free, &grid);
    /* A periodic ring of size - 1 ranks. */
    const int ring_size = size - 1, ring_period = 1;
    MPI_Comm ring;
    CALL(MPI_Cart_create, MPI_COMM_WORLD, 1, &ring_size, &ring_period, 0, &ring);
    if (rank == size - 1) {
        if (ring != MPI_COMM_NULL)
            conformance_error("rank outside the ring got a communicator");
    } else {
        int wrapped = rank + 2 * ring_size, r = -1;
        CALL(MPI_Cart_rank, ring, &wrapped, &r);
        if (r != rank)
            conformance_error("ring: coordinate %d gave rank %d", wrapped, r);
        int right = -1, left = -1, got = -1;
        CALL(MPI_Cart_shift, ring, 0, 1, &left, &right);
        CALL(MPI_Sendrecv, &rank, 1, MPI_INT, right, 0, &got, 1, MPI_INT, left, 0, ring, MPI_STATUS_IGNORE);
        if (got != left)
            conformance_error("ring: got %d from %d", got, left);
        CALL(MPI_Comm_free, &ring);
    }
    return conformance_finish();
}
