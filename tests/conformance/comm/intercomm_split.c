/* MPI_Comm_split of an intercommunicator (halves of 2 and 3 ranks at 5): each group splits by
 * local rank mod 2 with keys that reverse the order, and the groups' colours pair up, giving
 * intercommunicators low{0} x high{2, 0} and low{1} x high{1}; local and remote sizes and ranks
 * checked, then on each: an MPI_Send/MPI_Recv from each low rank to every remote rank, replied to,
 * an MPI_Bcast with MPI_ROOT/MPI_PROC_NULL from the high side, and an MPI_Allreduce, checked. */
#include "../conformance.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int low_size = size / 2, high_size = size - low_size, low = rank < low_size;
    MPI_Comm local, inter, sub;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, low ? 0 : 1, rank, &local);
    CALL(MPI_Intercomm_create, local, 0, MPI_COMM_WORLD, low ? low_size : 0, 13, &inter);
    int lrank;
    CALL(MPI_Comm_rank, inter, &lrank);
    const int colour = lrank % 2;
    CALL(MPI_Comm_split, inter, colour, -lrank, &sub);
    if (sub == MPI_COMM_NULL) {
        conformance_error("colour %d: MPI_COMM_NULL", colour);
        return conformance_finish();
    }
    /* Each side's members of this colour, highest local rank first, as world ranks. */
    int mine[16], theirs[16], nmine = 0, ntheirs = 0;
    const int my_first = low ? 0 : low_size, my_size = low ? low_size : high_size;
    const int their_first = low ? low_size : 0, their_size = low ? high_size : low_size;
    for (int i = my_size - 1; i >= 0; --i)
        if (i % 2 == colour)
            mine[nmine++] = my_first + i;
    for (int i = their_size - 1; i >= 0; --i)
        if (i % 2 == colour)
            theirs[ntheirs++] = their_first + i;
    int flag, srank, ssize, rsize;
    CALL(MPI_Comm_test_inter, sub, &flag);
    CALL(MPI_Comm_rank, sub, &srank);
    CALL(MPI_Comm_size, sub, &ssize);
    CALL(MPI_Comm_remote_size, sub, &rsize);
    if (!flag || ssize != nmine || rsize != ntheirs || mine[srank] != rank)
        conformance_error("colour %d: inter %d rank %d size %d remote %d, expected size %d remote %d", colour, flag,
                          srank, ssize, rsize, nmine, ntheirs);
    /* Each low rank sends its world rank to every remote rank; each high rank replies. */
    MPI_Status status;
    for (int j = 0; j < rsize; ++j) {
        int out = rank, in = -1;
        if (low) {
            CALL(MPI_Send, &out, 1, MPI_INT, j, colour, sub);
            CALL(MPI_Recv, &in, 1, MPI_INT, j, colour, sub, &status);
        } else {
            CALL(MPI_Recv, &in, 1, MPI_INT, j, colour, sub, &status);
            CALL(MPI_Send, &out, 1, MPI_INT, j, colour, sub);
        }
        if (in != theirs[j] || status.MPI_SOURCE != j)
            conformance_error("colour %d: from remote %d got %d, expected %d", colour, j, in, theirs[j]);
    }
    int value = -1;
    if (low)
        CALL(MPI_Bcast, &value, 1, MPI_INT, 0, sub);
    else if (srank == 0) {
        value = 500 + colour;
        CALL(MPI_Bcast, &value, 1, MPI_INT, MPI_ROOT, sub);
    } else
        CALL(MPI_Bcast, &value, 1, MPI_INT, MPI_PROC_NULL, sub);
    if (low && value != 500 + colour)
        conformance_error("colour %d: bcast %d", colour, value);
    int sum = 0, expected = 0;
    CALL(MPI_Allreduce, &rank, &sum, 1, MPI_INT, MPI_SUM, sub);
    for (int j = 0; j < ntheirs; ++j)
        expected += theirs[j];
    if (sum != expected)
        conformance_error("colour %d: allreduce %d, expected %d", colour, sum, expected);
    CALL(MPI_Comm_free, &sub);
    CALL(MPI_Comm_free, &inter);
    CALL(MPI_Comm_free, &local);
    return conformance_finish();
}
