/* MPI_Intercomm_merge of an intercommunicator between halves of different sizes (2 and 3 at 5):
 * first with the low group high = 1 (the high group's ranks first), then with the low group
 * high = 0 (the low group first); each merged communicator's ranks checked against the world ranks,
 * then an MPI_Allgather, an MPI_Sendrecv ring and an MPI_Reduce on it, checked. */
#include "../conformance.h"

static void check_merged(MPI_Comm merged, int low_first, int low_size, int salt)
{
    int rank, size, mrank, msize;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    CALL(MPI_Comm_rank, merged, &mrank);
    CALL(MPI_Comm_size, merged, &msize);
    /* Expected world rank of each merged rank. */
    int order[16];
    for (int i = 0; i < size; ++i)
        order[i] = low_first ? i : (i < size - low_size ? low_size + i : i - (size - low_size));
    if (msize != size || order[mrank] != rank)
        conformance_error("salt %d: merged rank %d of %d for world rank %d", salt, mrank, msize, rank);
    int all[16];
    CALL(MPI_Allgather, &rank, 1, MPI_INT, all, 1, MPI_INT, merged);
    for (int i = 0; i < msize; ++i)
        if (all[i] != order[i])
            conformance_error("salt %d: allgather[%d] = %d, expected %d", salt, i, all[i], order[i]);
    const int right = (mrank + 1) % msize, left = (mrank + msize - 1) % msize;
    int out = rank + salt, in = -1;
    CALL(MPI_Sendrecv, &out, 1, MPI_INT, right, salt, &in, 1, MPI_INT, left, salt, merged, MPI_STATUS_IGNORE);
    if (in != order[left] + salt)
        conformance_error("salt %d: ring got %d, expected %d", salt, in, order[left] + salt);
    int max = -1;
    CALL(MPI_Reduce, &rank, &max, 1, MPI_INT, MPI_MAX, msize - 1, merged);
    if (mrank == msize - 1 && max != size - 1)
        conformance_error("salt %d: reduce max %d", salt, max);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int low_size = size / 2, low = rank < low_size;
    MPI_Comm local, inter, merged;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, low ? 0 : 1, rank, &local);
    CALL(MPI_Intercomm_create, local, 0, MPI_COMM_WORLD, low ? low_size : 0, 3, &inter);
    CALL(MPI_Intercomm_merge, inter, low ? 1 : 0, &merged);
    check_merged(merged, 0, low_size, 100);
    CALL(MPI_Comm_free, &merged);
    CALL(MPI_Intercomm_merge, inter, low ? 0 : 1, &merged);
    check_merged(merged, 1, low_size, 200);
    CALL(MPI_Comm_free, &merged);
    CALL(MPI_Comm_free, &inter);
    CALL(MPI_Comm_free, &local);
    return conformance_finish();
}
