/* MPI_Comm_set_name/MPI_Comm_get_name: the world's predefined name, a name set on a duplicate
 * (not inherited by a duplicate of that duplicate, which has none), renamed, and names that
 * differ per rank on a split; each named communicator then carries an MPI_Allreduce and an
 * MPI_Sendrecv, checked. */
#include "../conformance.h"

static void expect_name(MPI_Comm comm, const char *expected, const char *what)
{
    char name[MPI_MAX_OBJECT_NAME];
    int length = -1;
    CALL(MPI_Comm_get_name, comm, name, &length);
    if (strcmp(name, expected) != 0 || length != (int)strlen(expected))
        conformance_error("%s: name \"%s\" (%d), expected \"%s\"", what, name, length, expected);
}

static void talk(MPI_Comm comm, int salt)
{
    int rank, size, sum = 0, got = -1;
    CALL(MPI_Comm_rank, comm, &rank);
    CALL(MPI_Comm_size, comm, &size);
    CALL(MPI_Allreduce, &salt, &sum, 1, MPI_INT, MPI_SUM, comm);
    if (sum != salt * size)
        conformance_error("salt %d: allreduce %d", salt, sum);
    CALL(MPI_Sendrecv, &rank, 1, MPI_INT, (rank + 1) % size, salt, &got, 1, MPI_INT, (rank + size - 1) % size, salt,
         comm, MPI_STATUS_IGNORE);
    if (got != (rank + size - 1) % size)
        conformance_error("salt %d: sendrecv got %d", salt, got);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    expect_name(MPI_COMM_WORLD, "MPI_COMM_WORLD", "world");
    MPI_Comm dup, dup2, half;
    CALL(MPI_Comm_dup, MPI_COMM_WORLD, &dup);
    CALL(MPI_Comm_set_name, dup, "conformance dup");
    expect_name(dup, "conformance dup", "dup");
    CALL(MPI_Comm_dup, dup, &dup2);
    expect_name(dup2, "", "dup of a named dup");
    talk(dup, 1);
    CALL(MPI_Comm_set_name, dup, "renamed");
    expect_name(dup, "renamed", "renamed dup");
    talk(dup2, 2);
    CALL(MPI_Comm_split, MPI_COMM_WORLD, rank % 2, rank, &half);
    char mine[32];
    snprintf(mine, sizeof mine, "half %d seen by %d", rank % 2, rank);
    CALL(MPI_Comm_set_name, half, mine);
    expect_name(half, mine, "half");
    talk(half, 3);
    talk(dup, 4);
    CALL(MPI_Comm_free, &half);
    CALL(MPI_Comm_free, &dup2);
    CALL(MPI_Comm_free, &dup);
    return conformance_finish();
}
