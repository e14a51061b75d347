/* A loop of 400 steps whose data choose both the size and the call site of its MPI_Allreduce: the
 * previous result gives the element count (1 to 13), and counts above 6 take an MPI_Allreduce of ints
 * with MPI_SUM, the others one of doubles with MPI_MAX; alike on every rank. */
#include "coll.h"

enum { STEPS = 400, MAX_N = 13 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    int n = 1, seed = 11, branches[2] = {0, 0};
    for (int step = 0; step < STEPS; ++step) {
        if (n > 6) {
            int in[MAX_N], out[MAX_N];
            for (int i = 0; i < n; ++i)
                in[i] = (seed * (rank + 3) + i) % 1013;
            CALL(MPI_Allreduce, in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            int expected = 0;
            for (int r = 0; r < size; ++r)
                expected += (seed * (r + 3)) % 1013;
            if (out[0] != expected)
                conformance_error("step %d: sum %d, expected %d", step, out[0], expected);
            seed = (out[0] + out[n - 1] * 17 + step) % 1013;
            ++branches[0];
        } else {
            double in[MAX_N], out[MAX_N];
            for (int i = 0; i < n; ++i)
                in[i] = (seed * (rank + 5) + i) % 1013;
            CALL(MPI_Allreduce, in, out, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            int expected = 0;
            for (int r = 0; r < size; ++r)
                if ((seed * (r + 5)) % 1013 > expected)
                    expected = (seed * (r + 5)) % 1013;
            if (out[0] != expected)
                conformance_error("step %d: max %g, expected %d", step, out[0], expected);
            seed = ((int)out[0] * 13 + (int)out[n - 1] + step) % 1013;
            ++branches[1];
        }
        n = 1 + seed % MAX_N;
    }
    if (branches[0] < 50 || branches[1] < 50)
        conformance_error("branches taken %d and %d times", branches[0], branches[1]);
    return conformance_finish();
}
