/* Times an SMPI-built test program the way h-replay times a replay (src/replay/h_replay.cpp), so that
 * check_fidelity.py compares like with like: after MPI_Init every rank passes a barrier and starts
 * its clock, at MPI_Finalize it stops it, and rank 0 prints the slowest rank's time on stderr as
 * `job_timer: SECONDS s`. The barrier matters: it lets rank 0 go one message latency before the
 * others, and a replay's time includes that skew, so the program's must too (SMPI's own "Simulated
 * time" starts every rank at once, and for h-replay also counts its reading and report collectives).
 * If h-replay changes how it times itself, this file follows.
 *
 * Linked into the program, these MPI_Init, MPI_Init_thread and MPI_Finalize come before SMPI's (the
 * MPI profiling interface) and call the PMPI_ ones. Fortran programs call SMPI's Fortran entry
 * points, which do not come through here. */
#include <mpi.h>
#include <stdio.h>

static double started;

static void start_clock(void)
{
    PMPI_Barrier(MPI_COMM_WORLD);
    started = PMPI_Wtime();
}

int MPI_Init(int *argc, char ***argv)
{
    const int status = PMPI_Init(argc, argv);
    start_clock();
    return status;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    const int status = PMPI_Init_thread(argc, argv, required, provided);
    start_clock();
    return status;
}

int MPI_Finalize(void)
{
    double seconds = PMPI_Wtime() - started;
    double slowest = 0;
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        fprintf(stderr, "job_timer: %.17g s\n", slowest);
        fflush(stderr);
    }
    return PMPI_Finalize();
}
