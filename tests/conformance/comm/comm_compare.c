/* MPI_Comm_compare and MPI_Group_compare: a communicator with itself (MPI_IDENT), the world with its
 * duplicate (MPI_CONGRUENT), with a split of one colour whose keys reverse the order (MPI_SIMILAR),
 * and with a split into halves (MPI_UNEQUAL); the groups of the same pairs; each made communicator
 * carries an MPI_Bcast from its rank 0, checked. */
#include "../conformance.h"

static void expect(MPI_Comm a, MPI_Comm b, int comm_result, int group_result, const char *what)
{
    int result;
    CALL(MPI_Comm_compare, a, b, &result);
    if (result != comm_result)
        conformance_error("%s: MPI_Comm_compare %d, expected %d", what, result, comm_result);
    MPI_Group ga, gb;
    CALL(MPI_Comm_group, a, &ga);
    CALL(MPI_Comm_group, b, &gb);
    CALL(MPI_Group_compare, ga, gb, &result);
    if (result != group_result)
        conformance_error("%s: MPI_Group_compare %d, expected %d", what, result, group_result);
    CALL(MPI_Group_free, &ga);
    CALL(MPI_Group_free, &gb);
}

static void bcast_check(MPI_Comm comm, int salt)
{
    int rank, value;
    CALL(MPI_Comm_rank, comm, &rank);
    value = rank == 0 ? salt : -1;
    CALL(MPI_Bcast, &value, 1, MPI_INT, 0, comm);
    if (value != salt)
        conformance_error("salt %d: bcast %d", salt, value);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    MPI_Comm dup, reversed, half;
    CALL(MPI_Comm_dup, MPI_COMM_WORLD, &dup);
    CALL(MPI_Comm_split, MPI_COMM_WORLD, 0, size - rank, &reversed);
    CALL(MPI_Comm_split, MPI_COMM_WORLD, rank < size / 2, rank, &half);
    expect(MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_IDENT, MPI_IDENT, "world, world");
    expect(dup, dup, MPI_IDENT, MPI_IDENT, "dup, dup");
    expect(MPI_COMM_WORLD, dup, MPI_CONGRUENT, MPI_IDENT, "world, dup");
    expect(MPI_COMM_WORLD, reversed, MPI_SIMILAR, MPI_SIMILAR, "world, reversed");
    expect(half, MPI_COMM_WORLD, MPI_UNEQUAL, MPI_UNEQUAL, "half, world");
    int reversed_rank;
    CALL(MPI_Comm_rank, reversed, &reversed_rank);
    if (reversed_rank != size - 1 - rank)
        conformance_error("reversed rank %d", reversed_rank);
    bcast_check(dup, 1);
    bcast_check(reversed, 2);
    bcast_check(half, 3);
    CALL(MPI_Comm_free, &half);
    CALL(MPI_Comm_free, &reversed);
    CALL(MPI_Comm_free, &dup);
    return conformance_finish();
}
