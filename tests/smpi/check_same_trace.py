#!/usr/bin/env python3
"""The tracer under SimGrid writes the trace the real MPI run writes.

    check_same_trace.py --smpirun PATH --platform XML --smpi-traced-program PATH --h-trace PATH
                        --h-dump PATH --np N [--mpirun PATH] [--precision P] [--timeout SECONDS]
                        [--smpirun-option OPTION]... [--shared-copy] [--keep] -- PROGRAM ARGS...

1. Traces the real MPI build (PROGRAM): `mpirun -np N h-trace PROGRAM ARGS`.
2. Runs the SMPI build linked with the tracer for SimGrid (libhtrace-smpi.a), which writes its own
   trace: `smpirun -platform XML -np N SMPI_TRACED_PROGRAM ARGS`.
   --smpirun-option adds an option (--cfg=smpi/privatization:mmap).
3. Requires both runs to print the same (they did the same work), and both traces, as h-dump shows
   them, to hold the same events with the same values and ranks, in the same loops. Left aside: the
   header (library, command, clocks), call-path signatures (two builds of the program, two sets of
   return addresses) and computation times (a real run's and a simulated one's).

--shared-copy runs the SMPI build with -no-privatize instead, where the ranks would share one tracer,
and requires the program to run as without the tracer (the same output, exit status 0), the tracer
to say so in one line, and no trace.

Both traces come from runs of two MPI libraries, each checked against the other: a value the tracer
under SimGrid got wrong (a constant SMPI defines otherwise, a handle it converts otherwise) shows as
a difference. Exit status 0 passes, 1 fails, 77 skips (no SimGrid, or no mpirun), as Meson reads them.
The scratch directory is kept after a failure.
"""

import argparse
import difflib
import os
import pathlib
import re
import shutil
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "mpi"))
from mpi_launch import mpirun_command  # noqa: E402
from run_traced import TestFailure, program_output, run, run_in_scratch  # noqa: E402

SKIP = 77
QUIET = ["--log=xbt_cfg.thres:warning", "--log=smpi_config.thres:warning"]
# What differs between a real run and a simulated one by nature: the signature after '@', and times.
SIGNATURE = re.compile(r" @[0-9a-f]+")
TIMES = re.compile(r" compute=\S+| by_rank=\{[^}]*\}| in_call=\S+")


def parse_arguments(argv):
    if "--" not in argv:
        sys.exit("check_same_trace.py: put the program and its arguments after '--'")
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    if not command:
        sys.exit("check_same_trace.py: no program after '--'")
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    parser.add_argument("--smpirun", help="SimGrid's smpirun (absent: the test is skipped)")
    parser.add_argument("--platform", required=True, help="the SimGrid platform file")
    parser.add_argument("--smpi-traced-program", help="the program built with smpicc and libhtrace-smpi.a (absent: skipped)")
    parser.add_argument("--h-trace", required=True, help="the h-trace launcher")
    parser.add_argument("--h-dump", required=True, help="h-dump")
    parser.add_argument("--np", required=True, type=int, help="rank count")
    parser.add_argument("--mpirun", help="mpirun to trace with (default: mpirun or mpiexec from PATH)")
    parser.add_argument("--precision", type=int, default=100, help="MERGE_PRECISION of both traces (default 100)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds each run may take (default 120)")
    parser.add_argument("--smpirun-option", action="append", default=[], help="an option for smpirun")
    parser.add_argument("--shared-copy", action="store_true", help="run with -no-privatize: no trace, one line")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory even after a pass")
    args = parser.parse_args(options)
    args.command = [os.path.abspath(command[0]) if os.path.exists(command[0]) else command[0]] + command[1:]
    return args


def events(args, trace, scratch):
    """The trace's events as h-dump prints them, without what differs by nature."""
    status, stdout, stderr = run([os.path.abspath(args.h_dump), str(trace)], {}, scratch, args.timeout)
    if status != 0:
        raise TestFailure(f"h-dump {trace} failed (exit status {status}): {stderr}")
    body = stdout.split("\n\n", 1)[1] if "\n\n" in stdout else ""
    return [TIMES.sub("", SIGNATURE.sub("", line)) for line in body.splitlines()]


def check_refusal(status, stdout, stderr, real_output, simulated):
    refusals = [line for line in stderr.splitlines() if line.startswith("h-trace: no trace written: the simulated ranks")]
    if status != 0 or program_output(stdout) != real_output:
        raise TestFailure(f"with -no-privatize the program did not run as without the tracer (exit status {status})"
                          f"\nstdout:\n{stdout}\nstderr:\n{stderr}")
    if len(refusals) != 1 or simulated.exists():
        raise TestFailure(f"with -no-privatize: {len(refusals)} refusal lines, trace written: {simulated.exists()}"
                          f"\nstderr:\n{stderr}")
    print("with -no-privatize: " + refusals[0], flush=True)


def run_case(args, mpirun, scratch):
    environment = {"MERGE_PRECISION": str(args.precision)}
    real = scratch / "real.h"
    command = mpirun_command(mpirun, args.np, [os.path.abspath(args.h_trace)] + args.command)
    status, stdout, stderr = run(command, {**environment, "HTRACE_FILE": str(real)}, scratch, args.timeout)
    if status != 0 or not real.is_file():
        raise TestFailure(f"tracing with MPI failed (exit status {status})\nstdout:\n{stdout}\nstderr:\n{stderr}")
    real_output = program_output(stdout)

    simulated = scratch / "simulated.h"
    options = args.smpirun_option + (["-no-privatize"] if args.shared_copy else [])
    command = [args.smpirun, "-platform", os.path.abspath(args.platform), "-np", str(args.np)] + QUIET + options + \
        [os.path.abspath(args.smpi_traced_program)] + args.command[1:]
    status, stdout, stderr = run(command, {**environment, "HTRACE_FILE": str(simulated)}, scratch, args.timeout)
    if args.shared_copy:
        check_refusal(status, stdout, stderr, real_output, simulated)
        return
    if status != 0 or not simulated.is_file():
        raise TestFailure(f"tracing under SimGrid failed (exit status {status})\nstdout:\n{stdout}\nstderr:\n{stderr}")
    if program_output(stdout) != real_output:
        raise TestFailure("the SMPI build printed something else than the MPI build, so they did not do the "
                          "same work:\n" + "\n".join(["SMPI:"] + program_output(stdout) + ["MPI:"] + real_output))

    expected, got = events(args, real, scratch), events(args, simulated, scratch)
    if not expected:
        raise TestFailure("the trace of the MPI run holds no events")
    if expected != got:
        diff = difflib.unified_diff(expected, got, "traced with MPI", "traced under SimGrid", lineterm="", n=2)
        raise TestFailure("the traces differ:\n" + "\n".join(list(diff)[:80]))
    print(f"{pathlib.Path(args.command[0]).name} at {args.np} ranks, precision {args.precision}: "
          f"the same {len(expected)} lines of events in both traces", flush=True)


def main():
    args = parse_arguments(sys.argv[1:])
    if not (args.smpirun and args.smpi_traced_program):
        print("check_same_trace.py: SimGrid (smpirun, smpicc) not found at configure time: skipped")
        return SKIP
    mpirun = args.mpirun or shutil.which("mpirun") or shutil.which("mpiexec")
    if mpirun is None:
        print("check_same_trace.py: no mpirun or mpiexec on PATH: skipped")
        return SKIP
    return run_in_scratch("h-trace-same-", args.keep, lambda scratch: run_case(args, mpirun, scratch))


if __name__ == "__main__":
    sys.exit(main())
