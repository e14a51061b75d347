#!/usr/bin/env bash
# The fuzzing campaign of bench/RESULTS.md (issue 26): the shipped programs' traces as seeds, then each
# libFuzzer harness (fuzz/) for RUNS inputs (default 150,000: over 10^6 in all).
#   bench/fuzz_campaign.sh BUILD FUZZ_BUILD WORK [RUNS]
# BUILD: a compiled build of the project (its tests/mpi programs and tracer make the seeds);
# FUZZ_BUILD: where the fuzzing build goes (configured with clang-14 here if it is not yet).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 fuzz_build=$2 work=$3 runs=${4:-150000}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
if [ ! -f "$fuzz_build/build.ninja" ]; then
  CC=clang-14 CXX=clang++-14 meson setup "$fuzz_build" --buildtype=debugoptimized -Dfuzz=enabled -Dtests=false \
    -Dsimgrid=disabled -Dfortran=disabled
fi
meson compile -C "$fuzz_build" fuzz-read fuzz-text fuzz-json fuzz-calls fuzz-sequence fuzz-matrix fuzz-schedule
mkdir -p "$work"
[ -d "$work/traces" ] || python3 bench/trace_programs.py "$build" "$work/traces"
python3 fuzz/run_fuzzers.py "$fuzz_build" "$work/traces" --runs "$runs" --work "$work"
