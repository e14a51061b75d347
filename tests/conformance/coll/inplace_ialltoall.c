/* MPI_Ialltoall, MPI_Ialltoallv and MPI_Ialltoallw (the three outstanding at once, completed by
 * MPI_Waitall) with MPI_IN_PLACE (each rank's blocks for the others in the receive buffer, replaced by
 * theirs), on MPI_COMM_WORLD, on each half of a split and on a duplicate: 2 ints per pair; the vector
 * form with r + j + 1 ints between ranks r and j in blocks one int apart; the w form with r + j + 1
 * elements of MPI_INT where r + j is even and of MPI_DOUBLE where it is odd, one double apart. (In
 * place, what a rank sends a peer is what it receives from it: counts and types are symmetric.) */
#include "coll.h"

enum { M = 2, MAX_RANKS = 16, TOTAL = MAX_RANKS * (2 * MAX_RANKS + 1) };

static int value(int c, int from, int to, int k, int i) { return 100000 * k + 10000 * c + 1000 * from + 10 * to + i; }

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    MPI_Comm comms[COLL_COMMS];
    coll_make_comms(comms);
    for (int c = 0; c < COLL_COMMS; ++c) {
        const char *name = coll_comm_names[c];
        int rank, size;
        CALL(MPI_Comm_rank, comms[c], &rank);
        CALL(MPI_Comm_size, comms[c], &size);
        int fixed[MAX_RANKS * M], varying[TOTAL], counts[MAX_RANKS], displs[MAX_RANKS], wdispls[MAX_RANKS];
        double mixed[TOTAL];
        MPI_Datatype types[MAX_RANKS];
        for (int i = 0; i < TOTAL; ++i) {
            varying[i] = -1;
            mixed[i] = -1;
        }
        for (int j = 0, at = 0; j < size; ++j) {
            counts[j] = rank + j + 1;
            displs[j] = at;
            wdispls[j] = at * (int)sizeof(double);
            types[j] = (rank + j) % 2 == 0 ? MPI_INT : MPI_DOUBLE;
            at += counts[j] + 1;
            for (int i = 0; i < M; ++i)
                fixed[j * M + i] = value(c, rank, j, 0, i);
            for (int i = 0; i < counts[j]; ++i) {
                varying[displs[j] + i] = value(c, rank, j, 1, i);
                if ((rank + j) % 2 == 0)
                    ((int *)&mixed[displs[j]])[i] = value(c, rank, j, 2, i);
                else
                    mixed[displs[j] + i] = value(c, rank, j, 2, i);
            }
        }
        MPI_Request requests[3];
        CALL(MPI_Ialltoall, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, fixed, M, MPI_INT, comms[c], &requests[0]);
        CALL(MPI_Ialltoallv, MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, varying, counts, displs, MPI_INT, comms[c],
             &requests[1]);
        CALL(MPI_Ialltoallw, MPI_IN_PLACE, NULL, NULL, NULL, mixed, counts, wdispls, types, comms[c], &requests[2]);
        CALL(MPI_Waitall, 3, requests, MPI_STATUSES_IGNORE);
        for (int j = 0; j < size; ++j) {
            for (int i = 0; i < M; ++i)
                if (fixed[j * M + i] != value(c, j, rank, 0, i))
                    conformance_error("%s MPI_Ialltoall: from %d [%d] = %d", name, j, i, fixed[j * M + i]);
            for (int i = 0; i < counts[j]; ++i) {
                if (varying[displs[j] + i] != value(c, j, rank, 1, i))
                    conformance_error("%s MPI_Ialltoallv: from %d [%d] = %d", name, j, i, varying[displs[j] + i]);
                const double got = (rank + j) % 2 == 0 ? ((int *)&mixed[displs[j]])[i] : mixed[displs[j] + i];
                if (got != value(c, j, rank, 2, i))
                    conformance_error("%s MPI_Ialltoallw: from %d [%d] = %g", name, j, i, got);
            }
            if (varying[displs[j] + counts[j]] != -1 || mixed[displs[j] + counts[j]] != -1)
                conformance_error("%s: the gap after rank %d's block was written", name, j);
        }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
