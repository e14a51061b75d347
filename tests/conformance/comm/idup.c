/* MPI_Comm_idup: three duplicates started at once (of the world and of a split half), completed by
 * MPI_Wait and MPI_Waitall, with world traffic (an MPI_Isend/MPI_Irecv pair) in flight meanwhile;
 * then point-to-point and an MPI_Allreduce on each duplicate, checked; freed. */
#include "../conformance.h"

static void check_comm(MPI_Comm comm, int salt)
{
    int rank, size;
    CALL(MPI_Comm_rank, comm, &rank);
    CALL(MPI_Comm_size, comm, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = salt + rank, in = -1;
    MPI_Request requests[2];
    CALL(MPI_Irecv, &in, 1, MPI_INT, left, salt, comm, &requests[0]);
    CALL(MPI_Isend, &out, 1, MPI_INT, right, salt, comm, &requests[1]);
    CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
    if (in != salt + left)
        conformance_error("salt %d: got %d from %d", salt, in, left);
    int max = -1;
    CALL(MPI_Allreduce, &rank, &max, 1, MPI_INT, MPI_MAX, comm);
    if (max != size - 1)
        conformance_error("salt %d: allreduce max %d", salt, max);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    MPI_Comm half;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm dups[3];
    MPI_Request requests[3];
    int token = rank, got = -1;
    MPI_Request traffic[2];
    CALL(MPI_Irecv, &got, 1, MPI_INT, (rank + size - 1) % size, 99, MPI_COMM_WORLD, &traffic[0]);
    CALL(MPI_Comm_idup, MPI_COMM_WORLD, &dups[0], &requests[0]);
    CALL(MPI_Comm_idup, half, &dups[1], &requests[1]);
    CALL(MPI_Isend, &token, 1, MPI_INT, (rank + 1) % size, 99, MPI_COMM_WORLD, &traffic[1]);
    CALL(MPI_Comm_idup, MPI_COMM_WORLD, &dups[2], &requests[2]);
    CALL(MPI_Wait, &requests[1], MPI_STATUS_IGNORE);
    CALL(MPI_Waitall, 2, traffic, MPI_STATUSES_IGNORE);
    if (got != (rank + size - 1) % size)
        conformance_error("world traffic got %d", got);
    CALL(MPI_Waitall, 3, requests, MPI_STATUSES_IGNORE);
    check_comm(dups[2], 300);
    check_comm(dups[1], 200);
    check_comm(dups[0], 100);
    int result;
    CALL(MPI_Comm_compare, dups[1], half, &result);
    if (result != MPI_CONGRUENT)
        conformance_error("compare(idup of half, half) = %d", result);
    for (int i = 0; i < 3; ++i)
        CALL(MPI_Comm_free, &dups[i]);
    CALL(MPI_Comm_free, &half);
    return conformance_finish();
}
