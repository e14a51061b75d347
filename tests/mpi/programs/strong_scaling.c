/* Strong scaling: a fixed GLOBAL x GLOBAL grid of points split over an MPI_Dims_create grid of ranks,
 * so that each rank's share, and every message, shrinks as ranks are added. Per iteration: halo
 * exchange with the four neighbours (MPI_Sendrecv, MPI_PROC_NULL past the grid's edge; rows of
 * GLOBAL / dims[1] points, columns of GLOBAL / dims[0]), then an MPI_Allreduce of the residual; at
 * the end an MPI_Gather of every rank's block to rank 0. The extrapolation tests use it: its sizes
 * follow the grid's sides and the rank count, exactly where GLOBAL divides by the grid's extents.
 *
 * Usage: strong_scaling [ITERATIONS [GLOBAL]]    (defaults 10, 480) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    const int iterations = argc > 1 ? atoi(argv[1]) : 10;
    const int global = argc > 2 ? atoi(argv[2]) : 480;

    int dims[2] = {0, 0};
    MPI_Dims_create(size, 2, dims);
    log_call("MPI_Dims_create", 0);
    const int row = rank / dims[1], col = rank % dims[1];
    const int rows = global / dims[0], cols = global / dims[1]; /* this rank's block */
    const int north = row > 0 ? rank - dims[1] : MPI_PROC_NULL;
    const int south = row < dims[0] - 1 ? rank + dims[1] : MPI_PROC_NULL;
    const int west = col > 0 ? rank - 1 : MPI_PROC_NULL;
    const int east = col < dims[1] - 1 ? rank + 1 : MPI_PROC_NULL;

    double *block = calloc((size_t)rows * cols, sizeof(double));
    double *row_in = calloc((size_t)cols, sizeof(double)), *row_out = calloc((size_t)cols, sizeof(double));
    double *col_in = calloc((size_t)rows, sizeof(double)), *col_out = calloc((size_t)rows, sizeof(double));
    for (int i = 0; i < rows * cols; ++i)
        block[i] = rank + 0.001 * i;
    const long long row_bytes = cols * (long long)sizeof(double), col_bytes = rows * (long long)sizeof(double);

    double residual = 0.0;
    for (int iteration = 0; iteration < iterations; ++iteration) {
        for (int j = 0; j < cols; ++j)
            row_out[j] = block[j];
        for (int i = 0; i < rows; ++i)
            col_out[i] = block[i * cols];
        /* Southward then northward, eastward then westward: each send pairs with the opposite receive. */
        MPI_Sendrecv(row_out, cols, MPI_DOUBLE, south, 0, row_in, cols, MPI_DOUBLE, north, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        log_sendrecv("MPI_Sendrecv", 2 * row_bytes, log_rank(south), 0, log_rank(north), 0, 0, 0);
        MPI_Sendrecv(row_out, cols, MPI_DOUBLE, north, 1, row_in, cols, MPI_DOUBLE, south, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        log_sendrecv("MPI_Sendrecv", 2 * row_bytes, log_rank(north), 1, log_rank(south), 1, 0, 0);
        MPI_Sendrecv(col_out, rows, MPI_DOUBLE, east, 2, col_in, rows, MPI_DOUBLE, west, 2, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        log_sendrecv("MPI_Sendrecv", 2 * col_bytes, log_rank(east), 2, log_rank(west), 2, 0, 0);
        MPI_Sendrecv(col_out, rows, MPI_DOUBLE, west, 3, col_in, rows, MPI_DOUBLE, east, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        log_sendrecv("MPI_Sendrecv", 2 * col_bytes, log_rank(west), 3, log_rank(east), 3, 0, 0);
        double local = 0.0;
        for (int i = 0; i < rows * cols; ++i) {
            block[i] = 0.5 * block[i] + 0.125 * (row_in[i % cols] + col_in[i / cols]);
            local += block[i];
        }
        MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        log_call("MPI_Allreduce", sizeof(double));
    }

    double *all = rank == 0 ? malloc((size_t)rows * cols * size * sizeof(double)) : NULL;
    MPI_Gather(block, rows * cols, MPI_DOUBLE, all, rows * cols, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    /* The root's receive side is one rank's block too (the count per rank), as MPI counts it. */
    const long long block_bytes = rows * cols * (long long)sizeof(double);
    log_call_peer("MPI_Gather", (rank == 0 ? 2 : 1) * block_bytes, 0);
    if (rank == 0)
        printf("strong_scaling: %d ranks (%d x %d), blocks of %d x %d, residual %.6g\n", size, dims[0], dims[1],
               rows, cols, residual);
    free(all);
    free(block);
    free(row_in);
    free(row_out);
    free(col_in);
    free(col_out);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    return 0;
}
