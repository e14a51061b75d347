/* The empty status again, where null requests sit among active ones and for inactive persistent
 * requests: MPI_Waitall/MPI_Testall over [null, receive, null, send] give the null entries the empty
 * status (source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0) and the receive its message's;
 * MPI_Waitany/MPI_Waitsome skip the nulls. A persistent receive that was never started, or has
 * completed, is inactive: MPI_Wait and MPI_Test return at once with the empty status (and do not
 * free it); started, it receives as usual. */
#include "conformance.h"

enum { TAG = 13 };

static void check_empty(const MPI_Status *status, const char *what)
{
    int count = -1;
    CALL(MPI_Get_count, status, MPI_INT, &count);
    if (status->MPI_SOURCE != MPI_ANY_SOURCE || status->MPI_TAG != MPI_ANY_TAG || count != 0)
        conformance_error("%s: status source %d tag %d count %d, not the empty status", what, status->MPI_SOURCE,
                          status->MPI_TAG, count);
}

static void check_message(const MPI_Status *status, int source, int value, int expected, const char *what)
{
    if (status->MPI_SOURCE != source || status->MPI_TAG != TAG || value != expected)
        conformance_error("%s: status source %d tag %d value %d", what, status->MPI_SOURCE, status->MPI_TAG, value);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = rank * 3, in = -1;
    MPI_Request requests[4];
    MPI_Status statuses[4];
    for (int round = 0; round < 2; ++round) {
        requests[0] = requests[2] = MPI_REQUEST_NULL;
        CALL(MPI_Irecv, &in, 1, MPI_INT, left, TAG, MPI_COMM_WORLD, &requests[1]);
        CALL(MPI_Isend, &out, 1, MPI_INT, right, TAG, MPI_COMM_WORLD, &requests[3]);
        for (int k = 0; k < 4; ++k)
            statuses[k].MPI_SOURCE = statuses[k].MPI_TAG = 4242;
        if (round == 0)
            CALL(MPI_Waitall, 4, requests, statuses);
        else {
            int flag = 0;
            while (!flag)
                CALL(MPI_Testall, 4, requests, &flag, statuses);
        }
        check_empty(&statuses[0], round == 0 ? "MPI_Waitall, null entry" : "MPI_Testall, null entry");
        check_empty(&statuses[2], round == 0 ? "MPI_Waitall, null entry" : "MPI_Testall, null entry");
        check_message(&statuses[1], left, in, left * 3, round == 0 ? "MPI_Waitall" : "MPI_Testall");
    }
    /* MPI_Waitany and MPI_Waitsome skip the null entries. */
    requests[0] = requests[2] = MPI_REQUEST_NULL;
    CALL(MPI_Irecv, &in, 1, MPI_INT, left, TAG, MPI_COMM_WORLD, &requests[1]);
    CALL(MPI_Isend, &out, 1, MPI_INT, right, TAG, MPI_COMM_WORLD, &requests[3]);
    int index, outcount, indices[4];
    MPI_Status status;
    CALL(MPI_Waitany, 3, requests, &index, &status);
    if (index != 1)
        conformance_error("MPI_Waitany among nulls: index %d", index);
    check_message(&status, left, in, left * 3, "MPI_Waitany among nulls");
    CALL(MPI_Waitsome, 4, requests, &outcount, indices, statuses);
    if (outcount != 1 || indices[0] != 3)
        conformance_error("MPI_Waitsome among nulls: outcount %d index %d", outcount, indices[0]);

    /* An inactive persistent receive. */
    MPI_Request persistent;
    CALL(MPI_Recv_init, &in, 1, MPI_INT, left, TAG, MPI_COMM_WORLD, &persistent);
    status.MPI_SOURCE = status.MPI_TAG = 4242;
    CALL(MPI_Wait, &persistent, &status);
    check_empty(&status, "MPI_Wait on a persistent request never started");
    int flag = 0;
    CALL(MPI_Test, &persistent, &flag, &status);
    if (!flag || persistent == MPI_REQUEST_NULL)
        conformance_error("MPI_Test on an inactive persistent request: flag %d", flag);
    check_empty(&status, "MPI_Test on a persistent request never started");
    for (int round = 0; round < 2; ++round) {
        in = -1;
        CALL(MPI_Start, &persistent);
        CALL(MPI_Send, &out, 1, MPI_INT, right, TAG, MPI_COMM_WORLD);
        CALL(MPI_Wait, &persistent, &status);
        check_message(&status, left, in, left * 3, "the persistent receive");
        status.MPI_SOURCE = status.MPI_TAG = 4242;
        CALL(MPI_Wait, &persistent, &status);
        check_empty(&status, "MPI_Wait on a completed persistent request");
        if (persistent == MPI_REQUEST_NULL)
            conformance_error("MPI_Wait freed an inactive persistent request");
    }
    CALL(MPI_Request_free, &persistent);
    return conformance_finish();
}
