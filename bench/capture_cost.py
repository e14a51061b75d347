#!/usr/bin/env python3
"""Issue 27: nanoseconds the tracer adds per MPI call, by stack depth and language.

Runs each program untraced and traced in interleaved pairs (so drift of the machine hits both alike)
and reports, per row, the added time per call of each pair, (traced - untraced) / calls, as
min / median / max over the pairs, and the median of the part the tracer counts as its own (format
21's time in the tracer, from a call's return to the wrapper handing it back: the call site, the
folding, the recording) over the MPI calls it recorded. The rows: the C ring (call_cost.c) and deep-stacks (deep_stacks.c;
256 call paths, -O3 without frame pointers) at depths 5, 10, 20, 40 and 60 in C, C++ and Fortran, and
deep-stacks-g (the same with -g) at depth 40.

    capture_cost.py [--build DIR] [--library LIBHTRACE] [--pairs N] [--ranks N] [--iterations N]
                    [--depths 5,10,...] [--languages c,cxx,fortran] [--csv FILE] [--by-path]

--by-path times call paths one at a time instead (deep-stacks' ONLY argument), at the first of
--depths: 16 paths per language, path 17k for k = 0..15, so that each of the 16 mid-level functions
and each of the 16 leaves (4 kinds of MPI call) is on one of them; each row is one path, and a last
row per language gives the median over its paths and the largest path's multiple of it.

--library traces with another libhtrace.so (HTRACE_LIBRARY), e.g. an earlier build's, for a before/after.
One rank by default: the tracer's own cost per call, without a second rank's waits (on a machine of
two shared cores those made single pairs differ by microseconds).
"""
import argparse
import csv
import json
import pathlib
import re
import statistics
import subprocess
import tempfile

from run_benchmarks import ENV, mpirun

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
RING = re.compile(r"calls_per_rank (\d+) median_ns_per_call ([\d.]+)")
DEEP = re.compile(r"calls_per_rank (\d+) seconds ([\d.]+)")
RECORDED = re.compile(r"h-trace: (\d+) MPI calls recorded")


def ns_per_call(output):
    """The program's own figure: ns per call of its timed loop."""
    if match := RING.search(output):
        return float(match[2])
    match = DEEP.search(output)
    return float(match[2]) * 1e9 / int(match[1])


def recording_ns_per_call(build, trace, stderr):
    """The tracer's own time per recorded call, on the mean rank: the trace's time in the tracer over
    the calls each rank recorded (the job's count over the ranks). None for a tracer older than
    format 21 (--library), which does not count it."""
    dumped = subprocess.run([str(build / "h-dump"), "--json", str(trace)], capture_output=True, text=True, check=True)
    header = json.loads(dumped.stdout)
    tracer = (header["rank_times"] or {}).get("tracer")
    if tracer is None:
        return None
    return tracer["mean"] * 1e9 / (int(RECORDED.search(stderr)[1]) / header["ranks"])


def shown_median(values):
    known = [value for value in values if value is not None]
    return f"{statistics.median(known):.0f}" if known else "-"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--library", help="the libhtrace.so to trace with (default: the build's)")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--ranks", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=100, help="passes over deep-stacks' call paths")
    parser.add_argument("--depths", default="5,10,20,40,60")
    parser.add_argument("--languages", default="c,cxx,fortran")
    parser.add_argument("--csv", help="write every pair here")
    parser.add_argument("--by-path", action="store_true", help="one row per call path (see above)")
    args = parser.parse_args()
    build = pathlib.Path(args.build).resolve()
    launcher = build / "src/capture/h-trace"
    ring = pathlib.Path(tempfile.gettempdir()) / "htrace_call_cost"
    subprocess.run(["mpicc", "-O2", str(HERE / "call_cost.c"), "-o", str(ring)], check=True)
    deep, deep_g = build / "bench/deep-stacks", build / "bench/deep-stacks-g"
    paths = "256"
    rows = [("C ring (call_cost.c)", [str(ring), "20000", "5"])]
    if args.by_path:
        depth = args.depths.split(",")[0]
        rows = [(f"deep-stacks {language} depth {depth} path {17 * k}",
                 [str(deep), depth, paths, str(args.iterations), language, "1", str(17 * k)])
                for language in args.languages.split(",") for k in range(16)]
    for language in ([] if args.by_path else args.languages.split(",")):
        for depth in args.depths.split(","):
            rows.append((f"deep-stacks {language} depth {depth}",
                         [str(deep), depth, paths, str(args.iterations), language]))
        rows.append((f"deep-stacks-g {language} depth 40", [str(deep_g), "40", paths, str(args.iterations), language]))
    env = dict(ENV)
    if args.library:
        env["HTRACE_LIBRARY"] = str(pathlib.Path(args.library).resolve())
    results = []
    path_medians = {}
    print(f"| program | untraced ns/call (median) | added ns/call: min | median | max | of which recording "
          f"(median) |  ({args.pairs} pairs, {args.ranks} ranks)")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as scratch:
        env["HTRACE_FILE"] = str(pathlib.Path(scratch) / "trace.h")
        for name, command in rows:
            plain, added, recording = [], [], []
            for pair in range(args.pairs):
                untraced = ns_per_call(mpirun(args.ranks, command, env, scratch).stdout)
                run = mpirun(args.ranks, [str(launcher)] + command, env, scratch)
                traced = ns_per_call(run.stdout)
                plain.append(untraced)
                added.append(traced - untraced)
                recording.append(recording_ns_per_call(build, env["HTRACE_FILE"], run.stderr))
                results.append((name, pair, untraced, traced, traced - untraced, recording[-1]))
            print(f"| {name} | {statistics.median(plain):.0f} | {min(added):.0f} | {statistics.median(added):.0f} "
                  f"| {max(added):.0f} | {shown_median(recording)} |", flush=True)
            if args.by_path:
                path_medians.setdefault(name.split(" path ")[0], []).append(statistics.median(added))
    for name, medians in path_medians.items():
        middle = statistics.median(medians)
        print(f"| {name}, {len(medians)} paths | | median {middle:.0f} | largest {max(medians):.0f} "
              f"| {max(medians) / middle:.2f}x the median | |")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["program", "pair", "untraced_ns_per_call", "traced_ns_per_call", "added_ns_per_call",
                             "recording_ns_per_call"])
            writer.writerows(results)


if __name__ == "__main__":
    main()
