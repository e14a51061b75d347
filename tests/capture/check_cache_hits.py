#!/usr/bin/env python3
"""Issue 27: a program whose MPI calls come from hundreds of call paths, deep in the stack and built
without frame pointers, repeated: with HTRACE_STATS=1 the tracer says how often it found a call's
path in its cache. Each path's first call must unwind; after that, over 99% of calls must not.

    check_cache_hits.py --h-trace PATH --program DEEP_STACKS [--mpirun PATH]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
from mpi_launch import mpirun_command  # noqa: E402

RANKS = 2
PATHS = 256  # the program's call paths (deep_stacks.c): each is new once per rank
ITERATIONS = 200
STATS = re.compile(r"^h-trace: call-path cache: (\d+) hits, (\d+) misses \(each an unwind\), hit rate ([\d.]+)%$",
                   re.MULTILINE)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--h-trace", required=True)
    parser.add_argument("--program", required=True)
    parser.add_argument("--mpirun", default=shutil.which("mpirun") or shutil.which("mpiexec"))
    args = parser.parse_args()
    h_trace, program = os.path.abspath(args.h_trace), os.path.abspath(args.program)
    if not args.mpirun:
        print("no mpirun here")
        return 77
    failures = []
    for language in ("c", "cxx"):
        for depth in (6, 40):
            with tempfile.TemporaryDirectory() as scratch:
                env = dict(os.environ, HTRACE_STATS="1", HTRACE_FILE=os.path.join(scratch, "trace.h"),
                           OMPI_MCA_rmaps_base_oversubscribe="1")
                command = mpirun_command(args.mpirun, RANKS, [h_trace, program, str(depth), str(PATHS),
                                                               str(ITERATIONS), language, "0"])
                run = subprocess.run(command, env=env, cwd=scratch, capture_output=True, text=True, timeout=120)
            case = f"{language} at depth {depth}"
            print(f"{case}: {run.stdout.strip()} / {run.stderr.strip()}")
            made = re.search(r"calls_per_rank (\d+)", run.stdout)
            stats = STATS.search(run.stderr)
            if run.returncode != 0 or not made or not stats:
                failures.append(f"{case}: the run failed or printed no statistics (exit {run.returncode})")
                continue
            calls = int(made[1]) * RANKS  # the program's own count of its calls (no untimed warm-up)
            hits, misses = int(stats[1]), int(stats[2])
            # Every call is looked up once; outside the loop the program makes a few calls of its own.
            if not calls <= hits + misses <= calls + 20 * RANKS:
                failures.append(f"{case}: {hits} hits + {misses} misses for {calls} calls in the loop")
            if misses < PATHS * RANKS:
                failures.append(f"{case}: {misses} misses, fewer than the {PATHS} new paths on each of {RANKS} ranks")
            if hits / (hits + misses) <= 0.99:
                failures.append(f"{case}: hit rate {hits / (hits + misses):.4f}, not above 0.99")
            if abs(float(stats[3]) - 100 * hits / (hits + misses)) > 0.001:
                failures.append(f"{case}: printed hit rate {stats[3]}% is not hits / (hits + misses)")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
