/* MPI_Win_create_dynamic: every rank attaches a region of its own (MPI_Win_attach), learns every
 * region's address (MPI_Get_address + MPI_Allgather of MPI_AINT), puts a block into the right
 * neighbour's region and gets a block from it at those addresses in fence epochs, then detaches
 * (MPI_Win_detach) and frees. */
#include "../conformance.h"

enum { N = 32 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    MPI_Win win;
    CALL(MPI_Win_create_dynamic, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    /* First half: written by the left neighbour; second half: read by it. */
    int *region = malloc(2 * N * sizeof(int));
    for (int i = 0; i < N; ++i) {
        region[i] = -1;
        region[N + i] = rank * 1000 + i;
    }
    CALL(MPI_Win_attach, win, region, (MPI_Aint)(2 * N * sizeof(int)));
    MPI_Aint address;
    CALL(MPI_Get_address, region, &address);
    MPI_Aint *addresses = malloc(size * sizeof(MPI_Aint));
    CALL(MPI_Allgather, &address, 1, MPI_AINT, addresses, 1, MPI_AINT, MPI_COMM_WORLD);

    int out[N], in[N];
    for (int i = 0; i < N; ++i) {
        out[i] = rank * 100 + i;
        in[i] = -2;
    }
    CALL(MPI_Win_fence, 0, win);
    CALL(MPI_Put, out, N, MPI_INT, right, addresses[right], N, MPI_INT, win);
    CALL(MPI_Win_fence, 0, win);
    for (int i = 0; i < N; ++i)
        if (region[i] != left * 100 + i)
            conformance_error("after put: region[%d] = %d", i, region[i]);
    CALL(MPI_Get, in, N, MPI_INT, right, addresses[right] + (MPI_Aint)(N * sizeof(int)), N, MPI_INT, win);
    CALL(MPI_Win_fence, 0, win);
    for (int i = 0; i < N; ++i)
        if (in[i] != right * 1000 + i)
            conformance_error("after get: in[%d] = %d", i, in[i]);

    CALL(MPI_Win_detach, win, region);
    CALL(MPI_Win_free, &win);
    free(region);
    free(addresses);
    return conformance_finish();
}
