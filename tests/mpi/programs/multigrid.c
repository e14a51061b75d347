/* The communication of a multigrid V-cycle (the shape of NPB MG) on a periodic 3-D grid of ranks: per
 * cycle, down the levels (finest to coarsest) and back up, each level smooths twice, and each
 * smoothing sweep exchanges halos along the three axes (per axis 2 MPI_Irecv + 2 MPI_Isend +
 * MPI_Waitall, face sizes shrinking with the level); the coarsest level ends with an
 * MPI_Allreduce, and each cycle with the residual's MPI_Allreduce. With the default 6 levels a cycle
 * is 362 calls, longer than a loop body short-window folding finds: the trace must still fold the
 * cycles into one loop. Prints the calls per cycle it made, so a test can check the folding.
 *
 * Usage: multigrid [CYCLES [LEVELS]]    (defaults 4, 6) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

static long long calls_this_cycle;
static int before[3], after[3]; /* neighbours along each axis: grid ranks, which are world ranks */

/* Halo exchange of one smoothing sweep at `level` (0 finest): along each axis, with the ranks before
 * and after on the periodic grid; a face of the finest level is 64x64 doubles. Tags name the sweep
 * and the direction, so no two exchanges of a cycle are alike: the cycle is 362 distinct calls. */
static void exchange(MPI_Comm grid, int level, int sweep, double *buffer)
{
    const int face = (64 >> level) * (64 >> level);
    const long long bytes = face * (long long)sizeof(double);
    for (int axis = 0; axis < 3; ++axis) {
        const int up = 6 * sweep + axis, down = 6 * sweep + 3 + axis;
        MPI_Request requests[4];
        MPI_Irecv(buffer, face, MPI_DOUBLE, before[axis], up, grid, &requests[0]);
        log_recv("MPI_Irecv", bytes, log_rank(before[axis]), up);
        MPI_Irecv(buffer + face, face, MPI_DOUBLE, after[axis], down, grid, &requests[1]);
        log_recv("MPI_Irecv", bytes, log_rank(after[axis]), down);
        MPI_Isend(buffer + 2 * face, face, MPI_DOUBLE, after[axis], up, grid, &requests[2]);
        log_send("MPI_Isend", bytes, log_rank(after[axis]), up);
        MPI_Isend(buffer + 3 * face, face, MPI_DOUBLE, before[axis], down, grid, &requests[3]);
        log_send("MPI_Isend", bytes, log_rank(before[axis]), down);
        MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
        log_completion("MPI_Waitall", 4);
        calls_this_cycle += 5;
    }
}

static void smooth(MPI_Comm grid, int level, double *buffer)
{
    for (int sweep = 0; sweep < 2; ++sweep) exchange(grid, level, sweep, buffer);
}

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    const int cycles = argc > 1 ? atoi(argv[1]) : 4;
    const int levels = argc > 2 ? atoi(argv[2]) : 6;

    int dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1};
    MPI_Dims_create(size, 3, dims);
    log_call("MPI_Dims_create", 0);
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &grid); /* no reordering: grid ranks are world ranks */
    log_call("MPI_Cart_create", 0);
    for (int axis = 0; axis < 3; ++axis) {
        MPI_Cart_shift(grid, axis, 1, &before[axis], &after[axis]);
        log_call("MPI_Cart_shift", 0);
    }

    double *buffer = calloc(4 * 64 * 64, sizeof(double));
    double residual = 1.0;
    long long calls_per_cycle = -1;
    for (int cycle = 0; cycle < cycles; ++cycle) {
        calls_this_cycle = 0;
        for (int level = 0; level < levels; ++level) smooth(grid, level, buffer);
        double coarse = rank, coarse_sum;
        MPI_Allreduce(&coarse, &coarse_sum, 1, MPI_DOUBLE, MPI_SUM, grid);
        log_call("MPI_Allreduce", sizeof(double));
        for (int level = levels - 1; level >= 0; --level) smooth(grid, level, buffer);
        const double local = 1.0 / (cycle + 2);
        MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_MAX, grid);
        log_call("MPI_Allreduce", sizeof(double));
        calls_this_cycle += 2;
        if (calls_per_cycle >= 0 && calls_per_cycle != calls_this_cycle) calls_per_cycle = -2; /* cycles differ */
        if (calls_per_cycle == -1) calls_per_cycle = calls_this_cycle;
    }

    if (rank == 0)
        printf("multigrid: ranks %d as %dx%dx%d, cycles %d, levels %d, calls per cycle %lld, residual %.6f\n", size,
               dims[0], dims[1], dims[2], cycles, levels, calls_per_cycle, residual);
    free(buffer);
    MPI_Comm_free(&grid);
    log_call("MPI_Comm_free", 0);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
