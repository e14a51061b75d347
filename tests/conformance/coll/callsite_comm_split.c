/* Communicator constructors called from different call sites by different ranks: MPI_Comm_split with
 * even ranks (colour 0) and odd ranks (colour 1) calling from two call statements, MPI_Comm_dup of the
 * result from two call statements, MPI_Barrier on it from two call statements; each new communicator
 * checked with an MPI_Allreduce of world ranks; on MPI_COMM_WORLD. */
#include "coll.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    MPI_Comm parity, copy;
    if (rank % 2 == 0)
        CALL(MPI_Comm_split, MPI_COMM_WORLD, 0, rank, &parity);
    else
        CALL(MPI_Comm_split, MPI_COMM_WORLD, 1, rank, &parity);
    if (rank == 0)
        CALL(MPI_Comm_dup, parity, &copy);
    else
        CALL(MPI_Comm_dup, parity, &copy);

    int expected_size = 0, expected_sum = 0;
    for (int r = rank % 2; r < size; r += 2) {
        ++expected_size;
        expected_sum += r;
    }
    MPI_Comm made[2] = {parity, copy};
    for (int k = 0; k < 2; ++k) {
        int new_rank, new_size, sum = -1;
        CALL(MPI_Comm_rank, made[k], &new_rank);
        CALL(MPI_Comm_size, made[k], &new_size);
        if (new_size != expected_size || new_rank != rank / 2)
            conformance_error("communicator %d: rank %d of %d, expected %d of %d", k, new_rank, new_size, rank / 2,
                              expected_size);
        CALL(MPI_Allreduce, &rank, &sum, 1, MPI_INT, MPI_SUM, made[k]);
        if (sum != expected_sum)
            conformance_error("communicator %d: sum of world ranks %d, expected %d", k, sum, expected_sum);
    }
    if (rank % 4 < 2)
        CALL(MPI_Barrier, copy);
    else
        CALL(MPI_Barrier, copy);
    CALL(MPI_Comm_free, &copy);
    CALL(MPI_Comm_free, &parity);
    return conformance_finish();
}
