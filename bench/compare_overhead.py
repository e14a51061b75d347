#!/usr/bin/env python3
"""Issue 27: h-trace's wall-time overhead beside Pilgrim's on the same programs in one run.

Run through compare-overhead.sh, whose header says what is measured and how to build the programs
and Pilgrim. Each row runs PAIRS interleaved triples (untraced, h-trace, Pilgrim), the order rotated
from one triple to the next, every run of a whole `mpirun` timed by its wall clock, each traced run in
a fresh directory whose trace is checked. A run that fails or writes no trace marks its cell failed.

    compare_overhead.py --htrace-build DIR [--pilgrim-lib LIB] [--npb-bin DIR] [--lulesh-bin EXE]
                        [--minighost-bin EXE] [--pairs N] [--rows NAME,...] [--out FILE.md] [--csv FILE]
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
import time

from run_benchmarks import ENV

TOOLS = ("untraced", "h-trace", "pilgrim")
TIMEOUT_SECONDS = 900
# h-trace's own line at the end of a run: how long its merge and its write took (the CSV keeps them).
HTRACE_WROTE = re.compile(r"h-trace: wrote .*; merge ([\d.]+) s, write ([\d.]+) s\)")
# The capture benchmark: depth 40, 256 call paths, 500 passes over them (a few seconds at 4 ranks).
DEEP_STACKS_ARGS = ["40", "256", "500"]
LULESH_ARGS = ["-s", "20", "-i", "150"]
MINIGHOST_ARGS = ["--npx", "2", "--npy", "2", "--npz", "2", "--nx", "50", "--ny", "50", "--nz", "50",
                  "--num_vars", "10", "--num_tsteps", "50"]


def rows(args):
    """(name, ranks, command, missing): missing names the option not given, so the row says why it is empty."""
    npb = pathlib.Path(args.npb_bin) if args.npb_bin else None
    table = []
    for kernel in ("cg", "mg", "lu"):
        for ranks in (4, 16):
            table.append((f"NPB {kernel.upper()} W", ranks, [str(npb / f"{kernel}.W.x")] if npb else None,
                          "NPB_BIN"))
    table.append(("LULESH -s 20 -i 150", 8, [args.lulesh_bin] + LULESH_ARGS if args.lulesh_bin else None,
                  "LULESH_BIN"))
    table.append(("miniGhost 2x2x2, 50^3, 10 vars, 50 steps", 8,
                  [args.minighost_bin] + MINIGHOST_ARGS if args.minighost_bin else None, "MINIGHOST_BIN"))
    deep = pathlib.Path(args.htrace_build) / "bench/deep-stacks"
    for language in ("c", "fortran"):
        table.append((f"deep-stacks {language} depth 40, 256 paths", 4,
                      [str(deep)] + DEEP_STACKS_ARGS + [language], None))
    if args.rows:
        wanted = args.rows.split(",")
        table = [row for row in table if any(w.lower() in f"{row[0]} {row[1]}".lower() for w in wanted)]
    return table


def traced_command(tool, command, args, scratch):
    """The mpirun arguments and the extra environment for one run, as a user would trace."""
    if tool == "untraced":
        return command, {}
    if tool == "h-trace":
        launcher = str(pathlib.Path(args.htrace_build) / "src/capture/h-trace")
        return [launcher] + command, {"HTRACE_FILE": str(scratch / "trace.h")}
    return ["-x", f"LD_PRELOAD={args.pilgrim_lib}"] + command, {}


def trace_written(tool, scratch):
    if tool == "h-trace":
        trace = scratch / "trace.h"
        return trace.is_file() and trace.stat().st_size > 0
    if tool == "pilgrim":  # Pilgrim writes pilgrim-logs/ in the working directory
        logs = scratch / "pilgrim-logs"
        return all((logs / name).is_file() and (logs / name).stat().st_size > 0
                   for name in ("funcs.dat", "grammars.dat"))
    return True


def run_once(tool, ranks, command, args):
    """(wall seconds of one whole mpirun, or None if it failed or wrote no trace, with the reason printed;
    h-trace's merge and write seconds as it printed them, or "")."""
    with tempfile.TemporaryDirectory(prefix=f"overhead-{tool}-") as directory:
        scratch = pathlib.Path(directory)
        mpirun_args, extra_env = traced_command(tool, command, args, scratch)
        env = dict(ENV, **extra_env)
        start = time.perf_counter()
        try:
            run = subprocess.run(["mpirun", "-np", str(ranks)] + mpirun_args, env=env, cwd=scratch,
                                 capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            print(f"  {tool}: timed out after {TIMEOUT_SECONDS} s", file=sys.stderr)
            return None, ""
        seconds = time.perf_counter() - start
        if run.returncode != 0:
            last = (run.stderr.strip() or run.stdout.strip()).splitlines()[-3:]
            print(f"  {tool}: exit {run.returncode}: {' | '.join(last)}", file=sys.stderr)
            return None, ""
        if not trace_written(tool, scratch):
            print(f"  {tool}: exit 0 but no trace written", file=sys.stderr)
            return None, ""
        wrote = HTRACE_WROTE.search(run.stderr) if tool == "h-trace" else None
        return seconds, f"{wrote[1]} {wrote[2]}" if wrote else ""


def ratio_cell(untraced, traced):
    """median [min, max] of the per-pair ratios, or why there is none."""
    ratios = [t / u for u, t in zip(untraced, traced) if u is not None and t is not None]
    failed = sum(t is None for t in traced)
    if not ratios:
        return None, f"failed ({failed}/{len(traced)} runs)"
    text = f"{statistics.median(ratios):.3f} [{min(ratios):.3f}, {max(ratios):.3f}]"
    if failed:
        text += f" ({failed} failed)"
    return statistics.median(ratios), text


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--htrace-build", required=True)
    parser.add_argument("--pilgrim-lib")
    parser.add_argument("--npb-bin")
    parser.add_argument("--lulesh-bin")
    parser.add_argument("--minighost-bin")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--rows", help="comma-separated parts of row names to keep, e.g. 'CG W 4,LULESH'")
    parser.add_argument("--out", help="also write the markdown table here")
    parser.add_argument("--csv", help="write every run here")
    args = parser.parse_args()
    # Each run starts in a scratch directory of its own: paths given relative to here must still work.
    args.htrace_build = str(pathlib.Path(args.htrace_build).resolve())
    tools = TOOLS if args.pilgrim_lib else TOOLS[:2]
    precision = os.environ.get("MERGE_PRECISION", "unset (default)")
    lines = [f"{args.pairs} interleaved triples per row, MERGE_PRECISION {precision}; ratio = traced / untraced "
             "wall time of the whole mpirun, per triple: median [min, max]",
             "",
             "| program | ranks | untraced s (median) | h-trace ratio | Pilgrim ratio | h-trace below Pilgrim |",
             "| --- | --- | --- | --- | --- | --- |"]
    print("\n".join(lines), flush=True)
    records = []
    for name, ranks, command, missing in rows(args):
        if command is None:
            line = f"| {name} | {ranks} | not run: {missing} not given | | | |"
            print(line, flush=True)
            lines.append(line)
            continue
        seconds = {tool: [] for tool in tools}
        for pair in range(args.pairs):
            order = tools[pair % len(tools):] + tools[:pair % len(tools)]
            for tool in order:
                value, merge_write = run_once(tool, ranks, command, args)
                seconds[tool].append(value)
                records.append((name, ranks, pair, tool, "" if value is None else f"{value:.4f}", merge_write))
                print(f"  {name} {ranks} ranks, triple {pair + 1}: {tool} "
                      f"{'failed' if value is None else f'{value:.2f} s'}", file=sys.stderr, flush=True)
        plain = [s for s in seconds["untraced"] if s is not None]
        base = f"{statistics.median(plain):.2f}" if plain else "failed"
        htrace, htrace_text = ratio_cell(seconds["untraced"], seconds["h-trace"])
        if "pilgrim" in seconds:
            pilgrim, pilgrim_text = ratio_cell(seconds["untraced"], seconds["pilgrim"])
        else:
            pilgrim, pilgrim_text = None, "not run: PILGRIM_LIB not given"
        below = "n/a" if htrace is None or pilgrim is None else ("yes" if htrace < pilgrim else "**no**")
        line = f"| {name} | {ranks} | {base} | {htrace_text} | {pilgrim_text} | {below} |"
        print(line, flush=True)
        lines.append(line)
    if args.out:
        pathlib.Path(args.out).write_text("\n".join(lines) + "\n")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["program", "ranks", "triple", "tool", "wall_seconds", "htrace_merge_write_seconds"])
            writer.writerows(records)


if __name__ == "__main__":
    main()
