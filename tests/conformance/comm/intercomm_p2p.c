/* MPI_Intercomm_create between two halves of different sizes (world ranks below size/2, and the
 * rest: 2 and 3 ranks at 5), each from a local communicator made by MPI_Comm_split, with
 * MPI_COMM_WORLD as the peer; MPI_Comm_test_inter, MPI_Comm_remote_size and MPI_Comm_remote_group
 * checked; then point-to-point across it: blocking MPI_Send/MPI_Recv from each low rank to the high
 * rank of the same local rank, MPI_Isend from every high rank to a low rank received with
 * MPI_ANY_SOURCE (status checked in remote ranks), and an MPI_Sendrecv between local ranks 0. */
#include "../conformance.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int low_size = size / 2, high_size = size - low_size, low = rank < low_size;
    MPI_Comm local, inter;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, low ? 0 : 1, rank, &local);
    CALL(MPI_Intercomm_create, local, 0, MPI_COMM_WORLD, low ? low_size : 0, 42, &inter);
    int flag, lrank, lsize, rsize;
    CALL(MPI_Comm_test_inter, inter, &flag);
    CALL(MPI_Comm_rank, inter, &lrank);
    CALL(MPI_Comm_size, inter, &lsize);
    CALL(MPI_Comm_remote_size, inter, &rsize);
    const int my_size = low ? low_size : high_size, other_size = low ? high_size : low_size;
    if (!flag || lrank != (low ? rank : rank - low_size) || lsize != my_size || rsize != other_size)
        conformance_error("inter %d rank %d size %d remote size %d", flag, lrank, lsize, rsize);
    MPI_Group remote;
    CALL(MPI_Comm_remote_group, inter, &remote);
    int gsize;
    CALL(MPI_Group_size, remote, &gsize);
    if (gsize != other_size)
        conformance_error("remote group size %d", gsize);
    CALL(MPI_Group_free, &remote);
    /* Low rank i sends to high rank i (i < low_size <= high_size). */
    int value = -1;
    MPI_Status status;
    if (low) {
        value = 1000 + lrank;
        CALL(MPI_Send, &value, 1, MPI_INT, lrank, 1, inter);
    } else if (lrank < low_size) {
        CALL(MPI_Recv, &value, 1, MPI_INT, lrank, 1, inter, &status);
        if (value != 1000 + lrank || status.MPI_SOURCE != lrank || status.MPI_TAG != 1)
            conformance_error("high %d: got %d from %d", lrank, value, status.MPI_SOURCE);
    }
    /* Every high rank j sends to low rank j % low_size; the low ranks receive from any source. */
    if (!low) {
        int out = 2000 + lrank;
        MPI_Request request;
        CALL(MPI_Isend, &out, 1, MPI_INT, lrank % low_size, 2, inter, &request);
        CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
    } else {
        int expected = 0, seen = 0;
        for (int j = lrank; j < high_size; j += low_size)
            ++expected;
        for (int k = 0; k < expected; ++k) {
            CALL(MPI_Recv, &value, 1, MPI_INT, MPI_ANY_SOURCE, 2, inter, &status);
            if (status.MPI_SOURCE % low_size != lrank || value != 2000 + status.MPI_SOURCE)
                conformance_error("low %d: got %d from %d", lrank, value, status.MPI_SOURCE);
            seen |= 1 << status.MPI_SOURCE;
        }
        int want = 0;
        for (int j = lrank; j < high_size; j += low_size)
            want |= 1 << j;
        if (seen != want)
            conformance_error("low %d: sources %#x, expected %#x", lrank, seen, want);
    }
    if (lrank == 0) {
        int mine = low ? 10 : 20, theirs = -1;
        CALL(MPI_Sendrecv, &mine, 1, MPI_INT, 0, 3, &theirs, 1, MPI_INT, 0, 3, inter, &status);
        if (theirs != (low ? 20 : 10) || status.MPI_SOURCE != 0)
            conformance_error("leader sendrecv got %d from %d", theirs, status.MPI_SOURCE);
    }
    CALL(MPI_Comm_free, &inter);
    CALL(MPI_Comm_free, &local);
    return conformance_finish();
}
