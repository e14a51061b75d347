/* MPI_Win_allocate: MPI allocates the window (doubles); in one fence epoch every rank puts its value
 * into its own slot of every other rank's window (an all-to-all of puts); checked, then freed. */
#include "../conformance.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);

    double *base = NULL;
    MPI_Win win;
    CALL(MPI_Win_allocate, (MPI_Aint)(sizeof(double) * size), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    if (base == NULL)
        conformance_error("MPI_Win_allocate gave no memory");
    for (int i = 0; i < size; ++i)
        base[i] = -1.0;

    const double mine = 1.5 + rank;
    CALL(MPI_Win_fence, 0, win);
    for (int target = 0; target < size; ++target)
        if (target != rank)
            CALL(MPI_Put, &mine, 1, MPI_DOUBLE, target, rank, 1, MPI_DOUBLE, win);
    CALL(MPI_Win_fence, 0, win);
    for (int s = 0; s < size; ++s) {
        const double expected = s == rank ? -1.0 : 1.5 + s;
        if (base[s] != expected)
            conformance_error("slot %d = %g, expected %g", s, base[s], expected);
    }

    CALL(MPI_Win_free, &win);
    return conformance_finish();
}
