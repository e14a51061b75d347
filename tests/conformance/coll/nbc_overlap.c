/* Several different non-blocking collectives outstanding at once on one communicator -- MPI_Ibcast,
 * MPI_Iallreduce, MPI_Igather, MPI_Ibarrier, MPI_Ialltoall, MPI_Iscan -- completed one by one by an
 * MPI_Waitany loop, then the same six completed by MPI_Testall polling; on a duplicate of
 * MPI_COMM_WORLD and on a split half. */
#include "coll.h"

enum { MAX_RANKS = 16, K = 6 };

static void start(MPI_Comm comm, int rank, int round, int *bcast, int *in, int *sum, int *gathered, int *a2a_out,
                  int *a2a_in, int *prefix, MPI_Request *requests, int size)
{
    *bcast = rank == 0 ? 77 + round : -1;
    *in = rank + 1 + round;
    for (int r = 0; r < size; ++r)
        a2a_out[r] = 100 * rank + r + round;
    CALL(MPI_Ibcast, bcast, 1, MPI_INT, 0, comm, &requests[0]);
    CALL(MPI_Iallreduce, in, sum, 1, MPI_INT, MPI_SUM, comm, &requests[1]);
    CALL(MPI_Igather, in, 1, MPI_INT, gathered, 1, MPI_INT, size - 1, comm, &requests[2]);
    CALL(MPI_Ibarrier, comm, &requests[3]);
    CALL(MPI_Ialltoall, a2a_out, 1, MPI_INT, a2a_in, 1, MPI_INT, comm, &requests[4]);
    CALL(MPI_Iscan, in, prefix, 1, MPI_INT, MPI_SUM, comm, &requests[5]);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int world_rank, world_size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &world_rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &world_size);
    MPI_Comm comms[2];
    CALL(MPI_Comm_dup, MPI_COMM_WORLD, &comms[0]);
    CALL(MPI_Comm_split, MPI_COMM_WORLD, world_rank < world_size / 2 ? 0 : 1, world_rank, &comms[1]);
    for (int c = 0; c < 2; ++c) {
        int rank, size;
        CALL(MPI_Comm_rank, comms[c], &rank);
        CALL(MPI_Comm_size, comms[c], &size);
        for (int round = 0; round < 2; ++round) {
            int bcast, in, sum, gathered[MAX_RANKS], a2a_out[MAX_RANKS], a2a_in[MAX_RANKS], prefix;
            MPI_Request requests[K];
            start(comms[c], rank, round, &bcast, &in, &sum, gathered, a2a_out, a2a_in, &prefix, requests, size);
            if (round == 0) {
                int seen[K] = {0};
                for (int k = 0; k < K; ++k) {
                    int index = MPI_UNDEFINED;
                    CALL(MPI_Waitany, K, requests, &index, MPI_STATUS_IGNORE);
                    if (index < 0 || index >= K || seen[index]++)
                        conformance_error("comm %d: MPI_Waitany gave index %d", c, index);
                }
            } else {
                int done = 0;
                while (!done)
                    CALL(MPI_Testall, K, requests, &done, MPI_STATUSES_IGNORE);
            }
            if (bcast != 77 + round)
                conformance_error("comm %d round %d: Ibcast %d", c, round, bcast);
            if (sum != size * (size + 1) / 2 + size * round)
                conformance_error("comm %d round %d: Iallreduce %d", c, round, sum);
            for (int r = 0; rank == size - 1 && r < size; ++r)
                if (gathered[r] != r + 1 + round)
                    conformance_error("comm %d round %d: Igather from %d: %d", c, round, r, gathered[r]);
            for (int r = 0; r < size; ++r)
                if (a2a_in[r] != 100 * r + rank + round)
                    conformance_error("comm %d round %d: Ialltoall from %d: %d", c, round, r, a2a_in[r]);
            if (prefix != rank * (rank + 1) / 2 + rank + 1 + (rank + 1) * round)
                conformance_error("comm %d round %d: Iscan %d", c, round, prefix);
        }
    }
    CALL(MPI_Comm_free, &comms[1]);
    CALL(MPI_Comm_free, &comms[0]);
    return conformance_finish();
}
