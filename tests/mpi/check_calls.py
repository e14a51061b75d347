#!/usr/bin/env python3
"""Checks a trace against the traced program's own log of its MPI calls.

    check_calls.py --h-dump PATH --trace TRACE --log-dir DIR --ranks N [--totals-within FRACTION]
    check_calls.py --json DUMP.json --log-dir DIR --ranks N      (a saved `h-dump --calls --json` output)

The test programs (tests/mpi/programs) append one line per MPI call to DIR/rank.<world rank>:

    <MPI function> <bytes> <peers comma-separated, or -> <matched sources comma-separated, or -> [key=value ...]

(the optional key=value fields -- tags, requests completed -- are described in programs/call_log.h;
check_sequence.py compares them, this script reads and ignores them). This script totals the lines per
(rank, function) -- calls, bytes, the multiset of peers and the multiset of matched sources -- and
compares them both ways with `h-dump --calls --json TRACE`: every logged
call must be in the trace, and the trace must hold nothing more. Every difference is printed (rank,
function, field, what the program logged, what the trace says).

With --totals-within (for a trace merged below precision 100, where values of different ranks
became histograms and per-rank exactness is what was given up), only the job-wide calls and bytes
per function are compared, each allowed to differ from the program's by FRACTION of it (h-dump counts
a loop whose count is a histogram by its mean, so a merged trace stands for expected calls).

Exit status: 0 when they agree, 1 on any difference, 2 when the comparison cannot be made (h-dump
fails, a log is malformed or missing).
"""

import argparse
import collections
import functools
import json
import pathlib
import re
import subprocess
import sys

SYMBOLIC_RANKS = ("ANY_SOURCE", "PROC_NULL", "ROOT")
MAX_DIFFERENCES_SHOWN = 200


class CannotCompare(Exception):
    """The inputs are missing or malformed: no verdict about the trace is possible."""


class Tally:
    """What one rank did with one MPI function, summed over its calls."""

    def __init__(self):
        self.calls = 0
        self.bytes = 0
        self.peers = collections.Counter()
        self.matched = collections.Counter()

    def fields(self):
        return {"calls": self.calls, "bytes": self.bytes, "peers": self.peers, "matched": self.matched}


def first_difference(a, b):
    """Index of the first place where sequences `a` and `b` differ (the shorter's length if one is
    the other's beginning)."""
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def parse_rank_list(text, where):
    """`-` or a comma-separated list of world ranks / ANY_SOURCE / PROC_NULL, as strings."""
    if text == "-":
        return []
    ranks = text.split(",")
    for rank in ranks:
        if not (rank.isdigit() or rank in SYMBOLIC_RANKS):
            raise CannotCompare(f"{where}: '{rank}' is neither a world rank nor one of {', '.join(SYMBOLIC_RANKS)}")
    return ranks


class LoggedCall(collections.namedtuple("LoggedCall", "function bytes peers matched fields where")):
    """One line of a program log: the function, its bytes, peers and matched sources (lists of strings:
    world ranks, ANY_SOURCE, PROC_NULL), its key=value fields (a dict of strings) and file:line."""


FIELD = re.compile(r"([a-z_]+)=(\S+)")


def parse_log_line(line, where):
    """A LoggedCall from one log line; CannotCompare when the line is malformed."""
    fields = line.split()
    if len(fields) < 4:
        raise CannotCompare(f"{where}: expected '<function> <bytes> <peers> <matched> [key=value ...]', got '{line}'")
    function, byte_text, peers, matched = fields[:4]
    if not byte_text.isdigit():
        raise CannotCompare(f"{where}: bytes '{byte_text}' is not a non-negative integer")
    extra = {}
    for text in fields[4:]:
        field = FIELD.fullmatch(text)
        if field is None:
            raise CannotCompare(f"{where}: '{text}' after the four positional fields is not key=value")
        if field.group(1) in extra:
            raise CannotCompare(f"{where}: '{field.group(1)}' given twice")
        extra[field.group(1)] = field.group(2)
    return LoggedCall(function, int(byte_text), parse_rank_list(peers, where), parse_rank_list(matched, where), extra,
                      where)


def read_call_logs(log_dir, ranks):
    """{rank: [LoggedCall] in the order the rank made them} from DIR/rank.0 .. rank.N-1; every rank
    must have written its log, and no other rank."""
    return {rank: list(calls) for rank, calls in parsed_call_logs(str(log_dir), ranks).items()}


# A check reads the same logs several times, and a flood's are 140,000 lines.
@functools.lru_cache(maxsize=4)
def parsed_call_logs(log_dir, ranks):
    log_dir = pathlib.Path(log_dir)
    calls = {}
    for rank in range(ranks):
        path = log_dir / f"rank.{rank}"
        if not path.is_file():
            raise CannotCompare(f"rank {rank} wrote no program log ({path} is missing)")
        calls[rank] = tuple(parse_log_line(line, f"{path}:{number}")
                            for number, line in enumerate(path.read_text().splitlines(), start=1))
    strays = [p.name for p in log_dir.glob("rank.*") if not re.fullmatch(r"rank\.\d+", p.name)
              or int(p.name.split(".")[1]) >= ranks]
    if strays:
        raise CannotCompare(f"program logs for ranks that do not exist in a {ranks}-rank job: {', '.join(sorted(strays))}")
    return calls


def read_program_logs(log_dir, ranks):
    """{rank: {function: Tally}} from DIR/rank.0 .. rank.N-1 (the key=value fields do not count)."""
    tallies = {}
    for rank, calls in read_call_logs(log_dir, ranks).items():
        per_function = collections.defaultdict(Tally)
        for call in calls:
            tally = per_function[call.function]
            tally.calls += 1
            tally.bytes += call.bytes
            tally.peers.update(call.peers)
            tally.matched.update(call.matched)
        tallies[rank] = dict(per_function)
    return tallies


def main_of_log_check(name, usage, check, dump_options=("--json",)):
    """The main of a checker that compares `h-dump --json` (or the view `dump_options` ask for) of a
    trace with the program's logs: `check(dump, logs, ranks)` gives the differences as lines. Exit
    status: 0 all agree, 1 a difference, 2 cannot compare."""
    parser = argparse.ArgumentParser(usage=usage)
    parser.add_argument("--h-dump", required=True, help="the h-dump executable")
    parser.add_argument("--trace", required=True, help="the trace file to check")
    parser.add_argument("--log-dir", required=True, help="the directory the program wrote rank.<N> logs into")
    parser.add_argument("--ranks", required=True, type=int, help="how many ranks the job ran")
    args = parser.parse_args()
    try:
        dump = run_h_dump(args.h_dump, args.trace, dump_options)
        differences = check(dump, read_call_logs(args.log_dir, args.ranks), args.ranks)
    except (CannotCompare, KeyError, ValueError) as error:
        print(f"{name}: cannot compare: {error}")
        return 2
    for line in differences:
        print(f"{name}: {line}")
    return 1 if differences else 0


def run_h_dump(h_dump, trace, options=("--calls", "--json")):
    command = [h_dump, *options, trace]
    print("$", " ".join(command), flush=True)
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CannotCompare(f"h-dump did not run: {error}") from error
    if result.returncode != 0:
        raise CannotCompare(f"h-dump exited with {result.returncode}:\n{result.stderr.strip()}")
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError as error:
        raise CannotCompare(f"h-dump printed no valid JSON ({error}); it began with:\n{result.stdout[:500]}") from error


def load_dump(args, options=("--calls", "--json")):
    """h-dump's JSON: saved in --json, or from running --h-dump with `options` on --trace."""
    if args.json is not None:
        try:
            dump = json.loads(pathlib.Path(args.json).read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise CannotCompare(f"{args.json}: {error}") from error
    else:
        dump = run_h_dump(args.h_dump, args.trace, options)
    if not isinstance(dump, dict):
        raise CannotCompare("h-dump's JSON is not an object")
    return dump


def multiset(value, where, number_types=(int,)):
    """A JSON object of rank -> count as a Counter with string keys."""
    if not isinstance(value, dict) or not all(isinstance(n, number_types) for n in value.values()):
        raise CannotCompare(f"{where}: expected an object of rank -> count, got {value!r}")
    return collections.Counter({str(rank): count for rank, count in value.items() if count != 0})


def read_trace_tallies(dump, expected_values=False):
    """{rank: {function: Tally}} from the `by_rank` part of h-dump's JSON (omitted keys are zero). A
    lossless trace stands for whole calls; with `expected_values` (a merged trace) counts may be
    fractions."""
    number_types = (int, float) if expected_values else (int,)
    by_rank = dump.get("by_rank")
    if not isinstance(by_rank, dict):
        raise CannotCompare("h-dump's JSON has no 'by_rank' object")
    tallies = {}
    for rank_text, functions in by_rank.items():
        if not rank_text.isdigit() or not isinstance(functions, dict):
            raise CannotCompare(f"h-dump's JSON: by_rank has an entry '{rank_text}' that is not rank -> functions")
        per_function = {}
        for function, entry in functions.items():
            where = f"h-dump's JSON, rank {rank_text}, {function}"
            if not isinstance(entry, dict):
                raise CannotCompare(f"{where}: expected an object, got {entry!r}")
            tally = Tally()
            tally.calls = entry.get("calls", 0)
            tally.bytes = entry.get("bytes", 0)
            if not isinstance(tally.calls, number_types) or not isinstance(tally.bytes, number_types):
                raise CannotCompare(f"{where}: calls and bytes must be {'numbers' if expected_values else 'integers'}, "
                                    f"got {entry!r}")
            tally.peers = multiset(entry.get("peers", {}), where + ", peers", number_types)
            tally.matched = multiset(entry.get("matched", {}), where + ", matched", number_types)
            per_function[function] = tally
        tallies[int(rank_text)] = per_function
    return tallies


def print_differences(headline, differences, most):
    """`headline`, then the first `most` differences indented, and how many more there were."""
    print(headline)
    for line in differences[:most]:
        print("  " + line)
    if len(differences) > most:
        print(f"  ... and {len(differences) - most} more")


def plural(count, noun):
    return f"{count} {noun}" + ("" if count == 1 else "s")


def rank_order(key):
    return (0, int(key), "") if key.isdigit() else (1, 0, key)


def show_multiset(counter):
    if not counter:
        return "{}"
    return "{" + ", ".join(f"{key}: {counter[key]}" for key in sorted(counter, key=rank_order)) + "}"


def describe_multiset_difference(expected, found):
    missing = expected - found
    extra = found - expected
    parts = []
    if missing:
        parts.append("missing from the trace " + show_multiset(missing))
    if extra:
        parts.append("only in the trace " + show_multiset(extra))
    return "; ".join(parts)


def compare(expected, found, ranks, dump):
    """Every difference between the program logs and the trace, as readable lines."""
    differences = []
    if dump.get("ranks") != ranks:
        differences.append(f"rank count: the job ran {ranks} ranks, the trace says {dump.get('ranks')!r}")
    for rank in sorted(set(found) - set(range(ranks))):
        differences.append(f"rank {rank}: in the trace, but the job had only ranks 0..{ranks - 1}")

    for rank in range(ranks):
        logged, traced = expected.get(rank, {}), found.get(rank, {})
        for function in sorted(set(logged) | set(traced)):
            mine, theirs = logged.get(function, Tally()), traced.get(function, Tally())
            if mine.calls > 0 and theirs.calls == 0:
                differences.append(f"rank {rank}, {function}: the program logged {plural(mine.calls, 'call')} "
                                   f"({mine.bytes} bytes), the trace has none")
                continue
            if theirs.calls > 0 and mine.calls == 0:
                differences.append(f"rank {rank}, {function}: the trace has {plural(theirs.calls, 'call')} "
                                   f"({theirs.bytes} bytes) that the program never made")
                continue
            for field, logged_value in mine.fields().items():
                traced_value = theirs.fields()[field]
                if logged_value == traced_value:
                    continue
                if isinstance(logged_value, collections.Counter):
                    differences.append(
                        f"rank {rank}, {function}, {field}: program log {show_multiset(logged_value)}, "
                        f"trace {show_multiset(traced_value)} "
                        f"({describe_multiset_difference(logged_value, traced_value)})")
                else:
                    differences.append(f"rank {rank}, {function}, {field}: program log {logged_value}, "
                                       f"trace {traced_value}")

    # The job-wide totals are a separate part of h-dump's output; they must add up too.
    logged_totals = collections.Counter()
    for per_function in expected.values():
        for function, tally in per_function.items():
            logged_totals[function] += tally.calls
    traced_totals = dump.get("operations", {})
    if not isinstance(traced_totals, dict):
        differences.append(f"operations: expected an object of function -> calls, got {traced_totals!r}")
        traced_totals = {}
    for function in sorted(set(logged_totals) | set(traced_totals)):
        if logged_totals.get(function, 0) != traced_totals.get(function, 0):
            differences.append(f"all ranks, {function}, calls: program logs {logged_totals.get(function, 0)}, "
                               f"trace operations {traced_totals.get(function, 0)}")
    return differences


def compare_totals(expected, found, within):
    """The job-wide calls and bytes per function that differ by more than `within` of the program's
    (and by more than half a call or byte: expected values are fractions)."""
    differences = []
    totals = {}
    for side, tallies in (("program", expected), ("trace", found)):
        for per_function in tallies.values():
            for function, tally in per_function.items():
                entry = totals.setdefault(function, {"program": [0, 0], "trace": [0, 0]})
                entry[side][0] += tally.calls
                entry[side][1] += tally.bytes
    for function, entry in sorted(totals.items()):
        for index, what in enumerate(("calls", "bytes")):
            logged, traced = entry["program"][index], entry["trace"][index]
            if abs(traced - logged) > max(within * logged, 0.5):
                differences.append(f"all ranks, {function}, {what}: program logs {logged}, trace {traced:g} "
                                   f"(more than {within:.2%} apart)")
    return differences


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--h-dump", help="the h-dump executable")
    parser.add_argument("--trace", help="the trace file to check")
    parser.add_argument("--json", help="a saved `h-dump --calls --json` output instead of --h-dump/--trace")
    parser.add_argument("--log-dir", required=True, help="the directory the program wrote rank.<N> logs into")
    parser.add_argument("--ranks", required=True, type=int, help="how many ranks the job ran")
    parser.add_argument("--totals-within", type=float, metavar="FRACTION",
                        help="compare only job-wide calls and bytes per function, within FRACTION (merged traces)")
    args = parser.parse_args()
    if args.json is None and (args.h_dump is None or args.trace is None):
        parser.error("give --h-dump and --trace, or --json")

    try:
        expected = read_program_logs(args.log_dir, args.ranks)
        dump = load_dump(args)
        found = read_trace_tallies(dump, expected_values=args.totals_within is not None)
    except CannotCompare as error:
        print(f"check_calls: cannot compare: {error}", file=sys.stderr)
        return 2

    if args.totals_within is not None:
        differences = compare_totals(expected, found, args.totals_within)
    else:
        differences = compare(expected, found, args.ranks, dump)
    if differences:
        print_differences(f"check_calls: the trace differs from the program logs in {plural(len(differences), 'place')}:",
                          differences, MAX_DIFFERENCES_SHOWN)
        return 1

    functions = {function for per_function in expected.values() for function in per_function}
    calls = sum(t.calls for per_function in expected.values() for t in per_function.values())
    byte_total = sum(t.bytes for per_function in expected.values() for t in per_function.values())
    what = ("the trace matches the program logs" if args.totals_within is None else
            f"the trace's job-wide calls and bytes per function are within {args.totals_within:.2%} of the program's")
    print(f"check_calls: {args.ranks} ranks, {len(functions)} MPI functions, {calls} calls, {byte_total} bytes: {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
