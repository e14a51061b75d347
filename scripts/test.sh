#!/usr/bin/env bash
# Builds h-trace and runs the whole test suite (unit tests and MPI end-to-end tests) against
# Open MPI, with the replay-fidelity tests on SimGrid's simulated network, the deadlock checker and
# the studies, then the C tests against MPICH, lossless and at one rank count each (the simulated
# tests, lower merge precisions, more rank counts, the module unit tests, the checker and the studies
# once are enough); last, the trace reader's fuzzers for a bounded time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Open MPI refuses root unless told, and the machine may have fewer cores than ranks.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
status=0
logs=()

# One MPI library's build of everything. The Fortran test programs find their modules through Open
# MPI's compiler wrapper; the simulated tests (SimGrid) run with the Open MPI build only.
build_with() {
  local flavour=$1 build=build-$1
  local options=(-Dmpi="$flavour")
  [ "$flavour" = mpich ] && options+=(-Dfortran=disabled -Dsimgrid=disabled)
  if [ -f "$build/build.ninja" ]; then
    meson configure "$build" "${options[@]}" || return
  else
    meson setup "$build" --buildtype=debugoptimized "${options[@]}" || return
  fi
  meson compile -C "$build"
}

# The fuzzing step's harnesses (issue 26): over the trace reader and each consumer, built by clang
# with AddressSanitizer and UBSan.
fuzz_build=build-fuzz
build_fuzzers() {
  if [ ! -f "$fuzz_build/build.ninja" ]; then
    CC=clang-14 CXX=clang++-14 meson setup "$fuzz_build" --buildtype=debugoptimized -Dmpi=openmpi -Dfuzz=enabled \
      -Dtests=false -Dsimgrid=disabled -Dfortran=disabled || return
  fi
  meson compile -C "$fuzz_build" fuzz-read fuzz-text fuzz-json fuzz-calls fuzz-sequence fuzz-matrix fuzz-schedule
}

test_with() {
  local build=build-$1
  echo "== tests against $1"
  # Four tests at a time on 2 cores: an MPI test waits for its jobs to start and end for about a
  # third of its time, and side by side the suite takes two thirds as long as two at a time.
  meson test -C "$build" --print-errorlogs --num-processes 4 || status=$?
  logs+=("$build/meson-logs/testlog.json")
}

# Runs a build step in the background at a lower priority, its output and status kept in
# $side/NAME.log and NAME.status for when it is needed.
side=$(mktemp -d)
build_aside() {
  local name=$1
  shift
  (
    set +e
    renice -n 10 -p "$BASHPID" >/dev/null
    "$@" >"$side/$name.log" 2>&1
    echo $? >"$side/$name.status"
  ) &
}
# Waits for it, shows its output and says whether it succeeded.
built_aside() {
  wait "$2"
  echo "== $1 (built beside the tests)"
  cat "$side/$1.log"
  [ "$(cat "$side/$1.status")" = 0 ]
}

build_with openmpi
# The MPICH and fuzzing builds run beside the Open MPI tests, on the CPU time the tests leave while
# they wait.
build_aside mpich build_with mpich
mpich_build=$!
build_aside fuzzers build_fuzzers
fuzz_build_job=$!
test_with openmpi
built_aside mpich "$mpich_build" || { echo "the MPICH build failed"; exit 1; }
test_with mpich

# The fuzzing step: seeded with the shipped programs' traces (made now, never kept), 20 s each, two
# at a time; a crash, a hang (1 s) or memory (256 MiB) on one input fails the run.
fuzzing=0
built_aside fuzzers "$fuzz_build_job" || fuzzing=1
echo "== fuzzing the trace reader"
[ "$fuzzing" = 0 ] &&
  rm -rf "$fuzz_build/work" &&
  python3 bench/trace_programs.py build-openmpi "$fuzz_build/work/traces" --first-only &&
  python3 fuzz/run_fuzzers.py "$fuzz_build" "$fuzz_build/work/traces" --seconds 20 --parallel 2 --work "$fuzz_build/work" ||
  fuzzing=1
[ "$fuzzing" = 0 ] || { echo "fuzzing failed"; status=1; }
rm -rf "$side"
python3 - "${logs[@]}" <<'PY'
import json, sys
tests = [(log, json.loads(line)) for log in sys.argv[1:] for line in open(log) if line.strip()]
results = [test["result"] for _, test in tests]
passed = sum(r == "OK" for r in results)
skipped = sum(r == "SKIP" for r in results)
# Named, so that a failure that does not come back can still be looked for.
for log, test in tests:
    if test["result"] not in ("OK", "SKIP"):
        print(f"failed: {test['name']} ({test['result']}, {log})")
print(f"{passed} passed, {len(results) - passed - skipped} failed, {skipped} skipped")
PY
exit $status
