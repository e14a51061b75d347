/* Communicators keep messages apart: MPI_Sendrecv on a duplicate of MPI_COMM_WORLD (MPI_Comm_dup),
 * and receives with the same source and tag posted on both communicators, the message on the duplicate
 * sent first: each receive must get its own communicator's message. The duplicate is freed. */
#include "conformance.h"

enum { TAG = 12 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    MPI_Comm dup;
    CALL(MPI_Comm_dup, MPI_COMM_WORLD, &dup);
    int dup_rank, dup_size;
    CALL(MPI_Comm_rank, dup, &dup_rank);
    CALL(MPI_Comm_size, dup, &dup_size);
    if (dup_rank != rank || dup_size != size)
        conformance_error("the duplicate: rank %d of %d", dup_rank, dup_size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int round = 0; round < 3; ++round) {
        int out[2] = {rank, round}, in[2] = {-1, -1};
        MPI_Status status;
        CALL(MPI_Sendrecv, out, 2, MPI_INT, right, TAG, in, 2, MPI_INT, left, TAG, dup, &status);
        if (in[0] != left || in[1] != round || status.MPI_SOURCE != left || status.MPI_TAG != TAG)
            conformance_error("round %d: got (%d, %d) from %d", round, in[0], in[1], status.MPI_SOURCE);
    }
    int on_world = -1, on_dup = -1;
    MPI_Request requests[4];
    CALL(MPI_Irecv, &on_world, 1, MPI_INT, left, TAG, MPI_COMM_WORLD, &requests[0]);
    CALL(MPI_Irecv, &on_dup, 1, MPI_INT, left, TAG, dup, &requests[1]);
    const int for_dup = 2000 + rank, for_world = 1000 + rank;
    CALL(MPI_Isend, &for_dup, 1, MPI_INT, right, TAG, dup, &requests[2]);
    CALL(MPI_Isend, &for_world, 1, MPI_INT, right, TAG, MPI_COMM_WORLD, &requests[3]);
    CALL(MPI_Waitall, 4, requests, MPI_STATUSES_IGNORE);
    if (on_world != 1000 + left || on_dup != 2000 + left)
        conformance_error("world got %d, the duplicate %d", on_world, on_dup);
    CALL(MPI_Comm_free, &dup);
    if (dup != MPI_COMM_NULL)
        conformance_error("MPI_Comm_free left the handle");
    return conformance_finish();
}
