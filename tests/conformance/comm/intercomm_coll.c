/* Collectives on an intercommunicator between halves of different sizes (2 and 3 ranks at 5):
 * MPI_Bcast from a low rank (MPI_ROOT there, MPI_PROC_NULL for its group's others, the root's rank
 * for the high group) and back from high rank 1; MPI_Allreduce (each group gets the other's sum);
 * MPI_Barrier; MPI_Allgather (each group gets the other's values, in remote rank order). Checked. */
#include "../conformance.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int low_size = size / 2, high_size = size - low_size, low = rank < low_size;
    MPI_Comm local, inter;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, low ? 0 : 1, rank, &local);
    CALL(MPI_Intercomm_create, local, 0, MPI_COMM_WORLD, low ? low_size : 0, 7, &inter);
    int lrank;
    CALL(MPI_Comm_rank, inter, &lrank);
    /* Low rank 0 broadcasts to the high group. */
    int data[4] = {-1, -1, -1, -1};
    if (low) {
        if (lrank == 0) {
            for (int i = 0; i < 4; ++i)
                data[i] = 40 + i;
            CALL(MPI_Bcast, data, 4, MPI_INT, MPI_ROOT, inter);
        } else {
            CALL(MPI_Bcast, data, 4, MPI_INT, MPI_PROC_NULL, inter);
            if (data[0] != -1)
                conformance_error("MPI_PROC_NULL bcast changed the buffer");
        }
    } else {
        CALL(MPI_Bcast, data, 4, MPI_INT, 0, inter);
        for (int i = 0; i < 4; ++i)
            if (data[i] != 40 + i)
                conformance_error("bcast from low: data[%d] = %d", i, data[i]);
    }
    /* High rank 1 broadcasts to the low group. */
    const int high_root = 1 % high_size;
    int back = -1;
    if (!low) {
        if (lrank == high_root) {
            back = 77;
            CALL(MPI_Bcast, &back, 1, MPI_INT, MPI_ROOT, inter);
        } else {
            CALL(MPI_Bcast, &back, 1, MPI_INT, MPI_PROC_NULL, inter);
        }
    } else {
        CALL(MPI_Bcast, &back, 1, MPI_INT, high_root, inter);
        if (back != 77)
            conformance_error("bcast from high: %d", back);
    }
    /* Allreduce: each group receives the sum over the other group. */
    int mine = rank + 1, sum = 0;
    CALL(MPI_Allreduce, &mine, &sum, 1, MPI_INT, MPI_SUM, inter);
    int expected = 0;
    for (int r = 0; r < size; ++r)
        if ((r < low_size) != low)
            expected += r + 1;
    if (sum != expected)
        conformance_error("allreduce %d, expected %d", sum, expected);
    CALL(MPI_Barrier, inter);
    /* Allgather: two ints per rank; each group gets the other's. */
    int pair[2] = {rank, rank * rank}, all[32];
    CALL(MPI_Allgather, pair, 2, MPI_INT, all, 2, MPI_INT, inter);
    const int remote_first = low ? low_size : 0, remote_size = low ? high_size : low_size;
    for (int i = 0; i < remote_size; ++i) {
        const int r = remote_first + i;
        if (all[2 * i] != r || all[2 * i + 1] != r * r)
            conformance_error("allgather[%d] = %d %d, expected %d %d", i, all[2 * i], all[2 * i + 1], r, r * r);
    }
    CALL(MPI_Comm_free, &inter);
    CALL(MPI_Comm_free, &local);
    return conformance_finish();
}
