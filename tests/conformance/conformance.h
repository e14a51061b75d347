/* The conformance programs' own record of what they did: every MPI call a program makes goes through
 * CALL(MPI_Xxx, args...), which counts the call under its function's name and then makes it:
 *
 *     CALL(MPI_Send, buf, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
 *     int err = CALL(MPI_Recv, buf, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, &status);
 *
 * That count is the independent truth run_conformance.py checks the trace against (never the tracer's
 * own output). So a program calls MPI only through CALL: MPI_Comm_rank, MPI_Type_commit, MPI_Get_count
 * and the like included. Except MPI_Wtime and MPI_Wtick: the tracer does not wrap them (they are not
 * in its trace), so they must NOT go through CALL.
 *
 * A program starts with conformance_init (or conformance_init_thread), records each failed check of
 * its own with conformance_error, and ends with `return conformance_finish();`, which agrees on the
 * job's error count (MPI_Allreduce), has rank 0 print " No Errors" (the MPICH test suite's words) or
 * "Found N errors", writes the log and calls MPI_Finalize. The log, when the environment variable
 * CALL_LOG_DIR names a directory, is $CALL_LOG_DIR/rank.<world rank>: one line per function,
 * "MPI_Xxx <count>" (and "MPI_Startall:requests <n>": see conformance_startall). MPI_Finalize is
 * counted before the log is written, and made after it.
 *
 * The table is guarded by a mutex: the threads family calls MPI from several threads.
 *
 * C99/C11, header-only (static inline), no C++. */
#ifndef CONFORMANCE_H
#define CONFORMANCE_H

#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Counts the call under the name of the function (the first argument, stringized), then makes it;
 * the expression's value is the call's return value. */
#define CALL(fn, ...) (conformance_count(#fn), fn(__VA_ARGS__))

enum { CONFORMANCE_MAX_FUNCTIONS = 256, CONFORMANCE_NAME_LENGTH = 64 };

struct conformance_entry {
    char name[CONFORMANCE_NAME_LENGTH];
    long long count;
};

/* One table per program (every translation unit of a program is one file here). */
static struct conformance_entry conformance_table[CONFORMANCE_MAX_FUNCTIONS];
static int conformance_functions;
static long long conformance_errors;
static int conformance_world_rank = -1; /* for error messages: asked once, of PMPI_ (not counted) */
static pthread_mutex_t conformance_mutex = PTHREAD_MUTEX_INITIALIZER;

/* Adds `n` calls of `name` to the table. */
static inline void conformance_count_many(const char *name, long long n)
{
    pthread_mutex_lock(&conformance_mutex);
    int i = 0;
    while (i < conformance_functions && strcmp(conformance_table[i].name, name) != 0)
        ++i;
    if (i == conformance_functions) {
        if (conformance_functions == CONFORMANCE_MAX_FUNCTIONS || strlen(name) >= CONFORMANCE_NAME_LENGTH) {
            pthread_mutex_unlock(&conformance_mutex);
            fprintf(stderr, "conformance.h: cannot count %s: table full or name too long\n", name);
            abort();
        }
        strcpy(conformance_table[i].name, name);
        conformance_table[i].count = 0;
        ++conformance_functions;
    }
    conformance_table[i].count += n;
    pthread_mutex_unlock(&conformance_mutex);
}

/* Adds one call of `name` to the table. */
static inline void conformance_count(const char *name)
{
    conformance_count_many(name, 1);
}

/* The tracer records MPI_Startall of n requests as n MPI_Start events (docs/guide/limits.md), so
 * the log also says how many requests the program's MPI_Startall calls started, as the pseudo-function
 * "MPI_Startall:requests", and run_conformance.py compares like with like. This happens by itself:
 * CALL(MPI_Startall, n, requests) counts "MPI_Startall" (the name is stringized before it expands),
 * then the macro below counts the requests and makes the call (the parenthesized name is the function). */
static inline int conformance_startall(int count, MPI_Request requests[])
{
    conformance_count_many("MPI_Startall:requests", count);
    return (MPI_Startall)(count, requests);
}
#define MPI_Startall(count, requests) conformance_startall(count, requests)

static inline void conformance_init(int *argc, char ***argv)
{
    CALL(MPI_Init, argc, argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &conformance_world_rank);
}

static inline void conformance_init_thread(int *argc, char ***argv, int required, int *provided)
{
    CALL(MPI_Init_thread, argc, argv, required, provided);
    PMPI_Comm_rank(MPI_COMM_WORLD, &conformance_world_rank);
}

/* One failed check: printed to stderr with the world rank, and counted. It calls no MPI function
 * (any thread may report), and the rank it prints was asked of PMPI_Comm_rank by conformance_init,
 * uncounted: error messages must not change what the program logs. */
static inline void conformance_error(const char *fmt, ...)
{
    const int rank = conformance_world_rank;
    char message[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    fprintf(stderr, "rank %d: error: %s\n", rank, message);
    fflush(stderr);
    pthread_mutex_lock(&conformance_mutex);
    ++conformance_errors;
    pthread_mutex_unlock(&conformance_mutex);
}

/* Writes the log: $CALL_LOG_DIR/rank.<rank>, one "MPI_Xxx <count>" line per function. */
static inline void conformance_write_log(int rank)
{
    const char *dir = getenv("CALL_LOG_DIR");
    if (dir == NULL || dir[0] == '\0')
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/rank.%d", dir, rank);
    FILE *file = fopen(path, "w");
    if (file == NULL) {
        fprintf(stderr, "conformance.h: cannot write %s\n", path);
        return;
    }
    pthread_mutex_lock(&conformance_mutex);
    for (int i = 0; i < conformance_functions; ++i)
        fprintf(file, "%s %lld\n", conformance_table[i].name, conformance_table[i].count);
    pthread_mutex_unlock(&conformance_mutex);
    fclose(file);
}

/* Agrees on the job's errors, reports them (rank 0), writes the log, finalizes. Returns the exit
 * status: 0 with no errors, else 1. */
static inline int conformance_finish(void)
{
    int rank = 0;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    pthread_mutex_lock(&conformance_mutex);
    long long mine = conformance_errors;
    pthread_mutex_unlock(&conformance_mutex);
    long long total = 0;
    CALL(MPI_Allreduce, &mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf(" No Errors\n");
        else
            printf("Found %lld errors\n", total);
        fflush(stdout);
    }
    conformance_count("MPI_Finalize");
    conformance_write_log(rank);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

#endif
