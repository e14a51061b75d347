/* One-sided communication in every kind of epoch. Windows: MPI_Win_create over a buffer of its own, then
 * MPI_Win_allocate, MPI_Win_allocate_shared and MPI_Win_create_dynamic (with memory attached), each of
 * a size that follows the rank. Per iteration, fence epochs: MPI_Put to the right neighbour,
 * MPI_Get from the left one, MPI_Accumulate to rank 0; passive target: MPI_Win_lock (exclusive) of the
 * right neighbour with MPI_Fetch_and_op, MPI_Compare_and_swap and MPI_Win_flush, MPI_Win_unlock;
 * MPI_Win_lock_all with MPI_Rput and MPI_Rget_accumulate completed by MPI_Waitall, MPI_Raccumulate and
 * MPI_Rget by MPI_Wait, MPI_Get_accumulate, MPI_Win_flush_local, MPI_Win_flush_all,
 * MPI_Win_flush_local_all, MPI_Win_unlock_all; and post/start/complete/wait between even ranks
 * (origins) and odd ranks (targets) with MPI_Put. Then a shared lock on the shared window and a put on
 * the dynamic window in fence epochs, and every window freed.
 * Exercises: targets given as ranks of the window's communicator (a split half of MPI_COMM_WORLD for the
 * allocated window), origin, target and result sizes, window ids, assert and lock arguments, groups.
 *
 * Usage: one_sided [ITERATIONS]    (default 3) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

/* A one-sided call on `target` (a world rank) moving `bytes` at origin, target and result together. */
static void log_rma(const char *function, long long bytes, int target)
{
    log_call_peer(function, bytes, target);
}

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    const int iterations = argc > 1 ? atoi(argv[1]) : 3;
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    enum { N = 16 };

    int *memory = calloc(N * (size_t)(rank + 1), sizeof(int));
    MPI_Win win;
    MPI_Win_create(memory, (MPI_Aint)(N * (rank + 1) * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    log_call("MPI_Win_create", N * (rank + 1) * (long long)sizeof(int));

    /* Halves of the world: ranks of the allocated window are ranks of the half. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    log_call("MPI_Comm_split", 0);
    int half_rank, half_size;
    MPI_Comm_rank(half, &half_rank);
    log_call("MPI_Comm_rank", 0);
    MPI_Comm_size(half, &half_size);
    log_call("MPI_Comm_size", 0);
    long long *allocated;
    MPI_Win half_win;
    MPI_Win_allocate((MPI_Aint)(N * sizeof(long long)), sizeof(long long), MPI_INFO_NULL, half, &allocated, &half_win);
    log_call("MPI_Win_allocate", N * (long long)sizeof(long long));
    for (int i = 0; i < N; ++i)
        allocated[i] = 0;
    const int half_right = (half_rank + 1) % half_size;
    const int half_right_world = (rank % 2) + 2 * half_right; /* the half's ranks are rank % 2, + 2, + 4 ... */

    long long total = 0;
    int out[N], in[N];
    for (int iteration = 0; iteration < iterations; ++iteration) {
        for (int i = 0; i < N; ++i)
            out[i] = rank * 100 + iteration + i;
        MPI_Win_fence(0, win);
        log_call("MPI_Win_fence", 0);
        MPI_Put(out, 4, MPI_INT, right, 0, 4, MPI_INT, win);
        log_rma("MPI_Put", 2 * 4 * sizeof(int), right);
        MPI_Get(in, 2, MPI_INT, left, 4, 2, MPI_INT, win);
        log_rma("MPI_Get", 2 * 2 * sizeof(int), left);
        MPI_Accumulate(out, 1, MPI_INT, 0, 8, 1, MPI_INT, MPI_SUM, win);
        log_rma("MPI_Accumulate", 2 * sizeof(int), 0);
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        log_call("MPI_Win_fence", 0);
        total += in[0];

        /* Passive target on the half's window. */
        long long one = 1, fetched = 0, compare = 0, swapped = 0;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, half_right, 0, half_win);
        log_rma("MPI_Win_lock", 0, half_right_world);
        MPI_Fetch_and_op(&one, &fetched, MPI_LONG_LONG, half_right, 0, MPI_SUM, half_win);
        log_rma("MPI_Fetch_and_op", 2 * sizeof(long long), half_right_world);
        MPI_Compare_and_swap(&one, &compare, &swapped, MPI_LONG_LONG, half_right, 1, half_win);
        log_rma("MPI_Compare_and_swap", 2 * sizeof(long long), half_right_world);
        MPI_Win_flush(half_right, half_win);
        log_rma("MPI_Win_flush", 0, half_right_world);
        MPI_Win_unlock(half_right, half_win);
        log_rma("MPI_Win_unlock", 0, half_right_world);

        MPI_Win_lock_all(0, win);
        log_call("MPI_Win_lock_all", 0);
        MPI_Request requests[2], request;
        int result[N];
        MPI_Rput(out, 2, MPI_INT, right, 12, 2, MPI_INT, win, &requests[0]);
        log_rma("MPI_Rput", 2 * 2 * sizeof(int), right);
        MPI_Rget_accumulate(out, 1, MPI_INT, result, 1, MPI_INT, left, 14, 1, MPI_INT, MPI_SUM, win, &requests[1]);
        log_rma("MPI_Rget_accumulate", 3 * sizeof(int), left);
        MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
        log_completion("MPI_Waitall", 2);
        MPI_Raccumulate(out, 1, MPI_INT, right, 15, 1, MPI_INT, MPI_BOR, win, &request);
        log_rma("MPI_Raccumulate", 2 * sizeof(int), right);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        log_completion("MPI_Wait", 1);
        MPI_Rget(in, 3, MPI_INT, left, 0, 3, MPI_INT, win, &request);
        log_rma("MPI_Rget", 2 * 3 * sizeof(int), left);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        log_completion("MPI_Wait", 1);
        MPI_Get_accumulate(NULL, 0, MPI_INT, result, 2, MPI_INT, right, 2, 2, MPI_INT, MPI_NO_OP, win);
        log_rma("MPI_Get_accumulate", 2 * 2 * sizeof(int), right);
        MPI_Win_flush_local(right, win);
        log_rma("MPI_Win_flush_local", 0, right);
        MPI_Win_flush_all(win);
        log_call("MPI_Win_flush_all", 0);
        MPI_Win_flush_local_all(win);
        log_call("MPI_Win_flush_local_all", 0);
        MPI_Win_unlock_all(win);
        log_call("MPI_Win_unlock_all", 0);
        total += result[0] > 0;

        /* Post/start/complete/wait: even ranks put into the odd rank after them. */
        MPI_Group world_group, partner;
        MPI_Comm_group(MPI_COMM_WORLD, &world_group);
        log_call("MPI_Comm_group", 0);
        const int even = rank % 2 == 0;
        int peer = even ? rank + 1 : rank - 1;
        if (peer < size) {
            MPI_Group_incl(world_group, 1, &peer, &partner);
            log_call("MPI_Group_incl", 0);
            if (even) {
                MPI_Win_start(partner, 0, win);
                log_rma("MPI_Win_start", 0, peer);
                MPI_Put(out, 1, MPI_INT, peer, 3, 1, MPI_INT, win);
                log_rma("MPI_Put", 2 * sizeof(int), peer);
                MPI_Win_complete(win);
                log_call("MPI_Win_complete", 0);
            } else {
                MPI_Win_post(partner, 0, win);
                log_rma("MPI_Win_post", 0, peer);
                MPI_Win_wait(win);
                log_call("MPI_Win_wait", 0);
            }
            MPI_Group_free(&partner);
            log_call("MPI_Group_free", 0);
        }
        MPI_Group_free(&world_group);
        log_call("MPI_Group_free", 0);
    }

    /* A shared window (every rank here shares the node) under a shared lock, and a dynamic one. */
    int *shared;
    MPI_Win shared_win;
    MPI_Win_allocate_shared((MPI_Aint)(4 * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &shared,
                            &shared_win);
    log_call("MPI_Win_allocate_shared", 4 * (long long)sizeof(int));
    MPI_Win_lock(MPI_LOCK_SHARED, left, MPI_MODE_NOCHECK, shared_win);
    log_rma("MPI_Win_lock", 0, left);
    MPI_Get(in, 1, MPI_INT, left, 0, 1, MPI_INT, shared_win);
    log_rma("MPI_Get", 2 * sizeof(int), left);
    MPI_Win_unlock(left, shared_win);
    log_rma("MPI_Win_unlock", 0, left);

    MPI_Win dynamic;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dynamic);
    log_call("MPI_Win_create_dynamic", 0);
    int attached[4] = {0, 0, 0, 0};
    MPI_Win_attach(dynamic, attached, sizeof attached);
    log_call("MPI_Win_attach", (long long)sizeof attached);
    MPI_Aint mine, *bases = malloc((size_t)size * sizeof(MPI_Aint));
    MPI_Get_address(attached, &mine);
    log_call("MPI_Get_address", 0);
    MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
    log_call("MPI_Allgather", 2 * (long long)sizeof(MPI_Aint)); /* one address sent, one per rank received */
    MPI_Win_fence(0, dynamic);
    log_call("MPI_Win_fence", 0);
    MPI_Put(out, 2, MPI_INT, right, bases[right], 2, MPI_INT, dynamic);
    log_rma("MPI_Put", 2 * 2 * sizeof(int), right);
    MPI_Win_fence(0, dynamic);
    log_call("MPI_Win_fence", 0);
    MPI_Win_detach(dynamic, attached);
    log_call("MPI_Win_detach", 0);

    MPI_Win_free(&dynamic);
    log_call("MPI_Win_free", 0);
    MPI_Win_free(&shared_win);
    log_call("MPI_Win_free", 0);
    MPI_Win_free(&half_win);
    log_call("MPI_Win_free", 0);
    MPI_Win_free(&win);
    log_call("MPI_Win_free", 0);
    MPI_Comm_free(&half);
    log_call("MPI_Comm_free", 0);

    long long all = 0;
    MPI_Allreduce(&total, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", sizeof(long long));
    if (rank == 0)
        printf("one_sided: ranks %d, iterations %d, total %lld, attached %d\n", size, iterations, all, attached[0]);
    free(memory);
    free(bases);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
