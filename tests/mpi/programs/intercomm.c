/* Communicators beyond split and dup: MPI_COMM_WORLD split into two groups of different sizes (the
 * first quarter, at least one rank, and the rest), joined by MPI_Intercomm_create. On the
 * intercommunicator: every rank sends to every rank of the other group (MPI_Isend, MPI_Recv from each,
 * MPI_Waitall), the first group's rank 0 sends the other group's rank 0 a message it receives from
 * MPI_ANY_SOURCE, then MPI_Allreduce, MPI_Bcast from the first group's rank 0 (MPI_ROOT there,
 * MPI_PROC_NULL for its group, 0 for the other) and MPI_Barrier. Then MPI_Intercomm_merge, with a
 * MPI_Sendrecv ring on the merged communicator, MPI_Comm_idup of it completed by MPI_Wait, MPI_Allreduce
 * on the duplicate, and MPI_Comm_disconnect of the intercommunicator and the duplicate. Last, a
 * communicator of another size (the two groups' own halves of MPI_COMM_WORLD, by MPI_Comm_split) made
 * right after the duplicate went, so the MPI library may hand out the duplicate's handle again, with
 * an MPI_Sendrecv ring on it: a trace that kept the old communicator's size and ranks for a handle
 * used again would name other peers.
 * Exercises: peers and roots that are ranks of the remote group, communicators completed by a request,
 * disconnected, and handles used again.
 *
 * Usage: intercomm [ITERATIONS]    (default 3) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { TAG_ALL = 5, TAG_ANY = 9, TAG_RING = 11 };

/* The world ranks of the `n` ranks of `group`, with the calls that find them logged. */
static int *world_ranks_of(MPI_Group group, int n)
{
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    log_call("MPI_Comm_group", 0);
    int *ranks = malloc((size_t)n * sizeof(int));
    int *world_of = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; ++i)
        ranks[i] = i;
    MPI_Group_translate_ranks(group, n, ranks, world, world_of);
    log_call("MPI_Group_translate_ranks", 0);
    MPI_Group_free(&world);
    log_call("MPI_Group_free", 0);
    free(ranks);
    return world_of;
}

static int *members_of(MPI_Comm comm, int n, int remote)
{
    MPI_Group group;
    if (remote) {
        MPI_Comm_remote_group(comm, &group);
        log_call("MPI_Comm_remote_group", 0);
    } else {
        MPI_Comm_group(comm, &group);
        log_call("MPI_Comm_group", 0);
    }
    int *world_of = world_ranks_of(group, n);
    MPI_Group_free(&group);
    log_call("MPI_Group_free", 0);
    return world_of;
}

/* One MPI_Sendrecv around the ring of `comm` (its ranks' world ranks in `world_of`). */
static long long ring(MPI_Comm comm, const int *world_of, int iteration)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    log_call("MPI_Comm_rank", 0);
    MPI_Comm_size(comm, &n);
    log_call("MPI_Comm_size", 0);
    const int right = (me + 1) % n, left = (me - 1 + n) % n;
    int out[2] = {me, iteration}, in[2] = {0, 0};
    MPI_Sendrecv(out, 2, MPI_INT, right, TAG_RING, in, 2, MPI_INT, left, TAG_RING, comm, MPI_STATUS_IGNORE);
    log_sendrecv("MPI_Sendrecv", 4 * (long long)sizeof(int), world_of[right], TAG_RING, world_of[left], TAG_RING, 0,
                 0);
    return in[0] + in[1];
}

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    const int iterations = argc > 1 ? atoi(argv[1]) : 3;
    if (size < 2) {
        fprintf(stderr, "intercomm: needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    const int first_size = size / 3 > 0 ? size / 3 : 1;
    const int color = rank < first_size ? 0 : 1;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
    log_call("MPI_Comm_split", 0);
    int half_rank;
    MPI_Comm_rank(half, &half_rank);
    log_call("MPI_Comm_rank", 0);

    /* Each group's leader is its rank 0: world rank 0 and world rank first_size. */
    MPI_Comm inter;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color == 0 ? first_size : 0, 7, &inter);
    log_call("MPI_Intercomm_create", 0);
    int remote_size;
    MPI_Comm_remote_size(inter, &remote_size);
    log_call("MPI_Comm_remote_size", 0);
    int *remote = members_of(inter, remote_size, 1);

    long long checksum = 0;
    MPI_Request *requests = malloc((size_t)remote_size * sizeof(MPI_Request));
    int *out = malloc((size_t)(size + 1) * sizeof(int)); /* count <= the larger group */
    int *in = malloc((size_t)(size + 1) * sizeof(int));
    for (int iteration = 0; iteration < iterations; ++iteration) {
        /* Every rank to every rank of the other group; sizes follow the sender's rank. */
        const int count = 1 + half_rank;
        for (int i = 0; i < count; ++i)
            out[i] = rank + iteration + i;
        for (int k = 0; k < remote_size; ++k) {
            MPI_Isend(out, count, MPI_INT, k, TAG_ALL, inter, &requests[k]);
            log_send("MPI_Isend", count * (long long)sizeof(int), remote[k], TAG_ALL);
        }
        for (int k = 0; k < remote_size; ++k) {
            MPI_Recv(in, size + 1, MPI_INT, k, TAG_ALL, inter, MPI_STATUS_IGNORE);
            log_recv("MPI_Recv", (size + 1) * (long long)sizeof(int), remote[k], TAG_ALL);
            checksum += in[0];
        }
        MPI_Waitall(remote_size, requests, MPI_STATUSES_IGNORE);
        log_completion("MPI_Waitall", remote_size);
    }

    int token = rank;
    if (color == 0 && half_rank == 0) {
        MPI_Send(&token, 1, MPI_INT, 0, TAG_ANY, inter);
        log_send("MPI_Send", sizeof(int), remote[0], TAG_ANY);
    } else if (color == 1 && half_rank == 0) {
        MPI_Status status;
        MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, TAG_ANY, inter, &status);
        log_recv_matched("MPI_Recv", sizeof(int), LOG_ANY_SOURCE, TAG_ANY, remote[status.MPI_SOURCE], TAG_ANY);
        checksum += token;
    }

    long long mine = checksum, others = 0;
    MPI_Allreduce(&mine, &others, 1, MPI_LONG_LONG, MPI_SUM, inter);
    log_call("MPI_Allreduce", sizeof(long long));
    double scale[3] = {color == 0 ? 1.5 : 0.0, 2.0, 0.5};
    const int root = color == 1 ? 0 : half_rank == 0 ? MPI_ROOT : MPI_PROC_NULL;
    MPI_Bcast(scale, 3, MPI_DOUBLE, root, inter);
    log_call_peer("MPI_Bcast", 3 * sizeof(double), color == 1 ? remote[0] : half_rank == 0 ? LOG_ROOT : LOG_PROC_NULL);
    MPI_Barrier(inter);
    log_call("MPI_Barrier", 0);

    MPI_Comm merged;
    MPI_Intercomm_merge(inter, color, &merged);
    log_call("MPI_Intercomm_merge", 0);
    int *merged_world = members_of(merged, size, 0);
    for (int iteration = 0; iteration < iterations; ++iteration)
        checksum += ring(merged, merged_world, iteration);

    MPI_Comm dup;
    MPI_Request dup_request;
    MPI_Comm_idup(merged, &dup, &dup_request);
    log_call("MPI_Comm_idup", 0);
    MPI_Wait(&dup_request, MPI_STATUS_IGNORE);
    log_completion("MPI_Wait", 1);
    long long total = 0;
    MPI_Allreduce(&checksum, &total, 1, MPI_LONG_LONG, MPI_SUM, dup);
    log_call("MPI_Allreduce", sizeof(long long));

    MPI_Comm_disconnect(&inter);
    log_call("MPI_Comm_disconnect", 0);
    MPI_Comm_free(&merged);
    log_call("MPI_Comm_free", 0);
    MPI_Comm_disconnect(&dup);
    log_call("MPI_Comm_disconnect", 0);

    /* The next communicator made may get the duplicate's handle; its size is the group's, not the world's. */
    MPI_Comm again;
    MPI_Comm_split(MPI_COMM_WORLD, color, -rank, &again);
    log_call("MPI_Comm_split", 0);
    int again_size;
    MPI_Comm_size(again, &again_size);
    log_call("MPI_Comm_size", 0);
    int *again_world = members_of(again, again_size, 0);
    for (int iteration = 0; iteration < iterations; ++iteration)
        total += ring(again, again_world, iteration);
    MPI_Comm_free(&again);
    log_call("MPI_Comm_free", 0);
    MPI_Comm_free(&half);
    log_call("MPI_Comm_free", 0);

    if (rank == 0)
        printf("intercomm: ranks %d in groups of %d and %d, iterations %d, total %lld, scale %.1f\n", size, first_size,
               size - first_size, iterations, total, scale[0]);
    free(requests);
    free(out);
    free(in);
    free(remote);
    free(merged_world);
    free(again_world);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
