/* A 2-D Jacobi 5-point stencil on an MPI_Dims_create grid of ranks, not periodic: ranks on the edge of
 * the grid exchange with MPI_PROC_NULL there. Per iteration: 4 MPI_Irecv + 4 MPI_Isend of the halo
 * (rows contiguous, columns as an MPI_Type_vector), MPI_Waitall, the update, and an MPI_Allreduce of the
 * residual. Neighbours are computed by hand (no MPI_Cart_create), so the trace holds no topology calls.
 * Exercises: endpoints that are the same relative value on inner ranks but PROC_NULL on edges, derived
 * datatype sizes, and a loop a tracer must fold.
 *
 * Usage: stencil [ITERATIONS [LOCAL_SIZE]]    (defaults 20, 16: each rank owns LOCAL_SIZE^2 points) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { NORTH, SOUTH, WEST, EAST, DIRECTIONS };

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);

    const int iterations = argc > 1 ? atoi(argv[1]) : 20;
    const int n = argc > 2 ? atoi(argv[2]) : 16;
    const int width = n + 2; /* with one ghost cell on each side */

    int dims[2] = {0, 0};
    MPI_Dims_create(size, 2, dims);
    log_call("MPI_Dims_create", 0);
    const int row = rank / dims[1], col = rank % dims[1]; /* row-major, as MPI_Cart_create would number */
    int neighbor[DIRECTIONS];
    neighbor[NORTH] = row > 0 ? rank - dims[1] : MPI_PROC_NULL;
    neighbor[SOUTH] = row < dims[0] - 1 ? rank + dims[1] : MPI_PROC_NULL;
    neighbor[WEST] = col > 0 ? rank - 1 : MPI_PROC_NULL;
    neighbor[EAST] = col < dims[1] - 1 ? rank + 1 : MPI_PROC_NULL;

    MPI_Datatype column;
    MPI_Type_vector(n, 1, width, MPI_DOUBLE, &column);
    log_call("MPI_Type_vector", 0);
    MPI_Type_commit(&column);
    log_call("MPI_Type_commit", 0);
    const long long halo_bytes = n * (long long)sizeof(double); /* a row, and the size of `column` */

    /* Both arrays carry the fixed boundary in their ghost cells: a receive from MPI_PROC_NULL leaves
     * them alone, so the global edge keeps its value through the pointer swaps. */
    double *u = calloc((size_t)width * width, sizeof(double));
    double *next = calloc((size_t)width * width, sizeof(double));
    if (row == 0)
        for (int j = 0; j < width; ++j)
            u[j] = next[j] = 1.0 + 0.01 * (col * n + j);
#define AT(grid, i, j) ((grid)[(i) * width + (j)])

    /* What goes where: the first/last interior row and column out, the ghost row/column in. Tags
     * name the direction a message travels, so each receive pairs with the opposite send. */
    double residual = 0.0;
    for (int iteration = 0; iteration < iterations; ++iteration) {
        MPI_Request requests[2 * DIRECTIONS];
        MPI_Irecv(&AT(u, 0, 1), n, MPI_DOUBLE, neighbor[NORTH], SOUTH, MPI_COMM_WORLD, &requests[0]);
        log_recv("MPI_Irecv", halo_bytes, log_rank(neighbor[NORTH]), SOUTH);
        MPI_Irecv(&AT(u, n + 1, 1), n, MPI_DOUBLE, neighbor[SOUTH], NORTH, MPI_COMM_WORLD, &requests[1]);
        log_recv("MPI_Irecv", halo_bytes, log_rank(neighbor[SOUTH]), NORTH);
        MPI_Irecv(&AT(u, 1, 0), 1, column, neighbor[WEST], EAST, MPI_COMM_WORLD, &requests[2]);
        log_recv("MPI_Irecv", halo_bytes, log_rank(neighbor[WEST]), EAST);
        MPI_Irecv(&AT(u, 1, n + 1), 1, column, neighbor[EAST], WEST, MPI_COMM_WORLD, &requests[3]);
        log_recv("MPI_Irecv", halo_bytes, log_rank(neighbor[EAST]), WEST);

        MPI_Isend(&AT(u, 1, 1), n, MPI_DOUBLE, neighbor[NORTH], NORTH, MPI_COMM_WORLD, &requests[4]);
        log_send("MPI_Isend", halo_bytes, log_rank(neighbor[NORTH]), NORTH);
        MPI_Isend(&AT(u, n, 1), n, MPI_DOUBLE, neighbor[SOUTH], SOUTH, MPI_COMM_WORLD, &requests[5]);
        log_send("MPI_Isend", halo_bytes, log_rank(neighbor[SOUTH]), SOUTH);
        MPI_Isend(&AT(u, 1, 1), 1, column, neighbor[WEST], WEST, MPI_COMM_WORLD, &requests[6]);
        log_send("MPI_Isend", halo_bytes, log_rank(neighbor[WEST]), WEST);
        MPI_Isend(&AT(u, 1, n), 1, column, neighbor[EAST], EAST, MPI_COMM_WORLD, &requests[7]);
        log_send("MPI_Isend", halo_bytes, log_rank(neighbor[EAST]), EAST);

        MPI_Waitall(2 * DIRECTIONS, requests, MPI_STATUSES_IGNORE);
        log_completion("MPI_Waitall", 2 * DIRECTIONS); /* requests on MPI_PROC_NULL count too */

        double local_residual = 0.0;
        for (int i = 1; i <= n; ++i)
            for (int j = 1; j <= n; ++j) {
                AT(next, i, j) = 0.25 * (AT(u, i - 1, j) + AT(u, i + 1, j) + AT(u, i, j - 1) + AT(u, i, j + 1));
                const double change = AT(next, i, j) - AT(u, i, j);
                local_residual += change * change;
            }
        double *swap = u;
        u = next;
        next = swap;

        MPI_Allreduce(&local_residual, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        log_call("MPI_Allreduce", sizeof(double));
    }

    double local_sum = 0.0, sum = 0.0;
    for (int i = 1; i <= n; ++i)
        for (int j = 1; j <= n; ++j)
            local_sum += AT(u, i, j);
    MPI_Allreduce(&local_sum, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", sizeof(double));
#undef AT

    if (rank == 0)
        printf("stencil: ranks %d as %dx%d, local %dx%d, iterations %d, residual %.10e, sum %.10e\n", size, dims[0],
               dims[1], n, n, iterations, residual, sum);

    MPI_Type_free(&column);
    log_call("MPI_Type_free", 0);
    free(u);
    free(next);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
