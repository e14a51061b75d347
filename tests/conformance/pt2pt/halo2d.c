/* A halo exchange on a periodic 2-D grid of ranks (MPI_Dims_create; the neighbours computed by hand,
 * no Cartesian communicator): each rank owns an N x N block with a one-cell halo, exchanges rows and
 * columns with its four neighbours (MPI_Irecv/MPI_Isend, a vector type for the columns, MPI_Waitall)
 * every step, and checks every halo cell against the value its neighbour owns. On a grid of width 2
 * or 1 the left and right neighbours are the same rank (or itself): the tags tell the directions apart. */
#include "conformance.h"

enum { N = 8, STEPS = 5 };

static double owned(int rank, int step, int r, int c) { return rank * 10000.0 + step * 1000.0 + r * N + c; }

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    int dims[2] = {0, 0};
    CALL(MPI_Dims_create, size, 2, dims);
    const int row = rank / dims[1], col = rank % dims[1];
    const int north = ((row + dims[0] - 1) % dims[0]) * dims[1] + col, south = ((row + 1) % dims[0]) * dims[1] + col;
    const int west = row * dims[1] + (col + dims[1] - 1) % dims[1], east = row * dims[1] + (col + 1) % dims[1];
    double grid[N + 2][N + 2];
    MPI_Datatype column;
    CALL(MPI_Type_vector, N, 1, N + 2, MPI_DOUBLE, &column);
    CALL(MPI_Type_commit, &column);
    enum { TO_NORTH, TO_SOUTH, TO_WEST, TO_EAST };
    for (int step = 0; step < STEPS; ++step) {
        for (int r = 0; r < N + 2; ++r)
            for (int c = 0; c < N + 2; ++c)
                grid[r][c] = (r >= 1 && r <= N && c >= 1 && c <= N) ? owned(rank, step, r - 1, c - 1) : -1.0;
        MPI_Request requests[8];
        /* A message travelling north arrives in the southern halo of the rank north of here. */
        CALL(MPI_Irecv, &grid[N + 1][1], N, MPI_DOUBLE, south, TO_NORTH, MPI_COMM_WORLD, &requests[0]);
        CALL(MPI_Irecv, &grid[0][1], N, MPI_DOUBLE, north, TO_SOUTH, MPI_COMM_WORLD, &requests[1]);
        CALL(MPI_Irecv, &grid[1][N + 1], 1, column, east, TO_WEST, MPI_COMM_WORLD, &requests[2]);
        CALL(MPI_Irecv, &grid[1][0], 1, column, west, TO_EAST, MPI_COMM_WORLD, &requests[3]);
        CALL(MPI_Isend, &grid[1][1], N, MPI_DOUBLE, north, TO_NORTH, MPI_COMM_WORLD, &requests[4]);
        CALL(MPI_Isend, &grid[N][1], N, MPI_DOUBLE, south, TO_SOUTH, MPI_COMM_WORLD, &requests[5]);
        CALL(MPI_Isend, &grid[1][1], 1, column, west, TO_WEST, MPI_COMM_WORLD, &requests[6]);
        CALL(MPI_Isend, &grid[1][N], 1, column, east, TO_EAST, MPI_COMM_WORLD, &requests[7]);
        CALL(MPI_Waitall, 8, requests, MPI_STATUSES_IGNORE);
        for (int k = 0; k < N; ++k) {
            if (grid[N + 1][k + 1] != owned(south, step, 0, k) || grid[0][k + 1] != owned(north, step, N - 1, k) ||
                grid[k + 1][N + 1] != owned(east, step, k, 0) || grid[k + 1][0] != owned(west, step, k, N - 1)) {
                conformance_error("step %d: a halo cell at %d is wrong", step, k);
                break;
            }
        }
    }
    CALL(MPI_Type_free, &column);
    return conformance_finish();
}
