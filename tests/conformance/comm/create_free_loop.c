/* Communicators made and freed in a loop (so handles come back): each iteration makes one by
 * MPI_Comm_dup, one by MPI_Comm_split (the colour alternates between iterations) and one by
 * MPI_Comm_create (a group of all but one rank, a different rank left out each time), talks on each
 * (an MPI_Allreduce, and an MPI_Send/MPI_Recv from the last rank to the first), checked, and frees
 * them in an order other than their creation's. */
#include "../conformance.h"

enum { ITERATIONS = 6 };

static void talk(MPI_Comm comm, int salt)
{
    int rank, size;
    CALL(MPI_Comm_rank, comm, &rank);
    CALL(MPI_Comm_size, comm, &size);
    int value = salt, sum = 0;
    CALL(MPI_Allreduce, &value, &sum, 1, MPI_INT, MPI_SUM, comm);
    if (sum != salt * size)
        conformance_error("salt %d: allreduce %d over %d ranks", salt, sum, size);
    if (size > 1) {
        if (rank == size - 1)
            CALL(MPI_Send, &salt, 1, MPI_INT, 0, salt, comm);
        else if (rank == 0) {
            int got = -1;
            CALL(MPI_Recv, &got, 1, MPI_INT, size - 1, salt, comm, MPI_STATUS_IGNORE);
            if (got != salt)
                conformance_error("salt %d: recv %d", salt, got);
        }
    }
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    MPI_Group world;
    CALL(MPI_Comm_group, MPI_COMM_WORLD, &world);
    for (int it = 0; it < ITERATIONS; ++it) {
        MPI_Comm dup, split, created;
        CALL(MPI_Comm_dup, MPI_COMM_WORLD, &dup);
        CALL(MPI_Comm_split, dup, (rank + it) % 2, rank, &split);
        const int left_out = it % size;
        MPI_Group group;
        CALL(MPI_Group_excl, world, 1, &left_out, &group);
        CALL(MPI_Comm_create, MPI_COMM_WORLD, group, &created);
        CALL(MPI_Group_free, &group);
        talk(split, 10 * it + 1);
        talk(dup, 10 * it + 2);
        if (rank == left_out) {
            if (created != MPI_COMM_NULL)
                conformance_error("iteration %d: left-out rank got a communicator", it);
        } else {
            talk(created, 10 * it + 3);
            CALL(MPI_Comm_free, &created);
        }
        CALL(MPI_Comm_free, &dup);
        CALL(MPI_Comm_free, &split);
    }
    CALL(MPI_Group_free, &world);
    return conformance_finish();
}
