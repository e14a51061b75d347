/* Every blocking send mode around the ring, each checked on arrival: MPI_Send and MPI_Ssend into a
 * pre-posted MPI_Irecv, MPI_Rsend once a barrier says every receive is posted, MPI_Bsend from a buffer
 * given with MPI_Buffer_attach (and taken back with MPI_Buffer_detach). */
#include "conformance.h"

enum { LENGTH = 64 };

static void check(const int *in, int left, int mode, const MPI_Status *status)
{
    int count;
    CALL(MPI_Get_count, status, MPI_INT, &count);
    if (status->MPI_SOURCE != left || status->MPI_TAG != mode || count != LENGTH)
        conformance_error("mode %d: status source %d tag %d count %d", mode, status->MPI_SOURCE, status->MPI_TAG, count);
    for (int i = 0; i < LENGTH; ++i)
        if (in[i] != left * 1000 + mode * 100 + i) {
            conformance_error("mode %d: in[%d] = %d", mode, i, in[i]);
            return;
        }
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[LENGTH], in[LENGTH];
    MPI_Request request;
    MPI_Status status;
    for (int mode = 0; mode < 4; ++mode) {
        for (int i = 0; i < LENGTH; ++i) {
            out[i] = rank * 1000 + mode * 100 + i;
            in[i] = -1;
        }
        if (mode == 3) { /* buffered: the receive comes after the send */
            int pack_size;
            CALL(MPI_Pack_size, LENGTH, MPI_INT, MPI_COMM_WORLD, &pack_size);
            int buffer_size = pack_size + MPI_BSEND_OVERHEAD;
            char *buffer = malloc(buffer_size);
            CALL(MPI_Buffer_attach, buffer, buffer_size);
            CALL(MPI_Bsend, out, LENGTH, MPI_INT, right, mode, MPI_COMM_WORLD);
            CALL(MPI_Recv, in, LENGTH, MPI_INT, left, mode, MPI_COMM_WORLD, &status);
            void *detached;
            int detached_size;
            CALL(MPI_Buffer_detach, &detached, &detached_size);
            if (detached != buffer || detached_size != buffer_size)
                conformance_error("MPI_Buffer_detach gave %p (%d bytes), attached %p (%d)", detached, detached_size,
                                  (void *)buffer, buffer_size);
            free(buffer);
            check(in, left, mode, &status);
            continue;
        }
        CALL(MPI_Irecv, in, LENGTH, MPI_INT, left, mode, MPI_COMM_WORLD, &request);
        if (mode == 0)
            CALL(MPI_Send, out, LENGTH, MPI_INT, right, mode, MPI_COMM_WORLD);
        else if (mode == 1)
            CALL(MPI_Ssend, out, LENGTH, MPI_INT, right, mode, MPI_COMM_WORLD);
        else {
            CALL(MPI_Barrier, MPI_COMM_WORLD); /* every receive is posted: a ready send is correct */
            CALL(MPI_Rsend, out, LENGTH, MPI_INT, right, mode, MPI_COMM_WORLD);
        }
        CALL(MPI_Wait, &request, &status);
        check(in, left, mode, &status);
    }
    return conformance_finish();
}
