/* MPI_Comm_split into three colours (world rank mod 3) with keys that reverse the order (key = -rank),
 * then a second split of the result with equal keys (order by parent rank): each new rank checked,
 * then a ring of MPI_Send/MPI_Recv, an MPI_Allreduce and an MPI_Allgather on each, checked. */
#include "../conformance.h"

static void traffic(MPI_Comm comm, const int *expected_world, int salt)
{
    int rank, size;
    CALL(MPI_Comm_rank, comm, &rank);
    CALL(MPI_Comm_size, comm, &size);
    if (size > 1) {
        const int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int out = expected_world[rank] + salt, in = -1;
        MPI_Status status;
        if (rank == 0) {
            CALL(MPI_Send, &out, 1, MPI_INT, right, salt, comm);
            CALL(MPI_Recv, &in, 1, MPI_INT, left, salt, comm, &status);
        } else {
            CALL(MPI_Recv, &in, 1, MPI_INT, left, salt, comm, &status);
            CALL(MPI_Send, &out, 1, MPI_INT, right, salt, comm);
        }
        if (in != expected_world[left] + salt || status.MPI_SOURCE != left)
            conformance_error("salt %d: ring got %d from %d", salt, in, status.MPI_SOURCE);
    }
    int world_rank = expected_world[rank], sum = 0, all[16];
    CALL(MPI_Allreduce, &world_rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    CALL(MPI_Allgather, &world_rank, 1, MPI_INT, all, 1, MPI_INT, comm);
    int expected_sum = 0;
    for (int i = 0; i < size; ++i) {
        expected_sum += expected_world[i];
        if (all[i] != expected_world[i])
            conformance_error("salt %d: allgather[%d] = %d, expected %d", salt, i, all[i], expected_world[i]);
    }
    if (sum != expected_sum)
        conformance_error("salt %d: allreduce %d, expected %d", salt, sum, expected_sum);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int colour = rank % 3;
    MPI_Comm third;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, colour, -rank, &third);
    /* Members of this colour, highest world rank first. */
    int members[16], count = 0;
    for (int r = size - 1; r >= 0; --r)
        if (r % 3 == colour)
            members[count++] = r;
    int third_rank, third_size;
    CALL(MPI_Comm_rank, third, &third_rank);
    CALL(MPI_Comm_size, third, &third_size);
    if (third_size != count || members[third_rank] != rank)
        conformance_error("split: rank %d of %d, expected world rank %d of %d members", third_rank, third_size,
                          members[third_rank < 16 ? third_rank : 0], count);
    traffic(third, members, 10);
    /* Split again: the third's first half and second half, equal keys. */
    MPI_Comm quarter;
    const int sub_colour = third_rank < (third_size + 1) / 2 ? 0 : 1;
    CALL(MPI_Comm_split, third, sub_colour, 0, &quarter);
    int sub_members[16], sub_count = 0;
    for (int i = 0; i < third_size; ++i)
        if ((i < (third_size + 1) / 2 ? 0 : 1) == sub_colour)
            sub_members[sub_count++] = members[i];
    int quarter_size;
    CALL(MPI_Comm_size, quarter, &quarter_size);
    if (quarter_size != sub_count)
        conformance_error("second split: size %d, expected %d", quarter_size, sub_count);
    traffic(quarter, sub_members, 20);
    CALL(MPI_Comm_free, &quarter);
    CALL(MPI_Comm_free, &third);
    return conformance_finish();
}
