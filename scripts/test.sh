#!/usr/bin/env bash
# Builds h-trace and runs the whole test suite (unit tests and MPI end-to-end tests) against
# Open MPI, with the replay-fidelity tests on SimGrid's simulated network, the deadlock checker and
# the studies, then the C tests against MPICH, lossless and at one rank count each (the simulated
# tests, lower merge precisions, more rank counts, the module unit tests, the checker and the studies
# once are enough).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Open MPI refuses root unless told, and the machine may have fewer cores than ranks.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
status=0
logs=()
for flavour in openmpi mpich; do
  build=build-$flavour
  options=(-Dmpi=$flavour)
  # The Fortran test programs find their modules through Open MPI's compiler wrapper; the simulated
  # tests (SimGrid) run with the Open MPI build only.
  [ "$flavour" = mpich ] && options+=(-Dfortran=disabled -Dsimgrid=disabled)
  if [ -f "$build/build.ninja" ]; then
    meson configure "$build" "${options[@]}"
  else
    meson setup "$build" --buildtype=debugoptimized "${options[@]}"
  fi
  meson compile -C "$build"
  echo "== tests against $flavour"
  meson test -C "$build" --print-errorlogs || status=$?
  logs+=("$build/meson-logs/testlog.json")
done
python3 - "${logs[@]}" <<'PY'
import json, sys
results = [json.loads(line)["result"] for log in sys.argv[1:] for line in open(log) if line.strip()]
passed = sum(r == "OK" for r in results)
skipped = sum(r == "SKIP" for r in results)
print(f"{passed} passed, {len(results) - passed - skipped} failed, {skipped} skipped")
PY
exit $status
