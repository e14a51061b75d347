/* MPI_Reduce_scatter_block and MPI_Reduce_scatter on intercommunicators whose groups differ in size:
 * for each split of the world into a low group of k ranks and a high group of the rest (k = 1 ..
 * size - 1), each rank sends a vector of 4 * (remote size) * (local size) numbers and receives 4 *
 * (remote size) of the other group's sums, so each group's blocks differ in size from the other's
 * while the two vectors are as long; MPI_Reduce_scatter's receive counts are as many as the
 * caller's own group (an array of exactly that length). Checked against the sums the program
 * computes itself. */
#include "../conformance.h"

enum { BASE = 4 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    for (int k = 1; k < size; ++k) {
        const int low = rank < k;
        MPI_Comm local, inter;
        CALL(MPI_Comm_split, MPI_COMM_WORLD, low, rank, &local);
        CALL(MPI_Intercomm_create, local, 0, MPI_COMM_WORLD, low ? k : 0, 9, &inter);
        int lrank, lsize, rsize;
        CALL(MPI_Comm_rank, inter, &lrank);
        CALL(MPI_Comm_size, inter, &lsize);
        CALL(MPI_Comm_remote_size, inter, &rsize);
        const int recvcount = BASE * rsize, sendcount = recvcount * lsize;
        long long *send = malloc(sizeof(long long) * (size_t)sendcount);
        long long *recv = malloc(sizeof(long long) * (size_t)recvcount);
        for (int i = 0; i < sendcount; ++i)
            send[i] = (long long)rank * 1000 + i;
        /* This rank's block of the sum over the remote group's vectors: element lrank * recvcount + i
         * of each remote rank's vector, whose world ranks are the other group's. */
        const int remote_first = low ? k : 0;
        int *recvcounts = malloc(sizeof(int) * (size_t)lsize);
        for (int i = 0; i < lsize; ++i)
            recvcounts[i] = recvcount;
        for (int block = 0; block < 2; ++block) {
            if (block)
                CALL(MPI_Reduce_scatter_block, send, recv, recvcount, MPI_LONG_LONG, MPI_SUM, inter);
            else
                CALL(MPI_Reduce_scatter, send, recv, recvcounts, MPI_LONG_LONG, MPI_SUM, inter);
            for (int i = 0; i < recvcount; ++i) {
                long long want = 0;
                for (int r = 0; r < rsize; ++r)
                    want += (long long)(remote_first + r) * 1000 + lrank * recvcount + i;
                if (recv[i] != want) {
                    conformance_error("k = %d, %s: element %d is %lld, not %lld", k,
                                      block ? "MPI_Reduce_scatter_block" : "MPI_Reduce_scatter", i, recv[i], want);
                    break;
                }
            }
        }
        free(recvcounts);
        free(send);
        free(recv);
        CALL(MPI_Comm_free, &inter);
        CALL(MPI_Comm_free, &local);
    }
    return conformance_finish();
}
