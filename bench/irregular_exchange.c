/* An irregular exchange (issue 27, the merge at MPI_Finalize): each step every rank picks, from an
 * RNG seeded by the step alone (so all ranks agree without talking), a random set of pairs and a
 * message size for each, then exchanges with Isend/Irecv/Waitall; every eighth step an Allreduce.
 * Peers and sizes change from step to step, so neither loops nor ranks fold: the worst case for the
 * merge (bench/merge_time.py times it). Rank 0 prints how many calls it made.
 *
 *     irregular_exchange [CALLS_PER_RANK] [parts]   (default 4700: about 300,000 calls at 64 ranks)
 *
 * With `parts` it exits without MPI_Finalize, so that each rank leaves its own trace
 * (HTRACE_FILE.part.RANK) for `h-merge` to merge in one process: the merge's work, timed or
 * profiled apart from MPI.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxPeers = 4, kMaxBytes = 4096 };

/* splitmix64: a step's pairs and sizes from the step alone, the same on every rank. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const long calls_wanted = argc > 1 ? atol(argv[1]) : 4700;
    int *partner = malloc(sizeof(int) * (size_t)size * kMaxPeers);
    int *bytes = malloc(sizeof(int) * (size_t)size * kMaxPeers);
    char *send_buffer = calloc(kMaxPeers, kMaxBytes);
    char *recv_buffer = calloc(kMaxPeers, kMaxBytes);
    MPI_Request requests[2 * kMaxPeers];
    long calls = 0;
    for (uint64_t step = 0;; ++step) {
        /* Rounds of random perfect matchings (a shuffled permutation paired off), one peer per round. */
        uint64_t state = step * 1000003u + 17u;
        const int rounds = 1 + (int)(next_random(&state) % kMaxPeers);
        int *order = malloc(sizeof(int) * (size_t)size);
        for (int round = 0; round < rounds; ++round) {
            for (int r = 0; r < size; ++r) order[r] = r;
            for (int r = size - 1; r > 0; --r) {
                const int k = (int)(next_random(&state) % (uint64_t)(r + 1));
                const int t = order[r];
                order[r] = order[k];
                order[k] = t;
            }
            for (int r = 0; r < size; ++r) partner[round * size + r] = -1;
            for (int p = 0; p + 1 < size; p += 2) {
                const int x = order[p];
                const int y = order[p + 1];
                const int n = 1 + (int)(next_random(&state) % kMaxBytes);
                partner[round * size + x] = y;
                partner[round * size + y] = x;
                bytes[round * size + x] = n;
                bytes[round * size + y] = n;
            }
        }
        free(order);
        int pending = 0;
        for (int round = 0; round < rounds; ++round) {
            const int peer = partner[round * size + rank];
            if (peer < 0) continue;
            const int n = bytes[round * size + rank];
            MPI_Irecv(recv_buffer + round * kMaxBytes, n, MPI_BYTE, peer, round, MPI_COMM_WORLD, &requests[pending++]);
            MPI_Isend(send_buffer + round * kMaxBytes, n, MPI_BYTE, peer, round, MPI_COMM_WORLD, &requests[pending++]);
            calls += 2;
        }
        MPI_Waitall(pending, requests, MPI_STATUSES_IGNORE);
        ++calls;
        if (step % 8 == 7) {
            double local = (double)rank;
            double total = 0;
            MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            ++calls;
        }
        /* Every rank stops at the same step: rank 0's count decides, every eighth step. */
        if (step % 8 == 7) {
            long go_on = calls < calls_wanted;
            MPI_Bcast(&go_on, 1, MPI_LONG, 0, MPI_COMM_WORLD);
            ++calls;
            if (!go_on) break;
        }
    }
    free(partner);
    free(bytes);
    free(send_buffer);
    free(recv_buffer);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("calls_per_rank %ld\n", calls);
        fflush(stdout);
    }
    if (argc > 2 && strcmp(argv[2], "parts") == 0) exit(0);
    MPI_Finalize();
    return 0;
}
