/* The MPI side of call_log.h for the C test programs: MPI's symbolic ranks and tags as the log writes
 * them, and the logging of a receive from its status. Kept apart from call_log.h, which must not depend
 * on mpi.h. */
#pragma once

#include <mpi.h>

#include "call_log.h"

/* A rank as the log writes it: a world rank (the caller translates ranks of other communicators), or
 * LOG_ANY_SOURCE / LOG_PROC_NULL. */
static inline int log_rank(int rank)
{
    return rank == MPI_ANY_SOURCE ? LOG_ANY_SOURCE : rank == MPI_PROC_NULL ? LOG_PROC_NULL : rank;
}

static inline int log_tag(int tag)
{
    return tag == MPI_ANY_TAG ? LOG_ANY_TAG : tag;
}

/* A blocking receive (or a probe that found a message) from `source` with `tag`, as MPI was given them
 * (world ranks, MPI_ANY_SOURCE, MPI_ANY_TAG ...), that matched what `status` says. */
static inline void log_recv_status(const char *function, long long bytes, int source, int tag, const MPI_Status *status)
{
    log_recv_matched(function, bytes, log_rank(source), log_tag(tag), status->MPI_SOURCE, status->MPI_TAG);
}
