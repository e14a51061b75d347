/* Capture cost on call paths like a real code's (issue 27): MPI calls from up to 256 call paths at a
   chosen stack depth, through recursion, a fan of functions called through tables and inlined
   helpers; C++ templates (deep_stacks_cxx.cpp) and a Fortran module (deep_stacks_fortran.f90) do
   the same in their languages. Point-to-point, collective, non-blocking and MPI-IO calls.
     deep-stacks DEPTH PATHS ITERATIONS LANGUAGE [WARMUP [ONLY]]     (LANGUAGE: c, cxx or fortran)
   DEPTH counts the frames from main to the MPI call (5 or more); every call path repeats ITERATIONS
   times, after WARMUP (default 1) untimed passes: a tracer's first call on each path, which unwinds,
   is a start-up cost a long run does not pay again. ONLY (0 .. PATHS - 1) runs that one path alone,
   for the cost of each path apart. Prints, from rank 0, the calls made per rank in the timed loop and
   the seconds it took (MPI_Init and MPI_Finalize outside). */
#include "deep_stacks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct DeepStacks deep_stacks;
volatile int deep_stacks_seen; /* stored after each call, so no call becomes a jump */

/* The MPI calls, inlined into each leaf but the point-to-point one: a helper called from everywhere,
   so many paths share the frame that calls MPI and its stack depth. */
__attribute__((noinline)) static void point_to_point(void)
{
    MPI_Sendrecv(deep_stacks.send, 1, MPI_DOUBLE, deep_stacks.right, 0, deep_stacks.receive, 1, MPI_DOUBLE,
                 deep_stacks.left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    deep_stacks.calls += 1;
}
static inline void collective(void)
{
    MPI_Allreduce(deep_stacks.send, deep_stacks.receive, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    deep_stacks.calls += 1;
}
static inline void non_blocking(void)
{
    MPI_Request requests[2];
    MPI_Irecv(deep_stacks.receive, 1, MPI_DOUBLE, deep_stacks.left, 1, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(deep_stacks.send, 1, MPI_DOUBLE, deep_stacks.right, 1, MPI_COMM_WORLD, &requests[1]);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    deep_stacks.calls += 3;
}
static inline void file_write(void)
{
    MPI_File_write_at(deep_stacks.file, (MPI_Offset)(deep_stacks.rank * 8), deep_stacks.send, 1, MPI_DOUBLE,
                      MPI_STATUS_IGNORE);
    deep_stacks.calls += 1;
}
static inline void act(int kind)
{
    if (kind < 5) point_to_point();
    else if (kind < 10) collective();
    else if (kind < 15) non_blocking();
    else file_write();
}

#define LEAF(k) __attribute__((noinline)) static int leaf_##k(void) { act(k); deep_stacks_seen = k; return k; }
#define MID(j) __attribute__((noinline)) static int mid_##j(int k) { int r = leaves[k](); deep_stacks_seen = j; return r; }
#define SIXTEEN(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15)
#define LEAF_NAME(k) leaf_##k,
#define MID_NAME(j) mid_##j,
SIXTEEN(LEAF)
static int (*const leaves[16])(void) = {SIXTEEN(LEAF_NAME)};
SIXTEEN(MID)
static int (*const mids[16])(int) = {SIXTEEN(MID_NAME)};

__attribute__((noinline)) static int climb(int frames, int path)
{
    if (frames <= 0) return mids[(path / 16) % 16](path % 16);
    const int r = climb(frames - 1, path);
    deep_stacks_seen = frames;
    return r;
}

/* main -> run_c -> climb x (depth - 4) -> mid -> leaf -> MPI */
__attribute__((noinline)) static void run_c(int depth, int first, int paths, int iterations)
{
    for (int i = 0; i < iterations; ++i)
        for (int p = first; p < first + paths; ++p) climb(depth - 4, p);
}

static void usage(void)
{
    fprintf(stderr, "usage: deep-stacks DEPTH PATHS ITERATIONS c|cxx|fortran [WARMUP [ONLY]] (DEPTH 5..64, PATHS 1..256)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* Returns 0 for an unknown language. */
static int run(const char* language, int depth, int first, int paths, int iterations)
{
    if (strcmp(language, "c") == 0) run_c(depth, first, paths, iterations);
    else if (strcmp(language, "cxx") == 0) deep_stacks_cxx(depth, first, paths, iterations);
#ifndef DEEP_STACKS_NO_FORTRAN
    else if (strcmp(language, "fortran") == 0) {
        const long before = deep_stacks_fortran_calls();
        deep_stacks_fortran(depth, first, paths, iterations, (int)MPI_File_c2f(deep_stacks.file));
        deep_stacks.calls += deep_stacks_fortran_calls() - before;
    }
#endif
    else return 0;
    return 1;
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 5 || argc > 7) usage();
    const int depth = atoi(argv[1]), paths = atoi(argv[2]), iterations = atoi(argv[3]);
    const char* language = argv[4];
    const int warmup = argc >= 6 ? atoi(argv[5]) : 1;
    const int only = argc == 7 ? atoi(argv[6]) : -1;
    if (depth < 5 || depth > 64 || paths < 1 || paths > 256 || iterations < 1 || warmup < 0 || only >= paths) usage();
    const int first = only >= 0 ? only : 0;
    const int count = only >= 0 ? 1 : paths;
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &deep_stacks.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    deep_stacks.left = (deep_stacks.rank + size - 1) % size;
    deep_stacks.right = (deep_stacks.rank + 1) % size;
    deep_stacks.send[0] = 1;
    int id = (int)getpid(); /* rank 0's names the job's file */
    MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char name[64];
    snprintf(name, sizeof name, "deep_stacks_%d.out", id);
    MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                  &deep_stacks.file);
    /* One call site for the warm-up and the timed passes: at small depths main's frame is part of
       every call path (and a loop the compiler cannot unroll would copy it). */
    static volatile int phases = 2;
    double start = 0;
    for (int phase = 0; phase < phases; ++phase) {
        if (phase == 1) {
            deep_stacks.calls = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            start = MPI_Wtime();
        }
        const int passes = phase == 0 ? warmup : iterations;
        if (passes > 0 && !run(language, depth, first, count, passes)) usage();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double seconds = MPI_Wtime() - start;
    MPI_File_close(&deep_stacks.file);
    if (deep_stacks.rank == 0) printf("calls_per_rank %ld seconds %.6f\n", deep_stacks.calls, seconds);
    MPI_Finalize();
    return 0;
}
