/* How every C test program but coverage starts: MPI_Init, the world rank and size, and the log of
 * those three calls (the log needs the rank for its file name, so it opens after MPI_Comm_rank).
 * Returns MPI_Wtime() at MPI_Comm_size's return: the log opens after it, so a program that times its
 * computation from there (load_imbalance) counts the open as the trace does, in the computation
 * before its next MPI call (on a loaded machine an open took 37 ms). */
#pragma once

#include <mpi.h>

#include "call_log_mpi.h"

static inline double logged_start(int *argc, char ***argv, int *rank, int *size)
{
    MPI_Init(argc, argv);
    /* Its first call maps MPI_Wtime's code: not between MPI_Comm_size's return and the clock read. */
    (void)MPI_Wtime();
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    const double returned = MPI_Wtime();
    call_log_open(*rank);
    log_call("MPI_Init", 0);
    log_call("MPI_Comm_rank", 0);
    log_call("MPI_Comm_size", 0);
    return returned;
}
