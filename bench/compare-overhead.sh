#!/usr/bin/env bash
# Issue 27: h-trace's overhead and trace bytes beside Pilgrim's and Recorder's, on the same machine, in
# one run.
#
# What it measures: for each program below, PAIRS (default 5; --rounds is the same option) interleaved
# rounds of runs -- untraced, traced by h-trace, by Pilgrim (if PILGRIM_LIB is given), by Recorder (if
# RECORDER_LIB is given) -- with the order rotated from one round to the next, so that drift and other
# load on the machine hit all of them alike. Each run is one whole `mpirun`, timed by the wall clock
# (start-up, MPI_Init, the work, MPI_Finalize and the tracer's merge and write included). Per row it
# prints the untraced median seconds and, for each tracer, the median of the per-round ratios traced /
# untraced with their min and max, and whether h-trace's median is below Pilgrim's and Recorder's; then
# a table of trace bytes per tool (every file the tracer wrote; median over the rounds). Each traced run
# works in a fresh temporary directory; a run that exits non-zero, times out, or leaves no complete
# trace (h-trace: trace.h; Pilgrim: pilgrim-logs/funcs.dat and grammars.dat; Recorder: one
# recorder-YYYYMMDD/*/ directory with recorder.mt and a non-empty RANK.cst and RANK.cfg for every rank)
# marks its cell failed, with the reason (the signal or assertion, and the first frame in the tracer)
# on stderr. Rows whose program is not given say so. --recorder-merged-bytes adds, per row, one more
# Recorder run with RECORDER_INTERPROCESS_COMPRESSION=1 (its bytes only: Recorder's default keeps each
# rank's grammar in files of its own, Pilgrim and h-trace merge theirs across ranks).
#
# The tracers, used as users use them (default settings):
#   h-trace:  mpirun -np N $HTRACE_BUILD/src/capture/h-trace ./app   (HTRACE_FILE in the run's directory;
#             MERGE_PRECISION is passed through: leave it unset for the default, 100, or export it, e.g. 0)
#   Pilgrim:  mpirun -np N -x LD_PRELOAD=$PILGRIM_LIB ./app          (writes ./pilgrim-logs)
#   Recorder: mpirun -np N -x LD_PRELOAD=$RECORDER_LIB ./app         (writes ./recorder-YYYYMMDD/HOST-USER-
#             APP-PID-TIME/: RANK.cst, RANK.cfg, RANK.ts per rank, recorder.mt, VERSION; RECORDER_* unset)
#
# Pilgrim (https://github.com/pmodels/pilgrim, commit a2b828b or newer; a2b828b used) on Open MPI needs
# one patch: for a small MPI_Isend that Open MPI sends at once, Open MPI returns its one shared, already
# complete request object (ompi_request_empty) instead of a new one, so several outstanding requests
# have the same handle. Pilgrim keys its request table by the handle, and create_request_id() in
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
# Recorder (https://github.com/uiuc-hpc/Recorder, branch `pilgrim`, its default branch, commit c1c3dcb
# of 2023-09-28; version 2.3.3 in its CMakeLists, with the Pilgrim-style CST/CFG trace format), not
# patched. It needs HDF5 (Debian: apt-get install libhdf5-openmpi-dev; its HDF5 tracing is on by
# default) and zlib; built with its defaults (CMAKE_BUILD_TYPE RelWithDebInfo: -O2 -g; POSIX, MPI,
# MPI-IO, HDF5 and fcntl tracing on):
#   mkdir build && cd build && CC=mpicc CXX=mpicxx cmake .. -DCMAKE_INSTALL_PREFIX=$PWD/../install \
#       -DHDF5_PREFER_PARALLEL=ON && make -j2 && make install
#   RECORDER_LIB=$PWD/../install/lib/librecorder.so
# Recorder's Fortran wrappers (lib/recorder-mpi.c, e.g. mpi_irecv_, mpi_wait_, mpi_waitall_) cast the
# Fortran INTEGER request to MPI_Request*, which holds for MPICH's integer handles but not for Open
# MPI's pointers: the 8-byte C handle is written over a 4-byte INTEGER and read back from it. NPB CG
# crashes under Recorder with SIGSEGV in imp_MPI_Wait (recorder-mpi.c:683); MG runs and verifies (its
# requests happen to survive). Not patched: the row shows it.
#
# The programs (built outside this project, with the system Open MPI, -O3 as their makefiles do):
#   NPB 3.4 MPI (NPB3.4-MPI; 3.4.2 in the earlier tables, 3.4.1 from github.com/lmontigny/NPB3.4.1 a6b8b8d,
#     whose NPB3.4-MPI is NASA's, in the Recorder table): config/make.def from make.def.template with
#     FFLAGS = -O3 -fallow-argument-mismatch; `mkdir bin; make cg CLASS=W; make mg CLASS=W; make lu
#     CLASS=W`; NPB_BIN = its bin/. Rows: CG, MG, LU class W at 4 and 16 ranks.
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
#   The shipped test programs, $HTRACE_BUILD/tests/mpi/..., at 8 ranks with the arguments of issue 9's
#     and issue 10's trace-bytes tables: stencil 20 16, ring 10, convergence 10, amr 24 4, multigrid 5 6,
#     checkpoint 10 1024 (MPI-IO), posix_output 10 1000 (POSIX I/O).
#
# Commands:
#   meson setup build --buildtype=release -Dmpi=openmpi && meson compile -C build
#   PILGRIM_LIB=... RECORDER_LIB=... NPB_BIN=... LULESH_BIN=... MINIGHOST_BIN=... bench/compare-overhead.sh \
#       [--pairs 7] [--rows 'CG W 4,LULESH,stencil'] [--recorder-merged-bytes] [--out table.md] [--csv runs.csv]
#   MERGE_PRECISION=0 bench/compare-overhead.sh ...      (h-trace merged at precision 0; 100, the default, is lossless)
# HTRACE_BUILD defaults to ./build beside bench/. Other arguments go to bench/compare_overhead.py.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${HTRACE_BUILD:-$here/../build}
options=(--htrace-build "$build")
[[ -n ${PILGRIM_LIB:-} ]] && options+=(--pilgrim-lib "$PILGRIM_LIB")
[[ -n ${RECORDER_LIB:-} ]] && options+=(--recorder-lib "$RECORDER_LIB")
[[ -n ${NPB_BIN:-} ]] && options+=(--npb-bin "$NPB_BIN")
[[ -n ${LULESH_BIN:-} ]] && options+=(--lulesh-bin "$LULESH_BIN")
[[ -n ${MINIGHOST_BIN:-} ]] && options+=(--minighost-bin "$MINIGHOST_BIN")
exec python3 "$here/compare_overhead.py" "${options[@]}" "$@"
