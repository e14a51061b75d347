/* Receives from every other rank, several messages each, completed by an MPI_Waitsome loop: every
 * index is reported exactly once in total with its own status; a final MPI_Waitsome with no active
 * request returns MPI_UNDEFINED. */
#include "conformance.h"

enum { MAX_RANKS = 16, PER_PEER = 3, LENGTH = 6 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    if (size > MAX_RANKS)
        CALL(MPI_Abort, MPI_COMM_WORLD, 2);
    const int n = size * PER_PEER;
    int in[MAX_RANKS * PER_PEER][LENGTH], out[PER_PEER][LENGTH];
    MPI_Request receives[MAX_RANKS * PER_PEER], sends[MAX_RANKS * PER_PEER];
    int seen[MAX_RANKS * PER_PEER] = {0};
    for (int r = 0; r < n; ++r)
        CALL(MPI_Irecv, in[r], LENGTH, MPI_INT, r / PER_PEER, r % PER_PEER, MPI_COMM_WORLD, &receives[r]);
    for (int k = 0; k < PER_PEER; ++k)
        for (int i = 0; i < LENGTH; ++i)
            out[k][i] = rank * 1000 + k * 100 + i;
    for (int r = 0; r < n; ++r)
        CALL(MPI_Isend, out[r % PER_PEER], LENGTH, MPI_INT, r / PER_PEER, r % PER_PEER, MPI_COMM_WORLD, &sends[r]);
    int done = 0;
    while (done < n) {
        int outcount, indices[MAX_RANKS * PER_PEER];
        MPI_Status statuses[MAX_RANKS * PER_PEER];
        CALL(MPI_Waitsome, n, receives, &outcount, indices, statuses);
        if (outcount < 1 || outcount > n - done) {
            conformance_error("MPI_Waitsome: outcount %d with %d left", outcount, n - done);
            break;
        }
        for (int j = 0; j < outcount; ++j) {
            const int r = indices[j], peer = r / PER_PEER, k = r % PER_PEER;
            if (r < 0 || r >= n || seen[r]) {
                conformance_error("MPI_Waitsome: index %d twice or out of range", r);
                continue;
            }
            seen[r] = 1;
            if (statuses[j].MPI_SOURCE != peer || statuses[j].MPI_TAG != k || receives[r] != MPI_REQUEST_NULL)
                conformance_error("index %d: status source %d tag %d", r, statuses[j].MPI_SOURCE, statuses[j].MPI_TAG);
            for (int i = 0; i < LENGTH; ++i)
                if (in[r][i] != peer * 1000 + k * 100 + i)
                    conformance_error("index %d: [%d] = %d", r, i, in[r][i]);
        }
        done += outcount;
    }
    int outcount = 0, indices[1];
    CALL(MPI_Waitsome, n, receives, &outcount, indices, MPI_STATUSES_IGNORE);
    if (outcount != MPI_UNDEFINED)
        conformance_error("MPI_Waitsome with no active request: outcount %d, not MPI_UNDEFINED", outcount);
    CALL(MPI_Waitall, n, sends, MPI_STATUSES_IGNORE);
    return conformance_finish();
}
