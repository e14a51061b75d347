/* How every C test program but coverage starts: MPI_Init, the world rank and size, and the log of
 * those three calls (the log needs the rank for its file name, so it opens after MPI_Comm_rank). */
#pragma once

#include <mpi.h>

#include "call_log_mpi.h"

static inline void logged_start(int *argc, char ***argv, int *rank, int *size)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    call_log_open(*rank);
    log_call("MPI_Init", 0);
    log_call("MPI_Comm_rank", 0);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    log_call("MPI_Comm_size", 0);
}
