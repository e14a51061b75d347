/* Polling with MPI_Testsome: every rank receives two messages from every other rank and polls
 * with MPI_Testsome (outcount 0 while nothing new) until all are in; every index is reported once.
 * With no active request left, MPI_Testsome returns MPI_UNDEFINED. */
#include "conformance.h"

enum { MAX_RANKS = 16, PER_PEER = 2 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    if (size > MAX_RANKS)
        CALL(MPI_Abort, MPI_COMM_WORLD, 2);
    const int n = (size - 1) * PER_PEER;
    int in[MAX_RANKS * PER_PEER], out[PER_PEER], peers[MAX_RANKS * PER_PEER], seen[MAX_RANKS * PER_PEER] = {0};
    MPI_Request receives[MAX_RANKS * PER_PEER], sends[MAX_RANKS * PER_PEER];
    int r = 0;
    for (int peer = 0; peer < size; ++peer)
        for (int k = 0; peer != rank && k < PER_PEER; ++k, ++r) {
            peers[r] = peer;
            CALL(MPI_Irecv, &in[r], 1, MPI_INT, peer, k, MPI_COMM_WORLD, &receives[r]);
        }
    for (int k = 0; k < PER_PEER; ++k)
        out[k] = rank * 10 + k;
    r = 0;
    for (int peer = 0; peer < size; ++peer)
        for (int k = 0; peer != rank && k < PER_PEER; ++k, ++r)
            CALL(MPI_Isend, &out[k], 1, MPI_INT, peer, k, MPI_COMM_WORLD, &sends[r]);
    int done = 0;
    while (done < n) {
        int outcount, indices[MAX_RANKS * PER_PEER];
        MPI_Status statuses[MAX_RANKS * PER_PEER];
        CALL(MPI_Testsome, n, receives, &outcount, indices, statuses);
        if (outcount < 0 || outcount > n - done) {
            conformance_error("MPI_Testsome: outcount %d with %d left", outcount, n - done);
            break;
        }
        for (int j = 0; j < outcount; ++j) {
            const int i = indices[j];
            if (i < 0 || i >= n || seen[i]) {
                conformance_error("MPI_Testsome: index %d", i);
                continue;
            }
            seen[i] = 1;
            const int k = i % PER_PEER;
            if (statuses[j].MPI_SOURCE != peers[i] || statuses[j].MPI_TAG != k || in[i] != peers[i] * 10 + k)
                conformance_error("index %d: source %d tag %d value %d", i, statuses[j].MPI_SOURCE,
                                  statuses[j].MPI_TAG, in[i]);
        }
        done += outcount;
    }
    int outcount = 0, indices[1];
    CALL(MPI_Testsome, n, receives, &outcount, indices, MPI_STATUSES_IGNORE);
    if (outcount != MPI_UNDEFINED)
        conformance_error("MPI_Testsome with no active request: outcount %d", outcount);
    CALL(MPI_Waitall, n, sends, MPI_STATUSES_IGNORE);
    return conformance_finish();
}
