#!/usr/bin/env python3
"""What the time in calls costs in trace bytes (issue 30): each shipped program (the suite `mpi`'s, at
its first rank count) and NPB CG/MG, traced at precisions 100 and 0 by a build before the change and
by this one, in turn, with the same launcher and arguments.

    in_call_bytes.py --before BUILD --after BUILD [--npb-bin DIR] [--npb-ranks 4,16,64]
                     [--programs NAME,...] [--csv FILE] [--timeout SECONDS]

Per program, rank count and precision, one CSV row: the bytes of the trace each build wrote, their
ratio (after / before), and, from `rewrite-trace` of the after build's trace, the bytes the same
trace takes without the time in calls (format 18), without where the ranks' time went (format 19)
and without both: what the fields themselves cost, on the very same trace (the two builds' runs
differ in their timings, and so in the computation groups the merge keeps).
"""
import argparse
import csv
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests" / "mpi"))
from mpi_launch import mpirun_command, run_job  # noqa: E402
from trace_programs import shipped_runs  # noqa: E402

FIELDS = ["program", "ranks", "precision", "bytes_before", "bytes_after", "ratio", "after_without_in_call",
          "in_call_share", "after_without_rank_times", "after_without_times", "times_share"]


def first_runs(build):
    """Each shipped program once, at its lowest rank count: (name, mpirun, ranks, program, env)."""
    taken = set()
    for name, mpirun, ranks, _, program, env in sorted(shipped_runs(build), key=lambda run: run[2]):
        if program[0] in taken:
            continue
        taken.add(program[0])
        yield name.split("-np")[0], mpirun, ranks, program, env


def trace_bytes(build, mpirun, ranks, program, env, precision, trace, timeout):
    h_trace = build / "src" / "capture" / "h-trace"
    with tempfile.TemporaryDirectory(prefix="h-trace-in-call-") as scratch:
        status, _, stderr = run_job(mpirun_command(mpirun, ranks, [str(h_trace)] + program),
                                    dict(env, HTRACE_FILE=str(trace), MERGE_PRECISION=precision), scratch, timeout)
    if status != 0 or not trace.exists():
        print(f"in_call_bytes.py: {trace.name}: no trace (status {status}): {stderr.strip()[-300:]}", file=sys.stderr)
        return None
    return trace.stat().st_size


def without_fields(after, trace):
    """The bytes of `trace` without the time in calls, without the ranks' times, without both."""
    done = subprocess.run([str(after / "bench" / "rewrite-trace"), str(trace)], capture_output=True, text=True)
    if done.returncode != 0:
        print(f"in_call_bytes.py: rewrite-trace {trace.name}: {done.stderr.strip()}", file=sys.stderr)
        return None
    return [int(column) for column in done.stdout.splitlines()[1].split(",")[3:6]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=pathlib.Path, required=True)
    parser.add_argument("--after", type=pathlib.Path, required=True)
    parser.add_argument("--npb-bin", type=pathlib.Path)
    parser.add_argument("--npb-ranks", default="4,16,64")
    parser.add_argument("--programs", help="only these shipped programs (default: all)")
    parser.add_argument("--csv", type=pathlib.Path)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    before, after = args.before.resolve(), args.after.resolve()
    runs = list(first_runs(after))
    if args.programs:
        runs = [run for run in runs if run[0] in args.programs.split(",")]
    if args.npb_bin:
        for kernel in ("cg", "mg"):
            for ranks in map(int, args.npb_ranks.split(",")):
                runs.append((f"npb-{kernel}.W", "mpirun", ranks, [str(args.npb_bin.resolve() / f"{kernel}.W.x")], {}))
    out = csv.DictWriter(open(args.csv, "w", newline="") if args.csv else sys.stdout, fieldnames=FIELDS)
    out.writeheader()
    with tempfile.TemporaryDirectory(prefix="h-trace-in-call-bytes-") as traces:
        traces = pathlib.Path(traces)
        for name, mpirun, ranks, program, env in runs:
            for precision in ("100", "0"):
                sizes = {}
                for label, build in (("before", before), ("after", after)):
                    trace = traces / f"{name}-{ranks}-p{precision}-{label}.h"
                    sizes[label] = trace_bytes(build, mpirun, ranks, program, env, precision, trace, args.timeout)
                if None in sizes.values():
                    continue
                trace = traces / f"{name}-{ranks}-p{precision}-after.h"
                without_in_call, without_rank_times, without_times = without_fields(after, trace) or ("", "", "")
                now = trace.stat().st_size
                out.writerow({"program": name, "ranks": ranks, "precision": precision,
                              "bytes_before": sizes["before"], "bytes_after": sizes["after"],
                              "ratio": round(sizes["after"] / sizes["before"], 4),
                              "after_without_in_call": without_in_call,
                              "in_call_share": round(now / without_in_call - 1, 4) if without_in_call else "",
                              "after_without_rank_times": without_rank_times,
                              "after_without_times": without_times,
                              "times_share": round(now / without_times - 1, 4) if without_times else ""})
                if args.csv:
                    print(f"# {name} at {ranks}, p = {precision}: {sizes['before']} -> {sizes['after']} bytes",
                          file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
