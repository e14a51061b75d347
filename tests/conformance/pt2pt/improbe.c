/* MPI_Improbe polled until a message is there, then MPI_Imrecv completed by MPI_Wait, and the same
 * with MPI_ANY_SOURCE/MPI_ANY_TAG; a ring, so that each rank both sends and probes. MPI_Improbe and
 * MPI_Mprobe from MPI_PROC_NULL give MPI_MESSAGE_NO_PROC, whose MPI_Mrecv/MPI_Imrecv completes at once
 * with the null status (source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0). */
#include "conformance.h"

enum { MESSAGES = 3, TAG = 60 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[MESSAGES][16];
    MPI_Request sends[MESSAGES];
    for (int m = 0; m < MESSAGES; ++m) {
        for (int i = 0; i < 16; ++i)
            out[m][i] = rank * 100 + m * 16 + i;
        CALL(MPI_Isend, out[m], 4 + 4 * m, MPI_INT, right, TAG + m, MPI_COMM_WORLD, &sends[m]);
    }
    for (int m = 0; m < MESSAGES; ++m) {
        MPI_Message message;
        MPI_Status status;
        int flag = 0;
        while (!flag) {
            if (m == 0)
                CALL(MPI_Improbe, left, TAG, MPI_COMM_WORLD, &flag, &message, &status);
            else
                CALL(MPI_Improbe, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &message, &status);
        }
        int count;
        CALL(MPI_Get_count, &status, MPI_INT, &count);
        if (status.MPI_SOURCE != left || status.MPI_TAG != TAG + m || count != 4 + 4 * m)
            conformance_error("message %d: probed source %d tag %d count %d", m, status.MPI_SOURCE, status.MPI_TAG,
                              count);
        int in[16] = {0};
        MPI_Request request;
        CALL(MPI_Imrecv, in, 16, MPI_INT, &message, &request);
        CALL(MPI_Wait, &request, &status);
        CALL(MPI_Get_count, &status, MPI_INT, &count);
        if (count != 4 + 4 * m || status.MPI_SOURCE != left)
            conformance_error("message %d: received count %d source %d", m, count, status.MPI_SOURCE);
        for (int i = 0; i < count && i < 16; ++i)
            if (in[i] != left * 100 + m * 16 + i)
                conformance_error("message %d: [%d] = %d", m, i, in[i]);
    }
    CALL(MPI_Waitall, MESSAGES, sends, MPI_STATUSES_IGNORE);

    /* From MPI_PROC_NULL. */
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    int flag = 0, count = -1, buf = -7;
    CALL(MPI_Improbe, MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &flag, &message, &status);
    if (!flag || message != MPI_MESSAGE_NO_PROC || status.MPI_SOURCE != MPI_PROC_NULL)
        conformance_error("MPI_Improbe from MPI_PROC_NULL: flag %d, source %d, %s", flag, status.MPI_SOURCE,
                          message == MPI_MESSAGE_NO_PROC ? "MPI_MESSAGE_NO_PROC" : "another message");
    CALL(MPI_Mrecv, &buf, 1, MPI_INT, &message, &status);
    CALL(MPI_Get_count, &status, MPI_INT, &count);
    if (status.MPI_SOURCE != MPI_PROC_NULL || status.MPI_TAG != MPI_ANY_TAG || count != 0 || buf != -7 ||
        message != MPI_MESSAGE_NULL)
        conformance_error("MPI_Mrecv of MPI_MESSAGE_NO_PROC: source %d tag %d count %d", status.MPI_SOURCE,
                          status.MPI_TAG, count);
    CALL(MPI_Mprobe, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &message, &status);
    if (message != MPI_MESSAGE_NO_PROC)
        conformance_error("MPI_Mprobe from MPI_PROC_NULL: not MPI_MESSAGE_NO_PROC");
    MPI_Request request;
    CALL(MPI_Imrecv, &buf, 1, MPI_INT, &message, &request);
    CALL(MPI_Wait, &request, &status);
    CALL(MPI_Get_count, &status, MPI_INT, &count);
    if (status.MPI_SOURCE != MPI_PROC_NULL || status.MPI_TAG != MPI_ANY_TAG || count != 0 || buf != -7)
        conformance_error("MPI_Imrecv of MPI_MESSAGE_NO_PROC: source %d tag %d count %d", status.MPI_SOURCE,
                          status.MPI_TAG, count);
    return conformance_finish();
}
