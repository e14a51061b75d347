/* MPI_Ibarrier on MPI_COMM_WORLD, on each half of a split and on a duplicate: one completed by
 * MPI_Wait, one by MPI_Waitany, and two outstanding at once on the same communicator completed by
 * MPI_Waitall. Every request must come back MPI_REQUEST_NULL. (Polling with MPI_Test: nbc_test_poll.) */
#include "coll.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    MPI_Comm comms[COLL_COMMS];
    coll_make_comms(comms);
    for (int c = 0; c < COLL_COMMS; ++c) {
        const char *name = coll_comm_names[c];
        MPI_Request request;
        CALL(MPI_Ibarrier, comms[c], &request);
        CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
        if (request != MPI_REQUEST_NULL)
            conformance_error("%s: MPI_Wait left the Ibarrier's request active", name);

        CALL(MPI_Ibarrier, comms[c], &request);
        int index = -1;
        CALL(MPI_Waitany, 1, &request, &index, MPI_STATUS_IGNORE);
        if (request != MPI_REQUEST_NULL || index != 0)
            conformance_error("%s: MPI_Waitany gave index %d, left the request %s", name, index,
                              request == MPI_REQUEST_NULL ? "completed" : "active");

        MPI_Request requests[2];
        CALL(MPI_Ibarrier, comms[c], &requests[0]);
        CALL(MPI_Ibarrier, comms[c], &requests[1]);
        CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
        if (requests[0] != MPI_REQUEST_NULL || requests[1] != MPI_REQUEST_NULL)
            conformance_error("%s: MPI_Waitall left an Ibarrier's request active", name);
    }
    coll_free_comms(comms);
    return conformance_finish();
}
