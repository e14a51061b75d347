/* MPI_Comm_create of an intercommunicator (halves of 3 and 3 ranks at 6): every rank of both groups
 * calls it, each group passing a group of its own side (the low side its local ranks {0, 2}, the high
 * side {1, 2}; in increasing order: Open MPI 4.1 loses messages on the result when a group is not);
 * members get an intercommunicator of those two groups, the others MPI_COMM_NULL. On
 * it: MPI_Send/MPI_Recv between local rank i and remote rank i, an MPI_Allgather and an
 * MPI_Allreduce, checked. */
#include "../conformance.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int low_size = size / 2, low = rank < low_size;
    MPI_Comm local, inter, sub;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, low ? 0 : 1, rank, &local);
    CALL(MPI_Intercomm_create, local, 0, MPI_COMM_WORLD, low ? low_size : 0, 14, &inter);
    int lrank;
    CALL(MPI_Comm_rank, inter, &lrank);
    MPI_Group local_group, group;
    CALL(MPI_Comm_group, inter, &local_group);
    int low_pick[2] = {0, 2}, high_pick[2] = {1, 2};
    const int *pick = low ? low_pick : high_pick;
    const int *their_pick = low ? high_pick : low_pick;
    CALL(MPI_Group_incl, local_group, 2, pick, &group);
    CALL(MPI_Comm_create, inter, group, &sub);
    CALL(MPI_Group_free, &group);
    CALL(MPI_Group_free, &local_group);
    const int member = lrank == pick[0] || lrank == pick[1];
    if (!member) {
        if (sub != MPI_COMM_NULL)
            conformance_error("non-member got a communicator");
    } else if (sub == MPI_COMM_NULL) {
        conformance_error("member got MPI_COMM_NULL");
    } else {
        const int their_first = low ? low_size : 0;
        int flag, srank, ssize, rsize;
        CALL(MPI_Comm_test_inter, sub, &flag);
        CALL(MPI_Comm_rank, sub, &srank);
        CALL(MPI_Comm_size, sub, &ssize);
        CALL(MPI_Comm_remote_size, sub, &rsize);
        if (!flag || ssize != 2 || rsize != 2 || pick[srank] != lrank)
            conformance_error("inter %d rank %d size %d remote %d", flag, srank, ssize, rsize);
        int out = rank, in = -1;
        MPI_Status status;
        if (low) {
            CALL(MPI_Send, &out, 1, MPI_INT, srank, 4, sub);
            CALL(MPI_Recv, &in, 1, MPI_INT, srank, 4, sub, &status);
        } else {
            CALL(MPI_Recv, &in, 1, MPI_INT, srank, 4, sub, &status);
            CALL(MPI_Send, &out, 1, MPI_INT, srank, 4, sub);
        }
        if (in != their_first + their_pick[srank])
            conformance_error("got %d, expected %d", in, their_first + their_pick[srank]);
        int all[2] = {-1, -1};
        CALL(MPI_Allgather, &rank, 1, MPI_INT, all, 1, MPI_INT, sub);
        for (int i = 0; i < 2; ++i)
            if (all[i] != their_first + their_pick[i])
                conformance_error("allgather[%d] = %d", i, all[i]);
        int sum = 0;
        CALL(MPI_Allreduce, &rank, &sum, 1, MPI_INT, MPI_SUM, sub);
        if (sum != 2 * their_first + their_pick[0] + their_pick[1])
            conformance_error("allreduce %d", sum);
        CALL(MPI_Comm_free, &sub);
    }
    CALL(MPI_Comm_free, &inter);
    CALL(MPI_Comm_free, &local);
    return conformance_finish();
}
