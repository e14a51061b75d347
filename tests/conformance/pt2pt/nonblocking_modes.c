/* Every nonblocking send mode around the ring, completed together by MPI_Waitall: MPI_Isend,
 * MPI_Issend, MPI_Ibsend (from an attached buffer) and MPI_Irsend (its receive posted before a
 * barrier); each message has its own tag and is checked on arrival. */
#include "conformance.h"

enum { MODES = 4, LENGTH = 32 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[MODES][LENGTH], in[MODES][LENGTH];
    for (int m = 0; m < MODES; ++m)
        for (int i = 0; i < LENGTH; ++i) {
            out[m][i] = rank * 1000 + m * 100 + i;
            in[m][i] = -1;
        }
    int pack_size;
    CALL(MPI_Pack_size, LENGTH, MPI_INT, MPI_COMM_WORLD, &pack_size);
    const int buffer_size = pack_size + MPI_BSEND_OVERHEAD;
    char *buffer = malloc(buffer_size);
    CALL(MPI_Buffer_attach, buffer, buffer_size);

    MPI_Request requests[2 * MODES];
    MPI_Status statuses[2 * MODES];
    for (int m = 0; m < MODES; ++m)
        CALL(MPI_Irecv, in[m], LENGTH, MPI_INT, left, m, MPI_COMM_WORLD, &requests[m]);
    CALL(MPI_Barrier, MPI_COMM_WORLD); /* every receive is posted: the ready send is correct */
    CALL(MPI_Isend, out[0], LENGTH, MPI_INT, right, 0, MPI_COMM_WORLD, &requests[MODES + 0]);
    CALL(MPI_Issend, out[1], LENGTH, MPI_INT, right, 1, MPI_COMM_WORLD, &requests[MODES + 1]);
    CALL(MPI_Ibsend, out[2], LENGTH, MPI_INT, right, 2, MPI_COMM_WORLD, &requests[MODES + 2]);
    CALL(MPI_Irsend, out[3], LENGTH, MPI_INT, right, 3, MPI_COMM_WORLD, &requests[MODES + 3]);
    CALL(MPI_Waitall, 2 * MODES, requests, statuses);

    for (int m = 0; m < MODES; ++m) {
        int count;
        CALL(MPI_Get_count, &statuses[m], MPI_INT, &count);
        if (statuses[m].MPI_SOURCE != left || statuses[m].MPI_TAG != m || count != LENGTH)
            conformance_error("mode %d: status source %d tag %d count %d", m, statuses[m].MPI_SOURCE,
                              statuses[m].MPI_TAG, count);
        for (int i = 0; i < LENGTH; ++i)
            if (in[m][i] != left * 1000 + m * 100 + i) {
                conformance_error("mode %d: in[%d] = %d", m, i, in[m][i]);
                break;
            }
        if (requests[m] != MPI_REQUEST_NULL || requests[MODES + m] != MPI_REQUEST_NULL)
            conformance_error("mode %d: MPI_Waitall left a request active", m);
    }
    void *detached;
    int detached_size;
    CALL(MPI_Buffer_detach, &detached, &detached_size);
    free(buffer);
    return conformance_finish();
}
