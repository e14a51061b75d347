/* Communicators made from an intercommunicator. MPI_COMM_WORLD is split into two groups of different
 * sizes (the first third, at least one rank, and the rest), joined by MPI_Intercomm_create; from that
 * intercommunicator come MPI_Comm_dup, MPI_Comm_split (colours that pair ranks of both groups, keys
 * reversed, MPI_UNDEFINED for the other group's last rank and for ranks whose colour the first group
 * lacks), MPI_Comm_create (all of the first group, the second group's even ranks) and
 * MPI_Comm_idup completed by MPI_Wait. On each result (an intercommunicator again): every rank sends to
 * every rank of the other group (MPI_Isend, MPI_Recv from each, MPI_Waitall), MPI_Bcast from one
 * group's rank 0 (MPI_ROOT there, MPI_PROC_NULL in its group, 0 in the other) and MPI_Allreduce; then
 * MPI_Comm_free.
 * Exercises: a replay must pair the groups of each derived communicator as MPI did, so that each side
 * talks to the other (a split whose colours the groups' own leaders made gave MPI_COMM_NULL).
 *
 * Usage: intercomm_derived [ITERATIONS]    (default 2) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { TAG_ACROSS = 3, MOST = 64 };

static int rank, size;
static long long checksum;

/* The world ranks of the local (or remote) group of `comm`, with the calls that find them logged. */
static int *world_ranks(MPI_Comm comm, int remote, int *n)
{
    MPI_Group group, world;
    if (remote) {
        MPI_Comm_remote_group(comm, &group);
        log_call("MPI_Comm_remote_group", 0);
    } else {
        MPI_Comm_group(comm, &group);
        log_call("MPI_Comm_group", 0);
    }
    MPI_Group_size(group, n);
    log_call("MPI_Group_size", 0);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    log_call("MPI_Comm_group", 0);
    int *ranks = malloc((size_t)*n * sizeof(int)), *world_of = malloc((size_t)*n * sizeof(int));
    for (int i = 0; i < *n; ++i)
        ranks[i] = i;
    MPI_Group_translate_ranks(group, *n, ranks, world, world_of);
    log_call("MPI_Group_translate_ranks", 0);
    MPI_Group_free(&world);
    log_call("MPI_Group_free", 0);
    MPI_Group_free(&group);
    log_call("MPI_Group_free", 0);
    free(ranks);
    return world_of;
}

/* Point-to-point across `inter` and two collectives on it; `root_side` is the group (0 or 1) whose
 * rank 0 is the root of the MPI_Bcast, `side` the caller's. */
static void communicate(MPI_Comm inter, int side, int root_side, int iterations, int salt)
{
    int me, remote_size, local_size;
    MPI_Comm_rank(inter, &me);
    log_call("MPI_Comm_rank", 0);
    int *local = world_ranks(inter, 0, &local_size);
    int *remote = world_ranks(inter, 1, &remote_size);
    MPI_Request *requests = malloc((size_t)remote_size * sizeof(MPI_Request));
    int out[MOST], in[MOST];
    for (int iteration = 0; iteration < iterations; ++iteration) {
        const int count = 1 + (me + salt + iteration) % 8; /* what this rank sends to every remote rank */
        for (int i = 0; i < count; ++i)
            out[i] = rank * 10 + salt + iteration + i;
        for (int k = 0; k < remote_size; ++k) {
            MPI_Isend(out, count, MPI_INT, k, TAG_ACROSS, inter, &requests[k]);
            log_send("MPI_Isend", count * (long long)sizeof(int), remote[k], TAG_ACROSS);
        }
        for (int k = 0; k < remote_size; ++k) {
            const int expected = 1 + (k + salt + iteration) % 8;
            MPI_Recv(in, expected, MPI_INT, k, TAG_ACROSS, inter, MPI_STATUS_IGNORE);
            log_recv("MPI_Recv", expected * (long long)sizeof(int), remote[k], TAG_ACROSS);
            for (int i = 0; i < expected; ++i)
                checksum += in[i] * (k + 1);
        }
        MPI_Waitall(remote_size, requests, MPI_STATUSES_IGNORE);
        log_completion("MPI_Waitall", remote_size);
    }

    long long values[2] = {side == root_side && me == 0 ? 1000 + salt : 0, 0};
    const int root = side != root_side ? 0 : me == 0 ? MPI_ROOT : MPI_PROC_NULL;
    MPI_Bcast(values, 2, MPI_LONG_LONG, root, inter);
    log_call_peer("MPI_Bcast", 2 * (long long)sizeof(long long),
                  side != root_side ? remote[0] : me == 0 ? LOG_ROOT : LOG_PROC_NULL);
    if (side != root_side)
        checksum += values[0];
    long long mine = rank + salt, theirs = 0;
    MPI_Allreduce(&mine, &theirs, 1, MPI_LONG_LONG, MPI_SUM, inter);
    log_call("MPI_Allreduce", sizeof(long long));
    checksum += theirs * (side + 1);
    free(requests);
    free(local);
    free(remote);
}

static void release(MPI_Comm *comm)
{
    MPI_Comm_free(comm);
    log_call("MPI_Comm_free", 0);
}

int main(int argc, char **argv)
{
    logged_start(&argc, &argv, &rank, &size);
    const int iterations = argc > 1 ? atoi(argv[1]) : 2;
    if (size < 3) {
        fprintf(stderr, "intercomm_derived: needs at least 3 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int first_size = size / 3 > 0 ? size / 3 : 1;
    const int side = rank < first_size ? 0 : 1;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, side, rank, &half);
    log_call("MPI_Comm_split", 0);
    int local_rank;
    MPI_Comm_rank(half, &local_rank);
    log_call("MPI_Comm_rank", 0);
    MPI_Comm inter;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, side == 0 ? first_size : 0, 7, &inter);
    log_call("MPI_Intercomm_create", 0);

    MPI_Comm dup;
    MPI_Comm_dup(inter, &dup);
    log_call("MPI_Comm_dup", 0);
    communicate(dup, side, 0, iterations, 1);
    release(&dup);

    /* Colour c pairs the first group's rank c with the second group's ranks c, c + 2, c + 4 ...;
     * the second group's last rank, and ranks whose colour the first group lacks, take no part. */
    const int second_size = size - first_size;
    int colour = local_rank % 2;
    if (side == 1 && (local_rank == second_size - 1 || colour >= first_size))
        colour = MPI_UNDEFINED;
    MPI_Comm split;
    MPI_Comm_split(inter, colour, -local_rank, &split);
    log_call("MPI_Comm_split", 0);
    if (split != MPI_COMM_NULL) {
        communicate(split, side, 1, iterations, 2);
        release(&split);
    }

    /* All of the first group; the second group's even ranks (in their order: Open MPI 4.1's remote
     * group of an intercommunicator MPI_Comm_create made keeps the old order whatever the group's). */
    MPI_Group local, chosen;
    MPI_Comm_group(inter, &local);
    log_call("MPI_Comm_group", 0);
    int *members = malloc((size_t)size * sizeof(int)), count = 0;
    if (side == 0) {
        for (int i = 0; i < first_size; ++i)
            members[count++] = i;
    } else {
        for (int i = 0; i < second_size; i += 2)
            members[count++] = i;
    }
    MPI_Group_incl(local, count, members, &chosen);
    log_call("MPI_Group_incl", 0);
    MPI_Comm created;
    MPI_Comm_create(inter, chosen, &created);
    log_call("MPI_Comm_create", 0);
    MPI_Group_free(&chosen);
    log_call("MPI_Group_free", 0);
    MPI_Group_free(&local);
    log_call("MPI_Group_free", 0);
    free(members);
    if (created != MPI_COMM_NULL) {
        communicate(created, side, 1, iterations, 3);
        release(&created);
    }

    MPI_Comm idup;
    MPI_Request request;
    MPI_Comm_idup(inter, &idup, &request);
    log_call("MPI_Comm_idup", 0);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    log_completion("MPI_Wait", 1);
    communicate(idup, side, 0, iterations, 4);
    release(&idup);

    release(&inter);
    release(&half);

    long long total = 0;
    MPI_Reduce(&checksum, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    log_call_peer("MPI_Reduce", sizeof(long long), 0);
    if (rank == 0)
        printf("intercomm_derived: ranks %d in groups of %d and %d, iterations %d, checksum %lld\n", size, first_size,
               second_size, iterations, total);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
