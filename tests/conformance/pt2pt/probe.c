/* MPI_Probe and MPI_Iprobe, then the receive of what they found: every rank sends its right
 * neighbour messages of sizes it chooses; the receiver probes (blocking, then by polling
 * MPI_Iprobe with MPI_ANY_SOURCE/MPI_ANY_TAG), learns source, tag and size from the status, and
 * receives exactly that many elements into a buffer of that size. */
#include "conformance.h"

enum { MESSAGES = 4, TAG = 30 };

static int length_of(int sender, int k) { return 1 + (sender * 7 + k * 13) % 50; }

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request sends[MESSAGES];
    static int out[MESSAGES][64];
    for (int k = 0; k < MESSAGES; ++k) {
        for (int i = 0; i < length_of(rank, k); ++i)
            out[k][i] = rank * 1000 + k * 100 + i;
        CALL(MPI_Isend, out[k], length_of(rank, k), MPI_INT, right, TAG + k, MPI_COMM_WORLD, &sends[k]);
    }
    for (int k = 0; k < MESSAGES; ++k) {
        MPI_Status status;
        if (k % 2 == 0)
            CALL(MPI_Probe, left, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        else {
            int flag = 0;
            while (!flag)
                CALL(MPI_Iprobe, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
        }
        int count;
        CALL(MPI_Get_count, &status, MPI_INT, &count);
        if (status.MPI_SOURCE != left || status.MPI_TAG != TAG + k || count != length_of(left, k)) {
            conformance_error("message %d: probed source %d tag %d count %d", k, status.MPI_SOURCE, status.MPI_TAG,
                              count);
            CALL(MPI_Abort, MPI_COMM_WORLD, 1);
        }
        int *in = malloc(count * sizeof(int));
        MPI_Status received;
        CALL(MPI_Recv, in, count, MPI_INT, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, &received);
        int got;
        CALL(MPI_Get_count, &received, MPI_INT, &got);
        if (got != count || received.MPI_SOURCE != left || received.MPI_TAG != TAG + k)
            conformance_error("message %d: received count %d source %d tag %d", k, got, received.MPI_SOURCE,
                              received.MPI_TAG);
        for (int i = 0; i < count; ++i)
            if (in[i] != left * 1000 + k * 100 + i) {
                conformance_error("message %d: [%d] = %d", k, i, in[i]);
                break;
            }
        free(in);
    }
    CALL(MPI_Waitall, MESSAGES, sends, MPI_STATUSES_IGNORE);
    return conformance_finish();
}
