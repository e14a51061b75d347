/* Groups by set operations: A = even world ranks, B = the ranks below size/2 + 1 (both with
 * MPI_Group_incl); MPI_Group_union(A, B), MPI_Group_intersection(A, B), MPI_Group_difference(B, A)
 * (and MPI_Group_compare of them), each made a communicator by MPI_Comm_create on MPI_COMM_WORLD;
 * on each an MPI_Bcast from its last rank, an MPI_Reduce to rank 0 and an MPI_Send/MPI_Recv from the
 * last rank to rank 0, checked against the order the standard prescribes. */
#include "../conformance.h"

static int in_a(int r) { return r % 2 == 0; }
static int in_b(int r, int size) { return r < size / 2 + 1; }

static void use(MPI_Group group, const int *members, int count, int salt)
{
    int world_rank;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &world_rank);
    int gsize;
    CALL(MPI_Group_size, group, &gsize);
    if (gsize != count)
        conformance_error("salt %d: group size %d, expected %d", salt, gsize, count);
    MPI_Comm comm;
    CALL(MPI_Comm_create, MPI_COMM_WORLD, group, &comm);
    int expected_rank = -1;
    for (int i = 0; i < count; ++i)
        if (members[i] == world_rank)
            expected_rank = i;
    if ((comm == MPI_COMM_NULL) != (expected_rank < 0)) {
        conformance_error("salt %d: membership wrong", salt);
        return;
    }
    if (comm == MPI_COMM_NULL)
        return;
    int rank, size;
    CALL(MPI_Comm_rank, comm, &rank);
    CALL(MPI_Comm_size, comm, &size);
    if (rank != expected_rank || size != count)
        conformance_error("salt %d: rank %d of %d, expected %d of %d", salt, rank, size, expected_rank, count);
    int value = rank == size - 1 ? salt * 7 : 0;
    CALL(MPI_Bcast, &value, 1, MPI_INT, size - 1, comm);
    if (value != salt * 7)
        conformance_error("salt %d: bcast %d", salt, value);
    int sum = 0, expected = 0;
    CALL(MPI_Reduce, &world_rank, &sum, 1, MPI_INT, MPI_SUM, 0, comm);
    for (int i = 0; i < count; ++i)
        expected += members[i];
    if (rank == 0 && sum != expected)
        conformance_error("salt %d: reduce %d, expected %d", salt, sum, expected);
    if (size > 1) {
        if (rank == size - 1)
            CALL(MPI_Send, &world_rank, 1, MPI_INT, 0, salt, comm);
        if (rank == 0) {
            int got = -1;
            MPI_Status status;
            CALL(MPI_Recv, &got, 1, MPI_INT, size - 1, salt, comm, &status);
            if (got != members[size - 1] || status.MPI_SOURCE != size - 1)
                conformance_error("salt %d: recv %d from %d", salt, got, status.MPI_SOURCE);
        }
    }
    CALL(MPI_Comm_free, &comm);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int size;
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    MPI_Group world, a, b, un, inter, diff;
    CALL(MPI_Comm_group, MPI_COMM_WORLD, &world);
    int list[16], n = 0;
    for (int r = 0; r < size; ++r)
        if (in_a(r))
            list[n++] = r;
    CALL(MPI_Group_incl, world, n, list, &a);
    n = 0;
    for (int r = size - 1; r >= 0; --r) /* B in reverse world order */
        if (in_b(r, size))
            list[n++] = r;
    CALL(MPI_Group_incl, world, n, list, &b);
    CALL(MPI_Group_union, a, b, &un);
    CALL(MPI_Group_intersection, a, b, &inter);
    CALL(MPI_Group_difference, b, a, &diff);
    /* Union: A's order, then B's members not in A in B's order. */
    int members[16], count = 0;
    for (int r = 0; r < size; ++r)
        if (in_a(r))
            members[count++] = r;
    for (int r = size - 1; r >= 0; --r)
        if (in_b(r, size) && !in_a(r))
            members[count++] = r;
    use(un, members, count, 1);
    /* Intersection: in A's order. */
    count = 0;
    for (int r = 0; r < size; ++r)
        if (in_a(r) && in_b(r, size))
            members[count++] = r;
    use(inter, members, count, 2);
    /* Difference B \ A: in B's order. */
    count = 0;
    for (int r = size - 1; r >= 0; --r)
        if (in_b(r, size) && !in_a(r))
            members[count++] = r;
    use(diff, members, count, 3);
    /* The union's members in world order (MPI_Group_excl of the others): the same set, another order. */
    MPI_Group sorted;
    n = 0;
    for (int r = 0; r < size; ++r)
        if (!in_a(r) && !in_b(r, size))
            list[n++] = r;
    CALL(MPI_Group_excl, world, n, list, &sorted);
    int result;
    CALL(MPI_Group_compare, un, sorted, &result);
    if (result != MPI_SIMILAR)
        conformance_error("compare(union, sorted union) = %d, expected MPI_SIMILAR", result);
    CALL(MPI_Group_free, &sorted);
    CALL(MPI_Group_compare, inter, a, &result);
    if (result != MPI_UNEQUAL)
        conformance_error("compare(intersection, A) = %d, expected MPI_UNEQUAL", result);
    MPI_Group groups[6] = {world, a, b, un, inter, diff};
    for (int i = 0; i < 6; ++i)
        CALL(MPI_Group_free, &groups[i]);
    return conformance_finish();
}
