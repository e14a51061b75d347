#!/usr/bin/env python3
"""Replay time against traced time, at a merge precision, for one program and several builds.

For each run and each build (alternating, so that the builds share the machine's moods): traces the
program with the build's h-trace at MERGE_PRECISION=P, replays the trace with its h-replay (with the
recorded computation), and reads h-replay's own line "replay R s, traced T s" (both MPI_Init to
MPI_Finalize of the slowest rank). Prints each run and the medians of R, T and R / T per build.

    p0_replay_time.py --build NAME=DIR [--build NAME=DIR ...] --np N [--precision 0] [--runs 5]
                      -- PROGRAM ARGS...

Standard library only.
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
REPLAY_LINE = re.compile(r"h-replay: replay ([0-9.e+-]+) s, traced ([0-9.e+-]+) s")


def main():
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[2])
    parser.add_argument("--build", action="append", required=True, help="NAME=DIR")
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--precision", default="0")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("program", nargs="+")
    args = parser.parse_args()
    builds = dict(b.split("=", 1) for b in args.build)
    times = {name: [] for name in builds}
    print("| run | build | replay (s) | traced (s) | replay / traced |")
    print("| --- | --- | --- | --- | --- |")
    for run in range(1, args.runs + 1):
        for name, build in builds.items():
            build = pathlib.Path(build).resolve()
            with tempfile.TemporaryDirectory(prefix="p0-replay-time.") as scratch:
                trace = pathlib.Path(scratch) / "trace.h"
                subprocess.run(["mpirun", "-np", str(args.np), str(build / "src/capture/h-trace")] + args.program,
                               env=dict(ENV, HTRACE_FILE=str(trace), MERGE_PRECISION=args.precision), cwd=scratch,
                               check=True, capture_output=True, timeout=args.timeout)
                done = subprocess.run(["mpirun", "-np", str(args.np), str(build / "src/replay/h-replay"), str(trace)],
                                      env=ENV, cwd=scratch, capture_output=True, text=True, timeout=args.timeout)
            found = REPLAY_LINE.search(done.stdout + done.stderr)
            if done.returncode != 0 or not found:
                print(f"| {run} | {name} | replay failed (exit status {done.returncode}) | | |", flush=True)
                continue
            replay, traced = float(found.group(1)), float(found.group(2))
            times[name].append((replay, traced))
            print(f"| {run} | {name} | {replay:.3f} | {traced:.3f} | {replay / traced:.2f} |", flush=True)
    print("\n| build | runs | median replay (s) | median traced (s) | median replay / traced |")
    print("| --- | --- | --- | --- | --- |")
    for name, pairs in times.items():
        if not pairs:
            continue
        print(f"| {name} | {len(pairs)} | {statistics.median(r for r, _ in pairs):.3f} | "
              f"{statistics.median(t for _, t in pairs):.3f} | {statistics.median(r / t for r, t in pairs):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
