/* Wildcard receives checked through their status: rank 0 receives every other rank's messages
 * (tags rank*10+k, contents naming them) with MPI_ANY_SOURCE and MPI_ANY_TAG, then with a fixed
 * source and MPI_ANY_TAG, then with MPI_ANY_SOURCE and a fixed tag through MPI_Irecv: each status must
 * say the source and tag the message carries, and every message must arrive once. */
#include "conformance.h"

enum { MAX_RANKS = 16, PER_PHASE = 3 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    if (size > MAX_RANKS)
        CALL(MPI_Abort, MPI_COMM_WORLD, 2);
    for (int phase = 0; phase < 3; ++phase) {
        if (rank != 0) {
            for (int k = 0; k < PER_PHASE; ++k) {
                int message[2] = {rank, phase * 100 + rank * 10 + k};
                CALL(MPI_Send, message, 2, MPI_INT, 0, phase * 100 + rank * 10 + k, MPI_COMM_WORLD);
            }
            CALL(MPI_Barrier, MPI_COMM_WORLD); /* no message of the next phase before rank 0 has this one's */
            continue;
        }
        int seen[MAX_RANKS][PER_PHASE] = {{0}};
        for (int m = 0; m < (size - 1) * PER_PHASE; ++m) {
            int message[2];
            MPI_Status status;
            if (phase == 0)
                CALL(MPI_Recv, message, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
            else if (phase == 1) /* source by source, any tag: each source's in the order sent */
                CALL(MPI_Recv, message, 2, MPI_INT, 1 + m / PER_PHASE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
            else { /* a fixed tag from any source */
                MPI_Request request;
                const int tag = phase * 100 + (1 + m / PER_PHASE) * 10 + m % PER_PHASE;
                CALL(MPI_Irecv, message, 2, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &request);
                CALL(MPI_Wait, &request, &status);
            }
            const int source = message[0], k = message[1] % 10;
            if (status.MPI_SOURCE != source || status.MPI_TAG != message[1] || source < 1 || source >= size ||
                message[1] != phase * 100 + source * 10 + k || k >= PER_PHASE) {
                conformance_error("phase %d: status (%d, %d) for message (%d, %d)", phase, status.MPI_SOURCE,
                                  status.MPI_TAG, message[0], message[1]);
                continue;
            }
            if (phase == 1 && (source != 1 + m / PER_PHASE || k != m % PER_PHASE))
                conformance_error("phase 1: message %d of source %d came as #%d", k, source, m);
            if (seen[source][k]++)
                conformance_error("phase %d: message (%d, %d) twice", phase, source, k);
        }
        CALL(MPI_Barrier, MPI_COMM_WORLD);
    }
    return conformance_finish();
}
