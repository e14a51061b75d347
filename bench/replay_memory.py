#!/usr/bin/env python3
"""Replay peak memory per rank vs. trace size.

Traces each shipped test program (tests/mpi/programs) at the given rank counts and merge precisions,
then replays each trace with `h-replay --no-compute` under `/usr/bin/time -f %M`, which gives each
rank's peak resident set (KiB). Reports the trace's bytes and the largest and median peak over the
ranks, against the goal: a rank's peak at most 4 x the trace's size + 64 MiB.

    replay_memory.py [--build DIR] [--replay H_REPLAY] [--ranks 4,16,64] [--precisions 100,0]
                     [--programs amr,ring,...] [--amr-steps 880] [--scratch DIR] [--output NAME]

--amr-steps adds amr with that many timesteps (a multi-MB lossless trace at 64 ranks) beside its
test-sized run. --scratch keeps the traces there and reuses the ones already there, so that another
h-replay (--replay, e.g. an earlier build's) can be measured on the very same traces: amr's are
timing-dependent. Writes bench/results/OUTPUT.csv (default replay_memory) and prints a Markdown
table. Standard library only.
"""
import argparse
import csv
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1",
           # Open MPI 4.1's default one-sided component crashes in this container (tests/mpi/meson.build).
           OMPI_MCA_osc="sm,pt2pt")
GOAL_FACTOR = 4
GOAL_KIB = 64 * 1024

# The C programs of tests/mpi and their arguments per rank count: the test table's (tests/mpi/meson.build),
# except where a program needs its arguments to follow the rank count (bench/run_benchmarks.py does the
# same): master_worker gets at least 3 tasks per worker, comm_split rows of sqrt(ranks).
PROGRAMS = {
    "ring": lambda ranks: ["50"],
    "stencil": lambda ranks: ["20", "16"],
    "master_worker": lambda ranks: [str(max(60, 3 * (ranks - 1)))],
    "comm_split": lambda ranks: [str(max(2, round(ranks ** 0.5))), "5"],
    "mpi_coverage": lambda ranks: [],
    "convergence": lambda ranks: ["10"],
    "land_sea": lambda ranks: ["10"],
    "drifting": lambda ranks: ["20"],
    "amr": lambda ranks: ["24", "4"],
    "wavefront": lambda ranks: ["4", "16", "20", "64"],
    "multigrid": lambda ranks: ["5", "6"],
    "load_imbalance": lambda ranks: ["12", "10", "2"],
    "persistent": lambda ranks: ["6"],
    "matched_probe": lambda ranks: ["5"],
    "cancel_send": lambda ranks: [],
    "intercomm": lambda ranks: ["3"],
    "one_sided": lambda ranks: ["3"],
    "checkpoint": lambda ranks: ["4", "256"],
    "posix_output": lambda ranks: ["4", "1000"],
    "posix_input": lambda ranks: ["512", "4"],
    "file_names": lambda ranks: ["256"],
    "intercomm_derived": lambda ranks: ["2"],
    "collective_sites": lambda ranks: ["3"],
    "mprobe_between": lambda ranks: ["3"],
    "in_place_root": lambda ranks: ["3"],
    "rma_proc_null": lambda ranks: ["3"],
    "buffered": lambda ranks: ["2"],
    "nbc_opposite": lambda ranks: ["4"],
    "rma_drawn": lambda ranks: ["4"],
    # Rank 0 receives every other rank's messages: as many in all at any rank count.
    "flood": lambda ranks: [str(max(100, 40000 // (ranks - 1)))],
    "polled_collectives": lambda ranks: ["200"],
}


def run(command, env, cwd, timeout=3600):
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def trace(build, program, args, ranks, precision, scratch):
    """The trace of one run, made unless the scratch directory has it already."""
    name = f"{program}-{ranks}-p{precision}" + (f"-{args[0]}" if program == "amr" and args != ["24", "4"] else "")
    path = pathlib.Path(scratch) / f"{name}.h"
    if path.exists():
        return path
    # A directory per run: the I/O programs write files there (checkpoint checks its shared file's size).
    work = pathlib.Path(scratch) / f"{name}.run"
    work.mkdir(exist_ok=True)
    env = dict(ENV, HTRACE_FILE=str(path), MERGE_PRECISION=str(precision))
    done = run(["mpirun", "-np", str(ranks), str(build / "src/capture/h-trace"), str(build / "tests/mpi" / program)]
               + args, env, work)
    if done.returncode != 0 or not path.exists():
        raise RuntimeError(f"tracing failed (exit status {done.returncode}): {done.stderr[-400:]}")
    return path


def replay_peaks(replay, trace_path, ranks, scratch):
    """Each rank's peak resident set in KiB, from /usr/bin/time around each h-replay process (each
    writes its own file: ranks' lines on a shared stderr may interleave)."""
    with tempfile.TemporaryDirectory(dir=scratch) as peaks_dir:
        done = run(["mpirun", "-np", str(ranks), "sh", "-c",
                    f'exec /usr/bin/time -o "{peaks_dir}/peak.$(hostname).$$" -f %M "$@"', "sh", str(replay), "--no-compute",
                    str(trace_path)], ENV, scratch)
        # A rank that was killed (the job stopped) leaves its file empty.
        peaks = [int(words[-1]) for words in (p.read_text().split() for p in pathlib.Path(peaks_dir).glob("peak.*"))
                 if words and words[-1].isdigit()]
    if done.returncode != 0 or len(peaks) != ranks:
        raise RuntimeError(f"replay failed (exit status {done.returncode}, {len(peaks)} peaks): {done.stderr[-400:]}")
    return peaks


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--replay", help="the h-replay to measure (default: the build's)")
    parser.add_argument("--ranks", default="4,16,64")
    parser.add_argument("--precisions", default="100,0")
    parser.add_argument("--programs", help="a comma-separated subset of " + ",".join(PROGRAMS))
    parser.add_argument("--amr-steps", type=int, help="also amr with this many timesteps")
    parser.add_argument("--scratch", help="keep the traces here, and reuse those already here")
    parser.add_argument("--output", default="replay_memory")
    options = parser.parse_args()
    build = pathlib.Path(options.build).resolve()
    replay = pathlib.Path(options.replay or build / "src/replay/h-replay").resolve()
    if not pathlib.Path("/usr/bin/time").exists():
        sys.exit("replay_memory.py needs /usr/bin/time (Debian: apt-get install time)")
    ranks_list = [int(r) for r in options.ranks.split(",")]
    precisions = [int(p) for p in options.precisions.split(",")]
    runs = [(p, PROGRAMS[p]) for p in (options.programs.split(",") if options.programs else PROGRAMS)]
    if options.amr_steps:
        runs.append(("amr", lambda ranks, steps=str(options.amr_steps): [steps, "4"]))

    rows = []
    scratch_dir = options.scratch or tempfile.mkdtemp(prefix="replay-memory.")
    pathlib.Path(scratch_dir).mkdir(parents=True, exist_ok=True)
    for program, arguments in runs:
        for ranks in ranks_list:
            for precision in precisions:
                args = arguments(ranks)
                label = f"{program} {' '.join(args)}".strip()
                try:
                    path = trace(build, program, args, ranks, precision, scratch_dir)
                    peaks = replay_peaks(replay, path, ranks, scratch_dir)
                except (RuntimeError, subprocess.TimeoutExpired) as failure:
                    print(f"{label}, {ranks} ranks, p {precision}: {failure}", flush=True)
                    rows.append((program, " ".join(args), ranks, precision, "", "", "", "", "failed"))
                    continue
                size = path.stat().st_size
                goal = GOAL_FACTOR * size / 1024 + GOAL_KIB
                highest = max(peaks)
                rows.append((program, " ".join(args), ranks, precision, size, highest, statistics.median(peaks),
                             round(goal), "met" if highest <= goal else "missed"))
                print(f"{label}, {ranks} ranks, p {precision}: {size} B, peak per rank max {highest} KiB, "
                      f"median {statistics.median(peaks):.0f} KiB, goal {goal:.0f} KiB", flush=True)

    out = HERE / "results" / f"{options.output}.csv"
    out.parent.mkdir(exist_ok=True)
    with open(out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["program", "arguments", "ranks", "precision", "trace_bytes", "peak_kib_max",
                         "peak_kib_median", "goal_kib", "goal"])
        writer.writerows(rows)
    print(f"(written {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}; traces in {scratch_dir})")
    print("| program | ranks | p | trace bytes | peak per rank, max (KiB) | median (KiB) | goal: 4 x trace + 64 MiB (KiB) | |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- |")
    for program, args, ranks, precision, size, highest, median, goal, verdict in rows:
        median_text = f"{median:.0f}" if median != "" else ""
        print(f"| {program} {args} | {ranks} | {precision} | {size} | {highest} | {median_text} | {goal} | {verdict} |")


if __name__ == "__main__":
    main()
