#!/usr/bin/env python3
"""Replay fidelity on a simulated network: does replaying a program's trace take the program's time?

    check_fidelity.py --smpirun PATH --platform XML --h-replay-smpi PATH --smpi-program PATH
                      --h-trace PATH --np N [--mpirun PATH] [--precision P] [--tolerance PERCENT]
                      [--timeout SECONDS] [--keep] -- PROGRAM ARGS...

1. Runs the SMPI build of the program (--smpi-program, linked with job_timer.c) on the platform:
   `smpirun -platform XML -np N --cfg=smpi/simulate-computation:no SMPI_PROGRAM ARGS`. Its computation
   takes no simulated time, so its time is its communication on the simulated network; job_timer.c
   prints it, measured the way h-replay measures a replay.
2. Traces the real MPI build (PROGRAM): `mpirun -np N h-trace PROGRAM ARGS` with MERGE_PRECISION=P
   (--precision, default 100: lossless), and requires it to print what the SMPI build printed (both
   did the same work).
3. Replays the trace on the same platform: `smpirun ... h-replay-smpi --no-compute trace.h`, with SMPI
   asked to count host time between MPI calls as computation at a realistic host speed -- which
   h-replay-smpi must refuse by itself (its host time is its interpretation of the trace), or the
   times drift apart -- and reads the replay time from h-replay's --report-json.
4. Prints both times and their ratio; fails when they differ by more than --tolerance percent (2).
5. With --otf2-print and --h-dump, the replay also writes its timeline as an OTF2 archive: it must
   hold the calls `h-dump --otf2` lays out for the trace (per rank and operation; but those the
   simulation leaves out), and carry the
   simulated times: its last call ends where the replay's simulated time does, within 1%.

Simulation is deterministic: the same inputs give the same times, so the bound is a test, not a
benchmark. (A program whose path depends on timing, like master_worker's wildcard receives, may take
another path traced for real than simulated; the same output shows they did the same work in all.) Every run has a time limit; running into it fails. Exit status 0 passes, 1 fails, 77 skips
(no SimGrid, or no mpirun), as Meson reads them. The scratch directory is kept after a failure.
"""

import argparse
import collections
import json
import os
import pathlib
import re
import shutil
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "mpi"))
from mpi_launch import mpirun_command  # noqa: E402
from check_calls import CannotCompare  # noqa: E402
from check_timeline import otf2_counts  # noqa: E402
from run_traced import TestFailure, program_output, run, run_in_scratch  # noqa: E402

SKIP = 77
# job_timer.c's line on rank 0's stderr.
JOB_TIME = re.compile(r"^job_timer: ([0-9.eE+-]+) s$", re.MULTILINE)
# Without this SMPI would add the host CPU time the program spends between MPI calls, scaled by a
# guess of the host's speed, to the simulated time: the application's computation is not what this
# test compares (the replay runs --no-compute), and host time is not deterministic.
NO_HOST_TIME = "--cfg=smpi/simulate-computation:no"
# SMPI charges simulated time for every MPI_Test (and the MPI_Testsome loop inside its MPI_Waitsome), to
# let polling loops advance: host-side cost, not communication, and what replay does not re-enact
# (it waits where the program polled). amr's Waitsome steps took 45 times its communication time with
# it. Both runs go without it.
NO_POLLING_TIME = "--cfg=smpi/test:0"
# What the replay must withstand: host time between calls counted at a realistic host speed (1 Gflop
# per host second, as fast as the platform's hosts). h-replay-smpi switches the counting off itself.
COUNT_HOST_TIME = ["--cfg=smpi/simulate-computation:yes", "--cfg=smpi/host-speed:1Gf"]
# Noise in the logs: SMPI reports each option given on the command line, and warns that the host speed
# (used only to count host time) is not set where host time is not counted.
QUIET = ["--log=xbt_cfg.thres:warning", "--log=smpi_config.thres:warning"]


def parse_arguments(argv):
    if "--" not in argv:
        sys.exit("check_fidelity.py: put the program and its arguments after '--'")
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    if not command:
        sys.exit("check_fidelity.py: no program after '--'")
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    parser.add_argument("--smpirun", help="SimGrid's smpirun (absent: the test is skipped)")
    parser.add_argument("--platform", required=True, help="the SimGrid platform file")
    parser.add_argument("--h-replay-smpi", help="h-replay built for SMPI (absent: skipped)")
    parser.add_argument("--smpi-program", help="the program built with smpicc and job_timer.c (absent: skipped)")
    parser.add_argument("--h-trace", required=True, help="the h-trace launcher")
    parser.add_argument("--np", required=True, type=int, help="rank count")
    parser.add_argument("--mpirun", help="mpirun to trace with (default: mpirun or mpiexec from PATH)")
    parser.add_argument("--precision", type=int, default=100, help="MERGE_PRECISION of the trace (default 100)")
    parser.add_argument("--tolerance", type=float, default=2.0, help="percent the times may differ (default 2)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds each run may take (default 120)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory even after a pass")
    parser.add_argument("--otf2-print", help="also check the replay's OTF2 archive, read with this otf2-print")
    parser.add_argument("--h-dump", help="h-dump, for the archive the trace expects (with --otf2-print)")
    args = parser.parse_args(options)
    args.command = [os.path.abspath(command[0]) if os.path.exists(command[0]) else command[0]] + command[1:]
    return args


def smpirun_command(args, options, program):
    return [args.smpirun, "-platform", os.path.abspath(args.platform), "-np", str(args.np)] + QUIET + options + \
        [os.path.abspath(program)]


def application_seconds(args, scratch):
    """Runs the SMPI build; returns its simulated time and its output."""
    command = smpirun_command(args, [NO_HOST_TIME, NO_POLLING_TIME], args.smpi_program) + args.command[1:]
    status, stdout, stderr = run(command, {}, scratch, args.timeout)
    times = JOB_TIME.findall(stderr)
    if status != 0 or len(times) != 1:
        raise TestFailure(f"the SMPI build of the program failed (exit status {status}, {len(times)} job_timer "
                          f"lines)\nstdout:\n{stdout}\nstderr:\n{stderr}")
    return float(times[0]), program_output(stdout)


def trace_program(args, mpirun, scratch):
    """Traces the MPI build at the precision asked; returns the trace and the program's output."""
    trace = scratch / "trace.h"
    command = mpirun_command(mpirun, args.np, [os.path.abspath(args.h_trace)] + args.command)
    status, stdout, stderr = run(command, {"HTRACE_FILE": str(trace), "MERGE_PRECISION": str(args.precision)},
                                 scratch, args.timeout)
    if status != 0 or not trace.is_file():
        raise TestFailure(f"tracing failed (exit status {status})\nstdout:\n{stdout}\nstderr:\n{stderr}")
    return trace, program_output(stdout)


def replay_seconds(args, scratch, trace):
    report = scratch / "replay.json"
    timeline = ["--otf2", str(scratch / "replay-otf2")] if args.otf2_print else []
    command = smpirun_command(args, COUNT_HOST_TIME + [NO_POLLING_TIME], args.h_replay_smpi) + [
        "--no-compute", "--report-json", str(report), *timeline, str(trace)]
    status, stdout, stderr = run(command, {}, scratch, args.timeout)
    print(stderr, end="")
    if status != 0 or not report.is_file():
        raise TestFailure(f"the replay failed (exit status {status})\nstdout:\n{stdout}\nstderr:\n{stderr}")
    return json.loads(report.read_text())["replay_seconds"]


# Calls h-replay-smpi does not issue: SMPI's buffered sends do not go through an attached buffer, so
# it sends them as standard ones without one (src/replay/executor.cpp). They are in h-dump's layout only.
LEFT_OUT_BY_SIMULATION = {"MPI_Buffer_attach", "MPI_Buffer_detach"}


def check_timeline(args, scratch, trace, replay):
    """The replay's OTF2 archive against h-dump's of the trace, and its end against the replay's time."""
    expected_archive = scratch / "expected-otf2"
    status, stdout, stderr = run([os.path.abspath(args.h_dump), "--otf2", str(expected_archive), str(trace)], {},
                                 scratch, args.timeout)
    if status != 0:
        raise TestFailure(f"h-dump --otf2 failed (exit status {status})\n{stderr}")
    try:
        archive, last_end = otf2_counts(args.otf2_print, scratch / "replay-otf2", with_last_leave=True)
        expected = otf2_counts(args.otf2_print, expected_archive)
    except CannotCompare as error:
        raise TestFailure(str(error)) from error
    expected = collections.Counter({key: count for key, count in expected.items()
                                    if key[1] not in LEFT_OUT_BY_SIMULATION})
    if archive != expected or not archive:
        differences = [f"rank {rank} {op}: replay {archive[(rank, op)]}, h-dump {expected[(rank, op)]}"
                       for rank, op in sorted(set(archive) | set(expected)) if archive[(rank, op)] != expected[(rank, op)]]
        raise TestFailure("the replay's OTF2 archive does not hold the calls h-dump --otf2 lays out:\n" +
                          "\n".join(differences[:20]))
    print(f"  OTF2 archive: {sum(archive.values())} calls, the last ending at {last_end:.9f} s (simulated)")
    if abs(last_end - replay) > 0.01 * replay:
        raise TestFailure(f"the replay's OTF2 archive ends at {last_end:.9f} s, the replay took {replay:.9f} s "
                          "(simulated): its times are not the simulation's")


def run_case(args, mpirun, scratch):
    application, simulated_output = application_seconds(args, scratch)
    trace, traced_output = trace_program(args, mpirun, scratch)
    if simulated_output != traced_output:
        raise TestFailure("the SMPI build printed something else than the MPI build, so they did not do the "
                          "same work:\n" + "\n".join(["SMPI:"] + simulated_output + ["MPI:"] + traced_output))
    print("".join(line + "\n" for line in traced_output), end="")
    replay = replay_seconds(args, scratch, trace)

    ratio = replay / application
    platform = pathlib.Path(args.platform).name
    print(f"{pathlib.Path(args.command[0]).name} at {args.np} ranks on {platform}, precision {args.precision}:\n"
          f"  application {application:.9f} s (simulated, communication only)\n"
          f"  replay      {replay:.9f} s (h-replay-smpi --no-compute)\n"
          f"  replay/application {ratio:.4f} ({100 * (ratio - 1):+.2f}%, bound {args.tolerance:g}%)", flush=True)
    if abs(ratio - 1) * 100 > args.tolerance:
        raise TestFailure(f"the replay's simulated time is {100 * (ratio - 1):+.2f}% off the application's, "
                          f"beyond {args.tolerance:g}%")
    if args.otf2_print and args.h_dump:
        check_timeline(args, scratch, trace, replay)


def main():
    args = parse_arguments(sys.argv[1:])
    if not (args.smpirun and args.h_replay_smpi and args.smpi_program):
        print("check_fidelity.py: SimGrid (smpirun, smpicxx, smpicc) not found at configure time: skipped")
        return SKIP
    mpirun = args.mpirun or shutil.which("mpirun") or shutil.which("mpiexec")
    if mpirun is None:
        print("check_fidelity.py: no mpirun or mpiexec on PATH: skipped")
        return SKIP

    return run_in_scratch("h-trace-smpi-", args.keep, lambda scratch: run_case(args, mpirun, scratch))


if __name__ == "__main__":
    sys.exit(main())
