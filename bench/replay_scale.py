#!/usr/bin/env python3
"""h-replay-smpi at scale (issue 28): host time and peak memory of one simulation per rank count.

    bench/replay_scale.py --replay PATH --trace N=FILE [--trace N=FILE ...] [--repeat K]
                        [--platform XML] [--label TEXT] [--output CSV]

For each trace (N: its rank count), runs K times, one after another:

    /usr/bin/time -v smpirun -platform XML -np N --log=xbt_cfg.thres:warning REPLAY TRACE

and takes the wall time and the maximum resident set /usr/bin/time reports (the largest process
under smpirun: SimGrid's smpimain, the whole simulation), and h-replay's simulated replay time,
which must be the same in every run. Prints one line per run and a Markdown table of medians;
--output appends the runs to a CSV (label, ranks, run, wall_s, max_rss_kib, replay_s, load_1min).
Stencil traces at rank counts the real MPI cannot run here come from bench/scale_stencil_trace.cpp.
"""
import argparse
import csv
import os
import pathlib
import re
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
WALL = re.compile(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)")
RSS = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")
REPLAY = re.compile(r"^h-replay: replay ([0-9.eE+-]+) s", re.MULTILINE)


def simulate(args, ranks, trace):
    command = ["/usr/bin/time", "-v", "smpirun", "-platform", str(args.platform), "-np", str(ranks),
               "--log=xbt_cfg.thres:warning", str(args.replay), str(trace)]
    load = os.getloadavg()[0]
    done = subprocess.run(command, capture_output=True, text=True)
    wall, rss, replay = WALL.search(done.stderr), RSS.search(done.stderr), REPLAY.search(done.stderr)
    if done.returncode != 0 or not (wall and rss and replay):
        sys.exit(f"replay_scale.py: {' '.join(command)} failed (exit status {done.returncode}):\n{done.stderr[-3000:]}")
    seconds = int(wall[1] or 0) * 3600 + int(wall[2]) * 60 + float(wall[3])
    return seconds, int(rss[1]), replay[1], load


def main():
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    parser.add_argument("--replay", required=True, help="the h-replay-smpi to run")
    parser.add_argument("--trace", action="append", required=True, help="N=FILE: a trace of N ranks")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--platform", default=str(ROOT / "platforms" / "cluster.xml"))
    parser.add_argument("--label", default="")
    parser.add_argument("--output", help="append the runs to this CSV")
    args = parser.parse_args()
    args.replay = pathlib.Path(args.replay).resolve()
    rows = []
    for item in args.trace:
        ranks, trace = item.split("=", 1)
        runs = []
        for run in range(args.repeat):
            seconds, rss, replay, load = simulate(args, int(ranks), pathlib.Path(trace).resolve())
            print(f"{args.label} {ranks} ranks, run {run + 1}: {seconds:.2f} s, {rss / 1024:.0f} MiB, "
                  f"replay {replay} s simulated, load {load:.2f}", flush=True)
            runs.append((seconds, rss, replay))
            rows.append([args.label, ranks, run + 1, f"{seconds:.2f}", rss, replay, f"{load:.2f}"])
        if len({replay for _, _, replay in runs}) != 1:
            sys.exit(f"replay_scale.py: the simulated replay time differs between runs at {ranks} ranks")
    if args.output:
        new = not pathlib.Path(args.output).exists()
        with open(args.output, "a", newline="") as table:
            out = csv.writer(table)
            if new:
                out.writerow(["label", "ranks", "run", "wall_s", "max_rss_kib", "replay_s", "load_1min"])
            out.writerows(rows)
    print("\n| ranks | runs | wall s (median) | max RSS MiB (median) | replay s (simulated) |\n| --- | --- | --- | --- | --- |")
    for ranks in dict.fromkeys(row[1] for row in rows):
        mine = [row for row in rows if row[1] == ranks]
        print(f"| {ranks} | {len(mine)} | {statistics.median(float(r[3]) for r in mine):.1f} | "
              f"{statistics.median(r[4] for r in mine) / 1024:.0f} | {mine[0][5]} |")


if __name__ == "__main__":
    main()
