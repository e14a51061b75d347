/* Matched probes: MPI_Mprobe takes a message out of matching, so that a receive made between it and
 * its MPI_Mrecv cannot take that message. Odd ranks send their even partner two messages with the
 * same tag, 20 then 10 ints; the even rank MPI_Mprobes the first, then MPI_Recvs with MPI_ANY_SOURCE
 * into a buffer of exactly 10 ints (the first message would not fit), then MPI_Mrecvs the first.
 * Then MPI_Mprobe with MPI_ANY_SOURCE/MPI_ANY_TAG and sizes learnt from the probe. */
#include "conformance.h"

enum { FIRST = 20, SECOND = 10, TAG = 40 };

static void check(const int *in, int count, int source, int message, const char *what)
{
    for (int i = 0; i < count; ++i)
        if (in[i] != source * 1000 + message * 100 + i) {
            conformance_error("%s: [%d] = %d", what, i, in[i]);
            return;
        }
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int partner = rank ^ 1;
    if (partner >= size)
        return conformance_finish();
    if (rank % 2 == 1) {
        int out[FIRST];
        for (int m = 0; m < 4; ++m) {
            const int length = m == 0 ? FIRST : m == 1 ? SECOND : 3 + 5 * m;
            for (int i = 0; i < length; ++i)
                out[i] = rank * 1000 + m * 100 + i;
            CALL(MPI_Send, out, length, MPI_INT, partner, m < 2 ? TAG : TAG + m, MPI_COMM_WORLD);
        }
        return conformance_finish();
    }
    MPI_Message message;
    MPI_Status status;
    int count;
    CALL(MPI_Mprobe, partner, TAG, MPI_COMM_WORLD, &message, &status);
    CALL(MPI_Get_count, &status, MPI_INT, &count);
    if (count != FIRST || status.MPI_SOURCE != partner || status.MPI_TAG != TAG)
        conformance_error("MPI_Mprobe: count %d source %d tag %d, expected the first message", count,
                          status.MPI_SOURCE, status.MPI_TAG);
    int second[SECOND], first[FIRST];
    CALL(MPI_Recv, second, SECOND, MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &status);
    CALL(MPI_Get_count, &status, MPI_INT, &count);
    if (count != SECOND || status.MPI_SOURCE != partner)
        conformance_error("MPI_Recv between MPI_Mprobe and MPI_Mrecv: count %d source %d", count, status.MPI_SOURCE);
    check(second, SECOND, partner, 1, "the second message");
    CALL(MPI_Mrecv, first, FIRST, MPI_INT, &message, &status);
    CALL(MPI_Get_count, &status, MPI_INT, &count);
    if (count != FIRST || message != MPI_MESSAGE_NULL)
        conformance_error("MPI_Mrecv: count %d, message handle %s", count, message == MPI_MESSAGE_NULL ? "null" : "kept");
    check(first, FIRST, partner, 0, "the first message");
    for (int m = 2; m < 4; ++m) {
        CALL(MPI_Mprobe, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &message, &status);
        CALL(MPI_Get_count, &status, MPI_INT, &count);
        if (status.MPI_SOURCE != partner || status.MPI_TAG != TAG + m || count != 3 + 5 * m)
            conformance_error("message %d: probed source %d tag %d count %d", m, status.MPI_SOURCE, status.MPI_TAG,
                              count);
        int *in = malloc(count * sizeof(int));
        CALL(MPI_Mrecv, in, count, MPI_INT, &message, &status);
        check(in, count, partner, m, "a probed message");
        free(in);
    }
    return conformance_finish();
}
