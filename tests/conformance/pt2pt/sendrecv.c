/* MPI_Sendrecv and MPI_Sendrecv_replace: shifts by 1 and by 2 around the ring (different sizes in
 * and out for MPI_Sendrecv), MPI_Sendrecv_replace passing one buffer on, and a rank's MPI_Sendrecv
 * with itself. Data and statuses are checked. */
#include "conformance.h"

enum { LENGTH = 24 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    int out[LENGTH], in[2 * LENGTH];
    MPI_Status status;
    for (int shift = 1; shift <= 2; ++shift) {
        const int to = (rank + shift) % size, from = (rank + size - shift) % size;
        const int out_count = LENGTH - to % 3, in_count = LENGTH - rank % 3;
        for (int i = 0; i < LENGTH; ++i)
            out[i] = rank * 100 + shift * 1000 + i;
        CALL(MPI_Sendrecv, out, out_count, MPI_INT, to, shift, in, 2 * LENGTH, MPI_INT, from, shift, MPI_COMM_WORLD,
             &status);
        int count;
        CALL(MPI_Get_count, &status, MPI_INT, &count);
        if (status.MPI_SOURCE != from || status.MPI_TAG != shift || count != in_count)
            conformance_error("shift %d: status source %d tag %d count %d, expected %d %d %d", shift,
                              status.MPI_SOURCE, status.MPI_TAG, count, from, shift, in_count);
        for (int i = 0; i < in_count; ++i)
            if (in[i] != from * 100 + shift * 1000 + i)
                conformance_error("shift %d: [%d] = %d", shift, i, in[i]);
    }
    /* One buffer passed around the ring size times: it comes back with every rank's mark. */
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int buf[LENGTH];
    for (int i = 0; i < LENGTH; ++i)
        buf[i] = (i == 0) ? rank : 0;
    for (int hop = 0; hop < size; ++hop) {
        buf[1] += 1 << (rank % 20);
        CALL(MPI_Sendrecv_replace, buf, LENGTH, MPI_INT, right, 50 + hop, left, 50 + hop, MPI_COMM_WORLD, &status);
        if (status.MPI_SOURCE != left || status.MPI_TAG != 50 + hop)
            conformance_error("replace hop %d: status source %d tag %d", hop, status.MPI_SOURCE, status.MPI_TAG);
    }
    int expected = 0;
    for (int r = 0; r < size; ++r)
        expected += 1 << (r % 20);
    if (buf[0] != rank || buf[1] != expected)
        conformance_error("replace: buffer came back as (%d, %d), expected (%d, %d)", buf[0], buf[1], rank, expected);
    /* With itself. */
    int mine = rank * 7, back = -1;
    CALL(MPI_Sendrecv, &mine, 1, MPI_INT, rank, 99, &back, 1, MPI_INT, rank, 99, MPI_COMM_WORLD, &status);
    if (back != mine || status.MPI_SOURCE != rank)
        conformance_error("self: got %d from %d", back, status.MPI_SOURCE);
    return conformance_finish();
}
