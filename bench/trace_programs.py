#!/usr/bin/env python3
"""Traces every shipped test program (the suite `mpi` of a build: each program with the arguments,
rank count and merge precision its test runs it with), for the fuzzing corpus and the mutation
campaign (issue 26). The traces are made here, at test or benchmark time, never committed.

    trace_programs.py BUILD OUTDIR [--timeout SECONDS] [--first-only]

BUILD is a configured and compiled build directory (meson); each trace goes to
OUTDIR/NAME.h, NAME being the test's (ring-np4, amr-np16-p0 ...). --first-only takes one rank count
per program and precision (the lowest). Programs run in a scratch directory (some write files).
Prints how many traces it made; a program that fails to trace is reported and left out.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests" / "mpi"))
from mpi_launch import mpirun_command, run_job  # noqa: E402


def option(command, name):
    return command[command.index(name) + 1] if name in command else None


def shipped_runs(build):
    """(name, mpirun, ranks, precision, program and arguments, the test's environment) of each test of
    the suite mpi (the environment: Open MPI's one-sided component for the programs that need one)."""
    tests = json.loads(subprocess.run(["meson", "introspect", "--tests", str(build)], capture_output=True,
                                      text=True, check=True).stdout)
    for test in tests:
        if not any(suite.endswith(":mpi") or suite == "mpi" for suite in test["suite"]):
            continue
        command = test["cmd"]
        # Only run_traced.py's cases; a program linked with the tracer traces itself (its trace is ring's).
        if "--" not in command or "--np" not in command or "--linked" in command:
            continue
        program = command[command.index("--") + 1:]
        program[0] = str((build / program[0]).resolve())
        yield (test["name"], option(command, "--mpirun") or "mpirun", int(option(command, "--np")),
               option(command, "--precision") or "100", program, test.get("env") or {})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", type=pathlib.Path)
    parser.add_argument("outdir", type=pathlib.Path)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--first-only", action="store_true")
    args = parser.parse_args()
    build = args.build.resolve()
    h_trace = build / "src" / "capture" / "h-trace"
    args.outdir.mkdir(parents=True, exist_ok=True)
    made, failed, taken = 0, [], set()
    for name, mpirun, ranks, precision, program, env in sorted(shipped_runs(build), key=lambda run: run[2]):
        if args.first_only:
            key = (pathlib.Path(program[0]).name, precision)
            if key in taken:
                continue
            taken.add(key)
        trace = (args.outdir / f"{name}.h").resolve()
        with tempfile.TemporaryDirectory(prefix="h-trace-programs-") as scratch:
            try:
                status, _, stderr = run_job(mpirun_command(mpirun, ranks, [str(h_trace)] + program),
                                            dict(env, HTRACE_FILE=str(trace), MERGE_PRECISION=precision),
                                            scratch, args.timeout)
            except RuntimeError as timeout:
                status, stderr = -1, str(timeout)
        if status == 0 and trace.exists():
            made += 1
        else:
            failed.append(name)
            print(f"trace_programs.py: {name}: no trace (status {status}): {stderr.strip()[-500:]}", file=sys.stderr)
            trace.unlink(missing_ok=True)
    print(f"{made} traces in {args.outdir}" + (f"; no trace of {', '.join(failed)}" if failed else ""))
    return 0 if made > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
