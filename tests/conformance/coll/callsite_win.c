/* Window creation and release called from different call sites by different ranks: rank 0 exposes a
 * buffer with MPI_Win_create from one call statement, the others expose nothing from another; every
 * rank puts its rank into rank 0's window in a fence epoch; MPI_Win_free from two call statements. */
#include "coll.h"

enum { MAX_RANKS = 16 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    int exposed[MAX_RANKS];
    for (int i = 0; i < MAX_RANKS; ++i)
        exposed[i] = -1;
    MPI_Win win;
    if (rank == 0)
        CALL(MPI_Win_create, exposed, (MPI_Aint)sizeof exposed, (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    else
        CALL(MPI_Win_create, NULL, 0, (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    CALL(MPI_Win_fence, 0, win);
    int value = 10 * rank + 1;
    CALL(MPI_Put, &value, 1, MPI_INT, 0, rank, 1, MPI_INT, win);
    CALL(MPI_Win_fence, 0, win);
    for (int r = 0; rank == 0 && r < size; ++r)
        if (exposed[r] != 10 * r + 1)
            conformance_error("exposed[%d] = %d", r, exposed[r]);
    if (rank == 0)
        CALL(MPI_Win_free, &win);
    else
        CALL(MPI_Win_free, &win);
    return conformance_finish();
}
