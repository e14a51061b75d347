/* MPI_Comm_disconnect of a duplicate of the world after a ring of MPI_Isend/MPI_Irecv on it, of an
 * intercommunicator between the halves (2 and 3 ranks at 5) after an MPI_Sendrecv across it, of the
 * communicator merged from it after an MPI_Allreduce, and of the halves' local communicator; the
 * world still works afterwards (MPI_Bcast). */
#include "../conformance.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    MPI_Comm dup;
    CALL(MPI_Comm_dup, MPI_COMM_WORLD, &dup);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = rank, in = -1;
    MPI_Request requests[2];
    CALL(MPI_Isend, &out, 1, MPI_INT, right, 0, dup, &requests[0]);
    CALL(MPI_Irecv, &in, 1, MPI_INT, left, 0, dup, &requests[1]);
    CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
    if (in != left)
        conformance_error("dup ring got %d", in);
    CALL(MPI_Comm_disconnect, &dup);
    if (dup != MPI_COMM_NULL)
        conformance_error("disconnected dup is not MPI_COMM_NULL");
    const int low_size = size / 2, low = rank < low_size;
    MPI_Comm local, inter, merged;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, low, rank, &local);
    CALL(MPI_Intercomm_create, local, 0, MPI_COMM_WORLD, low ? low_size : 0, 21, &inter);
    int lrank;
    CALL(MPI_Comm_rank, local, &lrank);
    if (lrank < low_size) {
        int mine = rank, theirs = -1;
        CALL(MPI_Sendrecv, &mine, 1, MPI_INT, lrank, 1, &theirs, 1, MPI_INT, lrank, 1, inter, MPI_STATUS_IGNORE);
        if (theirs != (low ? low_size + lrank : lrank))
            conformance_error("intercomm exchange got %d", theirs);
    }
    CALL(MPI_Intercomm_merge, inter, !low, &merged);
    CALL(MPI_Comm_disconnect, &inter);
    int one = 1, count = 0;
    CALL(MPI_Allreduce, &one, &count, 1, MPI_INT, MPI_SUM, merged);
    if (count != size)
        conformance_error("merged allreduce %d", count);
    CALL(MPI_Comm_disconnect, &merged);
    CALL(MPI_Comm_disconnect, &local);
    int token = rank == 0 ? 99 : -1;
    CALL(MPI_Bcast, &token, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (token != 99)
        conformance_error("world bcast after disconnects: %d", token);
    return conformance_finish();
}
