/* The test programs' own record of every MPI call they make: the truth the trace is checked against.
 *
 * If the environment variable CALL_LOG_DIR is set, each rank appends one line per MPI call, in the
 * order it made them, to $CALL_LOG_DIR/rank.<world rank>:
 *
 *     <MPI function name> <bytes> <peers comma-separated, or -> <matched sources comma-separated, or -> [key=value ...]
 *
 * Peers and matched sources are world ranks, or ANY_SOURCE / PROC_NULL / ROOT. After the four positional
 * fields come optional key=value fields (a line without them is still a valid line):
 *
 *     point-to-point (log_send, log_recv, log_recv_matched, log_sendrecv):
 *         tag=N            the tag given (the send tag of a Sendrecv); tag=ANY_TAG for a wildcard receive
 *         recv_tag=N       Sendrecv / Sendrecv_replace: the receive tag given (or ANY_TAG)
 *         matched_tag=N    what a wildcard-tag receive matched at this very call
 *     completions (log_completion, log_completion_matched), Wait/Test and all their variants:
 *         completed=N      how many requests the call completed: 0 for a Test that found nothing, the
 *                          active requests for Waitall/Testall, 1 for Wait/Waitany, outcount for
 *                          Waitsome/Testsome; requests on MPI_PROC_NULL count as requests
 *         of=MPI_X         (log_completion_of) the function that made the one request it completed,
 *                          where a replay cannot make that call (neighbour collectives)
 *         positions=P,Q    which requests it completed, as positions among the rank's pending requests
 *                          newest first (0: the one made last; src/trace/completion_set.hpp), ascending;
 *                          the Fortran programs log it (call_log.f90), check_sequence.py compares it
 *     persistent requests (log_start): each request an MPI_Start or MPI_Startall starts is one
 *     MPI_Start line, with the bytes, peer and tag of its init and
 *         started=MPI_X    the init that made the request (MPI_Send_init, MPI_Recv_init ...)
 *     calls that name a file (log_io_file): open, fopen, MPI_File_open ...
 *         file=NAME        the name as the program gave it (a name without blanks)
 *     collectives given MPI_IN_PLACE (log_in_place):
 *         in_place=1       the rank gave MPI_IN_PLACE for its send side (a scatter's root: its receive
 *                          side), which then carries no bytes; the line's bytes are the other side's
 *     cancelled receives and sends (log_recv_cancelled, log_send_cancelled, log_completion_cancelled),
 *     logged once the outcome is known:
 *         cancelled=N      on the MPI_Irecv or MPI_Isend: 1 if its cancel won; on the completion: how many
 *                          of the requests it completed were such receives or sends
 *
 * tests/mpi/check_calls.py totals the positional fields per rank and function; check_sequence.py
 * compares the lines in order with the trace, using the key=value fields. Plain C and stdio only: the
 * log must not make MPI calls of its own, or it would change what the tracer sees. Callers translate
 * MPI_ANY_SOURCE / MPI_PROC_NULL / MPI_ANY_TAG to the LOG_ values below (call_log_mpi.h does it for
 * C programs), so this header does not depend on mpi.h. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

/* Peer values that are not world ranks (LOG_ROOT: the root of a collective on an intercommunicator,
 * which passes MPI_ROOT), and the wildcard tag (negative, so no rank or tag can collide with them). */
enum { LOG_ANY_SOURCE = -1000001, LOG_PROC_NULL = -1000002, LOG_ANY_TAG = -1000003, LOG_ROOT = -1000004 };

static FILE *call_log_file = NULL;

/* Opens the log of this world rank. Called right after the first MPI_Comm_rank(MPI_COMM_WORLD), since
 * the file name needs the rank; MPI_Init and that MPI_Comm_rank are logged just after (the checker
 * compares per function, not in order). */
static inline void call_log_open(int world_rank)
{
    const char *dir = getenv("CALL_LOG_DIR");
    if (dir == NULL || dir[0] == '\0')
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/rank.%d", dir, world_rank);
    call_log_file = fopen(path, "a");
    if (call_log_file == NULL) {
        perror(path);
        exit(2);
    }
}

static inline void call_log_write_ranks(int count, const int *ranks)
{
    if (count == 0) {
        fputs(" -", call_log_file);
        return;
    }
    for (int i = 0; i < count; ++i) {
        fputc(i == 0 ? ' ' : ',', call_log_file);
        if (ranks[i] == LOG_ANY_SOURCE)
            fputs("ANY_SOURCE", call_log_file);
        else if (ranks[i] == LOG_PROC_NULL)
            fputs("PROC_NULL", call_log_file);
        else if (ranks[i] == LOG_ROOT)
            fputs("ROOT", call_log_file);
        else
            fprintf(call_log_file, "%d", ranks[i]);
    }
}

/* The four positional fields, without the end of the line: key=value fields may follow
 * (call_log_field), then call_log_end. Returns 0 when there is no log to write to. */
static inline int call_log_begin(const char *function, long long bytes, int peer_count, const int *peers,
                                 int matched_count, const int *matched)
{
    if (call_log_file == NULL)
        return 0;
    fprintf(call_log_file, "%s %lld", function, bytes);
    call_log_write_ranks(peer_count, peers);
    call_log_write_ranks(matched_count, matched);
    return 1;
}

/* One key=value field; a tag of LOG_ANY_TAG is written as ANY_TAG. */
static inline void call_log_field(const char *key, long long value)
{
    if (value == LOG_ANY_TAG)
        fprintf(call_log_file, " %s=ANY_TAG", key);
    else
        fprintf(call_log_file, " %s=%lld", key, value);
}

/* Where in the program's source the call is: the file as the compiler was given it (__FILE__) and the
 * call's line (tests/mpi/check_profile.py compares them with the profile's). */
static inline void call_log_source(const char *file, int line)
{
    fprintf(call_log_file, " source_file=%s source_line=%d", file, line);
}

static inline void call_log_end(void)
{
    fputc('\n', call_log_file);
}

/* The general form: any number of peers and of matched sources, no key=value fields. */
static inline void log_call_full(const char *function, long long bytes, int peer_count, const int *peers,
                          int matched_count, const int *matched)
{
    if (call_log_begin(function, bytes, peer_count, peers, matched_count, matched))
        call_log_end();
}

/* A call without peers: opaque calls (0 bytes), Barrier, non-rooted collectives. */
static inline void log_call(const char *function, long long bytes)
{
    log_call_full(function, bytes, 0, NULL, 0, NULL);
}

/* A call on a file (MPI-IO or POSIX I/O): no peers, `bytes` read or written. */
static inline void log_io(const char *function, long long bytes)
{
    log_call(function, bytes);
}

/* A call that names a file (an open, MPI_File_delete): `bytes` read or written, and the name as the
 * program gave it (tests/mpi/check_file_names.py compares it with the trace's). */
static inline void log_io_file(const char *function, long long bytes, const char *name)
{
    if (!call_log_begin(function, bytes, 0, NULL, 0, NULL))
        return;
    fprintf(call_log_file, " file=%s", name);
    call_log_end();
}

/* A call with one peer: a rooted collective (the root's world rank). */
static inline void log_call_peer(const char *function, long long bytes, int peer)
{
    log_call_full(function, bytes, 1, &peer, 0, NULL);
}

/* A collective this rank gave MPI_IN_PLACE (its send side, or a scatter root's receive side): `bytes`
 * the other side's, `root` the root's world rank where `rooted`. */
static inline void log_in_place(const char *function, long long bytes, int rooted, int root)
{
    if (!call_log_begin(function, bytes, rooted ? 1 : 0, &root, 0, NULL))
        return;
    call_log_field("in_place", 1);
    call_log_end();
}

/* A send of any mode to `dest` (a world rank or LOG_PROC_NULL) with `tag`. */
static inline void log_send(const char *function, long long bytes, int dest, int tag)
{
    if (!call_log_begin(function, bytes, 1, &dest, 0, NULL))
        return;
    call_log_field("tag", tag);
    call_log_end();
}

/* A receive (or probe, with 0 bytes) that matched nothing at this call: one from a given source with a
 * given tag, an MPI_Irecv (whose match only its completion knows, whatever it asked for), or an
 * MPI_Iprobe that found nothing. */
static inline void log_recv(const char *function, long long bytes, int source, int tag)
{
    if (!call_log_begin(function, bytes, 1, &source, 0, NULL))
        return;
    call_log_field("tag", tag);
    call_log_end();
}

/* An MPI_Irecv the program cancelled, logged once MPI_Test_cancelled told whether the cancel won (then
 * the receive took no message, and a replay leaves it out). */
static inline void log_recv_cancelled(const char *function, long long bytes, int source, int tag, int cancelled)
{
    if (!call_log_begin(function, bytes, 1, &source, 0, NULL))
        return;
    call_log_field("tag", tag);
    call_log_field("cancelled", cancelled);
    call_log_end();
}

/* An MPI_Isend the program cancelled, logged once MPI_Test_cancelled told whether the cancel won (then
 * no message went, and a replay sends none). */
static inline void log_send_cancelled(const char *function, long long bytes, int dest, int tag, int cancelled)
{
    if (!call_log_begin(function, bytes, 1, &dest, 0, NULL))
        return;
    call_log_field("tag", tag);
    call_log_field("cancelled", cancelled);
    call_log_end();
}

/* A blocking receive (or a probe that found a message, with 0 bytes) and what it matched (its status):
 * the matched source is logged when it asked for LOG_ANY_SOURCE, the matched tag when it asked for
 * LOG_ANY_TAG. */
static inline void log_recv_matched(const char *function, long long bytes, int source, int tag, int matched_source,
                                    int matched_tag)
{
    const int wildcard_source = source == LOG_ANY_SOURCE;
    if (!call_log_begin(function, bytes, 1, &source, wildcard_source, &matched_source))
        return;
    call_log_field("tag", tag);
    if (tag == LOG_ANY_TAG)
        call_log_field("matched_tag", matched_tag);
    call_log_end();
}

/* MPI_Sendrecv / MPI_Sendrecv_replace: peers are the destination and the source; the matched source and
 * tag are logged where the receive half asked for a wildcard. */
static inline void log_sendrecv(const char *function, long long bytes, int dest, int send_tag, int source,
                                int recv_tag, int matched_source, int matched_tag)
{
    const int peers[2] = {dest, source};
    const int wildcard_source = source == LOG_ANY_SOURCE;
    if (!call_log_begin(function, bytes, 2, peers, wildcard_source, &matched_source))
        return;
    call_log_field("tag", send_tag);
    call_log_field("recv_tag", recv_tag);
    if (recv_tag == LOG_ANY_TAG)
        call_log_field("matched_tag", matched_tag);
    call_log_end();
}

/* One request an MPI_Start or MPI_Startall started: the send or receive `init` described, with
 * `peer` (destination, or requested source) and `tag`. */
static inline void log_start(const char *init, long long bytes, int peer, int tag)
{
    if (!call_log_begin("MPI_Start", bytes, 1, &peer, 0, NULL))
        return;
    call_log_field("tag", tag);
    fprintf(call_log_file, " started=%s", init);
    call_log_end();
}

/* A Wait/Test call that completed `completed` requests, none of them a wildcard receive. */
static inline void log_completion(const char *function, int completed)
{
    if (!call_log_begin(function, 0, 0, NULL, 0, NULL))
        return;
    call_log_field("completed", completed);
    call_log_end();
}

/* A Wait/Test call that completed `completed` requests, `cancelled` of them receives whose cancel won. */
static inline void log_completion_cancelled(const char *function, int completed, int cancelled)
{
    if (!call_log_begin(function, 0, 0, NULL, 0, NULL))
        return;
    call_log_field("completed", completed);
    call_log_field("cancelled", cancelled);
    call_log_end();
}

/* A Wait/Test call that completed the one request a call to `creator` made. */
static inline void log_completion_of(const char *function, const char *creator)
{
    if (!call_log_begin(function, 0, 0, NULL, 0, NULL))
        return;
    call_log_field("completed", 1);
    fprintf(call_log_file, " of=%s", creator);
    call_log_end();
}

/* A Wait/Test call that completed `completed` requests, among them wildcard receives that matched the
 * `matched_count` sources `matched`. */
static inline void log_completion_matched(const char *function, int completed, int matched_count, const int *matched)
{
    if (!call_log_begin(function, 0, 0, NULL, matched_count, matched))
        return;
    call_log_field("completed", completed);
    call_log_end();
}

static inline void call_log_close(void)
{
    if (call_log_file != NULL)
        fclose(call_log_file);
    call_log_file = NULL;
}
