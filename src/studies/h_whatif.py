#!/usr/bin/env python3
"""h-whatif: what a traced job would cost on networks one does not have (yet), from its trace alone,
replayed on SimGrid's simulated platforms.

    h-whatif [--output-dir DIR] [--smpirun PATH] [--h-replay-smpi PATH] [--h-dump PATH]
             [--hostfile FILE] [--smpirun-arg ARG ...] [--replay-arg ARG ...]
             TRACE PLATFORM.xml [PLATFORM.xml ...]
    h-whatif --ranks N [options] TRACE TRACE TRACE... PLATFORM.xml [PLATFORM.xml ...]

For each platform, in the order given, replays the trace on it with SimGrid's SMPI:

    smpirun -platform PLATFORM.xml -hostfile HOSTS -np N h-replay-smpi --report-json REPORT TRACE

(N: the trace's rank count, from its header), the recorded computation simulated as h-replay-smpi
does by default (each compute phase takes its recorded seconds on the rank's simulated host). The
predicted time is the replay's simulated time (h-replay's replay time: from a barrier to the end of
the slowest rank's schedule); the simulation wall time is how long smpirun took here. Writes
DIR/whatif.csv (platform as given, predicted_seconds, simulation_wall_seconds), DIR/whatif.svg (a bar
of predicted time per platform), and the same table in Markdown on stdout. Each platform's replay
report and smpirun output stay in DIR (whatif-<platform>.json, whatif-<platform>.log).

Ranks are placed as a job scheduler would place them: rank i on the i-th host the platform file
declares (clusters in the order of their radical, node-0, node-1, node-2 ...); on a platform with
fewer hosts than ranks, consecutive ranks share a host, in blocks as even as can be (as mpirun fills
a node's cores first). smpirun's own placement follows the hosts' names as text (node-0, node-1,
node-10, node-100 ...), which scatters neighbouring ranks over a fat tree or a torus. --hostfile
FILE gives a placement of one's own (one host per line, line i for rank i) for every platform.

The trace, every platform file and smpirun must be there before anything runs (else one line
and exit status 2). A platform whose simulation fails (smpirun's exit status not 0, or no replay
report) is named on stderr with the line that says why, and the others still run, since each may
take long: the CSV, the chart and the table hold the platforms that succeeded, and h-whatif exits 1.
--smpirun-arg passes an option to every smpirun (e.g. --smpirun-arg=--cfg=network/model:CM02),
--replay-arg one to h-replay-smpi (e.g. --replay-arg=--no-compute). h-replay-smpi and h-dump are
looked for next to h-whatif, then on PATH; smpirun on PATH.

With --ranks N, the job is one nobody ran: the traces (of the same program and input at three or
more rank counts; the platform files are those whose names end in .xml) go to h-extrap, which writes
DIR/extrapolated-N.h, the trace of N ranks, and that trace is replayed on each platform.
"""

import argparse
import csv
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import svg_charts  # noqa: E402
from tool_paths import find_tool  # noqa: E402

COLUMNS = ["platform", "predicted_seconds", "simulation_wall_seconds"]
# SimGrid echoes every configuration setting, and warns that smpi/host-speed is not set: it only
# scales host time measured between MPI calls, which h-replay-smpi never counts (its recorded
# computation is simulated by itself).
QUIET = ["--log=xbt_cfg.thres:warning", "--log=smpi_config.thres:warning"]
# The line of a failed simulation that says why: SimGrid's errors, or h-replay's own messages.
REASON = re.compile(r"\[[\w.]+/(?:ERROR|CRITICAL)\] (.*)|^(h-replay: .*)$", re.MULTILINE)


class WhatIfError(Exception):
    pass


def required_tool(name, given):
    """The tool's path (tool_paths.find_tool), or an error naming it."""
    found = find_tool(name, given, __file__)
    if found is None:
        raise WhatIfError(f"h-whatif: cannot find {name} (next to h-whatif, or on PATH; --{name} names it)")
    return found


def parse_arguments(argv):
    parser = argparse.ArgumentParser(prog="h-whatif", usage=__doc__.split("\n\n")[1])
    parser.add_argument("files", nargs="+", metavar="TRACE... PLATFORM.xml...",
                        help="the trace to replay (with --ranks, the traces to extrapolate from), then platform files")
    parser.add_argument("--ranks", type=int, help="extrapolate the traces to this many ranks first (h-extrap)")
    parser.add_argument("--h-extrap", help="h-extrap (next to h-whatif, else from PATH)")
    parser.add_argument("--output-dir", default=".", help="where the table, the chart and the logs go (.)")
    parser.add_argument("--smpirun", default="smpirun", help="SimGrid's smpirun (from PATH)")
    parser.add_argument("--h-replay-smpi", help="h-replay built for SMPI (next to h-whatif, else from PATH)")
    parser.add_argument("--h-dump", help="h-dump (next to h-whatif, else from PATH)")
    parser.add_argument("--hostfile", help="host of each rank, one a line, for every platform")
    parser.add_argument("--smpirun-arg", action="append", default=[], help="an option for every smpirun")
    parser.add_argument("--replay-arg", action="append", default=[], help="an option for h-replay-smpi")
    args = parser.parse_args(argv)
    # Traces first, then the platforms: with --ranks there are several traces, told apart from the
    # platform files by the latter's .xml.
    first_platform = 1 if args.ranks is None else next(
        (i for i, path in enumerate(args.files) if path.endswith(".xml")), len(args.files))
    args.traces, args.platforms = args.files[:first_platform], args.files[first_platform:]
    if args.ranks is not None and args.ranks < 1:
        parser.error("--ranks wants a positive number of ranks")
    if not args.platforms:
        parser.error("no platform file (PLATFORM.xml) given")
    if args.ranks is not None and len(args.traces) < 3:
        parser.error(f"--ranks extrapolates from traces at three or more rank counts ({len(args.traces)} given)")
    args.trace = args.traces[0]
    return args


def platform_name(path):
    return pathlib.Path(path).name.removesuffix(".xml")


def check_inputs(args):
    """Every file must be there before hours of simulation start; platform names label the rows,
    the bars and the files kept, so they must differ."""
    for path in args.traces + args.platforms + ([args.hostfile] if args.hostfile else []):
        if not os.path.isfile(path):
            raise WhatIfError(f"h-whatif: {path}: no such file")
    names = [platform_name(path) for path in args.platforms]
    for name in names:
        if names.count(name) > 1:
            same = ", ".join(path for path in args.platforms if platform_name(path) == name)
            raise WhatIfError(f"h-whatif: two platforms are named {name} ({same}): rename one")
    if shutil.which(args.smpirun) is None:
        raise WhatIfError(f"h-whatif: cannot find {args.smpirun} (SimGrid's smpirun; --smpirun names it)")


def trace_header(h_dump, trace):
    # A trace is input from elsewhere: h-dump's message may quote bytes of it that are not UTF-8.
    dump = subprocess.run([h_dump, "--json", trace], capture_output=True)
    if dump.returncode != 0:
        message = dump.stderr.decode("utf-8", "replace").strip()
        raise WhatIfError(f"h-whatif: h-dump cannot read {trace}: {message}")
    try:
        return json.loads(dump.stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise WhatIfError(f"h-whatif: {trace}: {h_dump} --json wrote no valid JSON ({type(error).__name__})")


def expand_radical(radical):
    """A cluster's radical, '0-255' or '0-3,8,10-11', as its numbers in order."""
    numbers = []
    for part in radical.split(","):
        low, _, high = part.strip().partition("-")
        numbers.extend(range(int(low), int(high or low) + 1))
    return numbers


def declared_hosts(platform):
    """The platform's hosts in the order the file declares them: [] when it declares none this way,
    None when it is not XML (smpirun will say what is wrong with it)."""
    try:
        root = ElementTree.parse(platform).getroot()
    except ElementTree.ParseError:
        return None
    hosts = []
    for element in root.iter():
        if element.tag == "host":
            hosts.append(element.get("id"))
        elif element.tag in ("cluster", "cabinet"):
            try:
                numbers = expand_radical(element.get("radical", ""))
            except ValueError:
                return []
            hosts.extend(f"{element.get('prefix', '')}{n}{element.get('suffix', '')}" for n in numbers)
    return hosts


def write_hostfile(platform, ranks, path):
    """Rank i on the platform's i-th host; with fewer hosts than ranks, consecutive ranks share a host
    in blocks as even as can be, as mpirun fills a node's cores before the next node. False when the
    hosts are unknown."""
    hosts = declared_hosts(platform)
    if not hosts:
        if hosts is not None:
            print(f"h-whatif: {platform}: found no hosts in it, smpirun places the ranks", file=sys.stderr)
        return False
    if len(hosts) < ranks:
        print(f"h-whatif: {platform} has {len(hosts)} hosts for {ranks} ranks: consecutive ranks share hosts",
              file=sys.stderr)
    placement = [hosts[rank * min(len(hosts), ranks) // ranks] for rank in range(ranks)]
    path.write_text("".join(host + "\n" for host in placement))
    return True


def failure_reason(output):
    reasons = [match.group(1) or match.group(2) for match in REASON.finditer(output)]
    lines = [line for line in output.splitlines() if line.strip()]
    return reasons[0] if reasons else (lines[-1] if lines else "no output")


def simulate(args, tools, platform, ranks, directory):
    """Replays the trace on one platform; returns (predicted seconds, wall seconds of the simulation)."""
    name = platform_name(platform)
    report, log = directory / f"whatif-{name}.json", directory / f"whatif-{name}.log"
    report.unlink(missing_ok=True)
    placement = []
    if args.hostfile:
        placement = ["-hostfile", os.path.abspath(args.hostfile)]
    elif write_hostfile(platform, ranks, directory / f"whatif-{name}.hosts"):
        placement = ["-hostfile", str((directory / f"whatif-{name}.hosts").resolve())]
    command = [args.smpirun, "-platform", os.path.abspath(platform)] + placement + ["-np", str(ranks)] + QUIET + \
        args.smpirun_arg + [tools["h-replay-smpi"], "--report-json", str(report.resolve())] + args.replay_arg + \
        [os.path.abspath(args.trace)]
    started = time.monotonic()
    # In DIR: h-replay makes its I/O sandbox in the working directory.
    run = subprocess.run(command, cwd=directory, capture_output=True, text=True)
    wall = time.monotonic() - started
    log.write_text("$ " + shlex.join(command) + "\n" + run.stdout + run.stderr)
    if run.returncode != 0 or not report.is_file():
        raise WhatIfError(f"h-whatif: {platform}: the simulation failed (smpirun exit status {run.returncode}): "
                          f"{failure_reason(run.stdout + run.stderr)} (all of it in {log})")
    return json.loads(report.read_text())["replay_seconds"], wall


def time_unit(seconds):
    """The unit the chart shows times in, so that its labels keep three significant digits."""
    largest = max(seconds, default=0)
    if largest >= 1:
        return "s", 1
    if largest >= 1e-3:
        return "ms", 1e3
    return "us", 1e6


def write_results(rows, directory, title):
    with open(directory / "whatif.csv", "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    unit, factor = time_unit([row["predicted_seconds"] for row in rows])
    chart = svg_charts.bar_chart(title, [platform_name(row["platform"]) for row in rows],
                                 [row["predicted_seconds"] * factor for row in rows], unit=f"predicted time ({unit})")
    (directory / "whatif.svg").write_text(chart + "\n")


def extrapolate(args, directory):
    """The trace of --ranks ranks from the traces given (h-extrap), as the trace to replay."""
    h_extrap = required_tool("h-extrap", args.h_extrap)
    output = directory / f"extrapolated-{args.ranks}.h"
    done = subprocess.run([h_extrap] + args.traces + ["--ranks", str(args.ranks), "-o", str(output)],
                          capture_output=True)
    message = done.stderr.decode("utf-8", "replace").strip()
    if done.returncode != 0:
        raise WhatIfError(message or f"h-whatif: h-extrap exited {done.returncode}")
    print(message, file=sys.stderr)
    args.trace = str(output)


def main(argv):
    args = parse_arguments(argv)
    directory = pathlib.Path(args.output_dir)
    try:
        check_inputs(args)
        tools = {name: required_tool(name, getattr(args, name.replace("-", "_"))) for name in ("h-replay-smpi", "h-dump")}
        if args.ranks is not None:
            directory.mkdir(parents=True, exist_ok=True)
            extrapolate(args, directory)
        header = trace_header(tools["h-dump"], args.trace)
    except WhatIfError as error:
        print(error, file=sys.stderr)
        return 2
    ranks = header["ranks"]
    directory.mkdir(parents=True, exist_ok=True)
    # A table left by an earlier study must not pass for this one's if every platform fails.
    for old in ("whatif.csv", "whatif.svg"):
        (directory / old).unlink(missing_ok=True)
    command = header.get("command", "").split()
    program = " ".join([pathlib.Path(command[0]).name] + command[1:]) if command else pathlib.Path(args.trace).name
    title = f"h-whatif: {program}, {ranks} ranks" + (" (extrapolated)" if header.get("extrapolation") else "")
    if args.replay_arg:
        title += f" (replay {' '.join(args.replay_arg)})"

    print(f"{title}\n\n| platform | predicted s | simulation wall s |\n| --- | --- | --- |", flush=True)
    rows, failed = [], []
    for platform in args.platforms:
        try:
            predicted, wall = simulate(args, tools, platform, ranks, directory)
        except WhatIfError as error:
            print(error, file=sys.stderr)
            failed.append(platform)
            continue
        rows.append({"platform": platform, "predicted_seconds": predicted, "simulation_wall_seconds": round(wall, 2)})
        print(f"| {platform_name(platform)} | {predicted:.6g} | {wall:.1f} |", flush=True)
        write_results(rows, directory, title)
    if failed:
        kept = f"; {directory / 'whatif.csv'} holds the others" if rows else ""
        print(f"h-whatif: {len(failed)} of {len(args.platforms)} platforms failed ({', '.join(failed)}){kept}",
              file=sys.stderr)
        return 1
    print(f"\nh-whatif: {directory / 'whatif.csv'}, {directory / 'whatif.svg'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
