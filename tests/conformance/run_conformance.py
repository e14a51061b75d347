#!/usr/bin/env python3
"""One conformance test: a small self-checking MPI program (tests/conformance/<family>/), run untraced,
traced at precisions 100 and 0, and each trace replayed.

    run_conformance.py --h-trace P --h-dump P --h-replay P [--mpirun P] --np N
                       [--expect-p0-failure REASON | --p0-varies REASON | --expect-refusal WORDS]
                       [--timeout S] [--keep]
                       -- PROGRAM ARGS...

a. Untraced: `mpirun -np N PROGRAM ARGS` must exit 0 and print " No Errors" (the program's own checks
   of what it received); otherwise the test itself is broken.
b. For P in 100, 0, traced: `MERGE_PRECISION=P HTRACE_FILE=trace-pP.h CALL_LOG_DIR=logs-pP
   HTRACE_IO_EXCLUDE=logs-pP mpirun ... h-trace PROGRAM ARGS` must exit as the untraced run did, print
   the same lines (Open MPI's "[host:pid]" diagnostics aside) and write a trace. The program's log
   (conformance.h: per rank, "MPI_Xxx <count>" per function) is the truth the trace is checked against:
   at P = 100, per rank and function, `h-dump --calls --json`'s calls must be the log's, both ways; at
   P = 0, the job-wide calls per function within 1% (h-dump counts a loop whose count is a histogram
   by its mean). A trace records MPI_Startall of n requests as n MPI_Start events (docs/guide/limits.md): conformance.h logs the n, and the log is compared as the trace records it.
c. Each trace is replayed under the tracer, lossless: `HTRACE_FILE=replayed-pP.h MERGE_PRECISION=100
   mpirun ... h-trace h-replay --report-json replay-pP.json --stall-limit 30 trace-pP.h`. The replay is
   "full" when it exits 0, writes its report with nothing in "not_replayed" and passes its check: at
   P = 100 tests/mpi/check_replay.py --precision 100 (per rank the sends, collectives and one-sided
   calls of the original trace, in order); at P = 0 the replay's calls of each collective function
   (the ranks must still agree on how many run) and its point-to-point messages (its send calls
   job-wide, from `h-dump --calls --json replayed-p0.h`) within 1% of the program's logged ones (the
   messages not compared for a program that made persistent requests, whose started sends the log
   does not tell apart, or cancelled a request, whose cancel may have won and moved no message). Otherwise it is
   "partial" (it ran but left calls out, or its check failed), "stall" (h-replay stopped the job for
   no progress after --stall-limit 30 s, or it was killed after 90 s), "refused" (with
   --expect-refusal: h-replay stopped at start with one line saying WORDS, as it does by design for
   what it cannot replay, such as several threads of a rank calling MPI at once) or "error" (another
   failure).
   A traced run that fails, or whose trace is not the program's calls, is "traced-failed" (a trace
   that is not the program's calls is still replayed, and the reason says how its replay went).
d. Prints `conformance: p100=<state> p0=<state>` (bench/conformance_table.py reads it from Meson's test
   log), after one `conformance-reason: pP: <why>` line per precision that is not full. A program that
   fails without the tracer prints `conformance: p100=untraced-failed p0=untraced-failed`.

Exit status: 0 when p100 is full and p0 is full -- or, with --expect-p0-failure, when p0 is not full
(the expected reason is printed; a p0 that is full fails: the expected failure must go), or, with
--p0-varies, when p0 is full, partial or traced-failed (its merge depends on the run's timing, and
so does whether the trace's counts and replay's drawn ones meet the program's exactly: the outcome
and the reason are printed, and a stall or error still fails); 1 otherwise;
77 (skip) when there is no mpirun. Every mpirun has a time limit (--timeout, default 120 s, for the
program's runs; 90 s for the replays). The scratch directory is removed after a pass and kept after a
failure (or with --keep).
"""

import argparse
import collections
import difflib
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

MPI_TESTS = pathlib.Path(__file__).resolve().parent.parent / "mpi"
sys.path.insert(0, str(MPI_TESTS))
from mpi_launch import mpirun_command, program_output, run_job  # noqa: E402  (tests/mpi)

SKIP = 77
PRECISIONS = (100, 0)
# h-dump counts a loop whose count is a histogram by its mean: job-wide totals at p = 0 may be off a little.
TOTALS_TOLERANCE = 0.01
MESSAGES_TOLERANCE = 0.01
STALL_LIMIT = 30
# h-replay stops a stalled job by itself after STALL_LIMIT seconds; where even that fails, the job is
# killed after REPLAY_TIMEOUT (two replays' worth stays well within Meson's 300 s for the whole test).
REPLAY_TIMEOUT = STALL_LIMIT + 60
# Point-to-point messages as the program's log names them, and as the replay's trace does (replay
# issues buffered and ready sends as standard ones, started persistent sends as MPI_Isend).
MESSAGE_FUNCTIONS = ("MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend", "MPI_Isend", "MPI_Ibsend", "MPI_Issend",
                     "MPI_Irsend", "MPI_Sendrecv", "MPI_Sendrecv_replace")
# Collectives: at p = 0 the ranks must still agree on how many times each runs, so the replay makes as
# many as the program did.
_COLLECTIVES = ("Barrier", "Bcast", "Reduce", "Allreduce", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather",
                "Allgatherv", "Alltoall", "Alltoallv", "Alltoallw", "Reduce_scatter", "Reduce_scatter_block", "Scan",
                "Exscan", "Neighbor_allgather", "Neighbor_allgatherv", "Neighbor_alltoall", "Neighbor_alltoallv",
                "Neighbor_alltoallw")
COLLECTIVE_FUNCTIONS = tuple(f"MPI_{name}" for name in _COLLECTIVES) + \
    tuple(f"MPI_I{name[0].lower()}{name[1:]}" for name in _COLLECTIVES)
STARTALL_REQUESTS = "MPI_Startall:requests"
PERSISTENT_INITS = ("MPI_Send_init", "MPI_Bsend_init", "MPI_Ssend_init", "MPI_Rsend_init", "MPI_Recv_init")


class TestFailure(Exception):
    pass


class TimedOut(TestFailure):
    pass


def parse_arguments(argv):
    if "--" not in argv:
        sys.exit("run_conformance.py: put the program and its arguments after '--'")
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    if not command:
        sys.exit("run_conformance.py: no program after '--'")
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    parser.add_argument("--h-trace", required=True, help="the h-trace launcher")
    parser.add_argument("--h-dump", required=True, help="the h-dump executable")
    parser.add_argument("--h-replay", required=True, help="the h-replay executable")
    parser.add_argument("--mpirun", help="mpirun to use (default: mpirun or mpiexec from PATH)")
    parser.add_argument("--np", required=True, type=int, help="rank count")
    parser.add_argument("--expect-refusal", metavar="WORDS",
                        help="h-replay must refuse both traces at start with one line saying WORDS (and nothing "
                             "else: no stall, no other error)")
    parser.add_argument("--expect-p0-failure", metavar="REASON",
                        help="the p = 0 replay is known not to replay fully, for REASON")
    parser.add_argument("--p0-varies", metavar="REASON",
                        help="the p = 0 trace and replay may miss the program's counts, depending on the run, "
                             "for REASON")
    parser.add_argument("--timeout", type=float, default=120, help="seconds each mpirun may take (default 120)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory even after a pass")
    args = parser.parse_args(options)
    args.command = [os.path.abspath(command[0]) if os.path.exists(command[0]) else command[0]] + command[1:]
    if args.expect_p0_failure is not None:  # Meson's rows say 'expected failure: <reason>'
        args.expect_p0_failure = args.expect_p0_failure.removeprefix("expected failure:").strip()
    for name in ("h_trace", "h_dump", "h_replay"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    return args


def run(command, extra_env, cwd, timeout):
    return run_job(command, extra_env, cwd, timeout, timed_out=TimedOut)


def error_reason(stderr):
    """Why a run failed, from its stderr: h-replay's own line, or else the MPI library's error (the
    call and the error class), or else the signal a process died of (and in which MPI call), or else
    the first line that says something."""
    lines = [line.strip() for line in stderr.splitlines()]
    for line in lines:
        if line.startswith("h-replay:") and not line.startswith(("h-replay: replay ", "h-replay: causal replay",
                                                                   "h-replay: paired replay")):
            return line
    strip = lambda line: re.sub(r"^\[[^\]]*\]\s*\**\s*", "", line) if line else ""
    occurred = next((line for line in lines if "An error occurred in" in line), None)
    error_class = next((line for line in lines if "MPI_ERR_" in line), None)
    if occurred or error_class:
        return ": ".join(part for part in (strip(occurred), strip(error_class)) if part)
    signal_line = next((line for line in lines if re.search(r"\bSignal: ", line)), None)
    if signal_line is not None:
        # Open MPI's backtrace: the innermost frame of an MPI function says in which call.
        frame = next((match.group(1) for line in lines for match in [re.search(r"\((MPI_\w+)\+0x", line)] if match),
                     None)
        return signal_line.split("Signal: ", 1)[1] + (f" in {frame}" if frame else "")
    # mpirun's own trouble (ORTE_ERROR_LOG) only where nothing else was said.
    return first_line("\n".join(line for line in lines if "ORTE_ERROR_LOG" not in line), default=first_line(stderr))


def first_line(text, default="no message"):
    """The first line of `text` that says something (not Open MPI's banners of dashes)."""
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("---") and "allow-run-as-root" not in line and "reiterate" not in line:
            return line
    return default


class Outcome:
    """What became of one precision: its state and, when not full, why."""

    def __init__(self, state="full", reason=""):
        self.state, self.reason = state, reason


# --- the program's log ----------------------------------------------------------------------------

def read_logs(log_dir, ranks):
    """{rank: {function: count}} from log_dir/rank.<r> (conformance.h's "MPI_Xxx <count>" lines)."""
    logs = {}
    for rank in range(ranks):
        path = log_dir / f"rank.{rank}"
        if not path.is_file():
            raise TestFailure(f"rank {rank} wrote no call log ({path} is missing)")
        counts = {}
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            words = line.split()
            if len(words) != 2 or not words[1].isdigit():
                raise TestFailure(f"{path}:{number}: expected 'MPI_Xxx <count>', got '{line}'")
            counts[words[0]] = counts.get(words[0], 0) + int(words[1])
        logs[rank] = counts
    strays = sorted(p.name for p in log_dir.glob("rank.*") if not p.name[5:].isdigit() or int(p.name[5:]) >= ranks)
    if strays:
        raise TestFailure(f"call logs of ranks a {ranks}-rank job does not have: {', '.join(strays)}")
    return logs


def h_dump_calls(h_dump, trace):
    """{rank: {function: calls}} from `h-dump --calls --json TRACE` (calls may be fractions below p = 100)."""
    command = [h_dump, "--calls", "--json", str(trace)]
    print("$", shlex.join(command), flush=True)
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise TestFailure(f"h-dump did not run: {error}") from error
    if result.returncode != 0:
        raise TestFailure(f"h-dump --calls --json {trace} failed ({result.returncode}): {first_line(result.stderr)}")
    try:
        by_rank = json.loads(result.stdout)["by_rank"]
        return {int(rank): {function: tally["calls"] for function, tally in functions.items()}
                for rank, functions in by_rank.items()}
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise TestFailure(f"h-dump --calls --json {trace}: unexpected output ({error})") from error


def as_traced(counts):
    """A rank's logged counts as the trace records them: MPI_Startall of n requests is n MPI_Start
    events (docs/guide/limits.md); conformance.h logs the n as "MPI_Startall:requests"."""
    counts = dict(counts)
    started = counts.pop(STARTALL_REQUESTS, 0)
    if "MPI_Startall" in counts:
        del counts["MPI_Startall"]
        counts["MPI_Start"] = counts.get("MPI_Start", 0) + started
    return counts


def compare_calls(logs, dumped, precision):
    """The differences between the program's log and the trace's calls: per rank and function at
    precision 100, job-wide per function (within TOTALS_TOLERANCE) below."""
    logs = {rank: as_traced(counts) for rank, counts in logs.items()}
    differences = []
    if precision == 100:
        for rank in sorted(set(logs) | set(dumped)):
            mine, traced = logs.get(rank, {}), dumped.get(rank, {})
            for function in sorted(set(mine) | set(traced)):
                if mine.get(function, 0) != traced.get(function, 0):
                    differences.append(f"rank {rank} {function}: program {mine.get(function, 'none')}, "
                                       f"trace {traced.get(function, 'none')}")
    else:
        mine, traced = collections.Counter(), collections.Counter()
        for counts in logs.values():
            mine.update(counts)
        for counts in dumped.values():
            for function, calls in counts.items():
                traced[function] += calls
        for function in sorted(set(mine) | set(traced)):
            want, got = mine.get(function, 0), traced.get(function, 0)
            if abs(got - want) > TOTALS_TOLERANCE * want or (want == 0) != (got == 0):
                differences.append(f"job-wide {function}: program {want or 'none'}, trace {got or 'none'}")
    return differences


# --- the runs ---------------------------------------------------------------------------------------

def run_untraced(args, prefix, scratch):
    try:
        status, stdout, stderr = run(prefix + args.command, {}, scratch, args.timeout)
    except TimedOut:
        print(f"conformance-reason: untraced: timed out after {args.timeout:g} s")
        print("conformance: p100=untraced-failed p0=untraced-failed")
        raise
    lines = program_output(stdout)
    print("".join(line + "\n" for line in lines), end="")
    if status != 0 or " No Errors" not in lines:
        said = "" if " No Errors" in lines else ", no ' No Errors'"
        print(f"conformance-reason: untraced: exit status {status}{said}: {first_line(stderr)}")
        print("conformance: p100=untraced-failed p0=untraced-failed")
        raise TestFailure(f"the program fails without the tracer (exit status {status}{said}): the test itself is "
                          f"broken\nstdout:\n{stdout}\nstderr:\n{stderr}")
    return status, lines


def run_traced(args, prefix, scratch, precision, untraced):
    """Runs the program under the tracer and checks the trace against its log. Returns (Outcome or
    None, trace): an Outcome only when the traced run failed."""
    untraced_status, untraced_lines = untraced
    trace = scratch / f"trace-p{precision}.h"
    log_dir = scratch / f"logs-p{precision}"
    log_dir.mkdir()
    env = {"MERGE_PRECISION": str(precision), "HTRACE_FILE": str(trace), "CALL_LOG_DIR": str(log_dir),
           "HTRACE_IO_EXCLUDE": str(log_dir)}
    try:
        status, stdout, stderr = run(prefix + [args.h_trace] + args.command, env, scratch, args.timeout)
    except TestFailure as failure:
        print(failure)
        return Outcome("traced-failed", f"the traced run timed out after {args.timeout:g} s"), trace
    lines = program_output(stdout)
    if status != untraced_status:
        print(f"stdout:\n{stdout}\nstderr:\n{stderr}")
        return Outcome("traced-failed", f"exit status {status} traced, {untraced_status} untraced: "
                                        f"{error_reason(stderr)}"), trace
    if lines != untraced_lines:
        print("\n".join(difflib.unified_diff(untraced_lines, lines, "untraced", "traced", lineterm="")))
        print(f"stderr:\n{stderr}")
        return Outcome("traced-failed", "the tracer changed the program's output"), trace
    if not trace.is_file() or trace.stat().st_size == 0:
        print(f"stderr:\n{stderr}")
        return Outcome("traced-failed", f"no trace written: {first_line(stderr)}"), trace
    try:
        differences = compare_calls(read_logs(log_dir, args.np), h_dump_calls(args.h_dump, trace), precision)
    except TestFailure as failure:
        return Outcome("traced-failed", str(failure).splitlines()[0]), trace
    what = "per rank and function" if precision == 100 else f"job-wide per function (within {TOTALS_TOLERANCE:.0%})"
    if differences:
        print(f"calls at p = {precision}: the trace is not the program's log, {what}:")
        for line in differences:
            print(f"  {line}")
        return Outcome("traced-failed", f"calls: trace differs from the program's log ({differences[0]}"
                                        f"{f' and {len(differences) - 1} more' if len(differences) > 1 else ''})"), trace
    print(f"calls at p = {precision}: the trace holds the program's calls, {what}")
    return None, trace


def stall_reason(stderr):
    for line in stderr.splitlines():
        if "no progress" in line:
            return line.strip()
    return None


def replay(args, prefix, scratch, precision, trace):
    """Replays the trace under the tracer and classifies the replay (an Outcome)."""
    replayed = scratch / f"replayed-p{precision}.h"
    report = scratch / f"replay-p{precision}.json"
    command = prefix + [args.h_trace, args.h_replay, "--report-json", str(report), "--stall-limit", str(STALL_LIMIT),
                        str(trace)]
    timeout = REPLAY_TIMEOUT
    try:
        status, stdout, stderr = run(command, {"HTRACE_FILE": str(replayed), "MERGE_PRECISION": "100"}, scratch,
                                     timeout)
    except TestFailure as failure:
        print(failure)
        return Outcome("stall", f"h-replay did not finish within {timeout:g} s (its stall limit: {STALL_LIMIT} s)")
    print(stdout, end="")
    print(stderr, end="")
    if status != 0:
        reason = stall_reason(stderr)
        if reason is not None:
            return Outcome("stall", reason)
        refusal = [line for line in stderr.splitlines() if line.startswith("h-replay: ")]
        if args.expect_refusal and len(set(refusal)) == 1 and args.expect_refusal in refusal[0]:
            return Outcome("refused", refusal[0])
        return Outcome("error", f"h-replay exit status {status}: {error_reason(stderr)}")
    try:
        content = json.loads(report.read_text())
        not_replayed = content["not_replayed"]
    except (OSError, json.JSONDecodeError, KeyError) as error:
        return Outcome("error", f"h-replay wrote no usable report: {error}")
    print(f"replay at p = {precision}: mode {content.get('mode')}"
          f"{' (' + content['mode_reason'] + ')' if content.get('mode_reason') else ''}")
    if not_replayed:
        listed = ", ".join(f"{name} x{count}" for name, count in sorted(not_replayed.items()))
        print(f"replay at p = {precision}: not replayed: {listed}")
        return Outcome("partial", f"not replayed: {listed}")
    if not replayed.is_file():
        return Outcome("error", "the replay under the tracer wrote no trace")
    return check_replayed(args, scratch, precision, trace, replayed, report)


def check_replayed(args, scratch, precision, trace, replayed, report):
    """The replay ran and left nothing out: does it re-enact the program's communication?"""
    if precision == 100:
        command = [sys.executable, str(MPI_TESTS / "check_replay.py"), "--h-dump", args.h_dump, "--original",
                   str(trace), "--replayed", str(replayed), "--report", str(report), "--precision", "100"]
        print("$", shlex.join(command), flush=True)
        result = subprocess.run(command, capture_output=True, text=True, timeout=300)
        print(result.stdout, end="")
        print(result.stderr, end="")
        if result.returncode != 0:
            return Outcome("partial", f"check_replay.py (exit status {result.returncode}): "
                                      f"{first_line(result.stdout + result.stderr)}")
        return Outcome()
    logs = read_logs(scratch / f"logs-p{precision}", args.np)
    replayed_calls = h_dump_calls(args.h_dump, replayed)
    for function in COLLECTIVE_FUNCTIONS:
        want = sum(counts.get(function, 0) for counts in logs.values())
        got = sum(counts.get(function, 0) for counts in replayed_calls.values())
        if want or got:
            print(f"replay at p = {precision}: {function}: program {want}, replay {got:g}")
        if abs(got - want) > MESSAGES_TOLERANCE * want:
            return Outcome("partial", f"the replay made {got:g} {function} calls, the program {want}")
    used = sorted({function for counts in logs.values() for function in counts
                   if function in PERSISTENT_INITS or function == "MPI_Cancel"})
    if used:
        print(f"replay at p = {precision}: messages not compared: the program called {', '.join(used)}")
        return Outcome()
    want = sum(counts.get(function, 0) for counts in logs.values() for function in MESSAGE_FUNCTIONS)
    got = sum(counts.get(function, 0) for counts in replayed_calls.values() for function in MESSAGE_FUNCTIONS)
    print(f"replay at p = {precision}: messages: program {want}, replay {got}")
    if abs(got - want) > MESSAGES_TOLERANCE * want:
        return Outcome("partial", f"the replay sent {got:g} messages, the program {want}")
    return Outcome()


def run_precision(args, prefix, scratch, precision, untraced):
    print(f"=== precision {precision}", flush=True)
    try:
        return traced_and_replayed(args, prefix, scratch, precision, untraced)
    except TestFailure as failure:  # a tool or a check that could not run: no verdict on the replay
        print(failure)
        return Outcome("error", str(failure).splitlines()[0])


def traced_and_replayed(args, prefix, scratch, precision, untraced):
    outcome, trace = run_traced(args, prefix, scratch, precision, untraced)
    if outcome is None:
        return replay(args, prefix, scratch, precision, trace)
    if outcome.reason.startswith("calls:"):
        # The trace is not the program's calls, but there is one: what its replay makes of it is worth knowing.
        replayed = replay(args, prefix, scratch, precision, trace)
        outcome.reason += f"; its replay: {replayed.state}{': ' + replayed.reason if replayed.reason else ''}"
    return outcome


def run_case(args, mpirun, scratch):
    """Runs the program, its traces and their replays, and prints the summary; raises TestFailure
    when the test fails."""
    prefix = mpirun_command(mpirun, args.np, [])
    untraced = run_untraced(args, prefix, scratch)
    outcomes = {precision: run_precision(args, prefix, scratch, precision, untraced) for precision in PRECISIONS}
    for precision, outcome in outcomes.items():
        if outcome.state != "full":
            print(f"conformance-reason: p{precision}: {outcome.reason}")
    print(f"conformance: p100={outcomes[100].state} p0={outcomes[0].state}", flush=True)
    failed = []
    if args.expect_refusal:
        # Replay refuses such a trace by design, at start, with one line: nothing else will do.
        failed += [f"p = {p}: {o.state}, not refused: {o.reason}" for p, o in outcomes.items() if o.state != "refused"]
        if failed:
            raise TestFailure("\n".join(failed))
        return
    if outcomes[100].state != "full":
        failed.append(f"p = 100: {outcomes[100].state}: {outcomes[100].reason}")
    if args.expect_p0_failure:
        if outcomes[0].state == "full":
            failed.append("p0 replays fully now: remove the expected failure")
        else:
            print(f"p = 0: expected failure ({args.expect_p0_failure}): {outcomes[0].state}: {outcomes[0].reason}")
    elif args.p0_varies and outcomes[0].state in ("full", "partial", "traced-failed"):
        print(f"p = 0: varies with the run ({args.p0_varies}): {outcomes[0].state}")
    elif outcomes[0].state != "full":
        failed.append(f"p = 0: {outcomes[0].state}: {outcomes[0].reason}")
    if failed:
        raise TestFailure("\n".join(failed))


def main():
    args = parse_arguments(sys.argv[1:])
    mpirun = args.mpirun or shutil.which("mpirun") or shutil.which("mpiexec")
    if mpirun is None:
        print("run_conformance.py: no mpirun or mpiexec on PATH: skipped")
        return SKIP
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="h-trace-conformance-"))
    try:
        run_case(args, mpirun, scratch)
    except TestFailure as failure:
        print(f"FAIL: {failure}\n(scratch directory kept: {scratch})", flush=True)
        return 1
    if args.keep:
        print(f"scratch directory kept: {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
