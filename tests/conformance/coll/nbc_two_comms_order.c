/* Non-blocking barriers on two communicators (two duplicates of MPI_COMM_WORLD) started in opposite
 * orders by different ranks -- even ranks MPI_Ibarrier(c1) then MPI_Ibarrier(c2), odd ranks c2 then c1
 * -- and completed by one MPI_Waitall, three rounds. Legal: the order of collectives is per
 * communicator. (Reported as skipped at replay.) */
#include "coll.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    MPI_Comm c1, c2;
    CALL(MPI_Comm_dup, MPI_COMM_WORLD, &c1);
    CALL(MPI_Comm_dup, MPI_COMM_WORLD, &c2);
    for (int round = 0; round < 3; ++round) {
        MPI_Request requests[2];
        if (rank % 2 == 0) {
            CALL(MPI_Ibarrier, c1, &requests[0]);
            CALL(MPI_Ibarrier, c2, &requests[1]);
        } else {
            CALL(MPI_Ibarrier, c2, &requests[1]);
            CALL(MPI_Ibarrier, c1, &requests[0]);
        }
        CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
        if (requests[0] != MPI_REQUEST_NULL || requests[1] != MPI_REQUEST_NULL)
            conformance_error("round %d: MPI_Waitall left a request active", round);
    }
    CALL(MPI_Comm_free, &c2);
    CALL(MPI_Comm_free, &c1);
    return conformance_finish();
}
