#!/usr/bin/env python3
"""How many collectives a replay at p = 0 makes, against the program.

Traces a test program (default tests/mpi/programs/polled_collectives.c: wildcard receives polled with
MPI_Testany a number of times that differs by rank and step, before each MPI_Allreduce) at
MERGE_PRECISION=0, replays the trace under the tracer with each h-replay given, and counts the
replay's calls of each collective (`h-dump --calls --json` of the replay's trace) against the
program's own log (CALL_LOG_DIR). Each run traces anew (the traces differ by timing), and every
h-replay replays the same trace, side by side.

    p0_collective_counts.py --build DIR [--replay NAME=H_REPLAY ...] [--ranks 4,7] [--runs 5]
                            [-- PROGRAM ARGS...]

Prints one row per run and rank count: the program's calls and each replay's, per collective, and
the replay's share of the program's. Standard library only.
"""
import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
COLLECTIVES = {"MPI_Allreduce", "MPI_Reduce", "MPI_Bcast", "MPI_Barrier", "MPI_Allgather", "MPI_Gather",
               "MPI_Scatter", "MPI_Alltoall", "MPI_Scan", "MPI_Exscan", "MPI_Reduce_scatter_block"}


def logged_collectives(log_dir):
    counts = collections.Counter()
    for log in pathlib.Path(log_dir).glob("rank.*"):
        for line in log.read_text().splitlines():
            function = line.split(" ", 1)[0]
            if function in COLLECTIVES:
                counts[function] += 1
    return counts


def replayed_collectives(h_dump, trace):
    calls = json.loads(subprocess.run([h_dump, "--calls", "--json", str(trace)], check=True, capture_output=True,
                                      text=True).stdout)
    counts = collections.Counter()
    for functions in calls["by_rank"].values():
        for function, facts in functions.items():
            if function in COLLECTIVES:
                counts[function] += round(facts["calls"])
    return counts


def main():
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[2])
    parser.add_argument("--build", required=True, help="the build whose h-trace, h-dump and program are used")
    parser.add_argument("--replay", action="append", default=[], help="NAME=H_REPLAY (default: the build's)")
    parser.add_argument("--ranks", default="4,7")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("program", nargs="*")
    args = parser.parse_args()
    build = pathlib.Path(args.build).resolve()
    h_trace, h_dump = build / "src/capture/h-trace", build / "h-dump"
    replays = dict(r.split("=", 1) for r in args.replay) or {"build": str(build / "src/replay/h-replay")}
    program = args.program or [str(build / "tests/mpi/polled_collectives"), "200"]
    print("| ranks | run | collective | program | " + " | ".join(f"{name} (share)" for name in replays) + " |")
    print("| --- | --- | --- | --- | " + " | ".join("---" for _ in replays) + " |")
    for ranks in (int(r) for r in args.ranks.split(",")):
        for run in range(1, args.runs + 1):
            with tempfile.TemporaryDirectory(prefix="p0-collectives.") as scratch:
                scratch = pathlib.Path(scratch)
                logs, trace = scratch / "logs", scratch / "trace.h"
                logs.mkdir()
                env = dict(ENV, CALL_LOG_DIR=str(logs), HTRACE_IO_EXCLUDE=str(logs), HTRACE_FILE=str(trace),
                           MERGE_PRECISION="0")
                subprocess.run(["mpirun", "-np", str(ranks), str(h_trace)] + program, env=env, cwd=scratch,
                               check=True, capture_output=True, timeout=600)
                want = logged_collectives(logs)
                got = {}
                for name, h_replay in replays.items():
                    replayed = scratch / f"replayed-{name}.h"
                    done = subprocess.run(["mpirun", "-np", str(ranks), str(h_trace), h_replay, "--no-compute",
                                           "--stall-limit", "30", str(trace)],
                                          env=dict(ENV, HTRACE_FILE=str(replayed), MERGE_PRECISION="100"), cwd=scratch,
                                          capture_output=True, text=True, timeout=600)
                    got[name] = replayed_collectives(h_dump, replayed) if done.returncode == 0 else None
                for function in sorted(want):
                    cells = []
                    for name in replays:
                        if got[name] is None:
                            cells.append("replay failed")
                        else:
                            cells.append(f"{got[name][function]} ({got[name][function] / want[function]:.0%})")
                    print(f"| {ranks} | {run} | {function} | {want[function]} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
