/* Non-blocking collectives completed by polling: MPI_Ibarrier and MPI_Iallreduce on MPI_COMM_WORLD,
 * on each half of a split and on a duplicate, each polled with MPI_Test until it completes. The last
 * rank of each communicator computes for 2 ms before it starts the collective, so the others poll
 * many times and it polls few: ranks' polling loops have very different counts, and only the last
 * MPI_Test of each loop completes the request. */
#include "coll.h"

static void compute(double seconds)
{
    const double until = MPI_Wtime() + seconds;
    while (MPI_Wtime() < until)
        ;
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    MPI_Comm comms[COLL_COMMS];
    coll_make_comms(comms);
    for (int c = 0; c < COLL_COMMS; ++c) {
        const char *name = coll_comm_names[c];
        int rank, size;
        CALL(MPI_Comm_rank, comms[c], &rank);
        CALL(MPI_Comm_size, comms[c], &size);
        MPI_Request request;
        int done = 0;
        if (rank == size - 1)
            compute(0.002);
        CALL(MPI_Ibarrier, comms[c], &request);
        while (!done)
            CALL(MPI_Test, &request, &done, MPI_STATUS_IGNORE);
        if (request != MPI_REQUEST_NULL)
            conformance_error("%s: MPI_Test left the Ibarrier's request active", name);

        int in = rank + 1 + c, sum = -1;
        done = 0;
        if (rank == size - 1)
            compute(0.002);
        CALL(MPI_Iallreduce, &in, &sum, 1, MPI_INT, MPI_SUM, comms[c], &request);
        while (!done)
            CALL(MPI_Test, &request, &done, MPI_STATUS_IGNORE);
        if (sum != size * (size + 1) / 2 + size * c)
            conformance_error("%s: Iallreduce sum %d", name, sum);
    }
    coll_free_comms(comms);
    return conformance_finish();
}
