/* MPI_Comm_dup of MPI_COMM_WORLD and a dup of the dup: each new communicator has the world's ranks,
 * compares MPI_CONGRUENT with it, and carries its own traffic (a ring of MPI_Send/MPI_Recv with the
 * same tag on every communicator, an MPI_Allreduce and an MPI_Bcast), checked; then both are freed. */
#include "../conformance.h"

static void exercise(MPI_Comm comm, int salt)
{
    int rank, size;
    CALL(MPI_Comm_rank, comm, &rank);
    CALL(MPI_Comm_size, comm, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = salt * 100 + rank, in = -1;
    MPI_Status status;
    if (rank % 2 == 0) {
        CALL(MPI_Send, &out, 1, MPI_INT, right, 7, comm);
        CALL(MPI_Recv, &in, 1, MPI_INT, left, 7, comm, &status);
    } else {
        CALL(MPI_Recv, &in, 1, MPI_INT, left, 7, comm, &status);
        CALL(MPI_Send, &out, 1, MPI_INT, right, 7, comm);
    }
    if (in != salt * 100 + left || status.MPI_SOURCE != left || status.MPI_TAG != 7)
        conformance_error("salt %d: got %d from %d tag %d", salt, in, status.MPI_SOURCE, status.MPI_TAG);
    int sum = 0;
    CALL(MPI_Allreduce, &rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    if (sum != size * (size - 1) / 2)
        conformance_error("salt %d: allreduce %d", salt, sum);
    int value = rank == size - 1 ? salt : -1;
    CALL(MPI_Bcast, &value, 1, MPI_INT, size - 1, comm);
    if (value != salt)
        conformance_error("salt %d: bcast %d", salt, value);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    MPI_Comm dup, dup2;
    CALL(MPI_Comm_dup, MPI_COMM_WORLD, &dup);
    CALL(MPI_Comm_dup, dup, &dup2);
    int dup_rank, dup_size, result;
    CALL(MPI_Comm_rank, dup, &dup_rank);
    CALL(MPI_Comm_size, dup2, &dup_size);
    if (dup_rank != rank || dup_size != size)
        conformance_error("dup rank %d size %d", dup_rank, dup_size);
    CALL(MPI_Comm_compare, MPI_COMM_WORLD, dup, &result);
    if (result != MPI_CONGRUENT)
        conformance_error("compare(world, dup) = %d", result);
    CALL(MPI_Comm_compare, dup, dup2, &result);
    if (result != MPI_CONGRUENT)
        conformance_error("compare(dup, dup2) = %d", result);
    exercise(dup2, 2);
    exercise(dup, 1);
    exercise(MPI_COMM_WORLD, 0);
    CALL(MPI_Comm_free, &dup);
    exercise(dup2, 3);
    CALL(MPI_Comm_free, &dup2);
    if (dup != MPI_COMM_NULL || dup2 != MPI_COMM_NULL)
        conformance_error("freed communicators not MPI_COMM_NULL");
    return conformance_finish();
}
