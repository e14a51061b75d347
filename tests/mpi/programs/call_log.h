/* The test programs' own record of every MPI call they make: the truth the trace is checked against.
 *
 * If the environment variable CALL_LOG_DIR is set, each rank appends one line per MPI call to
 * $CALL_LOG_DIR/rank.<world rank>:
 *
 *     <MPI function name> <bytes> <peers comma-separated, or -> <matched sources comma-separated, or ->
 *
 * Peers and matched sources are world ranks, or ANY_SOURCE / PROC_NULL. tests/mpi/check_calls.py
 * reads these files. Plain C and stdio only: the log must not make MPI calls of its own, or it would
 * change what the tracer sees. Callers translate MPI_ANY_SOURCE / MPI_PROC_NULL to the LOG_ values
 * below, so this header does not depend on mpi.h. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

/* Peer values that are not world ranks (negative, so no rank can collide with them). */
enum { LOG_ANY_SOURCE = -1000001, LOG_PROC_NULL = -1000002 };

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
        else
            fprintf(call_log_file, "%d", ranks[i]);
    }
}

/* The general form: any number of peers and of matched sources. */
static inline void log_call_full(const char *function, long long bytes, int peer_count, const int *peers,
                          int matched_count, const int *matched)
{
    if (call_log_file == NULL)
        return;
    fprintf(call_log_file, "%s %lld", function, bytes);
    call_log_write_ranks(peer_count, peers);
    call_log_write_ranks(matched_count, matched);
    fputc('\n', call_log_file);
}

/* A call without peers: opaque calls (0 bytes), Barrier, non-rooted collectives, completions without
 * wildcard receives. */
static inline void log_call(const char *function, long long bytes)
{
    log_call_full(function, bytes, 0, NULL, 0, NULL);
}

/* A call with one peer (send, receive, probe, rooted collective) and nothing matched. */
static inline void log_call_peer(const char *function, long long bytes, int peer)
{
    log_call_full(function, bytes, 1, &peer, 0, NULL);
}

/* A wildcard receive or probe that matched `source` at this very call. */
static inline void log_call_peer_matched(const char *function, long long bytes, int peer, int source)
{
    log_call_full(function, bytes, 1, &peer, 1, &source);
}

/* A completion call that completed `matched_count` wildcard receives. */
static inline void log_call_matched(const char *function, int matched_count, const int *matched)
{
    log_call_full(function, 0, 0, NULL, matched_count, matched);
}

static inline void call_log_close(void)
{
    if (call_log_file != NULL)
        fclose(call_log_file);
    call_log_file = NULL;
}
