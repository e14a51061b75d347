/* Receives from every rank (itself included) completed one at a time by an MPI_Waitany loop: each index is
 * returned once, its status names the rank whose message it is, its request becomes
 * MPI_REQUEST_NULL; a last MPI_Waitany over only null requests returns MPI_UNDEFINED. */
#include "conformance.h"

enum { MAX_RANKS = 16, LENGTH = 10, TAG = 21 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    if (size > MAX_RANKS)
        CALL(MPI_Abort, MPI_COMM_WORLD, 2);
    int in[MAX_RANKS][LENGTH], out[LENGTH];
    for (int i = 0; i < LENGTH; ++i)
        out[i] = rank * 100 + i;
    MPI_Request receives[MAX_RANKS], sends[MAX_RANKS];
    int seen[MAX_RANKS] = {0};
    for (int peer = 0; peer < size; ++peer)
        CALL(MPI_Irecv, in[peer], LENGTH, MPI_INT, peer, TAG, MPI_COMM_WORLD, &receives[peer]);
    for (int peer = 0; peer < size; ++peer)
        CALL(MPI_Isend, out, LENGTH, MPI_INT, peer, TAG, MPI_COMM_WORLD, &sends[peer]);
    for (int done = 0; done < size; ++done) {
        int index;
        MPI_Status status;
        CALL(MPI_Waitany, size, receives, &index, &status);
        if (index < 0 || index >= size || seen[index]) {
            conformance_error("MPI_Waitany returned index %d", index);
            continue;
        }
        seen[index] = 1;
        if (status.MPI_SOURCE != index || status.MPI_TAG != TAG || receives[index] != MPI_REQUEST_NULL)
            conformance_error("index %d: status source %d tag %d", index, status.MPI_SOURCE, status.MPI_TAG);
        for (int i = 0; i < LENGTH; ++i)
            if (in[index][i] != index * 100 + i)
                conformance_error("from %d: [%d] = %d", index, i, in[index][i]);
    }
    int index = 0;
    MPI_Status status;
    CALL(MPI_Waitany, size, receives, &index, &status);
    if (index != MPI_UNDEFINED)
        conformance_error("MPI_Waitany over null requests returned index %d, not MPI_UNDEFINED", index);
    /* The sends, one by one too, their statuses ignored. */
    for (int done = 0; done < size; ++done)
        CALL(MPI_Waitany, size, sends, &index, MPI_STATUS_IGNORE);
    return conformance_finish();
}
