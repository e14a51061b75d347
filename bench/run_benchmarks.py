#!/usr/bin/env python3
"""Benchmarks of the tracer (not part of the test suite; timing is noisy on shared machines).

    run_benchmarks.py sizes      [--build DIR]   trace bytes of the stencil at 4..64 ranks
    run_benchmarks.py call-cost  [--build DIR]   added time per intercepted call (Isend/Irecv/Waitall loop)
    run_benchmarks.py merge-time [--build DIR]   MPI_Finalize merge and write time at 64 ranks

Each writes bench/results/<name>.csv and prints a Markdown table for RESULTS.md.
"""
import argparse
import csv
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")


def mpirun(np, command, env=None, cwd=None):
    run = subprocess.run(["mpirun", "-np", str(np), "--oversubscribe"] + command, env=env or ENV, cwd=cwd,
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        sys.exit(f"failed: {command}\n{run.stdout}\n{run.stderr}")
    return run


def write_csv(name, header, rows):
    out = HERE / "results" / f"{name}.csv"
    out.parent.mkdir(exist_ok=True)
    with open(out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    print(f"(written {out.relative_to(ROOT)})")


def sizes(build):
    launcher, stencil = build / "src/capture/h-trace", build / "tests/mpi/stencil"
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for np in (4, 8, 16, 32, 64):
            trace = pathlib.Path(scratch) / f"stencil-{np}.h"
            env = dict(ENV, HTRACE_FILE=str(trace), MERGE_PRECISION="100")
            mpirun(np, [str(launcher), str(stencil), "100", "16"], env=env, cwd=scratch)
            rows.append((np, trace.stat().st_size))
    write_csv("stencil_trace_bytes", ["ranks", "bytes"], rows)
    print("| ranks | trace bytes | vs. 4 ranks |\n| --- | --- | --- |")
    for np, size in rows:
        print(f"| {np} | {size} | {size / rows[0][1]:.2f}x |")


def call_cost(build, repetitions=15):
    program = pathlib.Path(tempfile.gettempdir()) / "htrace_call_cost"
    subprocess.run(["mpicc", "-O2", str(HERE / "call_cost.c"), "-o", str(program)], check=True)
    launcher = build / "src/capture/h-trace"
    pattern = re.compile(r"median_ns_per_call ([\d.]+)")
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(ENV, HTRACE_FILE=str(pathlib.Path(scratch) / "trace.h"))
        for ranks in (1, 2):
            for i in range(repetitions):
                # Untraced and traced side by side, so drift of the machine hits both alike.
                plain = float(pattern.search(mpirun(ranks, [str(program), "100000", "5"], env=env, cwd=scratch).stdout)[1])
                traced = float(pattern.search(
                    mpirun(ranks, [str(launcher), str(program), "100000", "5"], env=env, cwd=scratch).stdout)[1])
                rows.append((ranks, i, plain, traced, traced - plain))
    write_csv("call_cost", ["ranks", "run", "untraced_ns_per_call", "traced_ns_per_call", "added_ns"], rows)
    print("| ranks | untraced ns/call (median) | traced ns/call (median) | added ns/call (median of pairs) | min..max added |")
    print("| --- | --- | --- | --- | --- |")
    for ranks in (1, 2):
        mine = [r for r in rows if r[0] == ranks]
        added = [r[4] for r in mine]
        print(f"| {ranks} | {statistics.median(r[2] for r in mine):.0f} | {statistics.median(r[3] for r in mine):.0f} "
              f"| {statistics.median(added):.0f} | {min(added):.0f}..{max(added):.0f} |")


def merge_time(build, repetitions=5):
    launcher, stencil = build / "src/capture/h-trace", build / "tests/mpi/stencil"
    pattern = re.compile(r"\((\d+) ranks, (\d+) bytes; merge ([\d.]+) s, write ([\d.]+) s\)")
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(ENV, HTRACE_FILE=str(pathlib.Path(scratch) / "trace.h"))
        for i in range(repetitions):
            found = pattern.search(mpirun(64, [str(launcher), str(stencil), "100", "16"], env=env, cwd=scratch).stderr)
            rows.append((i, int(found[1]), int(found[2]), float(found[3]), float(found[4])))
    write_csv("merge_time_64", ["run", "ranks", "bytes", "merge_seconds", "write_seconds"], rows)
    print(f"| ranks | merge s (median of {repetitions}) | min..max | write s (median) |\n| --- | --- | --- | --- |")
    merges = [r[3] for r in rows]
    print(f"| 64 | {statistics.median(merges):.4f} | {min(merges):.4f}..{max(merges):.4f} "
          f"| {statistics.median(r[4] for r in rows):.4f} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["sizes", "call-cost", "merge-time"])
    parser.add_argument("--build", default=str(ROOT / "build"))
    args = parser.parse_args()
    build = pathlib.Path(args.build).resolve()
    {"sizes": sizes, "call-cost": call_cost, "merge-time": merge_time}[args.what](build)


if __name__ == "__main__":
    main()
