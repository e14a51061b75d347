/* Collectives that ranks call from different call sites: the root, or one parity of ranks, makes the
 * call in one statement and the others in another (`if (rank == root) MPI_Reduce(...); else
 * MPI_Reduce(...);`), for MPI_Reduce, MPI_Gather, MPI_Bcast, MPI_Allreduce, MPI_Comm_split,
 * MPI_Win_create and MPI_Win_free, some in loops of a few iterations (the Bcast's root moves with the
 * iteration, so a rank calls it from one site, then from the other). First every odd rank makes a
 * communicator of its own (MPI_Comm_split by rank) and keeps it to the end, while even ranks free theirs
 * at once: the communicators made after it, on which the same collectives run again, have different ids
 * on odd and even ranks.
 * Exercises: a merge that must keep every collective instance one event whatever its members' call sites
 * and communicator ids (a replay that ran it on subsets gave MPI_ERR_ROOT, or skipped it).
 *
 * Usage: collective_sites [ITERATIONS]    (default 3) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

static int rank, size;
static long long checksum;

/* The collectives from two call sites each on `comm`, whose ranks' world ranks are `world_of`. */
static void collectives(MPI_Comm comm, const int *world_of, int iterations)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    log_call("MPI_Comm_rank", 0);
    MPI_Comm_size(comm, &n);
    log_call("MPI_Comm_size", 0);
    const long long LL = sizeof(long long);

    for (int iteration = 0; iteration < iterations; ++iteration) {
        long long pair[2] = {me + iteration, 1}, sums[2] = {0, 0};
        if (me == 0)
            MPI_Reduce(pair, sums, 2, MPI_LONG_LONG, MPI_SUM, 0, comm);
        else
            MPI_Reduce(pair, NULL, 2, MPI_LONG_LONG, MPI_SUM, 0, comm);
        log_call_peer("MPI_Reduce", 2 * LL, world_of[0]);
        checksum += sums[0] + sums[1];
    }

    const int gather_root = n - 1;
    long long mine = rank * 3 + 1;
    if (me == gather_root) {
        long long *all = malloc((size_t)n * sizeof(long long));
        MPI_Gather(&mine, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, gather_root, comm);
        for (int i = 0; i < n; ++i)
            checksum += all[i] * (i + 1);
        free(all);
    } else {
        MPI_Gather(&mine, 1, MPI_LONG_LONG, NULL, 0, MPI_DATATYPE_NULL, gather_root, comm);
    }
    log_call_peer("MPI_Gather", (me == gather_root ? 2 : 1) * LL, world_of[gather_root]);

    for (int iteration = 0; iteration < iterations; ++iteration) {
        const int root = iteration % n;
        int header[3] = {0, 0, 0};
        if (me == root) {
            header[0] = 7 + iteration;
            header[1] = root;
            header[2] = rank;
            MPI_Bcast(header, 3, MPI_INT, root, comm);
        } else {
            MPI_Bcast(header, 3, MPI_INT, root, comm);
        }
        log_call_peer("MPI_Bcast", 3 * (long long)sizeof(int), world_of[root]);
        checksum += header[0] + header[1] + header[2];
    }

    long long value = rank % 2 ? rank : -rank, total = 0;
    if (rank % 2)
        MPI_Allreduce(&value, &total, 1, MPI_LONG_LONG, MPI_MAX, comm);
    else
        MPI_Allreduce(&value, &total, 1, MPI_LONG_LONG, MPI_MAX, comm);
    log_call("MPI_Allreduce", LL);
    checksum += total;

    /* A window made and freed from two sites each, with one fence epoch between. */
    int *memory = calloc(4, sizeof(int));
    MPI_Win win;
    if (me == 0)
        MPI_Win_create(memory, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &win);
    else
        MPI_Win_create(memory, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &win);
    log_call("MPI_Win_create", 4 * (long long)sizeof(int));
    MPI_Win_fence(0, win);
    log_call("MPI_Win_fence", 0);
    MPI_Win_fence(0, win);
    log_call("MPI_Win_fence", 0);
    if (rank % 2)
        MPI_Win_free(&win);
    else
        MPI_Win_free(&win);
    log_call("MPI_Win_free", 0);
    free(memory);
}

static int *world_ranks_of(MPI_Comm comm)
{
    int n;
    MPI_Comm_size(comm, &n);
    log_call("MPI_Comm_size", 0);
    MPI_Group group, world;
    MPI_Comm_group(comm, &group);
    log_call("MPI_Comm_group", 0);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    log_call("MPI_Comm_group", 0);
    int *ranks = malloc((size_t)n * sizeof(int)), *world_of = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; ++i)
        ranks[i] = i;
    MPI_Group_translate_ranks(group, n, ranks, world, world_of);
    log_call("MPI_Group_translate_ranks", 0);
    MPI_Group_free(&group);
    log_call("MPI_Group_free", 0);
    MPI_Group_free(&world);
    log_call("MPI_Group_free", 0);
    free(ranks);
    return world_of;
}

int main(int argc, char **argv)
{
    logged_start(&argc, &argv, &rank, &size);
    const int iterations = argc > 1 ? atoi(argv[1]) : 3;

    /* A communicator of each rank's own: odd ranks keep it, so their next communicators' ids differ. */
    MPI_Comm own;
    MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &own);
    log_call("MPI_Comm_split", 0);
    if (rank % 2 == 0) {
        MPI_Comm_free(&own);
        log_call("MPI_Comm_free", 0);
    }

    int *world_of = malloc((size_t)size * sizeof(int));
    for (int i = 0; i < size; ++i)
        world_of[i] = i;
    collectives(MPI_COMM_WORLD, world_of, iterations);
    free(world_of);

    /* Halves of the world (each holds odd and even ranks), in reverse order, split from two sites. */
    const int colour = rank < size / 2 ? 0 : 1;
    MPI_Comm half;
    if (rank == 0)
        MPI_Comm_split(MPI_COMM_WORLD, colour, -rank, &half);
    else
        MPI_Comm_split(MPI_COMM_WORLD, colour, -rank, &half);
    log_call("MPI_Comm_split", 0);
    world_of = world_ranks_of(half);
    for (int round = 0; round < 2; ++round)
        collectives(half, world_of, iterations);
    free(world_of);
    MPI_Comm_free(&half);
    log_call("MPI_Comm_free", 0);

    if (rank % 2) {
        int own_size;
        MPI_Comm_size(own, &own_size);
        log_call("MPI_Comm_size", 0);
        MPI_Comm_free(&own);
        log_call("MPI_Comm_free", 0);
    }

    long long total = 0;
    MPI_Allreduce(&checksum, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", sizeof(long long));
    if (rank == 0)
        printf("collective_sites: ranks %d iterations %d checksum %lld\n", size, iterations, total);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
