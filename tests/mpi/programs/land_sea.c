/* The land/sea example of the Scala-H-Trace paper: a coupled model whose first half of the ranks
 * computes "land" and the second half "sea", with the same exchange code but different data. Land
 * ranks swap 80-byte messages with their left and right neighbours on a ring of the land ranks; sea
 * ranks swap 90-byte messages with the ranks two places away on a ring of the sea ranks. Both run the
 * same call sites -- one MPI_Irecv and one MPI_Isend inside a loop over neighbours, one MPI_Waitall --
 * so only the values (bytes, peers) tell land from sea, never the code path. An MPI_Allreduce of a
 * checksum of the received bytes closes each timestep.
 *
 * Without merging, land and sea stay apart; at merge precision 0 each call site is one event for all
 * ranks whose byte histogram holds the 80- and 90-byte sends (tests/mpi/check_precision.py).
 *
 * Usage: land_sea [TIMESTEPS]    (default 10; any rank count: a region of one or two ranks exchanges
 *                                 with itself or one partner, which MPI allows) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { NEIGHBORS = 2 }; /* index 0: `distance` ranks up the region's ring, 1: as many down */
enum { LAND_BYTES = 80, SEA_BYTES = 90, LARGEST_MESSAGE = 90 };
enum { LAND_DISTANCE = 1, SEA_DISTANCE = 2 };

/* Numerical Recipes' LCG: the same numbers on every platform. */
static uint32_t lcg_next(uint32_t state)
{
    return state * 1664525u + 1013904223u;
}

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);

    const int timesteps = argc > 1 ? atoi(argv[1]) : 10;

    /* Everything that differs between land and sea is data: the region, the distance, the bytes. */
    const int land_ranks = size / 2;
    const int is_land = rank < land_ranks;
    const int region_first = is_land ? 0 : land_ranks;
    const int region_size = is_land ? land_ranks : size - land_ranks;
    const int distance = (is_land ? LAND_DISTANCE : SEA_DISTANCE) % region_size;
    const int message_bytes = is_land ? LAND_BYTES : SEA_BYTES;
    const int place = rank - region_first;
    int neighbor[NEIGHBORS];
    neighbor[0] = region_first + (place + distance) % region_size;
    neighbor[1] = region_first + (place - distance + region_size) % region_size;

    long long checksum = 0;
    for (int timestep = 0; timestep < timesteps; ++timestep) {
        unsigned char outgoing[NEIGHBORS][LARGEST_MESSAGE], incoming[NEIGHBORS][LARGEST_MESSAGE];
        MPI_Request requests[2 * NEIGHBORS];
        uint32_t state = (uint32_t)(rank * 100003 + timestep);
        for (int n = 0; n < NEIGHBORS; ++n)
            for (int i = 0; i < message_bytes; ++i)
                outgoing[n][i] = (unsigned char)((state = lcg_next(state)) >> 24);
        /* A message travelling towards neighbour n carries tag n; it arrives from the receiver's
         * opposite side, so the receive from neighbour n takes tag 1 - n. Tags keep the two messages
         * apart when both neighbours are the same rank. */
        for (int n = 0; n < NEIGHBORS; ++n) {
            MPI_Irecv(incoming[n], message_bytes, MPI_BYTE, neighbor[n], 1 - n, MPI_COMM_WORLD, &requests[n]);
            log_recv("MPI_Irecv", message_bytes, neighbor[n], 1 - n);
            MPI_Isend(outgoing[n], message_bytes, MPI_BYTE, neighbor[n], n, MPI_COMM_WORLD, &requests[NEIGHBORS + n]);
            log_send("MPI_Isend", message_bytes, neighbor[n], n);
        }
        MPI_Waitall(2 * NEIGHBORS, requests, MPI_STATUSES_IGNORE);
        log_completion("MPI_Waitall", 2 * NEIGHBORS);

        long long local = 0, global = 0;
        for (int n = 0; n < NEIGHBORS; ++n)
            for (int i = 0; i < message_bytes; ++i)
                local += (long long)incoming[n][i] * (i + 1) * (n + 1);
        MPI_Allreduce(&local, &global, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        log_call("MPI_Allreduce", sizeof(long long));
        checksum += global;
    }

    if (rank == 0)
        printf("land_sea: ranks %d (land %d x %d bytes, sea %d x %d bytes) timesteps %d checksum %lld\n", size,
               land_ranks, LAND_BYTES, size - land_ranks, SEA_BYTES, timesteps, checksum);

    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
