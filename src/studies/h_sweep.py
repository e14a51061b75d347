#!/usr/bin/env python3
"""h-sweep: how trace size and replay fidelity change with the merge precision, to choose a level
for a production run.

    h-sweep [--levels 100,95,90,80,70,60,50,0] -np N [--output-dir DIR] [--mpirun PATH]
            [--mpirun-arg ARG ...] [--replay-arg ARG ...] [--h-trace PATH] [--h-replay PATH]
            [--h-dump PATH] -- PROGRAM [ARGS...]

For each level, in the order given: traces the application once (`mpirun -np N h-trace PROGRAM
ARGS` with MERGE_PRECISION set), replays the trace (`mpirun -np N h-replay --report-json ...`), and
adds a row to DIR/sweep.csv:

    level, trace_bytes, events, traced_seconds, replay_seconds, relative_error

(events: the trace's event records, each loop body's once; relative_error: replay time / traced time
- 1, as h-replay reports it) and redraws DIR/sweep.svg, trace size and replay error against the
precision. Traces, replay reports and each run's output stay in DIR (trace-p<level>.h ...).

A run that fails stops the sweep: h-sweep names the level and the run (application or replay) and
exits with its exit status; the levels done so far stay in sweep.csv and sweep.svg.

h-trace, h-replay and h-dump are looked for next to h-sweep, then on PATH (--h-trace, --h-replay,
--h-dump name them). --mpirun-arg passes an option to every mpirun (e.g. --oversubscribe),
--replay-arg one to h-replay (e.g. --no-compute).
"""

import argparse
import csv
import json
import os
import pathlib
import shlex
import subprocess
import sys

# Installed, h-sweep is a link in bin/ to this script, beside its chart module.
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import svg_charts  # noqa: E402
from tool_paths import find_tool  # noqa: E402

DEFAULT_LEVELS = "100,95,90,80,70,60,50,0"
COLUMNS = ["level", "trace_bytes", "events", "traced_seconds", "replay_seconds", "relative_error"]


class SweepStopped(Exception):
    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def parse_levels(text):
    try:
        levels = [int(word) for word in text.split(",") if word.strip()]
    except ValueError:
        sys.exit(f"h-sweep: --levels '{text}' is not a comma-separated list of integers")
    if not levels or any(level < 0 or level > 100 for level in levels):
        sys.exit(f"h-sweep: --levels '{text}': every level must be from 0 to 100")
    return levels


def parse_arguments(argv):
    parser = argparse.ArgumentParser(prog="h-sweep", usage=__doc__.split("\n\n")[1])
    parser.add_argument("--levels", default=DEFAULT_LEVELS,
                        help="merge precisions to trace at, in this order (default %(default)s)")
    parser.add_argument("-np", dest="ranks", type=int, required=True, help="ranks of every run")
    parser.add_argument("--output-dir", default=".", help="where sweep.csv, sweep.svg and the traces go")
    parser.add_argument("--mpirun", default="mpirun", help="the MPI launcher (default mpirun)")
    parser.add_argument("--mpirun-arg", action="append", default=[], help="an option for every mpirun")
    parser.add_argument("--replay-arg", action="append", default=[], help="an option for every h-replay")
    parser.add_argument("--h-trace", help="the h-trace launcher (default: beside h-sweep, then PATH)")
    parser.add_argument("--h-replay", help="h-replay (default: beside h-sweep, then PATH)")
    parser.add_argument("--h-dump", help="h-dump (default: beside h-sweep, then PATH)")
    if "--" not in argv:
        if "-h" in argv or "--help" in argv:
            parser.print_help()
            sys.exit(0)
        sys.exit("h-sweep: put the application and its arguments after '--'\n" + __doc__.split("\n\n")[1])
    split = argv.index("--")
    args = parser.parse_args(argv[:split])
    args.command = argv[split + 1:]
    if not args.command:
        parser.error("no application after '--'")
    if args.ranks < 1:
        parser.error("-np must be at least 1")
    args.levels = parse_levels(args.levels)
    return args


def count_events(nodes):
    """Event records in h-dump's JSON body: a loop's body counts once, whatever its iterations."""
    return sum(count_events(node["body"]) if "body" in node else 1 for node in nodes)


def run_logged(command, env, log, what, level):
    """Runs one job with its output into `log`; a failure stops the sweep with the job's status."""
    with open(log, "w") as out:
        out.write("$ " + shlex.join(command) + "\n")
        out.flush()
        status = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    if status != 0:
        tail = "".join(pathlib.Path(log).read_text().splitlines(keepends=True)[-10:])
        raise SweepStopped(f"h-sweep: the {what} failed at precision {level} (exit status {status}); its output "
                           f"is in {log}:\n{tail}", status)


def sweep_level(args, tools, level, directory):
    trace = directory / f"trace-p{level}.h"
    report = directory / f"replay-p{level}.json"
    mpirun = [args.mpirun] + args.mpirun_arg + ["-np", str(args.ranks)]
    env = dict(os.environ, MERGE_PRECISION=str(level), HTRACE_FILE=str(trace))
    trace.unlink(missing_ok=True)
    run_logged(mpirun + [tools["h-trace"]] + args.command, env, directory / f"application-p{level}.log",
               "application", level)
    if not trace.is_file():
        raise SweepStopped(f"h-sweep: the application at precision {level} wrote no trace ({trace})", 1)
    replay_env = {name: value for name, value in os.environ.items() if name != "HTRACE_FILE"}
    run_logged(mpirun + [tools["h-replay"], "--report-json", str(report)] + args.replay_arg + [str(trace)],
               replay_env, directory / f"replay-p{level}.log", "replay", level)
    dump = subprocess.run([tools["h-dump"], "--json", str(trace)], capture_output=True, text=True)
    if dump.returncode != 0:
        raise SweepStopped(f"h-sweep: h-dump cannot read {trace}: {dump.stderr.strip()}", 1)
    replayed = json.loads(report.read_text())
    return {"level": level, "trace_bytes": trace.stat().st_size, "events": count_events(json.loads(dump.stdout)["body"]),
            "traced_seconds": replayed["traced_seconds"], "replay_seconds": replayed["replay_seconds"],
            "relative_error": replayed["relative_difference"]}


def write_results(rows, directory, command):
    with open(directory / "sweep.csv", "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    by_level = sorted(rows, key=lambda row: row["level"])
    chart = svg_charts.line_chart(
        "h-sweep: " + " ".join([pathlib.Path(command[0]).name] + command[1:]), "merge precision",
        [row["level"] for row in by_level],
        [("trace bytes", [row["trace_bytes"] for row in by_level], "trace bytes"),
         ("replay error", [100 * abs(row["relative_error"]) for row in by_level], "|replay / traced - 1| (%)")])
    (directory / "sweep.svg").write_text(chart + "\n")


def print_row(row):
    print(f"| {row['level']} | {row['trace_bytes']} | {row['events']} | {row['traced_seconds']:.4g} | "
          f"{row['replay_seconds']:.4g} | {100 * row['relative_error']:+.1f}% |", flush=True)


def main(argv):
    args = parse_arguments(argv)
    tools = {}
    for name in ("h-trace", "h-replay", "h-dump"):
        tools[name] = find_tool(name, getattr(args, name.replace("-", "_")), __file__)
        if tools[name] is None:
            sys.exit(f"h-sweep: cannot find {name} (next to h-sweep, or on PATH; --{name} names it)")
    directory = pathlib.Path(args.output_dir)
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    print("| precision | trace bytes | events | traced s | replay s | replay vs. traced |\n"
          "| --- | --- | --- | --- | --- | --- |", flush=True)
    try:
        for level in args.levels:
            rows.append(sweep_level(args, tools, level, directory))
            print_row(rows[-1])
            write_results(rows, directory, args.command)
    except SweepStopped as stopped:
        print(stopped, file=sys.stderr)
        if rows:
            print(f"h-sweep: levels {', '.join(str(row['level']) for row in rows)} are in {directory / 'sweep.csv'}",
                  file=sys.stderr)
        return stopped.status
    print(f"h-sweep: {directory / 'sweep.csv'}, {directory / 'sweep.svg'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
