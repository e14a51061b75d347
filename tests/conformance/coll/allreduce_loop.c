/* A loop of 400 MPI_Allreduce calls whose sizes depend on the data: each call's element count (1 to
 * 13) comes from the previous call's result, alike on every rank. (At p = 0 only about half were
 * replayed, reported.) */
#include "coll.h"

enum { CALLS = 400, MAX_N = 13 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    int n = 1, seed = 7, histogram[MAX_N + 1] = {0};
    for (int call = 0; call < CALLS; ++call) {
        int in[MAX_N], out[MAX_N];
        for (int i = 0; i < n; ++i)
            in[i] = (seed * (rank + 1) + i) % 1009;
        CALL(MPI_Allreduce, in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < n; ++i) {
            int expected = 0;
            for (int r = 0; r < size; ++r)
                expected += (seed * (r + 1) + i) % 1009;
            if (out[i] != expected)
                conformance_error("call %d: out[%d] = %d, expected %d", call, i, out[i], expected);
        }
        ++histogram[n];
        seed = (out[0] * 31 + out[n - 1] + call) % 1009;
        n = 1 + seed % MAX_N;
    }
    int sizes = 0;
    for (int k = 1; k <= MAX_N; ++k)
        sizes += histogram[k] > 0;
    if (sizes < 5)
        conformance_error("only %d different sizes", sizes);
    return conformance_finish();
}
