/* A flood of small messages: 20,000 per rank, in windows of MPI_Irecv/MPI_Isend completed by
 * MPI_Waitall. The windows vary (their size, the distance to the peer, the message length), as an
 * irregular code's would, so that a merged trace holds histograms. Every message carries its sequence
 * number and is checked; each rank's messages from a peer come in the order sent. */
#include "conformance.h"

enum { TOTAL = 20000, MAX_WINDOW = 40, MAX_LENGTH = 4 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    static int out[MAX_WINDOW][MAX_LENGTH], in[MAX_WINDOW][MAX_LENGTH];
    MPI_Request requests[2 * MAX_WINDOW];
    MPI_Status statuses[2 * MAX_WINDOW];
    int sent = 0;
    for (int w = 0; sent < TOTAL; ++w) {
        int window = 8 + (w * 7) % (MAX_WINDOW - 7);
        if (window > TOTAL - sent)
            window = TOTAL - sent;
        const int distance = 1 + w % (size > 2 ? 2 : 1);
        const int to = (rank + distance) % size, from = (rank + size - distance) % size;
        const int length = 1 + w % MAX_LENGTH;
        for (int k = 0; k < window; ++k)
            CALL(MPI_Irecv, in[k], MAX_LENGTH, MPI_INT, from, w % 3, MPI_COMM_WORLD, &requests[k]);
        for (int k = 0; k < window; ++k) {
            for (int i = 0; i < length; ++i)
                out[k][i] = (sent + k) * 4 + i + rank;
            CALL(MPI_Isend, out[k], length, MPI_INT, to, w % 3, MPI_COMM_WORLD, &requests[window + k]);
        }
        CALL(MPI_Waitall, 2 * window, requests, statuses);
        for (int k = 0; k < window; ++k) {
            int count;
            CALL(MPI_Get_count, &statuses[k], MPI_INT, &count);
            if (count != length || statuses[k].MPI_SOURCE != from) {
                conformance_error("window %d message %d: count %d source %d", w, k, count, statuses[k].MPI_SOURCE);
                break;
            }
            for (int i = 0; i < length; ++i)
                if (in[k][i] != (sent + k) * 4 + i + from) {
                    conformance_error("window %d message %d: [%d] = %d", w, k, i, in[k][i]);
                    break;
                }
        }
        sent += window;
    }
    return conformance_finish();
}
