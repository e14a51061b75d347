/* MPI_Comm_create from groups made by MPI_Group_incl (a reversed selection), MPI_Group_excl and
 * MPI_Group_range_incl (a strided range), called by every rank of the world (non-members get
 * MPI_COMM_NULL); MPI_Group_translate_ranks checks the order; each new communicator carries an
 * MPI_Sendrecv ring and an MPI_Allreduce, checked. */
#include "../conformance.h"

static void traffic(MPI_Comm comm, int salt)
{
    int rank, size, world_rank;
    CALL(MPI_Comm_rank, comm, &rank);
    CALL(MPI_Comm_size, comm, &size);
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &world_rank);
    int worlds[16];
    CALL(MPI_Allgather, &world_rank, 1, MPI_INT, worlds, 1, MPI_INT, comm);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = world_rank * 10 + salt, in = -1;
    MPI_Status status;
    CALL(MPI_Sendrecv, &out, 1, MPI_INT, right, salt, &in, 1, MPI_INT, left, salt, comm, &status);
    if (in != worlds[left] * 10 + salt)
        conformance_error("salt %d: ring got %d, expected %d", salt, in, worlds[left] * 10 + salt);
    int sum = 0, expected = 0;
    CALL(MPI_Allreduce, &world_rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    for (int i = 0; i < size; ++i)
        expected += worlds[i];
    if (sum != expected)
        conformance_error("salt %d: allreduce %d, expected %d", salt, sum, expected);
}

/* Creates a communicator of `group`, checks membership and the world rank of each new rank, talks. */
static void create_and_use(MPI_Group world_group, MPI_Group group, const int *members, int count, int salt)
{
    int rank;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    int group_size, expected_rank = MPI_UNDEFINED, group_rank;
    CALL(MPI_Group_size, group, &group_size);
    CALL(MPI_Group_rank, group, &group_rank);
    for (int i = 0; i < count; ++i)
        if (members[i] == rank)
            expected_rank = i;
    if (group_size != count || group_rank != expected_rank)
        conformance_error("salt %d: group size %d rank %d, expected %d %d", salt, group_size, group_rank, count,
                          expected_rank);
    int ranks[16], translated[16];
    for (int i = 0; i < count; ++i)
        ranks[i] = i;
    CALL(MPI_Group_translate_ranks, group, count, ranks, world_group, translated);
    for (int i = 0; i < count; ++i)
        if (translated[i] != members[i])
            conformance_error("salt %d: group rank %d is world %d, expected %d", salt, i, translated[i], members[i]);
    MPI_Comm comm;
    CALL(MPI_Comm_create, MPI_COMM_WORLD, group, &comm);
    if (expected_rank == MPI_UNDEFINED) {
        if (comm != MPI_COMM_NULL)
            conformance_error("salt %d: non-member got a communicator", salt);
        return;
    }
    int comm_rank;
    CALL(MPI_Comm_rank, comm, &comm_rank);
    if (comm_rank != expected_rank)
        conformance_error("salt %d: comm rank %d, expected %d", salt, comm_rank, expected_rank);
    traffic(comm, salt);
    CALL(MPI_Comm_free, &comm);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int size;
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    MPI_Group world_group, group;
    CALL(MPI_Comm_group, MPI_COMM_WORLD, &world_group);
    /* incl: every rank but 1, in reverse order. */
    int members[16], count = 0;
    for (int r = size - 1; r >= 0; --r)
        if (r != 1)
            members[count++] = r;
    CALL(MPI_Group_incl, world_group, count, members, &group);
    create_and_use(world_group, group, members, count, 1);
    CALL(MPI_Group_free, &group);
    /* excl: ranks 0 and size-1 out. */
    int excluded[2] = {0, size - 1};
    CALL(MPI_Group_excl, world_group, 2, excluded, &group);
    count = 0;
    for (int r = 1; r < size - 1; ++r)
        members[count++] = r;
    create_and_use(world_group, group, members, count, 2);
    CALL(MPI_Group_free, &group);
    /* range_incl: size-1 down to 0 by -2, then 0..0. */
    int ranges[2][3] = {{size - 1, 0, -2}, {size % 2 ? 1 : 0, size % 2 ? 1 : 0, 1}};
    CALL(MPI_Group_range_incl, world_group, 2, ranges, &group);
    count = 0;
    for (int r = size - 1; r >= 0; r -= 2)
        members[count++] = r;
    members[count++] = size % 2 ? 1 : 0;
    create_and_use(world_group, group, members, count, 3);
    CALL(MPI_Group_free, &group);
    CALL(MPI_Group_free, &world_group);
    return conformance_finish();
}
