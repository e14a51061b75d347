/* MPI_Cancel of an MPI_Isend nobody has asked for yet: whether the cancel wins is the library's
 * business (Open MPI never cancels sends, MPICH may), so the sender tells the receiver what
 * MPI_Test_cancelled said and the receiver receives the message only where the cancel lost; either
 * way the message is received exactly once or not at all. (Not an MPI_Issend: where the cancel
 * loses, its MPI_Wait would wait for a receive that comes only after it.) Twice, small messages. */
#include "conformance.h"

enum { LENGTH = 8, TAG = 80, OUTCOME = 90 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int round = 0; round < 2; ++round) {
        int out[LENGTH], in[LENGTH];
        for (int i = 0; i < LENGTH; ++i)
            out[i] = rank * 100 + round * 10 + i;
        MPI_Request request;
        CALL(MPI_Isend, out, LENGTH, MPI_INT, right, TAG + round, MPI_COMM_WORLD, &request);
        CALL(MPI_Cancel, &request);
        MPI_Status status;
        CALL(MPI_Wait, &request, &status);
        int cancelled = 0, left_cancelled = 0;
        CALL(MPI_Test_cancelled, &status, &cancelled);
        CALL(MPI_Sendrecv, &cancelled, 1, MPI_INT, right, OUTCOME, &left_cancelled, 1, MPI_INT, left, OUTCOME,
             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (!left_cancelled) {
            CALL(MPI_Recv, in, LENGTH, MPI_INT, left, TAG + round, MPI_COMM_WORLD, &status);
            for (int i = 0; i < LENGTH; ++i)
                if (in[i] != left * 100 + round * 10 + i)
                    conformance_error("message %d: [%d] = %d", round, i, in[i]);
        }
        /* Nothing else of that tag is left to receive. */
        CALL(MPI_Barrier, MPI_COMM_WORLD);
        int flag = 1;
        CALL(MPI_Iprobe, MPI_ANY_SOURCE, TAG + round, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (flag)
            conformance_error("message %d: a message is left over after the cancel", round);
        CALL(MPI_Barrier, MPI_COMM_WORLD);
    }
    return conformance_finish();
}
