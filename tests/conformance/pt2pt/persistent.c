/* Persistent requests of every send mode: MPI_Send_init, MPI_Ssend_init, MPI_Bsend_init (from an
 * attached buffer) and MPI_Rsend_init (its receive started before a barrier) to the right, matching
 * MPI_Recv_init from the left, started by MPI_Startall and MPI_Start and completed by MPI_Waitall and
 * MPI_Wait over several iterations with new data each time, then freed with MPI_Request_free. */
#include "conformance.h"

enum { ITERATIONS = 4, LENGTH = 12, MODES = 4 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[MODES][LENGTH], in[MODES][LENGTH];
    int pack_size;
    CALL(MPI_Pack_size, LENGTH, MPI_INT, MPI_COMM_WORLD, &pack_size);
    const int buffer_size = pack_size + MPI_BSEND_OVERHEAD;
    char *buffer = malloc(buffer_size);
    CALL(MPI_Buffer_attach, buffer, buffer_size);

    MPI_Request receives[MODES], sends[MODES];
    for (int m = 0; m < MODES; ++m)
        CALL(MPI_Recv_init, in[m], LENGTH, MPI_INT, left, m, MPI_COMM_WORLD, &receives[m]);
    CALL(MPI_Send_init, out[0], LENGTH, MPI_INT, right, 0, MPI_COMM_WORLD, &sends[0]);
    CALL(MPI_Ssend_init, out[1], LENGTH, MPI_INT, right, 1, MPI_COMM_WORLD, &sends[1]);
    CALL(MPI_Bsend_init, out[2], LENGTH, MPI_INT, right, 2, MPI_COMM_WORLD, &sends[2]);
    CALL(MPI_Rsend_init, out[3], LENGTH, MPI_INT, right, 3, MPI_COMM_WORLD, &sends[3]);

    for (int it = 0; it < ITERATIONS; ++it) {
        for (int m = 0; m < MODES; ++m)
            for (int i = 0; i < LENGTH; ++i) {
                out[m][i] = rank * 10000 + it * 1000 + m * 100 + i;
                in[m][i] = -1;
            }
        MPI_Status statuses[MODES];
        if (it % 2 == 0)
            CALL(MPI_Startall, MODES, receives);
        else
            for (int m = 0; m < MODES; ++m)
                CALL(MPI_Start, &receives[m]);
        CALL(MPI_Barrier, MPI_COMM_WORLD); /* every receive started: the ready send is correct */
        if (it % 2 == 0) {
            CALL(MPI_Startall, MODES, sends);
            CALL(MPI_Waitall, MODES, sends, MPI_STATUSES_IGNORE);
        } else
            for (int m = 0; m < MODES; ++m) {
                CALL(MPI_Start, &sends[m]);
                CALL(MPI_Wait, &sends[m], MPI_STATUS_IGNORE);
            }
        CALL(MPI_Waitall, MODES, receives, statuses);
        for (int m = 0; m < MODES; ++m) {
            if (receives[m] == MPI_REQUEST_NULL || sends[m] == MPI_REQUEST_NULL)
                conformance_error("iteration %d: a persistent request became MPI_REQUEST_NULL", it);
            if (statuses[m].MPI_SOURCE != left || statuses[m].MPI_TAG != m)
                conformance_error("iteration %d mode %d: status source %d tag %d", it, m, statuses[m].MPI_SOURCE,
                                  statuses[m].MPI_TAG);
            for (int i = 0; i < LENGTH; ++i)
                if (in[m][i] != left * 10000 + it * 1000 + m * 100 + i) {
                    conformance_error("iteration %d mode %d: [%d] = %d", it, m, i, in[m][i]);
                    break;
                }
        }
    }
    for (int m = 0; m < MODES; ++m) {
        CALL(MPI_Request_free, &receives[m]);
        CALL(MPI_Request_free, &sends[m]);
        if (receives[m] != MPI_REQUEST_NULL || sends[m] != MPI_REQUEST_NULL)
            conformance_error("MPI_Request_free left a handle");
    }
    void *detached;
    int detached_size;
    CALL(MPI_Buffer_detach, &detached, &detached_size);
    free(buffer);
    return conformance_finish();
}
