/* MPI_Cart_sub of a 2-D grid (3 x 2 at 6 ranks, not periodic) into rows and columns: each
 * sub-communicator is Cartesian of one dimension with the expected size and rank; an MPI_Allreduce
 * and an MPI_Bcast on each row and each column, and an MPI_Sendrecv along each row with
 * MPI_Cart_shift, checked. */
#include "../conformance.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
    CALL(MPI_Dims_create, size, 2, dims);
    MPI_Comm grid, row, column;
    CALL(MPI_Cart_create, MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    CALL(MPI_Cart_coords, grid, rank, 2, coords);
    int keep_row[2] = {0, 1}, keep_column[2] = {1, 0};
    CALL(MPI_Cart_sub, grid, keep_row, &row);
    CALL(MPI_Cart_sub, grid, keep_column, &column);
    int row_rank, row_size, column_rank, column_size, kind, ndims;
    CALL(MPI_Comm_rank, row, &row_rank);
    CALL(MPI_Comm_size, row, &row_size);
    CALL(MPI_Comm_rank, column, &column_rank);
    CALL(MPI_Comm_size, column, &column_size);
    CALL(MPI_Topo_test, row, &kind);
    CALL(MPI_Cartdim_get, column, &ndims);
    if (row_size != dims[1] || row_rank != coords[1] || column_size != dims[0] || column_rank != coords[0])
        conformance_error("row %d of %d, column %d of %d", row_rank, row_size, column_rank, column_size);
    if (kind != MPI_CART || ndims != 1)
        conformance_error("sub topology %d ndims %d", kind, ndims);
    /* Row sums of world ranks: row r holds r * dims[1] .. r * dims[1] + dims[1] - 1. */
    int sum = 0;
    CALL(MPI_Allreduce, &rank, &sum, 1, MPI_INT, MPI_SUM, row);
    const int first = coords[0] * dims[1];
    if (sum != dims[1] * first + dims[1] * (dims[1] - 1) / 2)
        conformance_error("row allreduce %d", sum);
    CALL(MPI_Allreduce, &rank, &sum, 1, MPI_INT, MPI_SUM, column);
    if (sum != dims[1] * dims[0] * (dims[0] - 1) / 2 + dims[0] * coords[1])
        conformance_error("column allreduce %d", sum);
    int value = column_rank == 0 ? 1000 + coords[1] : -1;
    CALL(MPI_Bcast, &value, 1, MPI_INT, 0, column);
    if (value != 1000 + coords[1])
        conformance_error("column bcast %d", value);
    value = row_rank == row_size - 1 ? 2000 + coords[0] : -1;
    CALL(MPI_Bcast, &value, 1, MPI_INT, row_size - 1, row);
    if (value != 2000 + coords[0])
        conformance_error("row bcast %d", value);
    int source, dest;
    CALL(MPI_Cart_shift, row, 0, 1, &source, &dest);
    int in = -1;
    CALL(MPI_Sendrecv, &rank, 1, MPI_INT, dest, 0, &in, 1, MPI_INT, source, 0, row, MPI_STATUS_IGNORE);
    if (in != (source == MPI_PROC_NULL ? -1 : rank - 1))
        conformance_error("row shift got %d from %d", in, source);
    CALL(MPI_Comm_free, &column);
    CALL(MPI_Comm_free, &row);
    CALL(MPI_Comm_free, &grid);
    return conformance_finish();
}
