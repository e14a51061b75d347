#!/usr/bin/env python3
"""Issue 26: a computation time of 10^6 s per call made replay spin for ever (the stall limit watches
MPI calls only). long_compute_trace writes a 2-rank trace whose every call follows 10^6 s of
computation, and says how many such gaps each rank has; h-replay --max-compute 0.01 must end (within
the time limit: not a timing assertion, a hang guard), exit 0, say in one line how many gaps it cut
and the longest, and give the same in --report-json; a --max-compute that is not a number of seconds
is refused in one line. With --h-replay-smpi and --smpirun, the
simulated replay must apply the same bound: its simulated time stays far below one recorded gap.

    check_max_compute.py --trace-builder PATH --h-replay PATH [--mpirun PATH]
                         [--h-replay-smpi PATH --smpirun PATH --platform XML]
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from mpi_launch import mpirun_command, run_job

TIMEOUT = 120
MAX_COMPUTE = 0.01


def check_replay(name, command, scratch, gaps_per_rank, gap_seconds, failures):
    report = scratch / f"{name}.json"
    status, stdout, stderr = run_job(command + ["--max-compute", str(MAX_COMPUTE), "--report-json", str(report),
                                                str(scratch / "trace.h")], {}, scratch, TIMEOUT)
    print(stdout + stderr, flush=True)
    if status != 0:
        failures.append(f"{name}: exit status {status}")
        return None
    lines = [line for line in stderr.splitlines() if "computation gaps longer than --max-compute" in line]
    expected = f"h-replay: {2 * gaps_per_rank} computation gaps longer than --max-compute {MAX_COMPUTE:g} s were cut " \
               f"to it (longest {gap_seconds:g} s)"
    if lines != [expected]:
        failures.append(f"{name}: expected the one line {expected!r}, got {lines}")
    data = json.loads(report.read_text())
    if data["max_compute"] != MAX_COMPUTE:
        failures.append(f"{name}: report's max_compute {data['max_compute']}, expected {MAX_COMPUTE}")
    if data["computation_gaps_cut"] != {"gaps": 2 * gaps_per_rank, "longest": gap_seconds}:
        failures.append(f"{name}: report's computation_gaps_cut {data['computation_gaps_cut']}, expected "
                        f"{2 * gaps_per_rank} gaps, longest {gap_seconds}")
    # Each rank spent at most the bound per gap.
    if data["compute_seconds"] > 2 * gaps_per_rank * MAX_COMPUTE * 1.001:
        failures.append(f"{name}: {data['compute_seconds']} s of computation spent, more than the bound allows")
    return data


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace-builder", required=True)
    parser.add_argument("--h-replay", required=True)
    parser.add_argument("--mpirun", default=shutil.which("mpirun") or shutil.which("mpiexec"))
    parser.add_argument("--h-replay-smpi")
    parser.add_argument("--smpirun")
    parser.add_argument("--platform")
    args = parser.parse_args()
    if not args.mpirun:
        print("no mpirun here")
        return 77
    failures = []
    with tempfile.TemporaryDirectory(prefix="htrace-max-compute-") as scratch:
        scratch = pathlib.Path(scratch)
        built = subprocess.run([os.path.abspath(args.trace_builder), str(scratch / "trace.h")], capture_output=True,
                               text=True, check=True)
        facts = dict(line.split() for line in built.stdout.splitlines())
        gaps_per_rank, gap_seconds = int(facts["gaps_per_rank"]), float(facts["gap_seconds"])

        check_replay("h-replay", mpirun_command(args.mpirun, 2, [os.path.abspath(args.h_replay)]), scratch,
                     gaps_per_rank, gap_seconds, failures)
        # A bound that is not a number of seconds: one line, a non-zero exit.
        for value in ("-1", "nan"):
            status, _, stderr = run_job(mpirun_command(args.mpirun, 2, [os.path.abspath(args.h_replay), "--max-compute",
                                                                        value, str(scratch / "trace.h")]),
                                        {}, scratch, TIMEOUT)
            expected = f"h-replay: --max-compute: not a number of seconds: {value}"
            if status == 0 or expected not in stderr.splitlines():
                failures.append(f"--max-compute {value}: expected a non-zero exit and the line {expected!r}, got "
                                f"status {status}:\n{stderr}")
        if args.h_replay_smpi and args.smpirun:
            data = check_replay("h-replay-smpi", [args.smpirun, "-platform", args.platform, "-np", "2",
                                                  os.path.abspath(args.h_replay_smpi)],
                                scratch, gaps_per_rank, gap_seconds, failures)
            # Simulated seconds: one uncut gap alone would be 10^6.
            if data and not data["replay_seconds"] < gap_seconds / 1000:
                failures.append(f"h-replay-smpi: simulated replay time {data['replay_seconds']} s: the gaps were "
                                f"not cut")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
