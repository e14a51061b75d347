#!/usr/bin/env python3
"""Issue 27: h-trace's wall-time overhead and trace bytes beside Pilgrim's and Recorder's, on the same
programs in one run.

Run through compare-overhead.sh, whose header says what is measured and how to build the programs,
Pilgrim and Recorder. Each row runs ROUNDS interleaved rounds (untraced, h-trace, Pilgrim, Recorder: the
tools whose library is given), the order rotated from one round to the next, every run of a whole
`mpirun` timed by its wall clock, each traced run in a fresh directory whose trace is checked and
measured (bytes of every file the tracer wrote). A run that fails or writes no complete trace marks its
cell failed, with the reason on stderr.

    compare_overhead.py --htrace-build DIR [--pilgrim-lib LIB] [--recorder-lib LIB] [--npb-bin DIR]
                        [--lulesh-bin EXE] [--minighost-bin EXE] [--pairs N] [--rows NAME,...]
                        [--recorder-merged-bytes] [--out FILE.md] [--csv FILE]
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

TOOLS = ("untraced", "h-trace", "pilgrim", "recorder")
TOOL_NAMES = {"h-trace": "h-trace", "pilgrim": "Pilgrim", "recorder": "Recorder"}
TIMEOUT_SECONDS = 900
# h-trace's own line at the end of a run: how long its merge and its write took (the CSV keeps them).
HTRACE_WROTE = re.compile(r"h-trace: wrote .*; merge ([\d.]+) s, write ([\d.]+) s\)")
# The capture benchmark: depth 40, 256 call paths, 500 passes over them (a few seconds at 4 ranks).
DEEP_STACKS_ARGS = ["40", "256", "500"]
LULESH_ARGS = ["-s", "20", "-i", "150"]
MINIGHOST_ARGS = ["--npx", "2", "--npy", "2", "--npz", "2", "--nx", "50", "--ny", "50", "--nz", "50",
                  "--num_vars", "10", "--num_tsteps", "50"]
# The shipped test programs (build/tests/mpi), at 8 ranks, with the arguments of issue 9's trace-bytes
# table (bench/run_benchmarks.py compression: ring, stencil, convergence, amr, multigrid) and of issue
# 10's I/O table (IO_PROGRAMS: checkpoint, posix_output).
SHIPPED_PROGRAMS = [("stencil", ["20", "16"]), ("ring", ["10"]), ("convergence", ["10"]), ("amr", ["24", "4"]),
                    ("multigrid", ["5", "6"]), ("checkpoint", ["10", "1024"]), ("posix_output", ["10", "1000"])]
SHIPPED_RANKS = 8


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
    tests = pathlib.Path(args.htrace_build) / "tests/mpi"
    for program, program_args in SHIPPED_PROGRAMS:
        table.append((" ".join([program] + program_args), SHIPPED_RANKS, [str(tests / program)] + program_args, None))
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
    if tool == "pilgrim":
        return ["-x", f"LD_PRELOAD={args.pilgrim_lib}"] + command, {}
    return ["-x", f"LD_PRELOAD={args.recorder_lib}"] + command, {}


def recorder_directory(scratch):
    """Recorder writes recorder-YYYYMMDD/HOST-USER-EXE-PID-HHMMSS.mmm/ in the working directory."""
    found = sorted(scratch.glob("recorder-*/*/"))
    return found[0] if len(found) == 1 else None


def tree_bytes(directory):
    return sum(f.stat().st_size for f in directory.rglob("*") if f.is_file())


def trace_bytes(tool, scratch, ranks, merged=False):
    """(bytes of every file the tracer wrote, or None, with why) after a run that exited 0."""
    if tool == "h-trace":
        trace = scratch / "trace.h"
        if not (trace.is_file() and trace.stat().st_size > 0):
            return None, "no trace.h"
        return trace.stat().st_size, ""
    if tool == "pilgrim":  # Pilgrim writes pilgrim-logs/ (funcs.dat, grammars.dat, pilgrim.mt) in the working directory
        logs = scratch / "pilgrim-logs"
        if not all((logs / name).is_file() and (logs / name).stat().st_size > 0
                   for name in ("funcs.dat", "grammars.dat")):
            return None, "no pilgrim-logs/funcs.dat and grammars.dat"
        return tree_bytes(logs), ""
    if tool == "recorder":
        logs = recorder_directory(scratch)
        if logs is None:
            return None, "no recorder-*/*/ directory"
        if not ((logs / "recorder.mt").is_file() and (logs / "recorder.mt").stat().st_size > 0):
            return None, f"no recorder.mt in {logs.name}"
        if not merged:  # without inter-process compression: RANK.cst and RANK.cfg per rank
            empty = [f"{rank}.{kind}" for rank in range(ranks) for kind in ("cst", "cfg")
                     if not ((logs / f"{rank}.{kind}").is_file() and (logs / f"{rank}.{kind}").stat().st_size > 0)]
            if empty:
                return None, f"missing or empty: {' '.join(empty[:6])}"
        return tree_bytes(logs), ""
    return 0, ""


def run_once(tool, ranks, command, args, extra=None):
    """(wall seconds of one whole mpirun, or None if it failed or wrote no trace, with the reason printed;
    the trace's bytes or None; h-trace's merge and write seconds as it printed them, or "")."""
    with tempfile.TemporaryDirectory(prefix=f"overhead-{tool}-") as directory:
        scratch = pathlib.Path(directory)
        mpirun_args, extra_env = traced_command(tool, command, args, scratch)
        env = dict(ENV, **extra_env, **(extra or {}))
        start = time.perf_counter()
        try:
            run = subprocess.run(["mpirun", "-np", str(ranks)] + mpirun_args, env=env, cwd=scratch,
                                 capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            print(f"  {tool}: timed out after {TIMEOUT_SECONDS} s", file=sys.stderr)
            return None, None, ""
        seconds = time.perf_counter() - start
        if run.returncode != 0:
            text = (run.stderr.strip() + "\n" + run.stdout.strip()).strip().splitlines()
            # The first line that says what happened, and the first frame in the tracer, where there is one.
            what = [line.strip() for line in text if re.search(r"Assertion|signal|Segmentation|rror|bort", line)][:1]
            where = [f"{line.strip()} {text[i + 1].strip() if i + 1 < len(text) else ''}"
                     for i, line in enumerate(text) if re.search(r" in (imp_|pilgrim|recorder|PILGRIM)", line)][:1]
            print(f"  {tool}: exit {run.returncode}: {' | '.join(what + where or text[-3:])}", file=sys.stderr)
            return None, None, ""
        size, why = trace_bytes(tool, scratch, ranks, merged=bool(extra))
        if size is None:
            print(f"  {tool}: exit 0 but no complete trace: {why}", file=sys.stderr)
            return None, None, ""
        wrote = HTRACE_WROTE.search(run.stderr) if tool == "h-trace" else None
        return seconds, size, f"{wrote[1]} {wrote[2]}" if wrote else ""


def ratio_cell(untraced, traced):
    """median (min..max) of the per-round ratios, or why there is none."""
    ratios = [t / u for u, t in zip(untraced, traced) if u is not None and t is not None]
    failed = sum(t is None for t in traced)
    if not ratios:
        return None, f"failed ({failed}/{len(traced)} runs)"
    text = f"{statistics.median(ratios):.3f} ({min(ratios):.3f}..{max(ratios):.3f})"
    if failed:
        text += f" ({failed} failed)"
    return statistics.median(ratios), text


def bytes_cell(sizes):
    good = [s for s in sizes if s is not None]
    if not good:
        return "failed"
    text = f"{statistics.median(good):.0f}"
    if min(good) != max(good):
        text += f" ({min(good)}..{max(good)})"
    if len(good) < len(sizes):
        text += f" ({len(sizes) - len(good)} failed)"
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--htrace-build", required=True)
    parser.add_argument("--pilgrim-lib")
    parser.add_argument("--recorder-lib")
    parser.add_argument("--npb-bin")
    parser.add_argument("--lulesh-bin")
    parser.add_argument("--minighost-bin")
    parser.add_argument("--pairs", "--rounds", dest="pairs", type=int, default=5, help="interleaved rounds per row")
    parser.add_argument("--rows", help="comma-separated parts of row names to keep, e.g. 'CG W 4,LULESH,stencil'")
    parser.add_argument("--recorder-merged-bytes", action="store_true",
                        help="after a row's rounds, one more Recorder run with RECORDER_INTERPROCESS_COMPRESSION=1 "
                             "(its bytes only)")
    parser.add_argument("--out", help="also write the markdown tables here")
    parser.add_argument("--csv", help="write every run here")
    args = parser.parse_args()
    # Each run starts in a scratch directory of its own: paths given relative to here must still work.
    args.htrace_build = str(pathlib.Path(args.htrace_build).resolve())
    tools = [t for t in TOOLS if t in ("untraced", "h-trace") or (t == "pilgrim" and args.pilgrim_lib)
             or (t == "recorder" and args.recorder_lib)]
    traced = [t for t in TOOLS[1:]]
    precision = os.environ.get("MERGE_PRECISION", "unset (default 100)")
    print(f"load average at the start {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    head = ["| program | ranks | rounds | untraced s (median) | "
            + " | ".join(f"{TOOL_NAMES[t]} ratio" for t in traced)
            + " | h-trace below Pilgrim | h-trace below Recorder |",
            "| --- " * (6 + len(traced)) + "|"]
    lines = [f"{args.pairs} interleaved rounds per row ({', '.join(tools)}, order rotated), MERGE_PRECISION "
             f"{precision}; ratio = traced / untraced wall time of the whole mpirun, per round: median (min..max)",
             ""] + head
    print("\n".join(lines), flush=True)
    bytes_lines = ["", "Trace bytes (every file the tracer wrote; median over the rounds, (min..max) where they differ)",
                   "", "| program | ranks | h-trace | Pilgrim | Recorder |"
                   + (" Recorder, inter-process compression |" if args.recorder_merged_bytes else ""),
                   "| --- " * (5 + args.recorder_merged_bytes) + "|"]
    records = []
    for name, ranks, command, missing in rows(args):
        if command is None:
            line = f"| {name} | {ranks} | | not run: {missing} not given |" + " |" * (len(traced) + 2)
            print(line, flush=True)
            lines.append(line)
            continue
        seconds = {tool: [] for tool in tools}
        sizes = {tool: [] for tool in tools}
        for pair in range(args.pairs):
            order = tools[pair % len(tools):] + tools[:pair % len(tools)]
            for tool in order:
                value, size, merge_write = run_once(tool, ranks, command, args)
                seconds[tool].append(value)
                sizes[tool].append(size)
                records.append((name, ranks, pair, tool, "" if value is None else f"{value:.4f}",
                                "" if size is None or tool == "untraced" else size, merge_write))
                print(f"  {name} {ranks} ranks, round {pair + 1}: {tool} "
                      f"{'failed' if value is None else f'{value:.2f} s'}"
                      f"{'' if size is None or tool == 'untraced' else f', {size} B'}", file=sys.stderr, flush=True)
        plain = [s for s in seconds["untraced"] if s is not None]
        base = f"{statistics.median(plain):.2f}" if plain else "failed"
        medians, cells, byte_cells = {}, [], []
        for tool in traced:
            if tool in seconds:
                medians[tool], text = ratio_cell(seconds["untraced"], seconds[tool])
                byte_cells.append(bytes_cell(sizes[tool]))
            else:
                medians[tool], text = None, f"not run: {tool.upper()}_LIB not given"
                byte_cells.append("not run")
            cells.append(text)
        below = []
        for other in ("pilgrim", "recorder"):
            h, o = medians["h-trace"], medians[other]
            below.append("n/a" if h is None or o is None else ("yes" if h < o else "**no**"))
        line = f"| {name} | {ranks} | {args.pairs} | {base} | {' | '.join(cells)} | {' | '.join(below)} |"
        print(line, flush=True)
        lines.append(line)
        if args.recorder_merged_bytes and "recorder" in tools:
            value, size, _ = run_once("recorder", ranks, command, args, {"RECORDER_INTERPROCESS_COMPRESSION": "1"})
            records.append((name, ranks, "merged", "recorder-interprocess", "" if value is None else f"{value:.4f}",
                            "" if size is None else size, ""))
            byte_cells.append("failed" if size is None else str(size))
        bytes_lines.append(f"| {name} | {ranks} | {' | '.join(byte_cells)} |")
    end = f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    print("\n".join(bytes_lines) + "\n\n" + end, flush=True)
    if args.out:
        pathlib.Path(args.out).write_text("\n".join(lines + bytes_lines + ["", end]) + "\n")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["program", "ranks", "round", "tool", "wall_seconds", "trace_bytes",
                             "htrace_merge_write_seconds"])
            writer.writerows(records)


if __name__ == "__main__":
    main()
