/* MPI_Isend/MPI_Irecv with every other rank, completed by one MPI_Waitall (statuses checked), then
 * again with MPI_STATUSES_IGNORE, several rounds of different sizes. */
#include "conformance.h"

enum { ROUNDS = 4, MAX_RANKS = 16, MAX_LENGTH = 64 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    if (size > MAX_RANKS)
        CALL(MPI_Abort, MPI_COMM_WORLD, 2);
    static int out[MAX_RANKS][MAX_LENGTH], in[MAX_RANKS][MAX_LENGTH];
    for (int round = 0; round < ROUNDS; ++round) {
        const int length = 4 + 16 * round;
        MPI_Request requests[2 * MAX_RANKS];
        MPI_Status statuses[2 * MAX_RANKS];
        int n = 0;
        for (int peer = 0; peer < size; ++peer) {
            if (peer == rank)
                continue;
            CALL(MPI_Irecv, in[peer], length, MPI_INT, peer, round, MPI_COMM_WORLD, &requests[n++]);
        }
        for (int peer = 0; peer < size; ++peer) {
            if (peer == rank)
                continue;
            for (int i = 0; i < length; ++i)
                out[peer][i] = rank * 100000 + peer * 1000 + round * 100 + i;
            CALL(MPI_Isend, out[peer], length, MPI_INT, peer, round, MPI_COMM_WORLD, &requests[n++]);
        }
        if (round % 2 == 0)
            CALL(MPI_Waitall, n, requests, statuses);
        else
            CALL(MPI_Waitall, n, requests, MPI_STATUSES_IGNORE);
        int r = 0;
        for (int peer = 0; peer < size; ++peer) {
            if (peer == rank)
                continue;
            if (round % 2 == 0) {
                int count;
                CALL(MPI_Get_count, &statuses[r], MPI_INT, &count);
                if (statuses[r].MPI_SOURCE != peer || statuses[r].MPI_TAG != round || count != length)
                    conformance_error("round %d: status %d: source %d tag %d count %d", round, r,
                                      statuses[r].MPI_SOURCE, statuses[r].MPI_TAG, count);
            }
            ++r;
            for (int i = 0; i < length; ++i)
                if (in[peer][i] != peer * 100000 + rank * 1000 + round * 100 + i) {
                    conformance_error("round %d: from %d: [%d] = %d", round, peer, i, in[peer][i]);
                    break;
                }
        }
        for (int i = 0; i < n; ++i)
            if (requests[i] != MPI_REQUEST_NULL)
                conformance_error("round %d: request %d still active after MPI_Waitall", round, i);
    }
    return conformance_finish();
}
