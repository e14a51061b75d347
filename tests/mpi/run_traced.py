#!/usr/bin/env python3
"""One MPI end-to-end test case: run a program without and with the tracer, and check the trace.

    run_traced.py --h-trace PATH --h-dump PATH --np N --precision P [--linked] [--reference PROGRAM]
                  [--h-replay PATH [--replay-mode causal|paired]] [--mpirun PATH] [--timeout SECONDS] [--keep]
                  [--check-precision PROGRAM | --no-precision-model] [--check-rank-values]
                  [--check-folding] [--check-compute] [--check-io-files] [--check-file-names]
                  -- PROGRAM ARGS...

1. Runs PROGRAM untraced under mpirun (without CALL_LOG_DIR) and keeps its stdout and exit status.
   With --linked, PROGRAM is linked with -lhtrace and traces itself, so the untraced run uses
   --reference (the same program built without the library) when given.
2. Runs it traced -- `mpirun ... h-trace PROGRAM ARGS`, or with --linked `mpirun ... PROGRAM ARGS` --
   with CALL_LOG_DIR (the program's own log of its MPI calls), HTRACE_FILE and MERGE_PRECISION set,
   and HTRACE_IO_EXCLUDE naming the log's directory (writing the log is not the program's I/O).
3. Requires the same exit status and the same stdout (the tracer must not change what the program
   sees or prints), and a trace file.
4. Runs check_calls.py (next to this script): the trace must hold exactly the calls the program logged.
   Below precision 100 values merge, so it runs check_precision.py instead for a program it has a
   model of (--check-precision); for one it has none of (--no-precision-model), check_calls.py
   compares only the job-wide calls and bytes per function, within TOTALS_TOLERANCE (--totals-within
   for a program whose shape the merge is known to count less closely: docs/guide/limits.md). With
   --check-rank-values, at precision 100, check_rank_values.py: the ranks the program's splits got in
   their new communicators, and one per-rank entry per new communicator.
5. At precision 100, runs check_sequence.py on the trace: the tracer's record of each rank's calls,
   in order (sends, receives, completions, collectives), must be the program's log.
   With --check-folding, runs check_folding.py: the program's cycles must fold into one loop.
   With --check-compute, check_compute.py: each rank's computation time before the calls the program
   timed (compute_us=) must be what the rank measured, a load imbalance included; and
   check_profile.py: h-dump --profile's time per rank in MPI and computing must be the program's.
   With --check-file-names, check_file_names.py: the files the trace's calls name must be the names
   the program logged (file=), a name every rank gave one literal name and names of each rank's own
   one pattern.
6. With --h-replay, replays the trace under the tracer (with --otf2-print, writing its timeline as an
   OTF2 archive and a Chrome trace, which check_timeline.py checks with h-dump's of the trace) (`mpirun ... h-trace h-replay TRACE`) and runs
   check_replay.py: at precision 100 the replay must send and call collectives exactly as the trace
   says; below, it must send as many messages as the program, nearly as many bytes, and call each
   collective as often (within 1%, or --replay-within). At precision
   100 it then runs check_sequence.py on the trace of the replay: replay must make the program's
   calls, in the program's order, receives and completions included. With --replay-mode, h-replay
   must have chosen that mode; causal below precision 100, the replay's steps between collectives
   must be the program's in some order (check_sequence.py --steps-in-any-order).

Steps 4-6 all run even when one fails, and the verdict names each check that failed. Every mpirun
has a time limit; running into it is a failure. Exit status 0 passes, 1 fails, 77 skips
(no mpirun here), as Meson reads them. The scratch directory is removed after a pass and kept after a
failure (or with --keep) so its logs and trace can be looked at.
"""

import argparse
import difflib
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import tempfile

from io_functions import is_io_function
from mpi_launch import mpirun_command, program_output, run_job

SKIP = 77
# How far a merged trace's job-wide calls and bytes per function (h-dump --calls) may be from the
# program's, for a program check_precision.py has no model of. h-dump counts a loop whose count is a
# histogram by its mean, which is exact for one such loop and an approximation for such loops nested
# in one another; bytes are exact while a call site's sizes fit in the histogram's bins. On amr at
# precision 0 (4 and 16 ranks, several runs) the calls came out exact and the bytes within 0.05%.
TOTALS_TOLERANCE = 0.01


class TestFailure(Exception):
    pass


def parse_arguments(argv):
    if "--" not in argv:
        sys.exit("run_traced.py: put the program and its arguments after '--'")
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    if not command:
        sys.exit("run_traced.py: no program after '--'")
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    parser.add_argument("--h-trace", required=True, help="the h-trace launcher")
    parser.add_argument("--h-dump", required=True, help="the h-dump executable")
    parser.add_argument("--np", required=True, type=int, help="rank count")
    parser.add_argument("--precision", required=True, type=int, help="MERGE_PRECISION (0..100)")
    parser.add_argument("--linked", action="store_true", help="PROGRAM is linked with -lhtrace: no launcher")
    parser.add_argument("--reference", help="the untraced twin of a --linked PROGRAM, for the untraced run")
    parser.add_argument("--h-replay", help="also replay the trace with this h-replay and check the replay")
    parser.add_argument("--replay-mode", choices=["causal", "paired"],
                        help="the mode h-replay must choose; causal below precision 100 also checks the replay's "
                             "steps between collectives against the program's (check_sequence.py --steps-in-any-order)")
    parser.add_argument("--otf2-print", help="with --h-replay: the replay also writes its timeline (--otf2, "
                        "--chrome-trace), read with this otf2-print and checked (check_timeline.py)")
    parser.add_argument("--mpirun", help="mpirun to use (default: mpirun or mpiexec from PATH)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds each mpirun may take (default 120)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory even after a pass")
    parser.add_argument("--check-precision", metavar="PROGRAM",
                        help="also run check_precision.py for this program (convergence, land_sea, drifting)")
    parser.add_argument("--check-rank-values", action="store_true",
                        help="also check the new_rank= its splits log against the trace (check_rank_values.py)")
    parser.add_argument("--totals-within", type=float, default=TOTALS_TOLERANCE,
                        help=f"with --no-precision-model below precision 100: the share by which the trace's "
                             f"job-wide calls and bytes per function may differ from the program's "
                             f"(default {TOTALS_TOLERANCE})")
    parser.add_argument("--replay-within", type=float,
                        help="below precision 100: the share by which the replay's messages and calls of "
                             "each collective may differ from the program's (check_replay.py's default: 0.01)")
    parser.add_argument("--no-precision-model", action="store_true",
                        help="below precision 100, check_precision.py has no model of this program and per-rank "
                             "exactness is what merging gives up: check_calls.py compares job-wide totals only")
    parser.add_argument("--check-compute", action="store_true",
                        help="also check each rank's computation time against the compute_us= it logged "
                             "(check_compute.py)")
    parser.add_argument("--check-folding", action="store_true",
                        help="also run check_folding.py: the cycles the program reports must fold into one loop")
    parser.add_argument("--check-file-names", action="store_true",
                        help="also run check_file_names.py: the trace's file names against the names the program "
                             "logged (file=)")
    parser.add_argument("--check-io-files", action="store_true",
                        help="the program writes files (in its directory, or named '../<its directory's name>.*'): "
                             "the replay must make files of the same sizes, all inside its sandbox, and touch "
                             "nothing outside it")
    args = parser.parse_args(options)
    if args.check_precision and args.no_precision_model:
        parser.error("--check-precision and --no-precision-model exclude each other")
    # Runs happen inside the scratch directory, so a relative program path must be made absolute.
    args.command = [os.path.abspath(command[0]) if os.path.exists(command[0]) else command[0]] + command[1:]
    if args.reference is not None:
        args.reference = os.path.abspath(args.reference)
    return args


def run(command, extra_env, cwd, timeout):
    return run_job(command, extra_env, cwd, timeout, timed_out=TestFailure)


# What the harness itself puts in the scratch directory, not the program.
HARNESS_FILES = ("calls", "trace.h", "untraced-trace.h", "output.txt", "replayed.h", "replay.json", "replay-io")


def program_files(scratch):
    """{path: size} of the files the program wrote: in the scratch directory (relative paths), and
    beside it under names that start with the scratch directory's own ('../<name>.*': names that try
    to leave a replay's sandbox, which replay keeps inside it as '<name>.*')."""
    files = {}
    for path in scratch.rglob("*"):
        relative = path.relative_to(scratch)
        if path.is_file() and relative.parts[0] not in HARNESS_FILES:
            files[str(relative)] = path.stat().st_size
    for path in scratch.parent.glob(scratch.name + ".*"):
        files[path.name] = path.stat().st_size
    return files


def outside_state(scratch):
    """What replay must leave alone outside its sandbox: the files beside the scratch directory that
    the program wrote, with their sizes and modification times."""
    return {path.name: (path.stat().st_size, path.stat().st_mtime_ns) for path in scratch.parent.glob(scratch.name + ".*")}


def run_case(args, mpirun, scratch):
    log_dir = scratch / "calls"
    log_dir.mkdir()
    trace = scratch / "trace.h"
    prefix = mpirun_command(mpirun, args.np, [])

    reference = [args.reference or args.command[0]] + args.command[1:]
    # A --linked program without a --reference traces even here: its trace goes to a file of its own.
    untraced_env = {"HTRACE_FILE": str(scratch / "untraced-trace.h")} if args.linked and not args.reference else {}
    untraced_status, untraced_stdout, untraced_stderr = run(prefix + reference, untraced_env, scratch, args.timeout)
    if untraced_status != 0:
        raise TestFailure(f"the program fails without the tracer (exit status {untraced_status}): the test itself "
                          f"is broken\nstdout:\n{untraced_stdout}\nstderr:\n{untraced_stderr}")

    traced_command = prefix + ([] if args.linked else [os.path.abspath(args.h_trace)]) + args.command
    # The program's own log is the truth the trace is checked against, not I/O of the program's.
    traced_env = {"CALL_LOG_DIR": str(log_dir), "HTRACE_FILE": str(trace), "MERGE_PRECISION": str(args.precision),
                  "HTRACE_IO_EXCLUDE": str(log_dir)}
    traced_status, traced_stdout, traced_stderr = run(traced_command, traced_env, scratch, args.timeout)

    if traced_status != untraced_status:
        raise TestFailure(f"exit status {traced_status} with the tracer, {untraced_status} without\n"
                          f"stdout:\n{traced_stdout}\nstderr:\n{traced_stderr}")
    expected_lines, traced_lines = program_output(untraced_stdout), program_output(traced_stdout)
    if expected_lines != traced_lines:
        diff = "\n".join(difflib.unified_diff(expected_lines, traced_lines, "untraced", "traced", lineterm=""))
        raise TestFailure(f"the tracer changed the program's output:\n{diff}\nstderr of the traced run:\n"
                          f"{traced_stderr}")
    print("".join(line + "\n" for line in traced_lines), end="")
    if not trace.is_file() or trace.stat().st_size == 0:
        raise TestFailure(f"no trace file at {trace}\nstderr of the traced run:\n{traced_stderr}")

    failed = []
    here = pathlib.Path(__file__).resolve().parent
    h_dump = os.path.abspath(args.h_dump)
    # Below precision 100 values merge into histograms: per-rank exactness is what was given up, and
    # check_precision.py checks what the histograms hold instead, where it has a model of the program.
    if args.precision == 100 or not (args.check_precision or args.no_precision_model):
        run_check(failed, "calls: the trace does not hold exactly the calls the program made",
                  [here / "check_calls.py", "--h-dump", h_dump, "--trace", trace, "--log-dir", log_dir,
                   "--ranks", args.np])
    elif args.no_precision_model:
        run_check(failed, "calls: the merged trace does not stand for as many calls and bytes as the program made",
                  [here / "check_calls.py", "--h-dump", h_dump, "--trace", trace, "--log-dir", log_dir,
                   "--ranks", args.np, "--totals-within", args.totals_within])
    if args.check_precision:
        run_check(failed, "precision: the merged trace does not hold what the program did",
                  [here / "check_precision.py", "--h-dump", h_dump, "--trace", trace, "--program",
                   args.check_precision, "--ranks", args.np, "--precision", args.precision, "--log-dir", log_dir])
    if args.check_folding:
        output = scratch / "output.txt"
        output.write_text("\n".join(traced_lines) + "\n")
        run_check(failed, "folding: the program's cycles did not fold into one loop",
                  [here / "check_folding.py", "--h-dump", h_dump, "--trace", trace, "--output", output])
    if args.precision == 100:
        run_check(failed, "sequence of the original trace: the tracer's record of the calls, in order, is not the "
                          "program's log",
                  [here / "check_sequence.py", "--h-dump", h_dump, "--trace", trace, "--log-dir", log_dir,
                   "--ranks", args.np, "--label", "original trace"])
    if args.check_compute:
        run_check(failed, "compute: a rank's computation time in the trace is not what it measured itself",
                  [here / "check_compute.py", "--h-dump", h_dump, "--trace", trace, "--log-dir", log_dir,
                   "--ranks", args.np])
        run_check(failed, "profile: where a rank's time went in h-dump --profile is not what it measured itself",
                  [here / "check_profile.py", "--h-dump", h_dump, "--trace", trace, "--log-dir", log_dir,
                   "--ranks", args.np])
    if args.check_rank_values and args.precision == 100:
        run_check(failed, "rank values: the ranks in new communicators are not what the program got, or not one "
                          "entry per communicator",
                  [here / "check_rank_values.py", "--h-dump", h_dump, "--trace", trace, "--log-dir", log_dir,
                   "--ranks", args.np])
    if args.check_file_names:
        run_check(failed, "file names: the trace does not name the files the program opened, or not as one name "
                          "where ranks share a name or follow the rank",
                  [here / "check_file_names.py", "--h-dump", h_dump, "--trace", trace, "--log-dir", log_dir,
                   "--ranks", args.np])
    written = program_files(scratch) if args.check_io_files else {}
    if args.h_replay:
        check_replay(args, prefix, scratch, trace, log_dir, failed, written)
    if failed:
        raise TestFailure(f"{len(failed)} check(s) failed (their output is above):\n" +
                          "\n".join(f"  - {failure}" for failure in failed))


def check_io_files(scratch, sandbox, written, outside_before, precision, failed):
    """The replay's files: at precision 100 the program's, of the same sizes; at any precision all
    inside the sandbox, with nothing outside it changed."""
    made = {}
    for path in sandbox.rglob("*"):
        if path.is_file():
            made[str(path.relative_to(sandbox))] = path.stat().st_size
    print(f"io files: the program wrote {len(written)}, the replay {len(made)} in {sandbox.name}", flush=True)
    if precision == 100 and made != written:
        lines = [f"  {name}: program {written.get(name, 'none')}, replay {made.get(name, 'none')}"
                 for name in sorted(set(made) | set(written)) if made.get(name) != written.get(name)]
        failed.append("io files: the replay's files are not the program's, by name and size:\n" + "\n".join(lines))
    outside_after = outside_state(scratch)
    if outside_after != outside_before:
        failed.append(f"io files: the replay changed files outside its sandbox: before {outside_before}, "
                      f"after {outside_after}")


def check_io_bytes(log_dir, report, ranks, failed):
    """At precision 100 the replay reads and writes, per rank, the bytes the program's I/O calls
    logged (their names say which: every read has 'read' in it, no write has)."""
    logged = {"bytes_read": [0] * ranks, "bytes_written": [0] * ranks}
    for rank in range(ranks):
        for line in (log_dir / f"rank.{rank}").read_text().splitlines():
            function, bytes_moved = line.split()[:2]
            if is_io_function(function):
                logged["bytes_read" if "read" in function else "bytes_written"][rank] += int(bytes_moved)
    replayed = json.loads(report.read_text())["io"]
    for key, values in logged.items():
        if replayed[key] != values:
            failed.append(f"io bytes: the replay's {key} per rank {replayed[key]}, the program's {values}")


def run_check(failed, failure, command):
    """Runs one check script (a Python file and its arguments); on a non-zero exit status, adds
    `failure` and that status to `failed`."""
    command = [sys.executable] + [str(word) for word in command]
    print(f"$ {shlex.join(command)}", flush=True)
    status = subprocess.run(command, timeout=300).returncode
    if status != 0:
        failed.append(f"{failure} ({pathlib.Path(command[1]).name} exit status {status}"
                      f"{': cannot compare' if status == 2 else ''})")


def check_replay(args, prefix, scratch, trace, log_dir, failed, written):
    """Replays `trace` under the tracer, lossless, and checks the replay (check_replay.py, and at
    precision 100 check_sequence.py on the replay's trace; with --check-io-files, the files it made
    against `written`, the program's)."""
    replayed = scratch / "replayed.h"
    report = scratch / "replay.json"
    sandbox = scratch / "replay-io"
    io_options = ["--io-dir", str(sandbox), "--keep-io"] if args.check_io_files else []
    timeline_otf2, timeline_chrome = scratch / "replay-otf2", scratch / "replay-timeline.json"
    timeline_options = ["--otf2", str(timeline_otf2), "--chrome-trace", str(timeline_chrome)] if args.otf2_print else []
    outside_before = outside_state(scratch)
    command = prefix + [os.path.abspath(args.h_trace), os.path.abspath(args.h_replay), "--report-json", str(report),
                        *io_options, *timeline_options, str(trace)]
    try:
        status, stdout, stderr = run(command, {"HTRACE_FILE": str(replayed), "MERGE_PRECISION": "100"}, scratch,
                                     args.timeout)
    except TestFailure as timeout:
        failed.append(f"replay: h-replay {timeout}")
        return
    print(stderr, end="")
    if status != 0 or not replayed.is_file() or not report.is_file():
        failed.append(f"replay: h-replay failed (exit status {status})\nstdout:\n{stdout}\nstderr:\n{stderr}")
        return
    if args.check_io_files:
        check_io_files(scratch, sandbox, written, outside_before, args.precision, failed)
        if args.precision == 100:
            check_io_bytes(log_dir, report, args.np, failed)
    h_dump = os.path.abspath(args.h_dump)
    here = pathlib.Path(__file__).resolve().parent
    run_check(failed, "replay: the replay does not re-enact the program's communication",
              [here / "check_replay.py", "--h-dump", h_dump, "--original", trace, "--replayed", replayed, "--report",
               report, "--precision", args.precision, "--log-dir", log_dir, "--ranks", args.np]
              + (["--within", args.replay_within] if args.replay_within is not None else []))
    if args.otf2_print:
        run_check(failed, "timeline: the replay's OTF2 archive or Chrome trace, or h-dump's, does not hold the "
                          "program's calls",
                  [here / "check_timeline.py", "--otf2-print", args.otf2_print, "--h-dump", h_dump, "--original", trace,
                   "--replay-otf2", timeline_otf2, "--replay-chrome", timeline_chrome,
                   "--work-dir", scratch, "--log-dir", log_dir, "--ranks", args.np, "--precision", args.precision])
    if args.replay_mode:
        mode = json.loads(report.read_text()).get("mode")
        if mode != args.replay_mode:
            failed.append(f"replay: h-replay chose {mode} replay, not {args.replay_mode}")
    if args.precision == 100:
        run_check(failed, "sequence of the replayed trace: the replay does not make the program's calls in the "
                          "program's order",
                  [here / "check_sequence.py", "--h-dump", h_dump, "--trace", replayed, "--log-dir", log_dir,
                   "--ranks", args.np, "--label", "replayed trace", "--report", report])
    elif args.replay_mode == "causal":
        run_check(failed, "steps of the replayed trace: the replay does not make the program's steps",
                  [here / "check_sequence.py", "--h-dump", h_dump, "--trace", replayed, "--log-dir", log_dir,
                   "--ranks", args.np, "--label", "replayed trace", "--report", report, "--steps-in-any-order"])


def run_in_scratch(prefix, keep, case):
    """Runs `case(scratch)` in a new scratch directory. Returns 0 when it passes (the directory is
    removed unless `keep`), 1 when it raises TestFailure (the directory is kept to look at)."""
    scratch = pathlib.Path(tempfile.mkdtemp(prefix=prefix))
    try:
        case(scratch)
    except TestFailure as failure:
        print(f"FAIL: {failure}\n(scratch directory kept: {scratch})", flush=True)
        return 1
    finally:
        # Files a program wrote beside its directory (--check-io-files) go with it.
        for path in scratch.parent.glob(scratch.name + ".*"):
            path.unlink(missing_ok=True)
    if keep:
        print(f"scratch directory kept: {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    print("PASS")
    return 0


def main():
    args = parse_arguments(sys.argv[1:])
    mpirun = args.mpirun or shutil.which("mpirun") or shutil.which("mpiexec")
    if mpirun is None:
        print("run_traced.py: no mpirun or mpiexec on PATH: skipped")
        return SKIP
    return run_in_scratch("h-trace-test-", args.keep, lambda scratch: run_case(args, mpirun, scratch))


if __name__ == "__main__":
    sys.exit(main())
