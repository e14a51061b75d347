/* MPI_Comm_idup of an intercommunicator (halves of 2 and 3 ranks at 5), completed by MPI_Wait after
 * an exchange on the original; the duplicate is an intercommunicator of the same groups; on it an
 * MPI_Isend/MPI_Irecv exchange between each low rank and the high rank of its local rank, an
 * MPI_Allgather and an MPI_Allreduce, checked. */
#include "../conformance.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int low_size = size / 2, high_size = size - low_size, low = rank < low_size;
    MPI_Comm local, inter, dup;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, low ? 0 : 1, rank, &local);
    CALL(MPI_Intercomm_create, local, 0, MPI_COMM_WORLD, low ? low_size : 0, 12, &inter);
    int lrank;
    CALL(MPI_Comm_rank, inter, &lrank);
    MPI_Request request;
    CALL(MPI_Comm_idup, inter, &dup, &request);
    /* Meanwhile, on the original: the leaders swap a value. */
    if (lrank == 0) {
        int mine = low, theirs = -1;
        CALL(MPI_Sendrecv, &mine, 1, MPI_INT, 0, 1, &theirs, 1, MPI_INT, 0, 1, inter, MPI_STATUS_IGNORE);
        if (theirs != !low)
            conformance_error("leaders' swap got %d", theirs);
    }
    CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
    int flag, rsize;
    CALL(MPI_Comm_test_inter, dup, &flag);
    CALL(MPI_Comm_remote_size, dup, &rsize);
    if (!flag || rsize != (low ? high_size : low_size))
        conformance_error("idup: inter %d remote size %d", flag, rsize);
    if (lrank < low_size) {
        int out = rank, in = -1;
        MPI_Request requests[2];
        CALL(MPI_Irecv, &in, 1, MPI_INT, lrank, 2, dup, &requests[0]);
        CALL(MPI_Isend, &out, 1, MPI_INT, lrank, 2, dup, &requests[1]);
        CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
        const int expected = low ? low_size + lrank : lrank;
        if (in != expected)
            conformance_error("exchange on idup got %d, expected %d", in, expected);
    }
    int all[16];
    CALL(MPI_Allgather, &rank, 1, MPI_INT, all, 1, MPI_INT, dup);
    for (int i = 0; i < rsize; ++i)
        if (all[i] != (low ? low_size + i : i))
            conformance_error("allgather on idup [%d] = %d", i, all[i]);
    int sum = 0;
    CALL(MPI_Allreduce, &rank, &sum, 1, MPI_INT, MPI_SUM, dup);
    const int expected_sum = low ? (size - 1) * size / 2 - (low_size - 1) * low_size / 2 : (low_size - 1) * low_size / 2;
    if (sum != expected_sum)
        conformance_error("allreduce on idup %d, expected %d", sum, expected_sum);
    CALL(MPI_Comm_free, &dup);
    CALL(MPI_Comm_free, &inter);
    CALL(MPI_Comm_free, &local);
    return conformance_finish();
}
