/* Zero-count collectives on MPI_COMM_WORLD and on a split half: MPI_Bcast, MPI_Reduce, MPI_Allreduce,
 * MPI_Gather, MPI_Scatter, MPI_Allgather, MPI_Alltoall and MPI_Scan of nothing (buffers must stay
 * untouched); vector forms where some ranks contribute nothing (MPI_Gatherv and MPI_Allgatherv with
 * the even ranks sending 0 ints, MPI_Alltoallv with nothing between ranks of the same parity,
 * MPI_Reduce_scatter giving the even ranks 0 elements); MPI_Ibcast and MPI_Iallreduce of nothing. */
#include "coll.h"

enum { MAX_RANKS = 16 };

static void untouched(const int *buf, int n, const char *what, int c)
{
    for (int i = 0; i < n; ++i)
        if (buf[i] != -7)
            conformance_error("comm %d %s: buf[%d] = %d written", c, what, i, buf[i]);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int world_rank, world_size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &world_rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &world_size);
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_NULL};
    CALL(MPI_Comm_split, MPI_COMM_WORLD, world_rank < world_size / 2 ? 0 : 1, world_rank, &comms[1]);
    for (int c = 0; c < 2; ++c) {
        MPI_Comm comm = comms[c];
        int rank, size;
        CALL(MPI_Comm_rank, comm, &rank);
        CALL(MPI_Comm_size, comm, &size);
        int a[4 * MAX_RANKS], b[4 * MAX_RANKS];
#define RESET() for (int i = 0; i < 4 * MAX_RANKS; ++i) a[i] = b[i] = -7
        RESET();
        CALL(MPI_Bcast, a, 0, MPI_INT, size - 1, comm);
        CALL(MPI_Reduce, a, b, 0, MPI_INT, MPI_SUM, size - 1, comm);
        CALL(MPI_Allreduce, a, b, 0, MPI_INT, MPI_SUM, comm);
        CALL(MPI_Gather, a, 0, MPI_INT, b, 0, MPI_INT, 0, comm);
        CALL(MPI_Scatter, a, 0, MPI_INT, b, 0, MPI_INT, 0, comm);
        CALL(MPI_Allgather, a, 0, MPI_INT, b, 0, MPI_INT, comm);
        CALL(MPI_Alltoall, a, 0, MPI_INT, b, 0, MPI_INT, comm);
        CALL(MPI_Scan, a, b, 0, MPI_INT, MPI_SUM, comm);
        MPI_Request requests[2];
        CALL(MPI_Ibcast, a, 0, MPI_INT, 0, comm, &requests[0]);
        CALL(MPI_Iallreduce, a, b, 0, MPI_INT, MPI_SUM, comm, &requests[1]);
        CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
        untouched(a, 4 * MAX_RANKS, "zero count (send side)", c);
        untouched(b, 4 * MAX_RANKS, "zero count (receive side)", c);

        /* Odd ranks send rank + 1 ints, even ranks none; blocks at 4 r. */
        int counts[MAX_RANKS], displs[MAX_RANKS], sendcounts[MAX_RANKS], recvcounts[MAX_RANKS];
        for (int r = 0; r < size; ++r) {
            counts[r] = r % 2 == 1 ? 2 : 0;
            displs[r] = 4 * r;
        }
        RESET();
        for (int i = 0; i < counts[rank]; ++i)
            a[i] = 100 * rank + i;
        CALL(MPI_Gatherv, a, counts[rank], MPI_INT, b, counts, displs, MPI_INT, size - 1, comm);
        CALL(MPI_Allgatherv, a, counts[rank], MPI_INT, b, counts, displs, MPI_INT, comm);
        for (int r = 0; r < size; ++r)
            for (int i = 0; i < 4; ++i)
                if (b[4 * r + i] != (i < counts[r] ? 100 * r + i : -7))
                    conformance_error("comm %d Gatherv/Allgatherv: from %d [%d] = %d", c, r, i, b[4 * r + i]);

        /* Alltoallv: 1 int between ranks of different parity, nothing between ranks of the same. */
        RESET();
        for (int r = 0; r < size; ++r) {
            sendcounts[r] = recvcounts[r] = (r + rank) % 2;
            a[4 * r] = 100 * rank + r;
        }
        CALL(MPI_Alltoallv, a, sendcounts, displs, MPI_INT, b, recvcounts, displs, MPI_INT, comm);
        for (int r = 0; r < size; ++r)
            if (b[4 * r] != ((r + rank) % 2 ? 100 * r + rank : -7))
                conformance_error("comm %d Alltoallv: from %d = %d", c, r, b[4 * r]);

        /* Reduce_scatter: odd ranks get 1 element of the sum, even ranks none. */
        RESET();
        int total = 0;
        for (int r = 0; r < size; ++r)
            total += counts[r] / 2;
        for (int i = 0; i < total; ++i)
            a[i] = rank + i;
        for (int r = 0; r < size; ++r)
            recvcounts[r] = counts[r] / 2;
        CALL(MPI_Reduce_scatter, a, b, recvcounts, MPI_INT, MPI_SUM, comm);
        if (rank % 2 == 1 && b[0] != size * (size - 1) / 2 + size * (rank / 2))
            conformance_error("comm %d Reduce_scatter: %d", c, b[0]);
        if (rank % 2 == 0 && b[0] != -7)
            conformance_error("comm %d Reduce_scatter: written %d with a count of 0", c, b[0]);
    }
    CALL(MPI_Comm_free, &comms[1]);
    return conformance_finish();
}
