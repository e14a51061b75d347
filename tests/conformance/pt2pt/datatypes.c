/* Derived datatypes in sends and receives around the ring: a contiguous type, a vector (a column
 * of a matrix), an indexed type, a struct of an int and a double, and a resized type sent with a count
 * above 1 (its extent is the stride). Each is received into another layout of the same type
 * signature, and MPI_Get_count/MPI_Get_elements are checked. */
#include <stddef.h>

#include "conformance.h"

enum { N = 6 };

struct pair { int i; double d; };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype contiguous, column, indexed, pair_type, resized;
    CALL(MPI_Type_contiguous, N, MPI_INT, &contiguous);
    CALL(MPI_Type_vector, N, 1, N, MPI_INT, &column);
    const int lengths[3] = {1, 2, 3}, displacements[3] = {0, 5, 12};
    CALL(MPI_Type_indexed, 3, lengths, displacements, MPI_INT, &indexed);
    const int block_lengths[2] = {1, 1};
    const MPI_Aint offsets[2] = {offsetof(struct pair, i), offsetof(struct pair, d)};
    const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Datatype pair_raw;
    CALL(MPI_Type_create_struct, 2, block_lengths, offsets, types, &pair_raw);
    CALL(MPI_Type_create_resized, pair_raw, 0, sizeof(struct pair), &pair_type);
    CALL(MPI_Type_create_resized, MPI_INT, 0, 3 * sizeof(int), &resized); /* every third int */
    MPI_Datatype all[5] = {contiguous, column, indexed, pair_type, resized};
    for (int t = 0; t < 5; ++t)
        CALL(MPI_Type_commit, &all[t]);

    int matrix[N][N], in[N * N];
    for (int r = 0; r < N; ++r)
        for (int c = 0; c < N; ++c)
            matrix[r][c] = rank * 1000 + r * N + c;
    struct pair pairs[4], pairs_in[4];
    for (int k = 0; k < 4; ++k)
        pairs[k] = (struct pair){rank * 10 + k, rank + k * 0.25};
    MPI_Status status;
    int count, elements;
    /* contiguous in, ints out; column out, ints in; indexed both ways; pairs; resized out, ints in. */
    CALL(MPI_Sendrecv, &matrix[1][0], 1, contiguous, right, 1, in, N, MPI_INT, left, 1, MPI_COMM_WORLD, &status);
    for (int c = 0; c < N; ++c)
        if (in[c] != left * 1000 + N + c)
            conformance_error("contiguous: [%d] = %d", c, in[c]);
    CALL(MPI_Sendrecv, &matrix[0][2], 1, column, right, 2, in, N, MPI_INT, left, 2, MPI_COMM_WORLD, &status);
    CALL(MPI_Get_count, &status, MPI_INT, &count);
    if (count != N)
        conformance_error("column: count %d", count);
    for (int r = 0; r < N; ++r)
        if (in[r] != left * 1000 + r * N + 2)
            conformance_error("column: [%d] = %d", r, in[r]);
    int scattered[N * N];
    for (int k = 0; k < N * N; ++k)
        scattered[k] = -1;
    CALL(MPI_Sendrecv, matrix, 1, indexed, right, 3, scattered, 1, indexed, left, 3, MPI_COMM_WORLD, &status);
    CALL(MPI_Get_count, &status, indexed, &count);
    CALL(MPI_Get_elements, &status, indexed, &elements);
    if (count != 1 || elements != 6)
        conformance_error("indexed: count %d elements %d", count, elements);
    for (int b = 0; b < 3; ++b)
        for (int k = 0; k < lengths[b]; ++k)
            if (scattered[displacements[b] + k] != left * 1000 + displacements[b] + k)
                conformance_error("indexed: [%d] = %d", displacements[b] + k, scattered[displacements[b] + k]);
    if (scattered[1] != -1)
        conformance_error("indexed: a gap was written");
    CALL(MPI_Sendrecv, pairs, 4, pair_type, right, 4, pairs_in, 4, pair_type, left, 4, MPI_COMM_WORLD, &status);
    CALL(MPI_Get_count, &status, pair_type, &count);
    CALL(MPI_Get_elements, &status, pair_type, &elements);
    if (count != 4 || elements != 8)
        conformance_error("struct: count %d elements %d", count, elements);
    for (int k = 0; k < 4; ++k)
        if (pairs_in[k].i != left * 10 + k || pairs_in[k].d != left + k * 0.25)
            conformance_error("struct: pair %d = (%d, %g)", k, pairs_in[k].i, pairs_in[k].d);
    CALL(MPI_Sendrecv, matrix, 5, resized, right, 5, in, 5, MPI_INT, left, 5, MPI_COMM_WORLD, &status);
    for (int k = 0; k < 5; ++k)
        if (in[k] != left * 1000 + 3 * k)
            conformance_error("resized: [%d] = %d", k, in[k]);
    CALL(MPI_Type_free, &pair_raw);
    for (int t = 0; t < 5; ++t)
        CALL(MPI_Type_free, &all[t]);
    return conformance_finish();
}
