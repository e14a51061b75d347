#!/usr/bin/env bash
# Fresh Debian 12 machine to a first trace: installs the dependencies, builds and installs h-trace
# (/usr/local), traces a bundled 2-D stencil at 8 ranks, and shows the trace.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
[ -f build/build.ninja ] || meson setup build --buildtype=debugoptimized -Dmpi=openmpi
meson compile -C build
$sudo meson install -C build --quiet
$sudo ldconfig
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
demo=$(mktemp -d /tmp/h-trace-demo.XXXXXX)
mpicc -O2 tests/mpi/programs/stencil.c -Itests/mpi/programs -o "$demo/stencil"
cd "$demo"
echo "\$ MERGE_PRECISION=100 mpirun -np 8 h-trace ./stencil 50 32"
MERGE_PRECISION=100 mpirun -np 8 h-trace ./stencil 50 32
echo; echo "\$ h-dump trace.h"
h-dump trace.h
echo; echo "\$ h-dump --calls trace.h"
h-dump --calls trace.h
echo; echo "(in $demo)"
