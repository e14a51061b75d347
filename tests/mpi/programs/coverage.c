/* Calls every MPI function of src/capture/mpi_functions.py at least once, with valid arguments, and
 * logs each call with the byte and peer rules stated there (see call_log.h for the log format):
 * every send mode (Bsend with an attached buffer, Rsend with a pre-posted receive), Sendrecv(_replace),
 * Probe/Iprobe, every Wait/Test variant completing wildcard receives, every collective and its
 * non-blocking twin (on MPI_COMM_WORLD and on a communicator whose rank order is reversed, so roots and
 * peers must be translated to world ranks), MPI_IN_PLACE collectives, neighbor collectives on a
 * Cartesian and a distributed-graph communicator, and every communicator constructor of the table,
 * plus calls the tracer only records by name (groups ...). Persistent requests,
 * matched probes and cancelled sends have programs of their own (persistent.c, matched_probe.c,
 * cancel_send.c).
 *
 * MPI_Init_thread stands for the init kind here (a program can call only one of Init / Init_thread;
 * the other test programs call MPI_Init). Works at any rank count >= 2; the printed checksum depends
 * only on the rank count.
 *
 * Usage: mpi_coverage    (its target name: Meson reserves "coverage"; no arguments) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_log_mpi.h"

enum { NO_ROOT = -1 }; /* for log_collective: a collective without a root has no peer */

/* Tags of the point-to-point sections; each is sent by a rank only to its right neighbour unless
 * said otherwise, so a wildcard receive with it can only match the left neighbour. */
enum {
    TAG_SEND_MODES = 100, /* + mode */
    TAG_SENDRECV = 200,
    TAG_SENDRECV_WILDCARD,
    TAG_REPLACE,
    TAG_REPLACE_WILDCARD,
    TAG_PROBE,
    TAG_PROBE_WILDCARD,
    TAG_WILDCARD_NO_STATUS,
    TAG_NEVER_SENT,
    TAG_COMPLETION = 300, /* + variant; sent to both neighbours */
    TAG_INTERCOMM = 400,
};

static int rank, size, left, right;
static long long checksum; /* of everything received; independent of timing and matching order */
static MPI_Group world_group;

static const long long INT_BYTES = sizeof(int);
static const long long DOUBLE_BYTES = sizeof(double);
static const long long LONG_BYTES = sizeof(long long);

static void add_ints(const int *values, int count)
{
    for (int i = 0; i < count; ++i)
        checksum += values[i];
}

static void log_collective(const char *function, long long bytes, int root_world_rank)
{
    if (root_world_rank == NO_ROOT)
        log_call(function, bytes);
    else
        log_call_peer(function, bytes, root_world_rank);
}

/* One collective: the blocking call, or (when the variable `nonblocking` in scope is set) its
 * non-blocking twin completed at once with MPI_Wait; logged with `bytes` and the root's world rank
 * (or NO_ROOT). Written as a macro so each collective's arguments appear once for both forms. */
#define COLLECTIVE(blocking_call, nonblocking_call, bytes, root_world_rank, ...)                                      \
    do {                                                                                                              \
        if (nonblocking) {                                                                                            \
            MPI_Request request_;                                                                                     \
            nonblocking_call(__VA_ARGS__, &request_);                                                                 \
            log_collective(#nonblocking_call, (bytes), (root_world_rank));                                            \
            MPI_Wait(&request_, MPI_STATUS_IGNORE);                                                                   \
            log_completion_of("MPI_Wait", #nonblocking_call);                                                         \
        } else {                                                                                                      \
            blocking_call(__VA_ARGS__);                                                                               \
            log_collective(#blocking_call, (bytes), (root_world_rank));                                               \
        }                                                                                                             \
    } while (0)

/* The world rank of every member of `comm` (the log names peers by world rank); caller frees. */
static int *world_ranks_of(MPI_Comm comm, int *comm_size)
{
    MPI_Comm_size(comm, comm_size);
    log_call("MPI_Comm_size", 0);
    MPI_Group group;
    MPI_Comm_group(comm, &group);
    log_call("MPI_Comm_group", 0);
    int *comm_ranks = malloc(*comm_size * sizeof(int));
    int *world = malloc(*comm_size * sizeof(int));
    for (int i = 0; i < *comm_size; ++i)
        comm_ranks[i] = i;
    MPI_Group_translate_ranks(group, *comm_size, comm_ranks, world_group, world);
    log_call("MPI_Group_translate_ranks", 0);
    MPI_Group_free(&group);
    log_call("MPI_Group_free", 0);
    free(comm_ranks);
    return world;
}

static void free_comm(MPI_Comm *comm)
{
    MPI_Comm_free(comm);
    log_call("MPI_Comm_free", 0);
}

/* ---- point to point ------------------------------------------------------------------------------ */

/* Every send mode once, each to the right neighbour, received from the left by a receive posted
 * before the send (so Rsend is legal and nothing depends on buffering). */
static void send_modes(void)
{
    enum { LENGTH = 5 };
    const long long bytes = LENGTH * INT_BYTES;
    int out[LENGTH], in[LENGTH];
    for (int i = 0; i < LENGTH; ++i)
        out[i] = rank * 10 + i;

    /* Bsend and Ibsend need room for two messages in the attached buffer. */
    const int buffer_size = 2 * (LENGTH * sizeof(int) + MPI_BSEND_OVERHEAD);
    void *bsend_buffer = malloc(buffer_size);
    MPI_Buffer_attach(bsend_buffer, buffer_size);
    log_call("MPI_Buffer_attach", buffer_size); /* the buffer's size, which replay attaches again */

    const char *blocking[] = {"MPI_Send", "MPI_Ssend", "MPI_Rsend", "MPI_Bsend"};
    for (int mode = 0; mode < 4; ++mode) {
        MPI_Request receive;
        MPI_Irecv(in, LENGTH, MPI_INT, left, TAG_SEND_MODES + mode, MPI_COMM_WORLD, &receive);
        log_recv("MPI_Irecv", bytes, left, TAG_SEND_MODES + mode);
        MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted before any Rsend */
        log_call("MPI_Barrier", 0);
        if (mode == 0)
            MPI_Send(out, LENGTH, MPI_INT, right, TAG_SEND_MODES + mode, MPI_COMM_WORLD);
        else if (mode == 1)
            MPI_Ssend(out, LENGTH, MPI_INT, right, TAG_SEND_MODES + mode, MPI_COMM_WORLD);
        else if (mode == 2)
            MPI_Rsend(out, LENGTH, MPI_INT, right, TAG_SEND_MODES + mode, MPI_COMM_WORLD);
        else
            MPI_Bsend(out, LENGTH, MPI_INT, right, TAG_SEND_MODES + mode, MPI_COMM_WORLD);
        log_send(blocking[mode], bytes, right, TAG_SEND_MODES + mode);
        MPI_Wait(&receive, MPI_STATUS_IGNORE);
        log_completion("MPI_Wait", 1);
        add_ints(in, LENGTH);
    }

    const char *nonblocking[] = {"MPI_Isend", "MPI_Issend", "MPI_Irsend", "MPI_Ibsend"};
    for (int mode = 0; mode < 4; ++mode) {
        MPI_Request requests[2];
        const int tag = TAG_SEND_MODES + 4 + mode;
        MPI_Irecv(in, LENGTH, MPI_INT, left, tag, MPI_COMM_WORLD, &requests[0]);
        log_recv("MPI_Irecv", bytes, left, tag);
        MPI_Barrier(MPI_COMM_WORLD);
        log_call("MPI_Barrier", 0);
        if (mode == 0)
            MPI_Isend(out, LENGTH, MPI_INT, right, tag, MPI_COMM_WORLD, &requests[1]);
        else if (mode == 1)
            MPI_Issend(out, LENGTH, MPI_INT, right, tag, MPI_COMM_WORLD, &requests[1]);
        else if (mode == 2)
            MPI_Irsend(out, LENGTH, MPI_INT, right, tag, MPI_COMM_WORLD, &requests[1]);
        else
            MPI_Ibsend(out, LENGTH, MPI_INT, right, tag, MPI_COMM_WORLD, &requests[1]);
        log_send(nonblocking[mode], bytes, right, tag);
        MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
        log_completion("MPI_Waitall", 2);
        add_ints(in, LENGTH);
    }

    /* A blocking receive, and a wildcard one without a status: the tracer must substitute its own to
     * see that it matched the left neighbour. */
    MPI_Request send;
    MPI_Isend(out, LENGTH, MPI_INT, right, TAG_SEND_MODES + 8, MPI_COMM_WORLD, &send);
    log_send("MPI_Isend", bytes, right, TAG_SEND_MODES + 8);
    MPI_Recv(in, LENGTH, MPI_INT, left, TAG_SEND_MODES + 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    log_recv("MPI_Recv", bytes, left, TAG_SEND_MODES + 8);
    add_ints(in, LENGTH);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    log_completion("MPI_Wait", 1);

    MPI_Isend(out, 2, MPI_INT, right, TAG_WILDCARD_NO_STATUS, MPI_COMM_WORLD, &send);
    log_send("MPI_Isend", 2 * INT_BYTES, right, TAG_WILDCARD_NO_STATUS);
    /* The capacity counts, not what arrives. */
    MPI_Recv(in, LENGTH, MPI_INT, MPI_ANY_SOURCE, TAG_WILDCARD_NO_STATUS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    log_recv_matched("MPI_Recv", bytes, LOG_ANY_SOURCE, TAG_WILDCARD_NO_STATUS, left, TAG_WILDCARD_NO_STATUS);
    add_ints(in, 2);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    log_completion("MPI_Wait", 1);

    void *detached;
    int detached_size;
    MPI_Buffer_detach(&detached, &detached_size);
    log_call("MPI_Buffer_detach", 0);
    free(detached);
}

static void sendrecv_and_probes(void)
{
    int out[3] = {rank, rank + 1, rank + 2}, in[4];
    MPI_Status status;

    /* Send side 3 ints, receive side the capacity of 4. */
    MPI_Sendrecv(out, 3, MPI_INT, right, TAG_SENDRECV, in, 4, MPI_INT, left, TAG_SENDRECV, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    log_sendrecv("MPI_Sendrecv", 3 * INT_BYTES + 4 * INT_BYTES, right, TAG_SENDRECV, left, TAG_SENDRECV, 0, 0);
    add_ints(in, 3);

    MPI_Sendrecv(out, 1, MPI_INT, right, TAG_SENDRECV_WILDCARD, in, 1, MPI_INT, MPI_ANY_SOURCE,
                 TAG_SENDRECV_WILDCARD, MPI_COMM_WORLD, &status);
    log_sendrecv("MPI_Sendrecv", 2 * INT_BYTES, right, TAG_SENDRECV_WILDCARD, LOG_ANY_SOURCE, TAG_SENDRECV_WILDCARD,
                 status.MPI_SOURCE, status.MPI_TAG);
    add_ints(in, 1);

    /* Sendrecv_replace sends and receives its one buffer: count x type on each side, as a Sendrecv. */
    int buffer[4] = {rank, 2 * rank, 3 * rank, 4 * rank};
    MPI_Sendrecv_replace(buffer, 4, MPI_INT, right, TAG_REPLACE, left, TAG_REPLACE, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    log_sendrecv("MPI_Sendrecv_replace", 2 * 4 * INT_BYTES, right, TAG_REPLACE, left, TAG_REPLACE, 0, 0);
    add_ints(buffer, 4);
    /* Wildcard source and tag: the only message on its way to this rank now is this one from the left
     * (the left neighbour's next message to it, TAG_PROBE, comes after it: MPI does not overtake). */
    MPI_Sendrecv_replace(buffer, 4, MPI_INT, right, TAG_REPLACE_WILDCARD, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                         &status);
    log_sendrecv("MPI_Sendrecv_replace", 2 * 4 * INT_BYTES, right, TAG_REPLACE_WILDCARD, LOG_ANY_SOURCE, LOG_ANY_TAG,
                 status.MPI_SOURCE, status.MPI_TAG);
    add_ints(buffer, 4);

    /* Probe a message from the left; Iprobe the same with a wildcard (it has arrived, but polling is
     * how real codes do it, so every call is logged); then receive it. */
    MPI_Request send;
    MPI_Isend(out, 3, MPI_INT, right, TAG_PROBE, MPI_COMM_WORLD, &send);
    log_send("MPI_Isend", 3 * INT_BYTES, right, TAG_PROBE);
    MPI_Probe(left, TAG_PROBE, MPI_COMM_WORLD, &status);
    log_recv("MPI_Probe", 0, left, TAG_PROBE);
    int flag = 0;
    while (!flag) {
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_PROBE, MPI_COMM_WORLD, &flag, &status);
        if (flag)
            log_recv_status("MPI_Iprobe", 0, MPI_ANY_SOURCE, TAG_PROBE, &status);
        else
            log_recv("MPI_Iprobe", 0, LOG_ANY_SOURCE, TAG_PROBE);
    }
    int count;
    MPI_Get_count(&status, MPI_INT, &count);
    log_call("MPI_Get_count", 0);
    MPI_Recv(in, count, MPI_INT, status.MPI_SOURCE, TAG_PROBE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    log_recv("MPI_Recv", count * INT_BYTES, status.MPI_SOURCE, TAG_PROBE);
    add_ints(in, count);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    log_completion("MPI_Wait", 1);

    /* A wildcard probe, whose match is reported at the call. */
    MPI_Isend(out, 2, MPI_INT, right, TAG_PROBE_WILDCARD, MPI_COMM_WORLD, &send);
    log_send("MPI_Isend", 2 * INT_BYTES, right, TAG_PROBE_WILDCARD);
    MPI_Probe(MPI_ANY_SOURCE, TAG_PROBE_WILDCARD, MPI_COMM_WORLD, &status);
    log_recv_status("MPI_Probe", 0, MPI_ANY_SOURCE, TAG_PROBE_WILDCARD, &status);
    MPI_Recv(in, 2, MPI_INT, status.MPI_SOURCE, TAG_PROBE_WILDCARD, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    log_recv("MPI_Recv", 2 * INT_BYTES, status.MPI_SOURCE, TAG_PROBE_WILDCARD);
    add_ints(in, 2);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    log_completion("MPI_Wait", 1);

    /* Sends and receives with MPI_PROC_NULL complete at once and move nothing, but they are calls. */
    MPI_Send(out, 3, MPI_INT, MPI_PROC_NULL, TAG_PROBE, MPI_COMM_WORLD);
    log_send("MPI_Send", 3 * INT_BYTES, LOG_PROC_NULL, TAG_PROBE);
    MPI_Recv(in, 3, MPI_INT, MPI_PROC_NULL, TAG_PROBE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    log_recv("MPI_Recv", 3 * INT_BYTES, LOG_PROC_NULL, TAG_PROBE);
}

/* A receive that never matches, cancelled: the tracer records MPI_Cancel (its outcome shows at the
 * completion) and MPI_Test_cancelled by name only, and the MPI_Wait that completes the cancelled receive reports no match. The four calls
 * are logged once MPI_Test_cancelled told whether the cancel won. */
static void cancellation(void)
{
    int never;
    MPI_Request request;
    MPI_Status status;
    MPI_Irecv(&never, 1, MPI_INT, left, TAG_NEVER_SENT, MPI_COMM_WORLD, &request);
    MPI_Cancel(&request);
    MPI_Wait(&request, &status);
    int cancelled;
    MPI_Test_cancelled(&status, &cancelled);
    log_recv_cancelled("MPI_Irecv", INT_BYTES, left, TAG_NEVER_SENT, cancelled);
    log_call("MPI_Cancel", 0);
    log_completion_cancelled("MPI_Wait", 1, cancelled); /* a cancelled request is complete too */
    log_call("MPI_Test_cancelled", 0);
    checksum += cancelled;
}

/* ---- completions ---------------------------------------------------------------------------------- */

enum { EXCHANGE_REQUESTS = 4, EXCHANGE_WILDCARDS = 2 };

/* Two wildcard receives (requests 0 and 1) and a send to each neighbour (2 and 3), all with `tag`:
 * the receives match {left, right} in either order, so what matched is a multiset the program knows
 * only from the statuses, and the sum received is the same either way. */
static void post_exchange(int tag, MPI_Request requests[EXCHANGE_REQUESTS], int values[EXCHANGE_REQUESTS])
{
    values[2] = values[3] = 1000 * tag + rank;
    for (int i = 0; i < EXCHANGE_WILDCARDS; ++i) {
        MPI_Irecv(&values[i], 1, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &requests[i]);
        log_recv("MPI_Irecv", INT_BYTES, LOG_ANY_SOURCE, tag);
    }
    MPI_Isend(&values[2], 1, MPI_INT, left, tag, MPI_COMM_WORLD, &requests[2]);
    log_send("MPI_Isend", INT_BYTES, left, tag);
    MPI_Isend(&values[3], 1, MPI_INT, right, tag, MPI_COMM_WORLD, &requests[3]);
    log_send("MPI_Isend", INT_BYTES, right, tag);
}

/* The sources of the wildcard receives among `completed` request indices. */
static int wildcard_sources(int completed, const int *indices, const MPI_Status *statuses, int *sources)
{
    int found = 0;
    for (int i = 0; i < completed; ++i)
        if (indices[i] < EXCHANGE_WILDCARDS)
            sources[found++] = statuses[i].MPI_SOURCE;
    return found;
}

static const int all_indices[EXCHANGE_REQUESTS] = {0, 1, 2, 3};

static void completions(void)
{
    MPI_Request requests[EXCHANGE_REQUESTS];
    MPI_Status statuses[EXCHANGE_REQUESTS], status;
    int values[EXCHANGE_REQUESTS], sources[EXCHANGE_REQUESTS], indices[EXCHANGE_REQUESTS];
    int index, flag, outcount;

    post_exchange(TAG_COMPLETION + 0, requests, values);
    for (int i = 0; i < EXCHANGE_REQUESTS; ++i) {
        MPI_Wait(&requests[i], &status);
        log_completion_matched("MPI_Wait", 1, wildcard_sources(1, &i, &status, sources), sources);
    }
    add_ints(values, EXCHANGE_WILDCARDS);

    post_exchange(TAG_COMPLETION + 1, requests, values);
    MPI_Waitall(EXCHANGE_REQUESTS, requests, statuses);
    log_completion_matched("MPI_Waitall", EXCHANGE_REQUESTS,
                           wildcard_sources(EXCHANGE_REQUESTS, all_indices, statuses, sources), sources);
    add_ints(values, EXCHANGE_WILDCARDS);

    post_exchange(TAG_COMPLETION + 2, requests, values);
    for (int done = 0; done < EXCHANGE_REQUESTS; ++done) {
        MPI_Waitany(EXCHANGE_REQUESTS, requests, &index, &status);
        log_completion_matched("MPI_Waitany", 1, wildcard_sources(1, &index, &status, sources), sources);
    }
    add_ints(values, EXCHANGE_WILDCARDS);

    post_exchange(TAG_COMPLETION + 3, requests, values);
    for (int done = 0; done < EXCHANGE_REQUESTS; done += outcount) {
        MPI_Waitsome(EXCHANGE_REQUESTS, requests, &outcount, indices, statuses);
        log_completion_matched("MPI_Waitsome", outcount, wildcard_sources(outcount, indices, statuses, sources),
                               sources);
    }
    add_ints(values, EXCHANGE_WILDCARDS);

    /* The Test family polls, so how many calls it takes depends on timing: the log counts them all. */
    post_exchange(TAG_COMPLETION + 4, requests, values);
    for (int i = 0; i < EXCHANGE_REQUESTS; ++i) {
        do {
            MPI_Test(&requests[i], &flag, &status);
            log_completion_matched("MPI_Test", flag, flag ? wildcard_sources(1, &i, &status, sources) : 0, sources);
        } while (!flag);
    }
    add_ints(values, EXCHANGE_WILDCARDS);

    post_exchange(TAG_COMPLETION + 5, requests, values);
    do {
        MPI_Testall(EXCHANGE_REQUESTS, requests, &flag, statuses);
        log_completion_matched("MPI_Testall", flag ? EXCHANGE_REQUESTS : 0,
                               flag ? wildcard_sources(EXCHANGE_REQUESTS, all_indices, statuses, sources) : 0,
                               sources);
    } while (!flag);
    add_ints(values, EXCHANGE_WILDCARDS);

    post_exchange(TAG_COMPLETION + 6, requests, values);
    for (int done = 0; done < EXCHANGE_REQUESTS;) {
        MPI_Testany(EXCHANGE_REQUESTS, requests, &index, &flag, &status);
        const int completed = flag && index != MPI_UNDEFINED;
        log_completion_matched("MPI_Testany", completed,
                               completed ? wildcard_sources(1, &index, &status, sources) : 0, sources);
        done += completed;
    }
    add_ints(values, EXCHANGE_WILDCARDS);

    post_exchange(TAG_COMPLETION + 7, requests, values);
    for (int done = 0; done < EXCHANGE_REQUESTS; done += outcount) {
        MPI_Testsome(EXCHANGE_REQUESTS, requests, &outcount, indices, statuses);
        log_completion_matched("MPI_Testsome", outcount, wildcard_sources(outcount, indices, statuses, sources),
                               sources);
    }
    add_ints(values, EXCHANGE_WILDCARDS);

    /* A wildcard receive completed by MPI_Wait without a status: only the left neighbour sends this
     * tag, so the program knows the match; the tracer must find it with a status of its own. */
    MPI_Irecv(&values[0], 1, MPI_INT, MPI_ANY_SOURCE, TAG_COMPLETION + 8, MPI_COMM_WORLD, &requests[0]);
    log_recv("MPI_Irecv", INT_BYTES, LOG_ANY_SOURCE, TAG_COMPLETION + 8);
    MPI_Send(&rank, 1, MPI_INT, right, TAG_COMPLETION + 8, MPI_COMM_WORLD);
    log_send("MPI_Send", INT_BYTES, right, TAG_COMPLETION + 8);
    MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
    log_completion_matched("MPI_Wait", 1, 1, &left);
    add_ints(values, 1);
}

/* ---- collectives ---------------------------------------------------------------------------------- */

/* Every collective of the table (or, with `nonblocking`, its MPI_I twin) on `comm`, rooted ones at
 * `root` (a rank of `comm`). Arguments significant only at the root are NULL / MPI_DATATYPE_NULL
 * elsewhere, as real codes pass them. */
static void collectives(MPI_Comm comm, int root, int nonblocking)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    log_call("MPI_Comm_rank", 0);
    int *world_of = world_ranks_of(comm, &p);
    const int root_world = world_of[root];
    const int is_root = me == root;

    /* Per-rank counts for the v variants: rank i contributes i + 1 ints. */
    int *counts = malloc(p * sizeof(int)), *displs = malloc(p * sizeof(int));
    int total = 0;
    for (int i = 0; i < p; ++i) {
        counts[i] = i + 1;
        displs[i] = total;
        total += counts[i];
    }
    const int mine = me + 1;
    int *out = malloc(3 * (size_t)(p + total) * sizeof(int)), *in = calloc(3 * (size_t)(p + total), sizeof(int));
    for (int i = 0; i < 3 * (p + total); ++i)
        out[i] = me * 100 + i;

    COLLECTIVE(MPI_Barrier, MPI_Ibarrier, 0, NO_ROOT, comm);

    int header[3] = {is_root ? 7 : 0, is_root ? 11 : 0, is_root ? 13 : 0};
    COLLECTIVE(MPI_Bcast, MPI_Ibcast, 3 * INT_BYTES, root_world, header, 3, MPI_INT, root, comm);
    add_ints(header, 3);

    double pair[2] = {me + 0.5, 2.0 * me}, pair_sum[2] = {0.0, 0.0};
    COLLECTIVE(MPI_Reduce, MPI_Ireduce, 2 * DOUBLE_BYTES, root_world, pair, pair_sum, 2, MPI_DOUBLE, MPI_SUM, root,
               comm);
    checksum += (long long)(pair_sum[0] + pair_sum[1]);

    long long squares[2] = {me, (long long)me * me}, square_sums[2];
    COLLECTIVE(MPI_Allreduce, MPI_Iallreduce, 2 * LONG_BYTES, NO_ROOT, squares, square_sums, 2, MPI_LONG_LONG,
               MPI_SUM, comm);
    checksum += square_sums[0] + square_sums[1];

    /* Gather: the receive side (recvcount x type, not times the ranks) counts at the root only. */
    COLLECTIVE(MPI_Gather, MPI_Igather, (is_root ? 4 : 2) * INT_BYTES, root_world, out, 2, MPI_INT, in, 2, MPI_INT,
               root, comm);
    if (is_root)
        add_ints(in, 2 * p);

    COLLECTIVE(MPI_Gatherv, MPI_Igatherv, (mine + (is_root ? total : 0)) * INT_BYTES, root_world, out, mine, MPI_INT,
               in, is_root ? counts : NULL, is_root ? displs : NULL, is_root ? MPI_INT : MPI_DATATYPE_NULL, root,
               comm);
    if (is_root)
        add_ints(in, total);

    /* Scatter: the send side counts at the root only. */
    COLLECTIVE(MPI_Scatter, MPI_Iscatter, (is_root ? 4 : 2) * INT_BYTES, root_world, out, 2, MPI_INT, in, 2, MPI_INT,
               root, comm);
    add_ints(in, 2);

    COLLECTIVE(MPI_Scatterv, MPI_Iscatterv, ((is_root ? total : 0) + mine) * INT_BYTES, root_world, out,
               is_root ? counts : NULL, is_root ? displs : NULL, is_root ? MPI_INT : MPI_DATATYPE_NULL, in, mine,
               MPI_INT, root, comm);
    add_ints(in, mine);

    double mine_double = me * 0.25, *doubles = calloc(p, sizeof(double));
    COLLECTIVE(MPI_Allgather, MPI_Iallgather, 2 * DOUBLE_BYTES, NO_ROOT, &mine_double, 1, MPI_DOUBLE, doubles, 1,
               MPI_DOUBLE, comm);
    for (int i = 0; i < p; ++i)
        checksum += (long long)(4 * doubles[i]);

    COLLECTIVE(MPI_Allgatherv, MPI_Iallgatherv, (mine + total) * INT_BYTES, NO_ROOT, out, mine, MPI_INT, in, counts,
               displs, MPI_INT, comm);
    add_ints(in, total);

    COLLECTIVE(MPI_Alltoall, MPI_Ialltoall, 4 * INT_BYTES, NO_ROOT, out, 2, MPI_INT, in, 2, MPI_INT, comm);
    add_ints(in, 2 * p);

    /* Alltoallv: rank i sends 1 + (i + 2j) % 3 ints to rank j. */
    int *send_counts = malloc(p * sizeof(int)), *send_displs = malloc(p * sizeof(int));
    int *recv_counts = malloc(p * sizeof(int)), *recv_displs = malloc(p * sizeof(int));
    int sent = 0, received = 0;
    for (int j = 0; j < p; ++j) {
        send_counts[j] = 1 + (me + 2 * j) % 3;
        recv_counts[j] = 1 + (j + 2 * me) % 3;
        send_displs[j] = sent;
        recv_displs[j] = received;
        sent += send_counts[j];
        received += recv_counts[j];
    }
    COLLECTIVE(MPI_Alltoallv, MPI_Ialltoallv, (sent + received) * INT_BYTES, NO_ROOT, out, send_counts, send_displs,
               MPI_INT, in, recv_counts, recv_displs, MPI_INT, comm);
    add_ints(in, received);

    /* Alltoallw: one element per pair, a double between ranks of different parity, an int otherwise
     * (the same type on both sides of each pair), at 8-byte slots. */
    MPI_Datatype *types = malloc(p * sizeof(MPI_Datatype));
    int *ones = malloc(p * sizeof(int)), *byte_displs = malloc(p * sizeof(int));
    long long w_bytes = 0;
    unsigned char *w_out = calloc(p, 8), *w_in = calloc(p, 8);
    for (int j = 0; j < p; ++j) {
        const int as_double = (me + j) % 2;
        types[j] = as_double ? MPI_DOUBLE : MPI_INT;
        ones[j] = 1;
        byte_displs[j] = 8 * j;
        w_bytes += 2 * (as_double ? DOUBLE_BYTES : INT_BYTES);
        const int value = me * 10 + j;
        const double value_double = value;
        if (as_double)
            memcpy(w_out + 8 * j, &value_double, sizeof value_double);
        else
            memcpy(w_out + 8 * j, &value, sizeof value);
    }
    COLLECTIVE(MPI_Alltoallw, MPI_Ialltoallw, w_bytes, NO_ROOT, w_out, ones, byte_displs, types, w_in, ones,
               byte_displs, types, comm);
    for (int j = 0; j < p; ++j) {
        int value;
        double value_double;
        if (types[j] == MPI_DOUBLE) {
            memcpy(&value_double, w_in + 8 * j, sizeof value_double);
            value = (int)value_double;
        } else {
            memcpy(&value, w_in + 8 * j, sizeof value);
        }
        checksum += value;
    }

    /* Reduce_scatter has a receive side only: the sum of recvcounts. */
    COLLECTIVE(MPI_Reduce_scatter, MPI_Ireduce_scatter, total * INT_BYTES, NO_ROOT, out, in, counts, MPI_INT, MPI_SUM,
               comm);
    add_ints(in, mine);

    COLLECTIVE(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, 2 * INT_BYTES, NO_ROOT, out, in, 2, MPI_INT,
               MPI_SUM, comm);
    add_ints(in, 2);

    long long prefix = 0, value = me + 1;
    COLLECTIVE(MPI_Scan, MPI_Iscan, LONG_BYTES, NO_ROOT, &value, &prefix, 1, MPI_LONG_LONG, MPI_SUM, comm);
    checksum += prefix;
    prefix = 0;
    COLLECTIVE(MPI_Exscan, MPI_Iexscan, LONG_BYTES, NO_ROOT, &value, &prefix, 1, MPI_LONG_LONG, MPI_SUM, comm);
    if (me > 0) /* undefined on rank 0 */
        checksum += prefix;

    free(types);
    free(ones);
    free(byte_displs);
    free(w_out);
    free(w_in);
    free(send_counts);
    free(send_displs);
    free(recv_counts);
    free(recv_displs);
    free(doubles);
    free(out);
    free(in);
    free(counts);
    free(displs);
    free(world_of);
}

/* MPI_IN_PLACE as sendbuf: no send side for operations that also receive (Allgather, Gather at the
 * root, Alltoall), while Reduce/Allreduce/Scan/Reduce_scatter_block keep their one buffer's bytes.
 * The ignored send arguments are 0 / MPI_DATATYPE_NULL, as many codes pass them. */
static void in_place_collectives(void)
{
    const int root = size - 1;
    long long sums[2] = {rank, 1};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", 2 * LONG_BYTES);
    checksum += sums[0] + sums[1];

    MPI_Request request;
    sums[0] = rank;
    sums[1] = 2;
    MPI_Iallreduce(MPI_IN_PLACE, sums, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD, &request);
    log_call("MPI_Iallreduce", 2 * LONG_BYTES);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    log_completion("MPI_Wait", 1);
    checksum += sums[0] + sums[1];

    long long reduced[2] = {rank, 3};
    MPI_Reduce(rank == root ? MPI_IN_PLACE : reduced, reduced, 2, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD);
    log_call_peer("MPI_Reduce", 2 * LONG_BYTES, root);
    if (rank == root)
        checksum += reduced[0] + reduced[1];

    int *gathered = calloc(2 * (size_t)size, sizeof(int));
    gathered[2 * rank] = rank;
    gathered[2 * rank + 1] = -rank;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered, 2, MPI_INT, MPI_COMM_WORLD);
    log_call("MPI_Allgather", 2 * INT_BYTES);
    add_ints(gathered, 2 * size);

    /* Gather in place: the root has only a receive side, the others only a send side. */
    int contribution[2] = {rank * 3, rank * 5};
    if (rank == root) {
        memcpy(&gathered[2 * root], contribution, sizeof contribution);
        MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered, 2, MPI_INT, root, MPI_COMM_WORLD);
        add_ints(gathered, 2 * size);
    } else {
        MPI_Gather(contribution, 2, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
    }
    log_call_peer("MPI_Gather", 2 * INT_BYTES, root);

    int *exchanged = malloc(size * sizeof(int));
    for (int j = 0; j < size; ++j)
        exchanged[j] = rank * 100 + j;
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, exchanged, 1, MPI_INT, MPI_COMM_WORLD);
    log_call("MPI_Alltoall", INT_BYTES);
    add_ints(exchanged, size);

    for (int j = 0; j < size; ++j)
        exchanged[j] = j;
    MPI_Reduce_scatter_block(MPI_IN_PLACE, exchanged, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Reduce_scatter_block", INT_BYTES);
    add_ints(exchanged, 1);

    long long prefix = rank;
    MPI_Scan(MPI_IN_PLACE, &prefix, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Scan", LONG_BYTES);
    checksum += prefix;

    free(gathered);
    free(exchanged);
}

/* ---- neighbour collectives ------------------------------------------------------------------------ */

/* Every neighbour collective (or its MPI_I twin) on a 2-D Cartesian communicator that is not
 * periodic: 4 neighbour slots per rank (minus, plus of each dimension), MPI_PROC_NULL on the edges.
 * Per-neighbour arrays have one entry per slot, so the bytes sum over the 4 slots, not over the
 * communicator. */
static void neighbor_collectives(MPI_Comm cart, int nonblocking)
{
    enum { SLOTS = 4 };
    int out[2 * SLOTS], in[4 * SLOTS];
    for (int i = 0; i < 2 * SLOTS; ++i)
        out[i] = rank * 10 + i;

    memset(in, 0, sizeof in);
    COLLECTIVE(MPI_Neighbor_allgather, MPI_Ineighbor_allgather, 4 * INT_BYTES, NO_ROOT, out, 2, MPI_INT, in, 2,
               MPI_INT, cart);
    add_ints(in, 2 * SLOTS);

    int twos[SLOTS] = {2, 2, 2, 2}, slot_displs[SLOTS] = {0, 2, 4, 6};
    memset(in, 0, sizeof in);
    COLLECTIVE(MPI_Neighbor_allgatherv, MPI_Ineighbor_allgatherv, (2 + 2 * SLOTS) * INT_BYTES, NO_ROOT, out, 2,
               MPI_INT, in, twos, slot_displs, MPI_INT, cart);
    add_ints(in, 2 * SLOTS);

    memset(in, 0, sizeof in);
    COLLECTIVE(MPI_Neighbor_alltoall, MPI_Ineighbor_alltoall, 2 * INT_BYTES, NO_ROOT, out, 1, MPI_INT, in, 1,
               MPI_INT, cart);
    add_ints(in, SLOTS);

    /* Alltoallv: a rank sends 1 + 2d ints towards minus in dimension d and 2 + 2d towards plus; its
     * minus neighbour sent it the plus amount, and the other way round. */
    int send_counts[SLOTS] = {1, 2, 3, 4}, recv_counts[SLOTS] = {2, 1, 4, 3};
    int send_displs[SLOTS] = {0, 1, 3, 6}, recv_displs[SLOTS] = {0, 2, 3, 7};
    int wide_out[10];
    for (int i = 0; i < 10; ++i)
        wide_out[i] = rank + i;
    memset(in, 0, sizeof in);
    COLLECTIVE(MPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv, (10 + 10) * INT_BYTES, NO_ROOT, wide_out,
               send_counts, send_displs, MPI_INT, in, recv_counts, recv_displs, MPI_INT, cart);
    add_ints(in, 10);

    /* Alltoallw: ints along dimension 0, doubles along dimension 1, at 8-byte slots. */
    MPI_Datatype types[SLOTS] = {MPI_INT, MPI_INT, MPI_DOUBLE, MPI_DOUBLE};
    int ones[SLOTS] = {1, 1, 1, 1};
    MPI_Aint byte_displs[SLOTS] = {0, 8, 16, 24};
    unsigned char w_out[32] = {0}, w_in[32] = {0};
    for (int slot = 0; slot < SLOTS; ++slot) {
        const int value = rank + slot;
        const double value_double = value;
        if (slot < 2)
            memcpy(w_out + 8 * slot, &value, sizeof value);
        else
            memcpy(w_out + 8 * slot, &value_double, sizeof value_double);
    }
    COLLECTIVE(MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw, 2 * (2 * INT_BYTES + 2 * DOUBLE_BYTES), NO_ROOT,
               w_out, ones, byte_displs, types, w_in, ones, byte_displs, types, cart);
    for (int slot = 0; slot < SLOTS; ++slot) {
        int value;
        double value_double;
        if (slot < 2) {
            memcpy(&value, w_in + 8 * slot, sizeof value);
        } else {
            memcpy(&value_double, w_in + 8 * slot, sizeof value_double);
            value = (int)value_double;
        }
        checksum += value;
    }
}

/* ---- communicators -------------------------------------------------------------------------------- */

/* Every constructor of the table, each communicator used once and freed. */
static void communicators(void)
{
    MPI_Comm dup, dup_with_info, parity, shared, evens = MPI_COMM_NULL, odds = MPI_COMM_NULL;
    MPI_Comm cart, cart_row, graph, adjacent, distributed, side, inter, merged;

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    log_call("MPI_Comm_dup", 0);
    MPI_Barrier(dup);
    log_call("MPI_Barrier", 0);

    MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &dup_with_info);
    log_call("MPI_Comm_dup_with_info", 0);
    int one = 1, ranks_counted = 0;
    MPI_Allreduce(&one, &ranks_counted, 1, MPI_INT, MPI_SUM, dup_with_info);
    log_call("MPI_Allreduce", INT_BYTES);
    checksum += ranks_counted;

    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity);
    log_call("MPI_Comm_split", 0);
    MPI_Barrier(parity);
    log_call("MPI_Barrier", 0);

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
    log_call("MPI_Comm_split_type", 0);
    MPI_Barrier(shared);
    log_call("MPI_Barrier", 0);

    /* Comm_create (collective over the world) makes the even ranks' communicator; Comm_create_group
     * (collective over the group only) the odd ranks'. Rank 0 of each is world rank 0 and 1. */
    int *members = malloc(size * sizeof(int));
    int evens_count = 0, odds_count = 0;
    for (int i = 0; i < size; i += 2)
        members[evens_count++] = i;
    MPI_Group even_group, odd_group;
    MPI_Group_incl(world_group, evens_count, members, &even_group);
    log_call("MPI_Group_incl", 0);
    for (int i = 1; i < size; i += 2)
        members[odds_count++] = i;
    MPI_Group_incl(world_group, odds_count, members, &odd_group);
    log_call("MPI_Group_incl", 0);
    MPI_Comm_create(MPI_COMM_WORLD, even_group, &evens);
    log_call("MPI_Comm_create", 0);
    if (rank % 2 == 1) {
        MPI_Comm_create_group(MPI_COMM_WORLD, odd_group, TAG_INTERCOMM + 1, &odds);
        log_call("MPI_Comm_create_group", 0);
    }
    MPI_Group_free(&even_group);
    log_call("MPI_Group_free", 0);
    MPI_Group_free(&odd_group);
    log_call("MPI_Group_free", 0);
    int greeting = rank == 0 || rank == 1 ? 100 + rank : 0;
    if (evens != MPI_COMM_NULL) {
        MPI_Bcast(&greeting, 1, MPI_INT, 0, evens);
        log_call_peer("MPI_Bcast", INT_BYTES, 0);
    } else {
        MPI_Bcast(&greeting, 1, MPI_INT, 0, odds);
        log_call_peer("MPI_Bcast", INT_BYTES, 1);
    }
    checksum += greeting;
    free(members);

    int dims[2] = {0, 0}, periods[2] = {0, 0}, keep_columns[2] = {0, 1};
    MPI_Dims_create(size, 2, dims);
    log_call("MPI_Dims_create", 0);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    log_call("MPI_Cart_create", 0);
    neighbor_collectives(cart, 0);
    neighbor_collectives(cart, 1);
    MPI_Cart_sub(cart, keep_columns, &cart_row);
    log_call("MPI_Cart_sub", 0);
    int row_sum = 0;
    MPI_Allreduce(&rank, &row_sum, 1, MPI_INT, MPI_SUM, cart_row);
    log_call("MPI_Allreduce", INT_BYTES);
    checksum += row_sum;

    /* An undirected ring (one edge when there are only two ranks). */
    int *index = malloc(size * sizeof(int)), *edges = malloc(2 * (size_t)size * sizeof(int));
    const int degree = size == 2 ? 1 : 2;
    for (int i = 0; i < size; ++i) {
        index[i] = (i + 1) * degree;
        edges[i * degree] = (i + 1) % size;
        if (degree == 2)
            edges[i * degree + 1] = (i - 1 + size) % size;
    }
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &graph);
    log_call("MPI_Graph_create", 0);
    MPI_Barrier(graph);
    log_call("MPI_Barrier", 0);
    free(index);
    free(edges);

    /* A directed ring, given by each rank's own edges, and by arbitrary edges (here: its outgoing one).
     * Explicit weights rather than MPI_UNWEIGHTED: Open MPI defines that as a small integer cast to a
     * pointer, which GCC's -Wstringop-overread reports as a read from a zero-size region. */
    int weight = 1;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, &weight, 1, &right, &weight, MPI_INFO_NULL, 0,
                                   &adjacent);
    log_call("MPI_Dist_graph_create_adjacent", 0);
    int from_left = -1;
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, &from_left, 1, MPI_INT, adjacent);
    log_call("MPI_Neighbor_allgather", 2 * INT_BYTES);
    checksum += from_left;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &one, &right, &weight, MPI_INFO_NULL, 0, &distributed);
    log_call("MPI_Dist_graph_create", 0);
    MPI_Barrier(distributed);
    log_call("MPI_Barrier", 0);

    /* The lower and the upper half of the world, joined by an intercommunicator and merged back. */
    const int lower = rank < size / 2;
    MPI_Comm_split(MPI_COMM_WORLD, lower, rank, &side);
    log_call("MPI_Comm_split", 0);
    MPI_Intercomm_create(side, 0, MPI_COMM_WORLD, lower ? size / 2 : 0, TAG_INTERCOMM, &inter);
    log_call("MPI_Intercomm_create", 0);
    MPI_Intercomm_merge(inter, !lower, &merged);
    log_call("MPI_Intercomm_merge", 0);
    int merged_sum = 0;
    MPI_Allreduce(&rank, &merged_sum, 1, MPI_INT, MPI_SUM, merged);
    log_call("MPI_Allreduce", INT_BYTES);
    checksum += merged_sum;

    MPI_Comm *all[] = {&dup,  &dup_with_info, &parity,    &shared,      &evens, &odds, &cart, &cart_row,
                       &graph, &adjacent,     &distributed, &side, &inter, &merged};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        if (*all[i] != MPI_COMM_NULL)
            free_comm(all[i]);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    call_log_open(rank);
    log_call("MPI_Init_thread", 0);
    log_call("MPI_Comm_rank", 0);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    log_call("MPI_Comm_size", 0);
    if (size < 2) {
        fprintf(stderr, "coverage: needs at least 2 ranks\n");
        MPI_Finalize();
        log_call("MPI_Finalize", 0);
        call_log_close();
        return 1;
    }
    right = (rank + 1) % size;
    left = (rank - 1 + size) % size;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    log_call("MPI_Comm_group", 0);

    send_modes();
    sendrecv_and_probes();
    cancellation();
    completions();

    collectives(MPI_COMM_WORLD, 1 % size, 0);
    collectives(MPI_COMM_WORLD, 1 % size, 1);
    /* The same with ranks in reverse order: rank 0 of `reversed` is the last world rank. */
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &reversed);
    log_call("MPI_Comm_split", 0);
    collectives(reversed, 0, 0);
    collectives(reversed, 0, 1);
    free_comm(&reversed);

    in_place_collectives();
    communicators();

    long long total = 0;
    MPI_Reduce(&checksum, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    log_call_peer("MPI_Reduce", LONG_BYTES, 0);
    if (rank == 0)
        printf("coverage: ranks %d checksum %lld\n", size, total);

    MPI_Group_free(&world_group);
    log_call("MPI_Group_free", 0);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
