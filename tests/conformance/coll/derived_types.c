/* Derived datatypes in collectives, on MPI_COMM_WORLD and on a split half: MPI_Bcast of a strided
 * vector (every other int), MPI_Gather of a struct {int, double} to the last rank (non-zero),
 * MPI_Scatter of the columns of a row-major matrix (a vector resized to one int) into contiguous ints,
 * and MPI_Iallgather of a contiguous type of three ints. */
#include <stddef.h>

#include "coll.h"

enum { MAX_RANKS = 16, ROWS = 3 };

typedef struct { int i; double d; } record;

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int world_rank, world_size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &world_rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &world_size);
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_NULL};
    CALL(MPI_Comm_split, MPI_COMM_WORLD, world_rank < world_size / 2 ? 0 : 1, world_rank, &comms[1]);

    MPI_Datatype strided, triple, column_vector, column, record_type;
    CALL(MPI_Type_vector, 4, 1, 2, MPI_INT, &strided);
    CALL(MPI_Type_contiguous, 3, MPI_INT, &triple);
    int lengths[2] = {1, 1};
    MPI_Aint displacements[2] = {offsetof(record, i), offsetof(record, d)};
    MPI_Datatype members[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Datatype record_raw;
    CALL(MPI_Type_create_struct, 2, lengths, displacements, members, &record_raw);
    CALL(MPI_Type_create_resized, record_raw, 0, (MPI_Aint)sizeof(record), &record_type);
    CALL(MPI_Type_commit, &strided);
    CALL(MPI_Type_commit, &triple);
    CALL(MPI_Type_commit, &record_type);

    for (int c = 0; c < 2; ++c) {
        int rank, size;
        CALL(MPI_Comm_rank, comms[c], &rank);
        CALL(MPI_Comm_size, comms[c], &size);

        int spread[8];
        for (int i = 0; i < 8; ++i)
            spread[i] = rank == 0 ? (i % 2 == 0 ? 100 * c + i : -5) : -1;
        CALL(MPI_Bcast, spread, 1, strided, 0, comms[c]);
        for (int i = 0; i < 8; ++i)
            if (spread[i] != (i % 2 == 0 ? 100 * c + i : rank == 0 ? -5 : -1))
                conformance_error("comm %d Bcast vector: [%d] = %d", c, i, spread[i]);

        record mine = {1000 * c + rank, rank + 0.5}, all[MAX_RANKS];
        CALL(MPI_Gather, &mine, 1, record_type, all, 1, record_type, size - 1, comms[c]);
        for (int r = 0; rank == size - 1 && r < size; ++r)
            if (all[r].i != 1000 * c + r || all[r].d != r + 0.5)
                conformance_error("comm %d Gather struct: from %d (%d, %g)", c, r, all[r].i, all[r].d);

        /* A ROWS x size matrix, row-major; rank j gets column j. */
        int matrix[ROWS * MAX_RANKS], col[ROWS] = {-1, -1, -1};
        for (int i = 0; i < ROWS * size; ++i)
            matrix[i] = 10 * c + i;
        CALL(MPI_Type_vector, ROWS, 1, size, MPI_INT, &column_vector);
        CALL(MPI_Type_create_resized, column_vector, 0, (MPI_Aint)sizeof(int), &column);
        CALL(MPI_Type_commit, &column);
        CALL(MPI_Scatter, matrix, 1, column, col, ROWS, MPI_INT, 0, comms[c]);
        for (int i = 0; i < ROWS; ++i)
            if (col[i] != 10 * c + i * size + rank)
                conformance_error("comm %d Scatter column: [%d] = %d", c, i, col[i]);
        CALL(MPI_Type_free, &column);
        CALL(MPI_Type_free, &column_vector);

        int three[3] = {rank, 2 * rank, 3 * rank + c}, gathered[3 * MAX_RANKS];
        MPI_Request request;
        CALL(MPI_Iallgather, three, 1, triple, gathered, 1, triple, comms[c], &request);
        CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
        for (int r = 0; r < size; ++r)
            if (gathered[3 * r] != r || gathered[3 * r + 1] != 2 * r || gathered[3 * r + 2] != 3 * r + c)
                conformance_error("comm %d Iallgather triple: from %d", c, r);
    }
    CALL(MPI_Type_free, &record_type);
    CALL(MPI_Type_free, &record_raw);
    CALL(MPI_Type_free, &triple);
    CALL(MPI_Type_free, &strided);
    CALL(MPI_Comm_free, &comms[1]);
    return conformance_finish();
}
