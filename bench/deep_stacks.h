/* What the parts of the deep-stacks benchmark (C, C++, Fortran) share. */
#ifndef DEEP_STACKS_H
#define DEEP_STACKS_H
/* The C API only, also from C++. */
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

struct DeepStacks {
    int rank, left, right;
    double send[4], receive[4];
    MPI_File file;
    long calls; /* MPI calls made by this rank in the timed loop */
};
extern struct DeepStacks deep_stacks;
extern volatile int deep_stacks_seen;

/* Each runs paths first .. first + paths - 1, `iterations` times over. */
void deep_stacks_cxx(int depth, int first, int paths, int iterations);
void deep_stacks_fortran(int depth, int first, int paths, int iterations, int file);
long deep_stacks_fortran_calls(void);

#ifdef __cplusplus
}
#endif
#endif
