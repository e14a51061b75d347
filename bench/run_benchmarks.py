#!/usr/bin/env python3
"""Benchmarks of the tracer (not part of the test suite; timing is noisy on shared machines).

    run_benchmarks.py sizes      [--build DIR]   trace bytes of the stencil at 4..64 ranks
    run_benchmarks.py call-cost  [--build DIR]   added time per intercepted call (Isend/Irecv/Waitall loop)
    run_benchmarks.py merge-time [--build DIR]   MPI_Finalize merge and write time at 64 ranks
    run_benchmarks.py precision-sizes [--build DIR]   trace bytes vs ranks of the precision programs at 100/95/0
    run_benchmarks.py precision-sweep [--build DIR]   trace bytes vs precision, convergence loop at 32 ranks
    run_benchmarks.py merge-cost [--build DIR]        matching cost of the merge on long similar traces
    run_benchmarks.py histogram-defaults [--build DIR] histogram fidelity and bytes vs bins and rebalance interval
    run_benchmarks.py replay-time [--build DIR]       h-replay time vs traced time, 2, 8 and 32 ranks, precision 100 and 0
    run_benchmarks.py replay-cost [--build DIR]       h-replay --no-compute at 64 ranks vs the application's MPI time

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


# The programs of the merge-precision issue and their arguments (timesteps).
PRECISION_PROGRAMS = {"convergence": ["50"], "land_sea": ["50"], "drifting": ["50"]}


def traced_bytes(build, program, args, ranks, precision, scratch):
    trace = pathlib.Path(scratch) / f"{program}-{ranks}-{precision}.h"
    env = dict(ENV, HTRACE_FILE=str(trace), MERGE_PRECISION=str(precision))
    run = mpirun(ranks, [str(build / "src/capture/h-trace"), str(build / "tests/mpi" / program)] + args, env=env,
                 cwd=scratch)
    merge = re.search(r"merge ([\d.]+) s", run.stderr)
    return trace.stat().st_size, float(merge[1]) if merge else float("nan")


def precision_sizes(build):
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for program, args in PRECISION_PROGRAMS.items():
            for precision in (100, 95, 0):
                for ranks in (4, 8, 16, 32, 64):
                    size, merge = traced_bytes(build, program, args, ranks, precision, scratch)
                    rows.append((program, precision, ranks, size, merge))
    write_csv("precision_trace_bytes", ["program", "precision", "ranks", "bytes", "merge_seconds"], rows)
    print("| program | precision | 4 | 8 | 16 | 32 | 64 ranks | 64 vs. 4 | merge s at 64 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for program in PRECISION_PROGRAMS:
        for precision in (100, 95, 0):
            mine = [r for r in rows if r[0] == program and r[1] == precision]
            sizes = [r[3] for r in mine]
            print(f"| {program} | {precision} | " + " | ".join(str(x) for x in sizes) +
                  f" | {sizes[-1] / sizes[0]:.2f}x | {mine[-1][4]:.3f} |")
    for program in PRECISION_PROGRAMS:
        at64 = {r[1]: r[3] for r in rows if r[0] == program and r[2] == 64}
        print(f"{program} at 64 ranks: precision 100 / precision 0 = {at64[100] / at64[0]:.1f}x")
    # The lossless trace of the convergence loop grows with the timesteps, the precision-0 one does not.
    ratios = []
    with tempfile.TemporaryDirectory() as scratch:
        for timesteps in ("50", "100", "200"):
            lossless, _ = traced_bytes(build, "convergence", [timesteps], 64, 100, scratch)
            merged, _ = traced_bytes(build, "convergence", [timesteps], 64, 0, scratch)
            ratios.append((timesteps, lossless, merged))
    write_csv("convergence_64_ratio", ["timesteps", "bytes_precision_100", "bytes_precision_0"], ratios)
    print("| timesteps | bytes at 100 | bytes at 0 | ratio |\n| --- | --- | --- | --- |")
    for timesteps, lossless, merged in ratios:
        print(f"| {timesteps} | {lossless} | {merged} | {lossless / merged:.0f}x |")


def precision_sweep(build):
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for precision in (100, 95, 90, 80, 70, 60, 50, 0):
            size, _ = traced_bytes(build, "convergence", PRECISION_PROGRAMS["convergence"], 32, precision, scratch)
            rows.append((precision, size))
    write_csv("convergence_bytes_vs_precision", ["precision", "bytes"], rows)
    print("| precision | " + " | ".join(str(p) for p, _ in rows) + " |")
    print("| --- |" + " --- |" * len(rows))
    print("| bytes | " + " | ".join(str(b) for _, b in rows) + " |")


def merge_cost(build):
    rows = []
    for edits in ("0.01", "0.1"):
        out = subprocess.run([str(build / "bench/merge-cost"), edits], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines()[1:]:
            length, rate, seconds, per_thousand = line.split(",")
            rows.append((int(length), float(rate), float(seconds), float(per_thousand)))
    write_csv("merge_cost", ["events_per_rank", "edits_per_call", "median_seconds", "seconds_per_1000_events"], rows)
    print("| events per side | differing calls | merge s (median of 5) | s per 1000 events |\n| --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r[0]} | {r[1]:.0%} | {r[2]:.4f} | {r[3]:.4f} |")


def histogram_defaults(build):
    out = subprocess.run([str(build / "bench/histogram-defaults")], capture_output=True, text=True, check=True).stdout
    rows = list(csv.DictReader(out.splitlines()))
    write_csv("histogram_defaults", list(rows[0].keys()), [list(r.values()) for r in rows])
    by_config = {}
    for r in rows:
        by_config.setdefault((int(r["bins"]), int(r["rebalance"])), []).append((float(r["ks_distance"]),
                                                                                 int(r["file_bytes"])))
    print("| bins | rebalance every | KS distance, mean of 5 streams | worst stream | bytes in the file (mean) |")
    print("| --- | --- | --- | --- | --- |")
    for (bins, rebalance), values in sorted(by_config.items()):
        ks = [k for k, _ in values]
        print(f"| {bins} | {rebalance} | {statistics.mean(ks):.4f} | {max(ks):.4f} "
              f"| {statistics.mean(b for _, b in values):.0f} |")


# The shipped programs, with arguments that make them run long enough to time.
REPLAY_PROGRAMS = [("ring", ["1000"]), ("stencil", ["1500", "64"]), ("convergence", ["200"]), ("land_sea", ["1500"]),
                   ("drifting", ["1500"])]


def trace_and_replay(build, program, args, ranks, precision, scratch, extra=()):
    """Traces `program` once and replays the trace once: (traced seconds, h-replay's report)."""
    import json
    trace = pathlib.Path(scratch) / f"{program}-{ranks}-{precision}.h"
    report = trace.with_suffix(".json")
    env = dict(ENV, HTRACE_FILE=str(trace), MERGE_PRECISION=str(precision))
    mpirun(ranks, [str(build / "src/capture/h-trace"), str(build / "tests/mpi" / program)] + args, env=env, cwd=scratch)
    mpirun(ranks, [str(build / "src/replay/h-replay"), "--report-json", str(report), *extra, str(trace)], cwd=scratch)
    result = json.loads(report.read_text())
    return result["traced_seconds"], result


def replay_time(build, repetitions=3):
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for program, args in REPLAY_PROGRAMS:
            # 2 ranks: one core each, the reference; 8 and 32 share the 2 cores.
            for ranks in (2, 8, 32):
                for precision in (100, 0):
                    pairs = [trace_and_replay(build, program, args, ranks, precision, scratch)
                             for _ in range(repetitions)]
                    traced = statistics.median(t for t, _ in pairs)
                    replayed = statistics.median(r["replay_seconds"] for _, r in pairs)
                    ratio = statistics.median(r["replay_seconds"] / t for t, r in pairs)
                    rows.append((program, ranks, precision, f"{traced:.4f}", f"{replayed:.4f}", f"{ratio - 1:+.3f}"))
    write_csv("replay_time", ["program", "ranks", "precision", "traced_s_median", "replay_s_median",
                              "median_relative_difference"], rows)
    print("| program | ranks | precision | traced s (median) | replay s (median) | replay vs traced (median of pairs) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(str(x) for x in row[:5]) + f" | {float(row[5]) * 100:+.1f}% |")


def replay_cost(build, repetitions=3):
    """--no-compute replay at 64 ranks vs the application's own time in MPI calls (traced time minus
    the recorded computation, averaged over ranks)."""
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for program, args in REPLAY_PROGRAMS:
            samples = []
            for _ in range(repetitions):
                traced, with_compute = trace_and_replay(build, program, args, 64, 100, scratch)
                trace = pathlib.Path(scratch) / f"{program}-64-100.h"
                report = trace.with_suffix(".nocompute.json")
                mpirun(64, [str(build / "src/replay/h-replay"), "--no-compute", "--report-json", str(report),
                            str(trace)], cwd=scratch)
                import json
                no_compute = json.loads(report.read_text())["replay_seconds"]
                app_mpi = traced - with_compute["compute_seconds"] / 64
                samples.append((app_mpi, no_compute))
            app_mpi = statistics.median(a for a, _ in samples)
            replay = statistics.median(n for _, n in samples)
            ratio = statistics.median(n / a for a, n in samples)
            rows.append((program, f"{app_mpi:.4f}", f"{replay:.4f}", f"{ratio:.2f}"))
    write_csv("replay_cost", ["program", "app_mpi_s_median", "no_compute_replay_s_median", "median_ratio"], rows)
    print("| program (64 ranks) | application time in MPI, s | replay --no-compute, s | ratio (median of pairs) |")
    print("| --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["sizes", "call-cost", "merge-time", "precision-sizes", "precision-sweep",
                                         "merge-cost", "histogram-defaults", "replay-time", "replay-cost"])
    parser.add_argument("--build", default=str(ROOT / "build"))
    args = parser.parse_args()
    build = pathlib.Path(args.build).resolve()
    {"sizes": sizes, "call-cost": call_cost, "merge-time": merge_time, "precision-sizes": precision_sizes,
     "precision-sweep": precision_sweep, "merge-cost": merge_cost,
     "histogram-defaults": histogram_defaults, "replay-time": replay_time, "replay-cost": replay_cost}[args.what](build)


if __name__ == "__main__":
    main()
