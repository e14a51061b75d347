/* MPI_Comm_create_group, called only by the members of the group: the odd world ranks (in reverse
 * order, tag 5) while the even ones make theirs at the same time from MPI_COMM_WORLD (tag 6); then a
 * group of two made from an odd communicator by its own members only. Each new communicator
 * carries an MPI_Sendrecv ring and an MPI_Allreduce, checked. Non-members never call. */
#include "../conformance.h"

static void traffic(MPI_Comm comm, const int *members, int count, int salt)
{
    int world_rank, rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &world_rank);
    CALL(MPI_Comm_rank, comm, &rank);
    CALL(MPI_Comm_size, comm, &size);
    if (size != count || members[rank] != world_rank)
        conformance_error("salt %d: rank %d of %d, expected %d members", salt, rank, size, count);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = world_rank + salt, in = -1;
    MPI_Status status;
    CALL(MPI_Sendrecv, &out, 1, MPI_INT, right, 0, &in, 1, MPI_INT, left, 0, comm, &status);
    if (in != members[left] + salt)
        conformance_error("salt %d: ring got %d, expected %d", salt, in, members[left] + salt);
    int sum = 0, expected = 0;
    CALL(MPI_Allreduce, &world_rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    for (int i = 0; i < count; ++i)
        expected += members[i];
    if (sum != expected)
        conformance_error("salt %d: allreduce %d, expected %d", salt, sum, expected);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    MPI_Group world, group;
    CALL(MPI_Comm_group, MPI_COMM_WORLD, &world);
    int members[16], count = 0;
    if (rank % 2) {
        for (int r = size - 1; r >= 0; --r)
            if (r % 2)
                members[count++] = r;
    } else {
        for (int r = 0; r < size; ++r)
            if (r % 2 == 0)
                members[count++] = r;
    }
    CALL(MPI_Group_incl, world, count, members, &group);
    MPI_Comm comm;
    CALL(MPI_Comm_create_group, MPI_COMM_WORLD, group, rank % 2 ? 5 : 6, &comm);
    CALL(MPI_Group_free, &group);
    traffic(comm, members, count, rank % 2 ? 100 : 200);
    if (rank % 2 && count >= 2) {
        /* The odd communicator's first two ranks (world size-1-ish) make a pair of their own. */
        int crank;
        CALL(MPI_Comm_rank, comm, &crank);
        if (crank < 2) {
            MPI_Group parent, pair_group;
            CALL(MPI_Comm_group, comm, &parent);
            int pair[2] = {1, 0};
            CALL(MPI_Group_incl, parent, 2, pair, &pair_group);
            MPI_Comm pair_comm;
            CALL(MPI_Comm_create_group, comm, pair_group, 9, &pair_comm);
            int pair_members[2] = {members[1], members[0]};
            traffic(pair_comm, pair_members, 2, 300);
            CALL(MPI_Comm_free, &pair_comm);
            CALL(MPI_Group_free, &pair_group);
            CALL(MPI_Group_free, &parent);
        }
    }
    CALL(MPI_Comm_free, &comm);
    CALL(MPI_Group_free, &world);
    return conformance_finish();
}
