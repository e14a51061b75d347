#!/usr/bin/env bash
# Issue 27: h-trace's overhead beside Pilgrim's, on the same machine, in one run.
#
# What it measures: for each program below, PAIRS (default 5) interleaved triples of runs -- untraced,
# traced by h-trace, traced by Pilgrim -- with the order rotated from one triple to the next, so that
# drift and other load on the machine hit all three alike. Each run is one whole `mpirun`, timed by the
# wall clock (start-up, MPI_Init, the work, MPI_Finalize and the tracer's merge and write included).
# Per row it prints the untraced median seconds and, for each tracer, the median of the per-triple
# ratios traced / untraced with their min and max, and whether h-trace's median is below Pilgrim's.
# Each traced run works in a fresh temporary directory; a run that exits non-zero, times out, or
# leaves no trace (h-trace: trace.h; Pilgrim: pilgrim-logs/funcs.dat and grammars.dat) marks its cell
# failed, with the reason on stderr. Rows whose program is not given say so.
#
# The tracers, used as users use them:
#   h-trace: mpirun -np N $HTRACE_BUILD/src/capture/h-trace ./app   (HTRACE_FILE in the run's directory;
#            MERGE_PRECISION is passed through: leave it unset for the default, or export it, e.g. 0)
#   Pilgrim: mpirun -np N -x LD_PRELOAD=$PILGRIM_LIB ./app           (writes ./pilgrim-logs)
#
# Pilgrim (https://github.com/pmodels/pilgrim, commit a2b828b or newer) on Open MPI needs one patch:
# for a small MPI_Isend that Open MPI sends at once, Open MPI returns its one shared, already complete
# request object (ompi_request_empty) instead of a new one, so several outstanding requests have the
# same handle. Pilgrim keys its request table by the handle, and create_request_id() in
# src/pilgrim_mpi_objects.c asserts that a new request's handle is not in the table yet, so the
# second such MPI_Isend aborts the program ("create_request_id: Assertion `entry == NULL' failed").
# Patch: replace that `assert(entry == NULL);` with `if (entry != NULL) return entry->req_node->id;`
# (reuse the id of the handle already there). Then build it (needs autoconf-archive, libzstd-dev):
#   ./autogen.sh && ./configure CC=mpicc CFLAGS=-O2 --prefix=$PWD/install && make -j2 && make install
#   PILGRIM_LIB=$PWD/install/lib/libpilgrim.so
# (its configure sets no optimisation by default; -O2 is what we gave it.) Pilgrim's Fortran wrappers
# also pass MPI_STATUS_IGNORE to MPI_Status_f2c, which Open MPI rejects, so the Fortran deep-stacks
# row fails under Pilgrim; that row is kept to show it, not patched.
#
# The programs (built outside this project, with the system Open MPI, -O3 as their makefiles do):
#   NPB 3.4 MPI (NPB3.4-MPI): config/make.def from make.def.template with FFLAGS = -O3
#     -fallow-argument-mismatch; `mkdir bin; make cg CLASS=W; make mg CLASS=W; make lu CLASS=W`;
#     NPB_BIN = its bin/. Rows: CG, MG, LU class W at 4 and 16 ranks.
#   LULESH 2.0 (https://github.com/LLNL/LULESH): make MPICXX="mpicxx -DUSE_MPI=1"
#     CXXFLAGS="-g -O3 -I. -Wall" LDFLAGS="-g -O3" (no OpenMP); LULESH_BIN = lulesh2.0.
#     Row: 8 ranks, -s 20 -i 150.
#   miniGhost (https://github.com/Mantevo/miniGhost, ref/): make -f makefile.mpi.gnu FC=mpif90 CC=mpicc
#     LD=mpif90 MPI_INCLUDE= OPT_F="-O3 -fallow-argument-mismatch -ffree-line-length-none", after
#     replacing MPI_Errhandler_set by MPI_Comm_set_errhandler in main.c (removed in MPI-3; Open MPI's
#     mpi.h refuses it); MINIGHOST_BIN = miniGhost.x. Row: 8 ranks, --npx 2 --npy 2 --npz 2
#     --nx 50 --ny 50 --nz 50 --num_vars 10 --num_tsteps 50.
#   The capture benchmark: $HTRACE_BUILD/bench/deep-stacks 40 256 500 c|fortran at 4 ranks
#     (bench/deep_stacks.c: 256 call paths 40 frames deep, -O3 without frame pointers).
#
# Commands:
#   meson setup build --buildtype=release -Dmpi=openmpi && meson compile -C build
#   PILGRIM_LIB=... NPB_BIN=... LULESH_BIN=... MINIGHOST_BIN=... bench/compare-overhead.sh \
#       [--pairs 7] [--rows 'CG W 4,LULESH'] [--out table.md] [--csv runs.csv]
#   MERGE_PRECISION=0 bench/compare-overhead.sh ...      (h-trace's lossless merge)
# HTRACE_BUILD defaults to ./build beside bench/. Other arguments go to bench/compare_overhead.py.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${HTRACE_BUILD:-$here/../build}
options=(--htrace-build "$build")
[[ -n ${PILGRIM_LIB:-} ]] && options+=(--pilgrim-lib "$PILGRIM_LIB")
[[ -n ${NPB_BIN:-} ]] && options+=(--npb-bin "$NPB_BIN")
[[ -n ${LULESH_BIN:-} ]] && options+=(--lulesh-bin "$LULESH_BIN")
[[ -n ${MINIGHOST_BIN:-} ]] && options+=(--minighost-bin "$MINIGHOST_BIN")
exec python3 "$here/compare_overhead.py" "${options[@]}" "$@"
