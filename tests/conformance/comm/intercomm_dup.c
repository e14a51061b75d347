/* MPI_Comm_dup of an intercommunicator (halves of 2 and 3 ranks at 5): the duplicate is an
 * intercommunicator with the same local and remote groups (MPI_Comm_compare: MPI_CONGRUENT); then
 * on the duplicate: MPI_Send/MPI_Recv across (each low rank to the high rank of its local rank, and
 * back), an MPI_Bcast with MPI_ROOT/MPI_PROC_NULL, an MPI_Allreduce and an MPI_Barrier, checked,
 * while the original carries a message of the same tag that must not be confused with it. */
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
    CALL(MPI_Intercomm_create, local, 0, MPI_COMM_WORLD, low ? low_size : 0, 11, &inter);
    CALL(MPI_Comm_dup, inter, &dup);
    int flag, lrank, rsize, result;
    CALL(MPI_Comm_test_inter, dup, &flag);
    CALL(MPI_Comm_rank, dup, &lrank);
    CALL(MPI_Comm_remote_size, dup, &rsize);
    if (!flag || rsize != (low ? high_size : low_size) || lrank != (low ? rank : rank - low_size))
        conformance_error("dup: inter %d rank %d remote size %d", flag, lrank, rsize);
    CALL(MPI_Comm_compare, inter, dup, &result);
    if (result != MPI_CONGRUENT)
        conformance_error("compare(inter, dup) = %d", result);
    /* Pairs: low rank i <-> high rank i. The original intercommunicator carries a decoy first. */
    if (lrank < low_size) {
        int decoy = -5, value = -1, reply = -1;
        MPI_Status status;
        if (low) {
            value = 100 + rank;
            CALL(MPI_Send, &decoy, 1, MPI_INT, lrank, 0, inter);
            CALL(MPI_Send, &value, 1, MPI_INT, lrank, 0, dup);
            CALL(MPI_Recv, &reply, 1, MPI_INT, lrank, 0, dup, &status);
            if (reply != 200 + low_size + lrank || status.MPI_SOURCE != lrank)
                conformance_error("low %d: reply %d from %d", lrank, reply, status.MPI_SOURCE);
        } else {
            CALL(MPI_Recv, &value, 1, MPI_INT, lrank, 0, dup, &status);
            if (value != 100 + lrank || status.MPI_SOURCE != lrank)
                conformance_error("high %d: got %d from %d on the dup", lrank, value, status.MPI_SOURCE);
            reply = 200 + rank;
            CALL(MPI_Send, &reply, 1, MPI_INT, lrank, 0, dup);
            CALL(MPI_Recv, &decoy, 1, MPI_INT, lrank, 0, inter, &status);
            if (decoy != -5)
                conformance_error("high %d: decoy %d", lrank, decoy);
        }
    }
    /* Bcast from high rank 0 to the low group, on the dup. */
    int value = -1;
    if (low)
        CALL(MPI_Bcast, &value, 1, MPI_INT, 0, dup);
    else if (lrank == 0) {
        value = 321;
        CALL(MPI_Bcast, &value, 1, MPI_INT, MPI_ROOT, dup);
    } else
        CALL(MPI_Bcast, &value, 1, MPI_INT, MPI_PROC_NULL, dup);
    if (low && value != 321)
        conformance_error("bcast on dup: %d", value);
    int one = 1, count = 0;
    CALL(MPI_Allreduce, &one, &count, 1, MPI_INT, MPI_SUM, dup);
    if (count != (low ? high_size : low_size))
        conformance_error("allreduce on dup: %d", count);
    CALL(MPI_Barrier, dup);
    CALL(MPI_Comm_free, &dup);
    CALL(MPI_Comm_free, &inter);
    CALL(MPI_Comm_free, &local);
    return conformance_finish();
}
