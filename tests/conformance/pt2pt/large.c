/* Large messages (1 and 4 MiB, beyond any eager limit): MPI_Isend/MPI_Irecv around the ring,
 * MPI_Send/MPI_Recv between partners, MPI_Sendrecv_replace of 2 MiB. The contents are checked in full. */
#include "conformance.h"

static int value(int rank, int phase, long i) { return (int)((rank * 7919L + phase * 104729L + i * 31L) % 1000003L); }

static void check(const int *buf, long n, int source, int phase)
{
    for (long i = 0; i < n; ++i)
        if (buf[i] != value(source, phase, i)) {
            conformance_error("phase %d: [%ld] = %d, expected %d", phase, i, buf[i], value(source, phase, i));
            return;
        }
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const long max = 1L << 20; /* ints: 4 MiB */
    int *out = malloc(max * sizeof(int)), *in = malloc(max * sizeof(int));
    for (int phase = 0; phase < 2; ++phase) {
        const long n = phase == 0 ? max / 4 : max;
        for (long i = 0; i < n; ++i)
            out[i] = value(rank, phase, i);
        MPI_Request requests[2];
        MPI_Status status;
        CALL(MPI_Irecv, in, (int)n, MPI_INT, left, phase, MPI_COMM_WORLD, &requests[0]);
        CALL(MPI_Isend, out, (int)n, MPI_INT, right, phase, MPI_COMM_WORLD, &requests[1]);
        CALL(MPI_Wait, &requests[0], &status);
        CALL(MPI_Wait, &requests[1], MPI_STATUS_IGNORE);
        int count;
        CALL(MPI_Get_count, &status, MPI_INT, &count);
        if (count != n)
            conformance_error("phase %d: count %d", phase, count);
        check(in, n, left, phase);
    }
    /* Partners, blocking: the even one sends first. */
    const int partner = rank ^ 1;
    if (partner < size) {
        const long n = max / 2;
        for (long i = 0; i < n; ++i)
            out[i] = value(rank, 2, i);
        if (rank % 2 == 0) {
            CALL(MPI_Send, out, (int)n, MPI_INT, partner, 2, MPI_COMM_WORLD);
            CALL(MPI_Recv, in, (int)n, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            CALL(MPI_Recv, in, (int)n, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CALL(MPI_Send, out, (int)n, MPI_INT, partner, 2, MPI_COMM_WORLD);
        }
        check(in, n, partner, 2);
    }
    const long n = max / 2;
    for (long i = 0; i < n; ++i)
        in[i] = value(rank, 3, i);
    CALL(MPI_Sendrecv_replace, in, (int)n, MPI_INT, right, 3, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check(in, n, left, 3);
    free(out);
    free(in);
    return conformance_finish();
}
