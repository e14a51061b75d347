/* MPI_Barrier on MPI_COMM_WORLD, on each half of a split and on a duplicate, three times each. A
 * barrier's effect is checked with a synchronous send: rank 1 of each communicator with two or more
 * ranks sends rank 0 an MPI_Issend before the barrier that rank 0 receives only after it, so the
 * barrier must not need the receive; the send completes after the barrier. */
#include "coll.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    MPI_Comm comms[COLL_COMMS];
    coll_make_comms(comms);
    for (int c = 0; c < COLL_COMMS; ++c) {
        int rank, size;
        CALL(MPI_Comm_rank, comms[c], &rank);
        CALL(MPI_Comm_size, comms[c], &size);
        for (int round = 0; round < 3; ++round) {
            int value = 100 * c + round, received = -1;
            MPI_Request request = MPI_REQUEST_NULL;
            if (rank == 1)
                CALL(MPI_Issend, &value, 1, MPI_INT, 0, round, comms[c], &request);
            int err = CALL(MPI_Barrier, comms[c]);
            if (err != MPI_SUCCESS)
                conformance_error("%s round %d: MPI_Barrier returned %d", coll_comm_names[c], round, err);
            if (rank == 0 && size > 1) {
                MPI_Status status;
                CALL(MPI_Recv, &received, 1, MPI_INT, 1, round, comms[c], &status);
                if (received != value || status.MPI_SOURCE != 1)
                    conformance_error("%s round %d: received %d from %d", coll_comm_names[c], round, received,
                                      status.MPI_SOURCE);
            }
            if (rank == 1)
                CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
        }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
