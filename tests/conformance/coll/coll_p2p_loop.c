/* Collectives mixed with point-to-point in a loop of 20 steps: a ring MPI_Sendrecv, an MPI_Allreduce
 * of what came round, MPI_Isend/MPI_Irecv to both neighbours completed by MPI_Waitall, an MPI_Bcast
 * from a root that moves, a blocking MPI_Send/MPI_Recv pair between ranks 0 and 1, and an MPI_Barrier
 * every fifth step; on MPI_COMM_WORLD. */
#include "coll.h"

enum { STEPS = 20, N = 4 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int step = 0; step < STEPS; ++step) {
        int token = 100 * step + rank, got = -1, sum = -1;
        CALL(MPI_Sendrecv, &token, 1, MPI_INT, right, step, &got, 1, MPI_INT, left, step, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
        if (got != 100 * step + left)
            conformance_error("step %d: ring got %d", step, got);
        CALL(MPI_Allreduce, &got, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (sum != 100 * step * size + size * (size - 1) / 2)
            conformance_error("step %d: sum %d", step, sum);

        int out[N], from_left[N], from_right[N];
        for (int i = 0; i < N; ++i)
            out[i] = sum + 10 * rank + i;
        MPI_Request requests[4];
        CALL(MPI_Irecv, from_left, N, MPI_INT, left, 1000 + step, MPI_COMM_WORLD, &requests[0]);
        CALL(MPI_Irecv, from_right, N, MPI_INT, right, 2000 + step, MPI_COMM_WORLD, &requests[1]);
        CALL(MPI_Isend, out, N, MPI_INT, right, 1000 + step, MPI_COMM_WORLD, &requests[2]);
        CALL(MPI_Isend, out, N, MPI_INT, left, 2000 + step, MPI_COMM_WORLD, &requests[3]);
        CALL(MPI_Waitall, 4, requests, MPI_STATUSES_IGNORE);
        for (int i = 0; i < N; ++i)
            if (from_left[i] != sum + 10 * left + i || from_right[i] != sum + 10 * right + i)
                conformance_error("step %d: halo [%d] = %d %d", step, i, from_left[i], from_right[i]);

        int root = step % size, value = rank == root ? step * 7 : -1;
        CALL(MPI_Bcast, &value, 1, MPI_INT, root, MPI_COMM_WORLD);
        if (value != step * 7)
            conformance_error("step %d: bcast %d", step, value);
        if (rank == 0 && size > 1)
            CALL(MPI_Send, &value, 1, MPI_INT, 1, 3000 + step, MPI_COMM_WORLD);
        else if (rank == 1) {
            int received = -1;
            CALL(MPI_Recv, &received, 1, MPI_INT, 0, 3000 + step, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (received != step * 7)
                conformance_error("step %d: received %d", step, received);
        }
        if (step % 5 == 4)
            CALL(MPI_Barrier, MPI_COMM_WORLD);
    }
    return conformance_finish();
}
