/* Non-overtaking: messages from one sender on one communicator that a receive could match arrive in
 * the order sent, whatever their sizes (small eager messages after large ones) and send modes. Every
 * rank but 0 sends rank 0 a sequence of messages with one tag, alternating MPI_Isend and MPI_Send
 * and large and small sizes; rank 0 receives them with MPI_ANY_SOURCE, then a run of messages of
 * different tags with MPI_ANY_TAG, and each sender's sequence numbers must come in order. */
#include "conformance.h"

enum { MESSAGES = 12, BIG = 20000, MAX_RANKS = 16, TAG = 7 };

static int length_of(int k) { return k % 3 == 0 ? BIG : 1 + k; }

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    if (size > MAX_RANKS)
        CALL(MPI_Abort, MPI_COMM_WORLD, 2);
    int *buf = malloc(BIG * sizeof(int));
    if (rank != 0) {
        MPI_Request requests[MESSAGES];
        int *out = malloc((size_t)MESSAGES * BIG * sizeof(int));
        for (int k = 0; k < MESSAGES; ++k) {
            int *message = out + (size_t)k * BIG;
            message[0] = k;
            message[length_of(k) - 1] = k;
            if (k % 2 == 0)
                CALL(MPI_Isend, message, length_of(k), MPI_INT, 0, TAG, MPI_COMM_WORLD, &requests[k]);
            else {
                CALL(MPI_Send, message, length_of(k), MPI_INT, 0, TAG, MPI_COMM_WORLD);
                requests[k] = MPI_REQUEST_NULL;
            }
        }
        CALL(MPI_Waitall, MESSAGES, requests, MPI_STATUSES_IGNORE);
        /* Different tags, received with MPI_ANY_TAG: still in the order sent. */
        for (int k = 0; k < MESSAGES; ++k) {
            buf[0] = k;
            CALL(MPI_Send, buf, 1, MPI_INT, 0, 100 + (k * 5) % MESSAGES, MPI_COMM_WORLD);
        }
        free(out);
    } else {
        int next[MAX_RANKS] = {0};
        for (int m = 0; m < (size - 1) * MESSAGES; ++m) {
            MPI_Status status;
            CALL(MPI_Recv, buf, BIG, MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &status);
            const int source = status.MPI_SOURCE;
            int count;
            CALL(MPI_Get_count, &status, MPI_INT, &count);
            const int k = next[source]++;
            if (buf[0] != k || count != length_of(k) || buf[count - 1] != k)
                conformance_error("from %d: message %d (count %d) came as number %d", source, buf[0], count, k);
        }
        for (int source = 1; source < size; ++source)
            for (int k = 0; k < MESSAGES; ++k) {
                MPI_Status status;
                CALL(MPI_Recv, buf, 1, MPI_INT, source, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
                if (buf[0] != k || status.MPI_TAG != 100 + (k * 5) % MESSAGES)
                    conformance_error("from %d with MPI_ANY_TAG: message %d tag %d came as number %d", source, buf[0],
                                      status.MPI_TAG, k);
            }
    }
    free(buf);
    return conformance_finish();
}
