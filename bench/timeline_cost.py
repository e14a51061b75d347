#!/usr/bin/env python3
"""What a replay's timeline costs (issue 30): the OTF2 archive's and the Chrome trace's bytes, the
time h-replay takes to gather and write them (its own line, "wrote the timeline of N calls in S s"),
and the replay job's wall time with and without them, paired runs side by side.

    timeline_cost.py --build BUILD [--ranks 64] [--runs 5] [--csv FILE]

Programs: the stencil and amr of tests/mpi, traced once at --ranks (precision 100), then replayed
--runs times each way, alternating. Prints one row per program: calls in the timeline, archive and
Chrome bytes, the median write time, and the median of the per-pair ratio of job wall times (with /
without), with the least and most.
"""
import argparse
import csv
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests" / "mpi"))
from mpi_launch import mpirun_command, run_job  # noqa: E402

PROGRAMS = [("stencil", ["200", "64"]), ("amr", ["24", "4"])]
WROTE = re.compile(r"wrote the timeline of (\d+) calls in ([0-9.]+) s")


def directory_bytes(path):
    return sum(f.stat().st_size for f in pathlib.Path(path).rglob("*") if f.is_file())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=pathlib.Path, required=True)
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--csv", type=pathlib.Path)
    args = parser.parse_args()
    build = args.build.resolve()
    rows = []
    for program, program_args in PROGRAMS:
        with tempfile.TemporaryDirectory(prefix="h-trace-timeline-") as scratch:
            scratch = pathlib.Path(scratch)
            trace = scratch / "trace.h"
            command = [str(build / "src/capture/h-trace"), str(build / "tests/mpi" / program), *program_args]
            status, _, stderr = run_job(mpirun_command("mpirun", args.ranks, command), {"HTRACE_FILE": str(trace)},
                                        scratch, 900)
            if status != 0:
                sys.exit(f"timeline_cost.py: tracing {program} failed: {stderr[-500:]}")
            ratios, writes, calls, archive_bytes, chrome_bytes = [], [], 0, 0, 0
            for run in range(args.runs):
                walls = {}
                for with_timeline in (False, True) if run % 2 == 0 else (True, False):
                    options = []
                    if with_timeline:
                        archive, chrome = scratch / f"otf2-{run}", scratch / f"timeline-{run}.json"
                        options = ["--otf2", str(archive), "--chrome-trace", str(chrome)]
                    replay = [str(build / "src/replay/h-replay"), *options, str(trace)]
                    began = time.monotonic()
                    status, _, stderr = run_job(mpirun_command("mpirun", args.ranks, replay), {}, scratch, 900)
                    walls[with_timeline] = time.monotonic() - began
                    if status != 0:
                        sys.exit(f"timeline_cost.py: replaying {program} failed: {stderr[-500:]}")
                    if with_timeline:
                        wrote = WROTE.search(stderr)
                        if not wrote:
                            sys.exit(f"timeline_cost.py: no 'wrote the timeline' line: {stderr[-500:]}")
                        calls, seconds = int(wrote.group(1)), float(wrote.group(2))
                        writes.append(seconds)
                        archive_bytes, chrome_bytes = directory_bytes(archive), chrome.stat().st_size
                ratios.append(walls[True] / walls[False])
            rows.append({"program": program, "ranks": args.ranks, "calls": calls, "otf2_bytes": archive_bytes,
                         "chrome_bytes": chrome_bytes, "write_seconds_median": statistics.median(writes),
                         "wall_ratio_median": statistics.median(ratios), "wall_ratio_min": min(ratios),
                         "wall_ratio_max": max(ratios), "runs": args.runs})
    out = csv.DictWriter(open(args.csv, "w", newline="") if args.csv else sys.stdout, fieldnames=list(rows[0]))
    out.writeheader()
    for row in rows:
        out.writerow({key: f"{value:.4g}" if isinstance(value, float) else value for key, value in row.items()})


if __name__ == "__main__":
    main()
