/* Completion calls on MPI_REQUEST_NULL, and on requests already completed (null again): the status
 * must be the empty status -- source MPI_ANY_SOURCE, tag MPI_ANY_TAG, MPI_Get_count 0, not cancelled
 * -- and MPI_Waitany/MPI_Testany give index MPI_UNDEFINED, MPI_Waitsome/MPI_Testsome outcount
 * MPI_UNDEFINED, MPI_Test/MPI_Testall/MPI_Request_get_status flag true. Between them, a real exchange
 * whose statuses must be the messages'. */
#include "conformance.h"

enum { TAG = 6 };

static void garble(MPI_Status *status)
{
    status->MPI_SOURCE = 12345;
    status->MPI_TAG = 54321;
}

static void check_empty(const MPI_Status *status, const char *what)
{
    int count = -1, elements = -1, cancelled = -1;
    CALL(MPI_Get_count, status, MPI_INT, &count);
    CALL(MPI_Get_elements, status, MPI_INT, &elements);
    CALL(MPI_Test_cancelled, status, &cancelled);
    if (status->MPI_SOURCE != MPI_ANY_SOURCE || status->MPI_TAG != MPI_ANY_TAG || count != 0 || elements != 0 ||
        cancelled)
        conformance_error("%s on a null request: status source %d tag %d count %d elements %d cancelled %d", what,
                          status->MPI_SOURCE, status->MPI_TAG, count, elements, cancelled);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request null = MPI_REQUEST_NULL, nulls[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status status, statuses[3];
    int flag, index, outcount, indices[3];

    garble(&status);
    CALL(MPI_Wait, &null, &status);
    check_empty(&status, "MPI_Wait");
    garble(&status);
    flag = 0;
    CALL(MPI_Test, &null, &flag, &status);
    if (!flag)
        conformance_error("MPI_Test on a null request: flag false");
    check_empty(&status, "MPI_Test");

    /* A real exchange; its requests are null once completed, and completing them again is as above. */
    int out = rank, in = -1;
    MPI_Request requests[2];
    CALL(MPI_Irecv, &in, 1, MPI_INT, left, TAG, MPI_COMM_WORLD, &requests[0]);
    CALL(MPI_Isend, &out, 1, MPI_INT, right, TAG, MPI_COMM_WORLD, &requests[1]);
    CALL(MPI_Wait, &requests[0], &status);
    if (status.MPI_SOURCE != left || status.MPI_TAG != TAG || in != left || requests[0] != MPI_REQUEST_NULL)
        conformance_error("exchange: status source %d tag %d value %d", status.MPI_SOURCE, status.MPI_TAG, in);
    garble(&status);
    CALL(MPI_Wait, &requests[0], &status);
    check_empty(&status, "MPI_Wait again");
    CALL(MPI_Wait, &requests[1], MPI_STATUS_IGNORE);

    garble(&status);
    index = 77;
    CALL(MPI_Waitany, 3, nulls, &index, &status);
    if (index != MPI_UNDEFINED)
        conformance_error("MPI_Waitany on null requests: index %d", index);
    check_empty(&status, "MPI_Waitany");
    garble(&status);
    index = 77;
    flag = 0;
    CALL(MPI_Testany, 3, nulls, &index, &flag, &status);
    if (index != MPI_UNDEFINED || !flag)
        conformance_error("MPI_Testany on null requests: index %d flag %d", index, flag);
    check_empty(&status, "MPI_Testany");
    for (int k = 0; k < 3; ++k)
        garble(&statuses[k]);
    CALL(MPI_Waitall, 3, nulls, statuses);
    for (int k = 0; k < 3; ++k)
        check_empty(&statuses[k], "MPI_Waitall");
    for (int k = 0; k < 3; ++k)
        garble(&statuses[k]);
    flag = 0;
    CALL(MPI_Testall, 3, nulls, &flag, statuses);
    if (!flag)
        conformance_error("MPI_Testall on null requests: flag false");
    for (int k = 0; k < 3; ++k)
        check_empty(&statuses[k], "MPI_Testall");
    outcount = 77;
    CALL(MPI_Waitsome, 3, nulls, &outcount, indices, statuses);
    if (outcount != MPI_UNDEFINED)
        conformance_error("MPI_Waitsome on null requests: outcount %d", outcount);
    outcount = 77;
    CALL(MPI_Testsome, 3, nulls, &outcount, indices, statuses);
    if (outcount != MPI_UNDEFINED)
        conformance_error("MPI_Testsome on null requests: outcount %d", outcount);
    garble(&status);
    flag = 0;
    CALL(MPI_Request_get_status, MPI_REQUEST_NULL, &flag, &status);
    if (!flag)
        conformance_error("MPI_Request_get_status on a null request: flag false");
    check_empty(&status, "MPI_Request_get_status");

    /* Zero requests at all. */
    CALL(MPI_Waitall, 0, nulls, MPI_STATUSES_IGNORE);
    index = 77;
    CALL(MPI_Waitany, 0, nulls, &index, MPI_STATUS_IGNORE);
    if (index != MPI_UNDEFINED)
        conformance_error("MPI_Waitany of no requests: index %d", index);
    return conformance_finish();
}
