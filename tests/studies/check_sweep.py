#!/usr/bin/env python3
"""End-to-end test of h-sweep on a program whose ranks differ (the convergence loop).

    check_sweep.py --h-sweep PATH --h-trace PATH --h-replay PATH --h-dump PATH [--mpirun PATH] -- PROGRAM ARGS

1. A sweep over precisions 100 and 0 at 4 ranks: sweep.csv must have one row per level, in the order
   given, whose trace bytes are the sizes of the trace files the sweep kept and whose traces were
   merged at that level (their headers say so), with positive times; the lossy trace must be smaller
   than the lossless one (the program's ranks and iterations differ, which only precision 0 merges);
   sweep.svg must be an SVG with one line per quantity.
2. A sweep whose application fails at precision 50 (a wrapper exits 3 there): h-sweep must exit 3,
   name precision 50, keep the row of precision 100 and run no level after 50.

Exit status 0 passes, 1 fails, 77 skips (no mpirun here).
"""

import argparse
import csv
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "mpi"))
from mpi_launch import is_open_mpi  # noqa: E402

SKIP = 77
RANKS = 4


def sweep(args, levels, command, directory):
    options = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else []) if is_open_mpi(args.mpirun) else []
    line = [sys.executable, args.h_sweep, "--levels", levels, "-np", str(RANKS), "--output-dir", str(directory),
            "--mpirun", args.mpirun, *[f"--mpirun-arg={option}" for option in options], "--replay-arg=--no-compute",
            "--h-trace", args.h_trace, "--h-replay", args.h_replay, "--h-dump", args.h_dump, "--", *command]
    print("$ " + " ".join(line), flush=True)
    run = subprocess.run(line, capture_output=True, text=True, timeout=600)
    print(run.stdout + run.stderr, flush=True)
    return run


def rows_of(directory):
    with open(directory / "sweep.csv") as f:
        return list(csv.DictReader(f))


def check_complete_sweep(args, directory, failures):
    run = sweep(args, "100,0", args.command, directory)
    if run.returncode != 0:
        failures.append(f"the sweep exited {run.returncode}")
        return
    rows = rows_of(directory)
    if [int(row["level"]) for row in rows] != [100, 0]:
        failures.append(f"sweep.csv levels {[row['level'] for row in rows]}, expected [100, 0]")
        return
    for row in rows:
        trace = directory / f"trace-p{row['level']}.h"
        if int(row["trace_bytes"]) != trace.stat().st_size:
            failures.append(f"level {row['level']}: sweep.csv says {row['trace_bytes']} bytes, the trace has "
                            f"{trace.stat().st_size}")
        header = json.loads(subprocess.run([args.h_dump, "--json", str(trace)], capture_output=True, text=True,
                                           check=True).stdout)
        if header["precision"] != int(row["level"]):
            failures.append(f"level {row['level']}: its trace was merged at precision {header['precision']}")
        if not (int(row["events"]) > 0 and float(row["traced_seconds"]) > 0 and float(row["replay_seconds"]) > 0):
            failures.append(f"level {row['level']}: events and times must be positive: {row}")
    if int(rows[1]["trace_bytes"]) >= int(rows[0]["trace_bytes"]):
        failures.append(f"the trace at precision 0 ({rows[1]['trace_bytes']} bytes) is not smaller than at 100 "
                        f"({rows[0]['trace_bytes']})")
    svg = ElementTree.parse(directory / "sweep.svg").getroot()
    lines = svg.findall("{http://www.w3.org/2000/svg}polyline")
    if not svg.tag.endswith("svg") or len(lines) != 2:
        failures.append(f"sweep.svg: expected an SVG with 2 lines, found {len(lines)}")


def check_failing_level(args, directory, failures):
    # The application fails where MERGE_PRECISION is 50, and runs normally elsewhere.
    wrapper = ["sh", "-c", 'if [ "$MERGE_PRECISION" = 50 ]; then exit 3; fi; exec "$0" "$@"'] + args.command
    run = sweep(args, "100,50,0", wrapper, directory)
    if run.returncode != 3:
        failures.append(f"with the application failing at precision 50, h-sweep exited {run.returncode}, not 3")
    if "precision 50" not in run.stderr:
        failures.append("h-sweep does not name precision 50 as where the sweep stopped")
    levels = [int(row["level"]) for row in rows_of(directory)] if (directory / "sweep.csv").is_file() else []
    if levels != [100]:
        failures.append(f"sweep.csv after the failure holds levels {levels}, expected [100]")
    if (directory / "trace-p0.h").exists():
        failures.append("the sweep went on after the failing level (trace-p0.h exists)")


def main():
    argv = sys.argv[1:]
    split = argv.index("--")
    parser = argparse.ArgumentParser()
    for tool in ("--h-sweep", "--h-trace", "--h-replay", "--h-dump"):
        parser.add_argument(tool, required=True)
    parser.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    args = parser.parse_args(argv[:split])
    args.command = [os.path.abspath(argv[split + 1])] + argv[split + 2:]
    if shutil.which(args.mpirun) is None:
        print(f"check_sweep: no {args.mpirun}: skipped")
        return SKIP
    failures = []
    with tempfile.TemporaryDirectory(prefix="h-trace-sweep-") as scratch:
        check_complete_sweep(args, pathlib.Path(scratch) / "complete", failures)
        check_failing_level(args, pathlib.Path(scratch) / "failing", failures)
    for failure in failures:
        print("FAIL: " + failure)
    if not failures:
        print("check_sweep: PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
