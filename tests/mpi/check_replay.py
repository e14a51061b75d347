#!/usr/bin/env python3
"""Checks a replay against what the traced program did.

    check_replay.py --h-dump PATH --original TRACE --replayed TRACE --report REPORT.json
                    --precision P [--log-dir DIR --ranks N] [--within SHARE]

REPLAYED is the trace h-trace took of `h-replay ORIGINAL` (h-replay's own coordination goes through
PMPI and is not in it); REPORT is h-replay's --report-json.

At precision 100 the replay must be exact: per rank, the same sends (peer, tag, bytes, in order; the
send half of a Sendrecv counts as a send, as replay issues it as one, and so does a started persistent
send; a send whose cancel won, as the program's log in DIR says, does not: no message went) and the
same collectives (operation, communicator members, root, bytes, in order) and one-sided calls
(operation, target, origin, target and result bytes, in order) as the original trace, both as
`h-dump --sequence` prints them. The replay must leave nothing out (its report's not_replayed).

At every precision, the report's time in calls: per operation, the traced seconds must be the
original trace's (its events' `in_call`, count x mean, from `h-dump --json`) within 0.1%, and the
replayed seconds, over the operations whose every call in the replayed trace replay issued and
timed, at least what h-trace measured inside those calls (the replayed trace's `in_call`) less 10%
and 1 ms: replay times each call around the traced wrapper, so it sees at least as much.

Below precision 100 values were drawn from histograms: their total bytes must be within 5% of the
program's (logged in DIR), the number of messages within 1% of the program's (--within), and so must
the calls of each collective function, job-wide. Replay hands out
each histogram's recorded values without replacement, so a histogram met as often as it counted gives
back exactly the program's values; a loop count merged from some iterations but not others can still
be met more or fewer times than it counted (at precision 0, counts drawn in loops whose counts are
drawn too; the worst seen, convergence at 9 ranks and precision 95, +0.33%).

Exit status: 0 when the replay passes, 1 when it does not, 2 when the comparison cannot be made.
"""

import argparse
import collections
import json
import pathlib
import subprocess
import sys

import check_calls

# What replay cannot re-enact from a trace, and says so in its report.
SEND_FUNCTIONS = {"MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend", "MPI_Isend", "MPI_Ibsend", "MPI_Issend",
                  "MPI_Irsend"}
BYTES_TOLERANCE = 0.05
MESSAGES_TOLERANCE = 0.01
MAX_DIFFERENCES_SHOWN = 20


class CannotCompare(Exception):
    pass


def parse_sequence(text, where):
    """{rank: [(kind, operation, {role: value})]} from the text `h-dump --sequence` prints: one call a
    line, `<rank> <kind> <operation> role=value ...`. A value that is a histogram, `hist(n=3 ...)`,
    holds spaces: its words are joined back up to its closing parenthesis. A role given more than once
    on a line (a Waitall's matched_peer per wildcard receive) keeps its last value."""
    calls = collections.defaultdict(list)
    for number, line in enumerate(text.splitlines(), start=1):
        words = line.split()
        if len(words) < 3 or not words[0].isdigit():
            raise CannotCompare(f"{where}, line {number}: expected '<rank> <kind> <operation> role=value ...', "
                                f"got '{line}'")
        params = {}
        open_value = None
        for word in words[3:]:
            if open_value is not None:
                params[open_value] += " " + word
            elif "=" in word:
                role, value = word.split("=", 1)
                params[role] = value
                open_value = role
            else:
                raise CannotCompare(f"{where}, line {number}: '{word}' is not role=value")
            if params[open_value].count("(") <= params[open_value].count(")"):
                open_value = None
        calls[int(words[0])].append((words[1], words[2], params))
    return calls


def sequence(h_dump, trace):
    """{rank: [(kind, operation, {role: value})]} from `h-dump --sequence TRACE`."""
    try:
        result = subprocess.run([h_dump, "--sequence", str(trace)], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CannotCompare(f"h-dump --sequence {trace} did not run: {error}") from error
    if result.returncode != 0:
        raise CannotCompare(f"h-dump --sequence {trace} failed: {result.stderr.strip()}")
    return parse_sequence(result.stdout, f"h-dump --sequence {trace}")


def communication(calls, left_out):
    """The sends, collectives and one-sided calls of one rank's calls, as comparable tuples."""
    out = []
    for kind, operation, params in calls:
        if operation in left_out:
            continue
        if kind in ("send", "sendrecv") or (kind == "start" and "bytes" in params):
            out.append(("send", params.get("peer"), params.get("tag"), params.get("bytes")))
        elif kind == "collective":
            out.append((operation, params.get("comm"), params.get("root"), params.get("bytes"),
                        params.get("recv_bytes")))
        elif kind == "one_sided":
            out.append((operation, params.get("peer"), params.get("bytes"), params.get("target_bytes"),
                        params.get("recv_bytes")))
    return out


def cancelled_sends(log_dir, ranks):
    """{rank: indices, among the rank's sends as communication() lists them, of those whose cancel won}
    from the program's log (its `cancelled=1`): they moved no message, and replay sends none."""
    if log_dir is None or ranks is None:
        return {}
    try:
        logs = check_calls.read_call_logs(log_dir, ranks)
    except check_calls.CannotCompare as error:
        raise CannotCompare(str(error)) from error
    cancelled = {}
    for rank, calls in logs.items():
        sends = [call for call in calls if is_logged_send(call) or call.function in ("MPI_Sendrecv", "MPI_Sendrecv_replace")]
        cancelled[rank] = {index for index, call in enumerate(sends) if call.fields.get("cancelled", "0") != "0"}
    return cancelled


def check_exact(original, replayed, left_out, cancelled=None):
    differences = []
    for rank in sorted(set(original) | set(replayed)):
        want = communication(original.get(rank, []), left_out)
        gone = (cancelled or {}).get(rank, set())
        sends = [i for i, call in enumerate(want) if call[0] == "send"]
        want = [call for i, call in enumerate(want) if i not in {sends[k] for k in gone if k < len(sends)}]
        got = communication(replayed.get(rank, []), left_out)
        if want == got:
            continue
        at = check_calls.first_difference(want, got)
        differences.append(f"rank {rank}: {len(want)} sends and collectives in the trace, {len(got)} replayed; "
                           f"first difference at #{at}: trace {want[at] if at < len(want) else 'nothing'}, "
                           f"replay {got[at] if at < len(got) else 'nothing'}")
    return differences


def is_logged_send(call):
    """Whether a program's log line is a send (a started persistent send included)."""
    return call.function in SEND_FUNCTIONS or (call.function == "MPI_Start" and call.fields.get("started") != "MPI_Recv_init")


def logged_sends(log_dir, ranks):
    """(messages, bytes) the program logged sending (sends whose cancel won moved nothing)."""
    try:
        logs = check_calls.read_call_logs(log_dir, ranks)
    except check_calls.CannotCompare as error:
        raise CannotCompare(str(error)) from error
    sends = [call for calls in logs.values() for call in calls
             if is_logged_send(call) and call.fields.get("cancelled", "0") == "0"]
    return len(sends), sum(call.bytes for call in sends)


def check_collectives(log_dir, ranks, original, replayed, within):
    """Job-wide calls of each collective function (the trace's collectives, its operations as h-dump
    names them) in the replay against the program's log: within `within`. The ranks must
    agree on how many of each run, and a loop count drawn for all must not stand for one rank's."""
    names = {operation for calls in original.values() for kind, operation, _ in calls if kind == "collective"}
    logs = check_calls.read_call_logs(log_dir, ranks)
    want = collections.Counter(call.function for calls in logs.values() for call in calls if call.function in names)
    got = collections.Counter(operation for calls in replayed.values() for kind, operation, _ in calls
                              if kind == "collective")
    differences = []
    for name in sorted(names):
        print(f"{name}: program {want[name]}, replay {got[name]}")
        if abs(got[name] - want[name]) > within * want[name]:
            differences.append(f"the replay made {got[name]} {name} calls, the program {want[name]}")
    return differences


def check_volume(log_dir, ranks, replayed, within):
    want_messages, want_bytes = logged_sends(log_dir, ranks)
    got = [params for calls in replayed.values() for kind, _, params in calls if kind == "send"]
    got_messages, got_bytes = len(got), sum(int(params["bytes"]) for params in got)
    print(f"messages: program {want_messages}, replay {got_messages}; bytes: program {want_bytes}, "
          f"replay {got_bytes}")
    differences = []
    allowed = within * want_messages
    if abs(got_messages - want_messages) > allowed:
        differences.append(f"the replay sent {got_messages} messages, the program {want_messages}")
    if abs(got_bytes - want_bytes) > BYTES_TOLERANCE * want_bytes:
        differences.append(f"the replay sent {got_bytes} bytes, the program {want_bytes}: more than "
                           f"{BYTES_TOLERANCE:.0%} apart")
    return differences


def seconds_in_calls(h_dump, trace):
    """({operation: seconds}, {operation: calls}) inside the calls of `trace`, all ranks together;
    None where the trace has no time in calls."""
    seconds, calls = collections.defaultdict(float), collections.defaultdict(int)

    def add(body):
        for node in body:
            if "body" in node:
                add(node["body"])
            elif "in_call" in node:
                seconds[node["op"]] += node["in_call"]["count"] * node["in_call"]["mean"]
                calls[node["op"]] += node["in_call"]["count"]

    add(check_calls.run_h_dump(h_dump, trace, ("--json",))["body"])
    return (seconds, calls) if calls else None


def check_time_in_calls(h_dump, original, replayed, report):
    differences = []
    traced, _ = seconds_in_calls(h_dump, original) or (None, None)
    for name, op in report["operations"].items():
        if traced is None or op["traced_seconds_in_calls"] is None:
            if (traced is None) != (op["traced_seconds_in_calls"] is None):
                differences.append(f"{name}: the report's traced time in calls is {op['traced_seconds_in_calls']}, "
                                   f"the trace's {traced}")
            continue
        if abs(op["traced_seconds_in_calls"] - traced[name]) > 0.001 * traced[name] + 1e-9:
            differences.append(f"{name}: the report's traced time in calls is {op['traced_seconds_in_calls']} s, "
                               f"the trace's {traced[name]} s")
    measured = seconds_in_calls(h_dump, replayed)
    if measured is None:
        return differences + ["the replayed trace has no time in calls"]
    # The operations whose every call replay issued and timed (not h-replay's own MPI_Init, nor the
    # frees of what is left at its end).
    seconds, calls = measured
    timed = [name for name, op in report["operations"].items() if op["calls"] > 0 and op["calls"] == calls[name]]
    inside = sum(seconds[name] for name in timed)
    replay_timed = sum(report["operations"][name]["seconds_in_calls"] for name in timed)
    if replay_timed < 0.9 * inside - 1e-3:
        differences.append(f"replay timed {replay_timed} s in its calls of {', '.join(timed)}, h-trace measured "
                           f"{inside} s inside them")
    return differences


def main():
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    parser.add_argument("--h-dump", required=True)
    parser.add_argument("--original", required=True)
    parser.add_argument("--replayed", required=True)
    parser.add_argument("--report", required=True)
    parser.add_argument("--precision", required=True, type=int)
    parser.add_argument("--log-dir")
    parser.add_argument("--ranks", type=int)
    parser.add_argument("--within", type=float, default=MESSAGES_TOLERANCE)
    args = parser.parse_args()
    try:
        report = json.loads(pathlib.Path(args.report).read_text())
        left_out = set(report["not_replayed"])
        differences = [f"replay left out {name} ({report['not_replayed'][name]} calls), which it should replay"
                       for name in sorted(left_out)]
        differences += check_time_in_calls(args.h_dump, args.original, args.replayed, report)
        replayed = sequence(args.h_dump, args.replayed)
        if args.precision == 100:
            differences += check_exact(sequence(args.h_dump, args.original), replayed, left_out,
                                       cancelled_sends(args.log_dir, args.ranks))
        else:
            if args.log_dir is None or args.ranks is None:
                raise CannotCompare("below precision 100 the program's logs (--log-dir, --ranks) are needed")
            differences += check_volume(args.log_dir, args.ranks, replayed, args.within)
            differences += check_collectives(args.log_dir, args.ranks, sequence(args.h_dump, args.original), replayed,
                                             args.within)
    except (CannotCompare, OSError, ValueError, KeyError) as error:
        print(f"check_replay.py: cannot compare: {error}")
        return 2
    for difference in differences[:MAX_DIFFERENCES_SHOWN]:
        print(difference)
    if len(differences) > MAX_DIFFERENCES_SHOWN:
        print(f"... and {len(differences) - MAX_DIFFERENCES_SHOWN} more")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
