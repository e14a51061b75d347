#!/usr/bin/env python3
"""How close `h-dump --profile` comes to a program's own timers (issue 30): `load_imbalance` (rank 0
computes SLOW ms per iteration, the others FAST ms, then all meet in an MPI_Allreduce; each rank
logs the time it measured before and inside each call), traced at each rank count, several runs.

    profile_accuracy.py --build BUILD [--ranks 2,4,8,16] [--runs 3] [--iterations 50] [--csv FILE]
    profile_accuracy.py --build BUILD --npb-bin NPB/bin [--npb cg.W,mg.W] [--ranks 2,4] [--runs 3] [--csv FILE]

Per run and rank count, one CSV row per figure of the profile's time per rank (least, mean and most
time in MPI and computation, and share in MPI): the profile's value, the program's (its ranks'
sums of in_call_us and compute_us, and the first over both), and their relative difference.

With --npb-bin, the NAS Parallel Benchmarks' own timers instead (a `timer.flag` file turns them on):
each benchmark prints its timed section's total and its time communicating (min, max and mean over
the ranks). Their share is compared with the profile's mean share in MPI, which counts the whole run
after MPI_Init, the benchmark's untimed set-up included.
"""
import argparse
import csv
import json
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests" / "mpi"))
from check_calls import read_call_logs  # noqa: E402
from check_profile import logged_times  # noqa: E402
from mpi_launch import mpirun_command, run_job  # noqa: E402

FIELDS = ["ranks", "run", "figure", "profile", "program", "relative_difference"]


def traced_profile(build, ranks, program, scratch, extra_env, timeout):
    """Runs `program` (a command) traced at `ranks` in `scratch`: (status, stdout, stderr, the trace's
    profile as h-dump --profile --json gives it, or None where the job failed)."""
    trace = scratch / "trace.h"
    command = [str(build / "src" / "capture" / "h-trace")] + program
    status, stdout, stderr = run_job(mpirun_command("mpirun", ranks, command), {"HTRACE_FILE": str(trace), **extra_env},
                                     scratch, timeout)
    if status != 0:
        return status, stdout, stderr, None
    dumped = subprocess.run([str(build / "h-dump"), "--profile", "--json", str(trace)], capture_output=True, text=True,
                            check=True)
    return status, stdout, stderr, json.loads(dumped.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=pathlib.Path, required=True)
    parser.add_argument("--ranks", default="2,4,8,16")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--iterations", default="50")
    parser.add_argument("--csv", type=pathlib.Path)
    parser.add_argument("--npb-bin", type=pathlib.Path, help="compare with the NPB's own timers (its bin directory)")
    parser.add_argument("--npb", default="cg.W,mg.W", help="the NPB binaries (NAME.x in --npb-bin)")
    args = parser.parse_args()
    build = args.build.resolve()
    if args.npb_bin:
        return compare_with_npb(args, build)
    out = csv.DictWriter(open(args.csv, "w", newline="") if args.csv else sys.stdout, fieldnames=FIELDS)
    out.writeheader()
    differences = {}
    for ranks in map(int, args.ranks.split(",")):
        for run in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="h-trace-profile-") as scratch:
                scratch = pathlib.Path(scratch)
                (scratch / "logs").mkdir()
                program = [str(build / "tests" / "mpi" / "load_imbalance"), args.iterations, "10", "2"]
                status, _, stderr, profile = traced_profile(build, ranks, program, scratch,
                                                            {"CALL_LOG_DIR": str(scratch / "logs")}, 600)
                if status != 0:
                    print(f"profile_accuracy.py: {ranks} ranks: status {status}: {stderr[-300:]}", file=sys.stderr)
                    continue
                mpi, computation, _ = logged_times(read_call_logs(scratch / "logs", ranks), ranks)
            share = {rank: mpi[rank] / (mpi[rank] + computation[rank]) for rank in mpi}
            for name, measured in (("mpi", mpi), ("computation", computation), ("mpi_share", share)):
                spread = profile["rank_times"][name]
                for key, value in (("min", min(measured.values())), ("mean", statistics.mean(measured.values())),
                                   ("max", max(measured.values()))):
                    difference = (spread[key] - value) / value
                    differences.setdefault((ranks, f"{name} {key}"), []).append(abs(difference))
                    out.writerow({"ranks": ranks, "run": run, "figure": f"{name} {key}", "profile": f"{spread[key]:.6g}",
                                  "program": f"{value:.6g}", "relative_difference": f"{difference:.4f}"})
    for (ranks, figure), values in differences.items():
        print(f"# {ranks} ranks, {figure}: median |difference| {statistics.median(values):.2%}, "
              f"worst {max(values):.2%} over {len(values)} runs", file=sys.stderr)
    return 0


NPB_FIELDS = ["program", "ranks", "run", "npb_total_s", "npb_comm_min_s", "npb_comm_mean_s", "npb_comm_max_s",
              "npb_comm_share", "profile_job_s", "profile_mpi_mean_s", "profile_mpi_share", "relative_difference"]
NPB_TIMER = re.compile(r"^\s*timer\s+\d+\(\s*(\w+)\s*\)\s*:\s+(\S+)\s+(\S+)\s+(\S+)")


def npb_timers(stdout):
    """NAME -> (min, max, mean) seconds from the table an NPB benchmark prints with timer.flag."""
    return {m.group(1): tuple(map(float, m.group(2, 3, 4))) for m in map(NPB_TIMER.match, stdout.splitlines()) if m}


def compare_with_npb(args, build):
    out = csv.DictWriter(open(args.csv, "w", newline="") if args.csv else sys.stdout, fieldnames=NPB_FIELDS)
    out.writeheader()
    for program in args.npb.split(","):
        for ranks in map(int, args.ranks.split(",")):
            for run in range(args.runs):
                with tempfile.TemporaryDirectory(prefix="h-trace-profile-npb-") as scratch:
                    scratch = pathlib.Path(scratch)
                    (scratch / "timer.flag").touch()
                    status, stdout, stderr, profile = traced_profile(
                        build, ranks, [str(args.npb_bin.resolve() / f"{program}.x")], scratch, {}, 1800)
                    timers = npb_timers(stdout)
                    if status != 0 or "total" not in timers or "totcomm" not in timers:
                        print(f"profile_accuracy.py: {program} at {ranks} ranks: status {status}, no timers: "
                              f"{stderr[-300:]}", file=sys.stderr)
                        continue
                times = profile["rank_times"]
                npb_share = timers["totcomm"][2] / timers["total"][2]
                share = times["mpi_share"]["mean"]
                out.writerow({"program": program, "ranks": ranks, "run": run, "npb_total_s": timers["total"][2],
                              "npb_comm_min_s": timers["totcomm"][0], "npb_comm_mean_s": timers["totcomm"][2],
                              "npb_comm_max_s": timers["totcomm"][1], "npb_comm_share": f"{npb_share:.4f}",
                              "profile_job_s": profile["traced_seconds"], "profile_mpi_mean_s": times["mpi"]["mean"],
                              "profile_mpi_share": f"{share:.4f}",
                              "relative_difference": f"{(share - npb_share) / npb_share:.4f}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
