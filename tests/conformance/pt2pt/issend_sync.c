/* MPI_Issend completes only once the receive has started: rank 0 Issends to rank 1, whose receive
 * comes after a barrier rank 0 reaches only after testing the send, so that MPI_Test must say "not
 * yet"; after the barrier MPI_Wait completes it. The other ranks do the same in pairs. Also
 * MPI_Ssend of a message whose receive is already posted. */
#include "conformance.h"

enum { LENGTH = 8, TAG = 4 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int partner = rank ^ 1;
    const int paired = partner < size;
    int buf[LENGTH];
    MPI_Request request;
    MPI_Status status;
    if (paired && rank % 2 == 0) {
        for (int i = 0; i < LENGTH; ++i)
            buf[i] = rank + i;
        CALL(MPI_Issend, buf, LENGTH, MPI_INT, partner, TAG, MPI_COMM_WORLD, &request);
        int flag = 1;
        CALL(MPI_Test, &request, &flag, &status);
        if (flag)
            conformance_error("MPI_Issend completed before its receive was posted");
        CALL(MPI_Barrier, MPI_COMM_WORLD);
        if (!flag)
            CALL(MPI_Wait, &request, &status);
        CALL(MPI_Irecv, buf, LENGTH, MPI_INT, partner, TAG + 1, MPI_COMM_WORLD, &request);
        CALL(MPI_Barrier, MPI_COMM_WORLD);
        CALL(MPI_Wait, &request, &status);
        for (int i = 0; i < LENGTH; ++i)
            if (buf[i] != 2 * (partner + i))
                conformance_error("reply: buf[%d] = %d", i, buf[i]);
    } else {
        CALL(MPI_Barrier, MPI_COMM_WORLD);
        if (paired) {
            CALL(MPI_Recv, buf, LENGTH, MPI_INT, partner, TAG, MPI_COMM_WORLD, &status);
            for (int i = 0; i < LENGTH; ++i) {
                if (buf[i] != partner + i)
                    conformance_error("buf[%d] = %d", i, buf[i]);
                buf[i] = 2 * (rank + i);
            }
        }
        CALL(MPI_Barrier, MPI_COMM_WORLD); /* the partner's receive is posted */
        if (paired)
            CALL(MPI_Ssend, buf, LENGTH, MPI_INT, partner, TAG + 1, MPI_COMM_WORLD);
    }
    return conformance_finish();
}
