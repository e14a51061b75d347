#!/usr/bin/env python3
"""Issue 27: Python programs (mpi4py) under the tracer, before and after Python call sites.

1. The trace of tests/mpi/programs/python_ring.py (4 ranks, 100 iterations): bytes, events (nested
   ones once each), MPI and POSIX calls recorded, and POSIX calls of the imports left out, traced with
   the build's libhtrace.so and with --before's.
2. ns per call of MPI_Allreduce and os.pwrite made from Python (python_call_cost.py, one rank),
   untraced, traced before and traced after, in interleaved triplets; min / median / max.

    python_cost.py --before LIBHTRACE [--build DIR] [--python /usr/bin/python3] [--runs N]
"""
import argparse
import json
import pathlib
import re
import statistics
import subprocess
import tempfile

from run_benchmarks import ENV, mpirun

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
COST = re.compile(r"mpi_median_ns_per_call ([\d.]+) posix_median_ns_per_call ([\d.]+)")


def events(nodes):
    return sum(events(node["body"]) if "loop" in node else 1 for node in nodes)


def stderr_count(pattern, stderr):
    match = re.search(pattern, stderr)
    return int(match[1]) if match else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--before", required=True, help="the libhtrace.so of the build before")
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    build = pathlib.Path(args.build).resolve()
    launcher, h_dump = str(build / "src/capture/h-trace"), str(build / "h-dump")
    libraries = {"before": str(pathlib.Path(args.before).resolve()), "after": str(build / "src/capture/libhtrace.so")}
    with tempfile.TemporaryDirectory() as scratch:
        trace = pathlib.Path(scratch) / "trace.h"
        print("| python_ring.py, 4 ranks, 100 iterations | trace bytes | events | MPI calls | POSIX calls recorded "
              "| POSIX calls of imports left out |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name, library in libraries.items():
            env = dict(ENV, HTRACE_LIBRARY=library, HTRACE_FILE=str(trace))
            run = mpirun(4, [launcher, args.python, str(ROOT / "tests/mpi/programs/python_ring.py"), "100", "5",
                             scratch], env, scratch)
            dump = json.loads(subprocess.run([h_dump, "--json", str(trace)], capture_output=True, text=True,
                                             check=True).stdout)
            counts = [stderr_count(pattern, run.stderr) for pattern in
                      (r"(\d+) MPI calls recorded", r"(\d+) POSIX I/O calls recorded", r"(\d+) POSIX I/O calls of Python")]
            print(f"| {name} | {trace.stat().st_size} | {events(dump['body'])} | " + " | ".join(map(str, counts)) + " |",
                  flush=True)

        program = [args.python, str(HERE / "python_call_cost.py"), str(args.calls), "5", str(pathlib.Path(scratch) / "out")]
        figures = {"untraced": [], "before": [], "after": []}
        for _ in range(args.runs):
            for name in figures:
                env = dict(ENV, HTRACE_FILE=str(trace))
                command = program
                if name != "untraced":
                    env["HTRACE_LIBRARY"] = libraries[name]
                    command = [launcher] + program
                match = COST.search(mpirun(1, command, env, scratch).stdout)
                figures[name].append((float(match[1]), float(match[2])))
        print(f"\n| ns per call from Python, 1 rank, {args.runs} runs | MPI_Allreduce min / median / max "
              "| os.pwrite min / median / max |")
        print("| --- | --- | --- |")
        for name, runs in figures.items():
            cells = []
            for i in range(2):
                values = [run[i] for run in runs]
                cells.append(f"{min(values):.0f} / {statistics.median(values):.0f} / {max(values):.0f}")
            print(f"| {name} | {cells[0]} | {cells[1]} |", flush=True)


if __name__ == "__main__":
    main()
