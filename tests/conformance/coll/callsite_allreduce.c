/* MPI_Allreduce called from different call sites by different ranks: even and odd ranks from two
 * call statements, three times; then rank 0 from one and the others from another, in place on one
 * side only; on MPI_COMM_WORLD. */
#include "coll.h"

enum { N = 4 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    for (int round = 0; round < 3; ++round) {
        int in[N], out[N];
        for (int i = 0; i < N; ++i)
            in[i] = 100 * round + 10 * rank + i;
        if (rank % 2 == 0)
            CALL(MPI_Allreduce, in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        else
            CALL(MPI_Allreduce, in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < N; ++i)
            if (out[i] != 100 * round * size + 10 * size * (size - 1) / 2 + size * i)
                conformance_error("round %d: out[%d] = %d", round, i, out[i]);
    }
    int buf[N], in[N];
    for (int i = 0; i < N; ++i)
        buf[i] = in[i] = rank * 3 + i;
    if (rank == 0)
        CALL(MPI_Allreduce, MPI_IN_PLACE, buf, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    else
        CALL(MPI_Allreduce, in, buf, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < N; ++i)
        if (buf[i] != (size - 1) * 3 + i)
            conformance_error("max: buf[%d] = %d", i, buf[i]);
    return conformance_finish();
}
