/* Polling with MPI_Testany: rank 0 receives one message from every other rank, in whatever order
 * they come, polling with MPI_Testany (flag false: index MPI_UNDEFINED); once all are in, MPI_Testany
 * says flag true and index MPI_UNDEFINED. Then each rank gets its answer. */
#include "conformance.h"

enum { MAX_RANKS = 16, TAG = 5 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    if (size > MAX_RANKS)
        CALL(MPI_Abort, MPI_COMM_WORLD, 2);
    if (rank == 0) {
        int values[MAX_RANKS];
        MPI_Request requests[MAX_RANKS];
        int seen[MAX_RANKS] = {0};
        for (int peer = 1; peer < size; ++peer)
            CALL(MPI_Irecv, &values[peer], 1, MPI_INT, peer, TAG, MPI_COMM_WORLD, &requests[peer - 1]);
        int done = 0;
        while (done < size - 1) {
            int index, flag;
            MPI_Status status;
            CALL(MPI_Testany, size - 1, requests, &index, &flag, &status);
            if (!flag) {
                if (index != MPI_UNDEFINED)
                    conformance_error("MPI_Testany: no flag but index %d", index);
                continue;
            }
            const int peer = index + 1;
            if (index < 0 || index >= size - 1 || seen[index]) {
                conformance_error("MPI_Testany: index %d", index);
                break;
            }
            seen[index] = 1;
            ++done;
            if (status.MPI_SOURCE != peer || values[peer] != peer * peer)
                conformance_error("from %d: source %d value %d", peer, status.MPI_SOURCE, values[peer]);
            CALL(MPI_Send, &values[peer], 1, MPI_INT, peer, TAG + 1, MPI_COMM_WORLD);
        }
        int index, flag;
        CALL(MPI_Testany, size - 1, requests, &index, &flag, MPI_STATUS_IGNORE);
        if (!flag || index != MPI_UNDEFINED)
            conformance_error("MPI_Testany over null requests: flag %d index %d", flag, index);
    } else {
        int value = rank * rank, answer;
        CALL(MPI_Send, &value, 1, MPI_INT, 0, TAG, MPI_COMM_WORLD);
        CALL(MPI_Recv, &answer, 1, MPI_INT, 0, TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (answer != value)
            conformance_error("answer %d, expected %d", answer, value);
    }
    return conformance_finish();
}
