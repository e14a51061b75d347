/* One-sided calls with derived datatypes: MPI_Put of a contiguous block into every other element of
 * the right neighbour's window (a vector target type), MPI_Get of the other elements back (vector
 * types at both ends), and MPI_Accumulate with an indexed target type, in fence epochs. */
#include "../conformance.h"

enum { N = 8 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int memory[2 * N];
    for (int i = 0; i < 2 * N; ++i)
        memory[i] = rank * 1000 + i;
    MPI_Win win;
    CALL(MPI_Win_create, memory, (MPI_Aint)sizeof memory, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    MPI_Datatype every_other, indexed;
    CALL(MPI_Type_vector, N, 1, 2, MPI_INT, &every_other);
    CALL(MPI_Type_commit, &every_other);
    const int lengths[3] = {1, 2, 1}, displacements[3] = {0, 5, 15};
    CALL(MPI_Type_indexed, 3, lengths, displacements, MPI_INT, &indexed);
    CALL(MPI_Type_commit, &indexed);

    int out[N];
    for (int i = 0; i < N; ++i)
        out[i] = -(rank * 100 + i);
    CALL(MPI_Win_fence, 0, win);
    CALL(MPI_Put, out, N, MPI_INT, right, 0, 1, every_other, win);
    CALL(MPI_Win_fence, 0, win);
    for (int i = 0; i < 2 * N; ++i) {
        const int expected = i % 2 == 0 ? -(left * 100 + i / 2) : rank * 1000 + i;
        if (memory[i] != expected)
            conformance_error("after put memory[%d] = %d, expected %d", i, memory[i], expected);
    }

    int column[2 * N];
    for (int i = 0; i < 2 * N; ++i)
        column[i] = 7;
    /* The right neighbour's odd elements (untouched) into our even ones. */
    CALL(MPI_Get, column, 1, every_other, right, 1, 1, every_other, win);
    CALL(MPI_Win_fence, 0, win);
    for (int i = 0; i < 2 * N; ++i) {
        const int expected = i % 2 == 0 ? right * 1000 + i + 1 : 7;
        if (column[i] != expected)
            conformance_error("after get column[%d] = %d, expected %d", i, column[i], expected);
    }

    const int add[4] = {1, 2, 3, 4};
    CALL(MPI_Accumulate, add, 4, MPI_INT, right, 0, 1, indexed, MPI_SUM, win);
    CALL(MPI_Win_fence, 0, win);
    const int where[4] = {0, 5, 6, 15};
    for (int k = 0; k < 4; ++k) {
        const int i = where[k];
        const int before = i % 2 == 0 ? -(left * 100 + i / 2) : rank * 1000 + i;
        if (memory[i] != before + add[k])
            conformance_error("after accumulate memory[%d] = %d, expected %d", i, memory[i], before + add[k]);
    }

    CALL(MPI_Type_free, &every_other);
    CALL(MPI_Type_free, &indexed);
    CALL(MPI_Win_free, &win);
    return conformance_finish();
}
