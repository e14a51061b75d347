#!/usr/bin/env bash
# Builds h-trace and runs the whole test suite (unit tests and MPI end-to-end tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build=${BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" --buildtype=debugoptimized
meson compile -C "$build"
# Open MPI refuses root unless told, and the machine may have fewer cores than ranks.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
status=0
meson test -C "$build" --print-errorlogs || status=$?
python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
results = [json.loads(line)["result"] for line in open(sys.argv[1]) if line.strip()]
passed = sum(r == "OK" for r in results)
skipped = sum(r == "SKIP" for r in results)
print(f"{passed} passed, {len(results) - passed - skipped} failed, {skipped} skipped")
PY
exit $status
