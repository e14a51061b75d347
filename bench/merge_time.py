#!/usr/bin/env python3
"""The merge at MPI_Finalize (issue 27): its time and the tracer's peak memory per rank, at several
rank counts, on the irregular exchange (bench/irregular_exchange.c) and on shipped test programs.

    merge_time.py BUILD [--ranks 4,16,64] [--runs 3] [--programs exchange,stencil,...] [--mpicc mpicc]
                  [--h-trace PATH] [--untraced | --no-untraced]

--h-trace traces with another build's launcher (a before/after pair on BUILD's programs).

The merge's time is what rank 0's tracer reports at the end of the run ("merge X s": from the start
of the reduction over the tree to the merged trace at rank 0). Peak memory is each rank's maximum
resident set (`/usr/bin/time -f %M` around each rank's `h-trace PROGRAM`), traced and untraced, so
that the tracer's share (the difference) is apart from the MPI library's. Prints one CSV row per
program and rank count: medians over the runs, and the trace's size.
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "mpi"))
from mpi_launch import mpirun_command  # noqa: E402

# Shipped programs with the arguments their tests run them with (tests/mpi/meson.build).
PROGRAMS = {
    "stencil": ["20", "16"],
    "amr": ["24", "4"],
    "convergence": ["10"],
    "land_sea": ["10"],
    "ring": [],
}


def run(command, env, cwd):
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=1800)


def one_run(mpirun, ranks, program, traced_launcher, scratch):
    env = dict(os.environ, HTRACE_FILE=str(scratch / "trace.h"), MERGE_PRECISION="100")
    prefix = ["/usr/bin/time", "-f", "maxrss_kib %M"]
    command = prefix + ([traced_launcher] if traced_launcher else []) + program
    done = run(mpirun_command(mpirun, ranks, command), env, scratch)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(program)} at {ranks} ranks failed:\n{done.stderr[-2000:]}")
    rss = [int(x) for x in re.findall(r"maxrss_kib (\d+)", done.stderr)]
    if not rss:
        raise RuntimeError(f"{' '.join(program)} at {ranks} ranks: no peak memory reported:\n{done.stderr[-2000:]}")
    merge = re.search(r"merge ([0-9.]+) s", done.stderr)
    size = (scratch / "trace.h").stat().st_size if traced_launcher else 0
    return (float(merge.group(1)) if merge else None), max(rss), size


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", type=pathlib.Path)
    parser.add_argument("--ranks", default="4,16,64")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--programs", default="exchange," + ",".join(PROGRAMS))
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--mpicc", default="mpicc")
    parser.add_argument("--h-trace", help="the launcher (default: BUILD's)")
    parser.add_argument("--untraced", action=argparse.BooleanOptionalAction, default=True,
                        help="also run untraced, for the MPI library's own peak memory")
    parser.add_argument("--exchange-calls", default="4700", help="calls per rank of the exchange")
    args = parser.parse_args()
    build = args.build.resolve()
    launcher = args.h_trace or str(build / "src" / "capture" / "h-trace")
    with tempfile.TemporaryDirectory(prefix="merge-time-") as tmp:
        scratch = pathlib.Path(tmp)
        exchange = scratch / "irregular_exchange"
        subprocess.run([args.mpicc, "-O2", "-o", str(exchange), str(HERE / "irregular_exchange.c")], check=True)
        print("program,ranks,merge_seconds_median,merge_seconds_runs,trace_bytes,"
              "peak_rss_traced_kib,peak_rss_untraced_kib,tracer_kib")
        for name in args.programs.split(","):
            program = ([str(exchange), args.exchange_calls] if name == "exchange"
                       else [str(build / "tests" / "mpi" / name)] + PROGRAMS[name])
            for ranks in [int(r) for r in args.ranks.split(",")]:
                merges, traced_rss, plain_rss, size = [], [], [], 0
                try:
                    runs = [one_run(args.mpirun, ranks, program, launcher, scratch) for _ in range(args.runs)]
                except RuntimeError as error:  # a program that cannot run at this rank count
                    print(f"{name},{ranks},failed: {str(error).splitlines()[0]}", flush=True)
                    continue
                for merge, rss, size in runs:
                    merges.append(merge)
                    traced_rss.append(rss)
                    if args.untraced:
                        try:
                            plain_rss.append(one_run(args.mpirun, ranks, program, None, scratch)[1])
                        except RuntimeError as error:
                            print(f"# untraced: {error}", file=sys.stderr)
                median = statistics.median(merges)
                peak = statistics.median(traced_rss)
                plain = statistics.median(plain_rss) if plain_rss else 0
                print(f"{name},{ranks},{median:.3f},{'/'.join(f'{m:.3f}' for m in merges)},{size},"
                      f"{peak:.0f},{plain:.0f},{peak - plain:.0f}", flush=True)


if __name__ == "__main__":
    main()
