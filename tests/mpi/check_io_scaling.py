#!/usr/bin/env python3
"""Traces a program at several rank counts and checks that its trace holds as many I/O events (MPI-IO
and POSIX) at each: file names with the rank in them and offsets that follow the rank must be one
event for all ranks, however many there are.

    check_io_scaling.py --h-trace PATH --h-dump PATH --ranks 2,4 [--mpirun PATH] -- PROGRAM [ARGS]

Each run happens in a directory of its own, removed afterwards. Exit status 0 when the counts agree,
1 when they differ, 2 when a run fails.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from io_functions import IO_EVENT  # noqa: E402
from mpi_launch import mpirun_command  # noqa: E402

def io_events(args, ranks):
    """The I/O event lines of the program's trace at `ranks` ranks."""
    scratch = tempfile.mkdtemp(prefix="h-trace-io-scaling-")
    try:
        trace = os.path.join(scratch, "trace.h")
        env = dict(os.environ, HTRACE_FILE=trace, MERGE_PRECISION="100", OMPI_MCA_rmaps_base_oversubscribe="1")
        command = mpirun_command(args.mpirun, ranks, [os.path.abspath(args.h_trace)] + args.command)
        run = subprocess.run(command, env=env, cwd=scratch, capture_output=True, text=True, timeout=300)
        if run.returncode != 0 or not os.path.isfile(trace):
            sys.exit(f"check_io_scaling: {ranks} ranks: the traced run failed (exit status {run.returncode})\n"
                     f"{run.stdout}{run.stderr}")
        dump = subprocess.run([args.h_dump, trace], capture_output=True, text=True, check=True).stdout
        return [line.strip().split(" ranks=")[0] for line in dump.splitlines() if IO_EVENT.match(line)]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("check_io_scaling: put the program and its arguments after '--'")
    split = argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("--h-trace", required=True)
    parser.add_argument("--h-dump", required=True)
    parser.add_argument("--ranks", required=True, help="comma-separated rank counts")
    parser.add_argument("--mpirun", default=shutil.which("mpirun") or "mpiexec")
    args = parser.parse_args(argv[:split])
    args.command = [os.path.abspath(argv[split + 1])] + argv[split + 2:]
    counts = {}
    for ranks in [int(r) for r in args.ranks.split(",")]:
        events = io_events(args, ranks)
        counts[ranks] = len(events)
        print(f"{ranks} ranks: {len(events)} I/O events")
    if len(set(counts.values())) != 1:
        print(f"check_io_scaling: the trace's I/O events differ in number between rank counts: {counts}")
        return 1
    if not any(counts.values()):
        print("check_io_scaling: no I/O event in the trace")
        return 1
    print("check_io_scaling: as many I/O events at every rank count")
    return 0


if __name__ == "__main__":
    sys.exit(main())
