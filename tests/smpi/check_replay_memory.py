#!/usr/bin/env python3
"""Under SimGrid every simulated rank lives in one process: h-replay-smpi must hold about what the
program's own ranks hold, not a buffer of the whole communicator at every rank of every collective.

    check_replay_memory.py --smpirun PATH --h-replay-smpi PATH --smpi-program PATH --smpi-traced-program PATH
                           --platform XML --np N [--timeout SECONDS] -- ARGS

Runs the program's SMPI build (job_timer.c) untraced and its build with the tracer for SMPI at N
ranks, then `h-replay-smpi --no-compute` of that trace, and requires the replay's peak resident
memory (the largest of the process tree, as the kernel counts it for waited children) to be at most
FACTOR times the untraced program's plus SLACK_MIB. strong_scaling gathers every rank's block to rank
0: a replay that gave each rank the root's buffer took 3.75 GB at 256 ranks where the program took
56 MB. Exit status 0 passes, 1 fails, 77 skips (no SimGrid).
"""
import argparse
import os
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "mpi"))
from mpi_launch import run_session  # noqa: E402

SKIP = 77
QUIET = ["--log=xbt_cfg.thres:warning", "--log=smpi_config.thres:warning"]
FACTOR = 3
SLACK_MIB = 64
# Run by a Python of its own, so that the peak is that command's alone.
PEAK_OF = ("import resource, subprocess, sys\n"
           "done = subprocess.run(sys.argv[1:], capture_output=True)\n"
           "sys.stderr.buffer.write(done.stderr[-2000:])\n"
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
           "sys.exit(done.returncode)\n")


def peak_kib(command, env, cwd, timeout):
    print("$", " ".join(command), flush=True)
    # A run past the limit is killed whole: left behind, a 256-rank simulation would load the
    # machine for the tests that follow.
    status, stdout, stderr = run_session([sys.executable, "-c", PEAK_OF] + command, env, cwd, timeout)
    if status != 0:
        raise RuntimeError(f"exit status {status}: {stderr.strip()}")
    return int(stdout.split()[-1])


def main():
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    parser.add_argument("--smpirun")
    parser.add_argument("--h-replay-smpi")
    parser.add_argument("--smpi-program")
    parser.add_argument("--smpi-traced-program")
    parser.add_argument("--platform", required=True)
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=240)
    parser.add_argument("arguments", nargs="*")
    args = parser.parse_args()
    if not (args.smpirun and args.h_replay_smpi and args.smpi_program and args.smpi_traced_program):
        print("check_replay_memory.py: SimGrid (smpirun, smpicc, the tracer for SMPI) not found at configure time: "
              "skipped")
        return SKIP
    smpirun = [args.smpirun, "-platform", str(pathlib.Path(args.platform).resolve()), "-np", str(args.np),
               "--cfg=smpi/privatization:mmap", "--cfg=smpi/simulate-computation:no", "--cfg=smpi/test:0"] + QUIET
    # Meson sets MALLOC_PERTURB_, with which glibc writes every block it hands out: SimGrid's stack for
    # each rank too, 8 MiB each, which would be most of both peaks.
    env = {name: value for name, value in os.environ.items() if name != "MALLOC_PERTURB_"}
    with tempfile.TemporaryDirectory(prefix="h-trace-replay-memory-") as scratch:
        trace = pathlib.Path(scratch) / "trace.h"
        try:
            program = peak_kib(smpirun + [str(pathlib.Path(args.smpi_program).resolve())] + args.arguments, env,
                               scratch, args.timeout)
            peak_kib(smpirun + [str(pathlib.Path(args.smpi_traced_program).resolve())] + args.arguments,
                     dict(env, HTRACE_FILE=str(trace), MERGE_PRECISION="100"), scratch, args.timeout)
            replay = peak_kib(smpirun + [str(pathlib.Path(args.h_replay_smpi).resolve()), "--no-compute", str(trace)],
                              env, scratch, args.timeout)
        except RuntimeError as error:
            print(f"FAIL: a run did not succeed: {error}")
            return 1
    limit = FACTOR * program + SLACK_MIB * 1024
    print(f"peak memory at {args.np} simulated ranks: the program {program} KiB, its replay {replay} KiB "
          f"(at most {limit} KiB)")
    if replay > limit:
        print("FAIL: the replay holds more than the program's ranks would")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
