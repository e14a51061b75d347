#!/usr/bin/env python3
"""End-to-end test of h-whatif: does a faster simulated network predict a shorter job?

    check_whatif.py --h-whatif PATH --h-trace PATH --h-dump PATH --platform XML
                    [--smpirun PATH] [--h-replay-smpi PATH] [--mpirun PATH] [--np N] [--timeout SECONDS]
                    [--keep] -- PROGRAM ARGS...

1. Traces PROGRAM with the real MPI at --np ranks (64): `mpirun -np N h-trace PROGRAM ARGS`,
   MERGE_PRECISION=100.
2. Makes two platforms from --platform that differ only in network speed: fast.xml, a copy, and
   slow.xml, with every link's bandwidth (`bw`, `bb_bw`; not `loopback_bw`) divided by 10.
3. Runs `h-whatif --replay-arg=--no-compute TRACE slow.xml fast.xml`: it must exit 0, its CSV must
   list exactly those two platforms in that order with positive times, its SVG must be an SVG with
   one bar per platform, and fast.xml must predict a time at least 1% shorter than slow.xml. The
   simulation is deterministic and communication only, so the difference is the network's alone; 1%
   is far above rounding and well below what a tenth of the bandwidth costs the stencil's 128-byte
   halos at 64 ranks (12.6% in our runs). With the recorded computation simulated too, the
   difference fell below 1% in some runs: on an oversubscribed machine the time between calls is
   mostly a rank waiting for a core, 20 ms here against 1.4 ms of communication.
4. Runs h-whatif again with a broken platform file between the two: it must exit 1 and name the
   broken one, and its CSV must hold the other two with exactly the times of step 3 (the same inputs
   give the same simulation, and one failing platform does not stop the others).
5. With --h-extrap: traces the program at 4, 8 and 16 ranks and runs `h-whatif --ranks N` on those
   three traces and fast.xml, communication only (--replay-arg=--no-compute), and the same on the
   trace of step 1: the extrapolated job must predict the traced job's time within 1% (the
   simulation is deterministic, and where the extrapolated trace holds the traced one's events and
   values, the simulated communication is the same), and h-whatif --ranks with two traces must stop
   with exit status 2.

Exit status 0 passes, 1 fails, 77 skips (no smpirun or h-replay-smpi, as without SimGrid, or no
mpirun), as Meson reads them. The scratch directory is kept after a failure (or with --keep).
"""

import argparse
import csv
import os
import pathlib
import re
import shutil
import sys
import xml.etree.ElementTree as ElementTree

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "mpi"))
from mpi_launch import mpirun_command  # noqa: E402
from run_traced import TestFailure, run, run_in_scratch  # noqa: E402

SKIP = 77
SLOWER_BY = 10
# How much shorter the fast network's prediction must be (see the docstring).
MARGIN = 0.01
SVG_RECT = "{http://www.w3.org/2000/svg}rect"
# Every link's bandwidth (bw, and a backbone's bb_bw) but not a loopback's: ranks on one host do not
# talk through the network.
BANDWIDTH = re.compile(r'(?<![\w-])((?:bb_)?bw)="([0-9.]+(?:[eE][-+]?[0-9]+)?)([A-Za-z]*)"')


def parse_arguments(argv):
    if "--" not in argv:
        sys.exit("check_whatif.py: put the program and its arguments after '--'")
    split = argv.index("--")
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    parser.add_argument("--h-whatif", required=True)
    parser.add_argument("--h-trace", required=True, help="the h-trace launcher")
    parser.add_argument("--h-dump", required=True)
    parser.add_argument("--platform", required=True, help="the SimGrid platform the fast and slow ones come from")
    parser.add_argument("--smpirun", help="SimGrid's smpirun (absent: skipped)")
    parser.add_argument("--h-replay-smpi", help="h-replay built for SMPI (absent: skipped)")
    parser.add_argument("--mpirun", help="mpirun to trace with (default: mpirun or mpiexec from PATH)")
    parser.add_argument("--np", type=int, default=64, help="rank count (default 64)")
    parser.add_argument("--h-extrap", help="h-extrap, for step 5 (absent: step 5 left out)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds each run may take (default 300)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory even after a pass")
    args = parser.parse_args(argv[:split])
    # Meson gives paths relative to the build directory; h-whatif runs in the scratch directory.
    for tool in ("h_whatif", "h_trace", "h_dump", "h_replay_smpi", "h_extrap", "platform"):
        if getattr(args, tool):
            setattr(args, tool, os.path.abspath(getattr(args, tool)))
    args.command = argv[split + 1:]
    if not args.command:
        parser.error("no program after '--'")
    args.command[0] = os.path.abspath(args.command[0]) if os.path.exists(args.command[0]) else args.command[0]
    return args


def slower_platform(text):
    """The platform with every link's bandwidth divided by SLOWER_BY, latency and all else alike."""
    slower, count = BANDWIDTH.subn(lambda m: f'{m.group(1)}="{float(m.group(2)) / SLOWER_BY:g}{m.group(3)}"', text)
    if count == 0:
        raise TestFailure(f"{BANDWIDTH.pattern} matches nothing in the platform: nothing to slow down")
    return slower


def trace_program(args, mpirun, scratch, ranks=None):
    ranks = ranks or args.np
    trace = scratch / ("trace.h" if ranks == args.np else f"trace-{ranks}.h")
    command = mpirun_command(mpirun, ranks, [os.path.abspath(args.h_trace)] + args.command)
    status, stdout, stderr = run(command, {"HTRACE_FILE": str(trace), "MERGE_PRECISION": "100"}, scratch,
                                 args.timeout)
    if status != 0 or not trace.is_file():
        raise TestFailure(f"tracing failed (exit status {status})\nstdout:\n{stdout}\nstderr:\n{stderr}")
    return trace


def whatif(args, trace, platforms, directory, options=()):
    """Runs h-whatif; returns its exit status, its output, and its CSV's rows ([] without a CSV).
    `trace` may be a list of traces (with --ranks in `options`)."""
    traces = trace if isinstance(trace, list) else [trace]
    command = [sys.executable, args.h_whatif, "--output-dir", str(directory), "--smpirun", args.smpirun,
               "--h-replay-smpi", args.h_replay_smpi, "--h-dump", args.h_dump] + list(options) + \
        [str(t) for t in traces] + [str(p) for p in platforms]
    status, stdout, stderr = run(command, {}, directory.parent, args.timeout)
    print(stdout + stderr, end="", flush=True)
    table = directory / "whatif.csv"
    rows = list(csv.DictReader(table.open())) if table.is_file() else []
    return status, stdout + stderr, rows


COMMUNICATION_ONLY = ["--replay-arg=--no-compute"]


def check_study(args, trace, slow, fast, directory, failures):
    """Step 3; returns {platform: predicted seconds}."""
    status, _, rows = whatif(args, trace, [slow, fast], directory, COMMUNICATION_ONLY)
    if status != 0:
        raise TestFailure(f"h-whatif exited {status} on two good platforms")
    if [row["platform"] for row in rows] != [str(slow), str(fast)]:
        raise TestFailure(f"whatif.csv lists {[row['platform'] for row in rows]}, not [{slow}, {fast}]")
    predicted = {row["platform"]: float(row["predicted_seconds"]) for row in rows}
    if any(float(row["predicted_seconds"]) <= 0 or float(row["simulation_wall_seconds"]) <= 0 for row in rows):
        failures.append(f"whatif.csv: times must be positive: {rows}")
    fast_seconds, slow_seconds = predicted[str(fast)], predicted[str(slow)]
    print(f"predicted: {fast_seconds:.9f} s on fast.xml, {slow_seconds:.9f} s on slow.xml "
          f"(fast / slow {fast_seconds / slow_seconds:.4f}, must be at most {1 - MARGIN:g})", flush=True)
    if not fast_seconds <= (1 - MARGIN) * slow_seconds:
        failures.append(f"the network with {SLOWER_BY} times the bandwidth predicts {fast_seconds:.9f} s, not at "
                        f"least {100 * MARGIN:g}% less than the slow one's {slow_seconds:.9f} s")
    svg_file = directory / "whatif.svg"
    try:
        svg = ElementTree.parse(svg_file).getroot()
        bars = [rect.findtext("{http://www.w3.org/2000/svg}title", "") for rect in svg.iter(SVG_RECT)]
        if not svg.tag.endswith("svg") or len(bars) != 2 or not (bars[0].startswith("slow:")
                                                                  and bars[1].startswith("fast:")):
            failures.append(f"whatif.svg: expected an SVG with the bars slow and fast, found {bars}")
    except (OSError, ElementTree.ParseError) as error:
        failures.append(f"whatif.svg: {error}")
    return predicted


def check_failing_platform(args, trace, slow, fast, predicted, directory, failures):
    """Step 4."""
    broken = directory.parent / "broken.xml"
    broken.write_text("<platform version='4.1'><cluster id='cut short'")
    status, output, rows = whatif(args, trace, [slow, broken, fast], directory, COMMUNICATION_ONLY)
    if status != 1:
        failures.append(f"with a broken platform among good ones h-whatif exited {status}, not 1")
    if not re.search(r"^h-whatif: \S*broken\.xml: ", output, re.MULTILINE):
        failures.append("h-whatif does not name broken.xml as the platform that failed")
    again = {row["platform"]: float(row["predicted_seconds"]) for row in rows}
    if again != predicted:
        failures.append(f"the second study's whatif.csv holds {again}, the first's {predicted}: the same "
                        f"simulation must predict the same times, and a failed platform must not stop the others")


def check_extrapolated(args, mpirun, trace, fast, scratch, failures):
    """Step 5."""
    smaller = [trace_program(args, mpirun, scratch, ranks) for ranks in (4, 8, 16)]
    options = COMMUNICATION_ONLY + ["--h-extrap", args.h_extrap]
    status, _, traced_rows = whatif(args, trace, [fast], scratch / "traced", options)
    if status != 0 or len(traced_rows) != 1:
        raise TestFailure(f"h-whatif of the trace at {args.np} ranks exited {status}")
    status, _, rows = whatif(args, smaller, [fast], scratch / "extrapolated", ["--ranks", str(args.np)] + options)
    if status != 0 or len(rows) != 1:
        raise TestFailure(f"h-whatif --ranks {args.np} exited {status} with {len(rows)} platforms in its table")
    if not (scratch / "extrapolated" / f"extrapolated-{args.np}.h").is_file():
        failures.append(f"h-whatif --ranks left no extrapolated-{args.np}.h")
    traced, extrapolated = float(traced_rows[0]["predicted_seconds"]), float(rows[0]["predicted_seconds"])
    print(f"communication only at {args.np} ranks: traced {traced:.9f} s, extrapolated {extrapolated:.9f} s",
          flush=True)
    if abs(extrapolated - traced) > 0.01 * traced:
        failures.append(f"the job extrapolated to {args.np} ranks predicts {extrapolated:.9f} s, the traced one "
                        f"{traced:.9f} s: more than 1% apart")
    status, output, _ = whatif(args, smaller[:2], [fast], scratch / "two", ["--ranks", str(args.np)])
    if status != 2:
        failures.append(f"h-whatif --ranks with two traces exited {status}, not 2")


def run_case(args, mpirun, scratch):
    trace = trace_program(args, mpirun, scratch)
    fast, slow = scratch / "fast.xml", scratch / "slow.xml"
    text = pathlib.Path(args.platform).read_text()
    fast.write_text(text)
    slow.write_text(slower_platform(text))
    failures = []
    predicted = check_study(args, trace, slow, fast, scratch / "study", failures)
    check_failing_platform(args, trace, slow, fast, predicted, scratch / "again", failures)
    if args.h_extrap:
        check_extrapolated(args, mpirun, trace, fast, scratch, failures)
    if failures:
        raise TestFailure("\n".join(failures))


def main():
    args = parse_arguments(sys.argv[1:])
    missing = [name for name, path in (("smpirun", args.smpirun), ("h-replay-smpi", args.h_replay_smpi))
               if not (path and shutil.which(path))]
    if missing:
        print(f"check_whatif.py: no {' or '.join(missing)} (SimGrid not found at configure time): skipped")
        return SKIP
    mpirun = args.mpirun or shutil.which("mpirun") or shutil.which("mpiexec")
    if mpirun is None:
        print("check_whatif.py: no mpirun or mpiexec on PATH: skipped")
        return SKIP
    return run_in_scratch("h-trace-whatif-", args.keep, lambda scratch: run_case(args, mpirun, scratch))


if __name__ == "__main__":
    sys.exit(main())
