#!/usr/bin/env python3
"""Checks what a trace made at a merge precision says about a program against the program's own log.

    check_precision.py --h-dump PATH --trace TRACE --program {convergence,land_sea,drifting} --ranks N
                       --precision P --log-dir DIR
    check_precision.py --json DUMP.json --program ... --ranks N --precision P --log-dir DIR
                       (a saved `h-dump --json` output instead of --h-dump/--trace)

check_calls.py counts calls; this script reads the trace itself (`h-dump --json`: nested loops,
events, and values that are exact, per-rank lists or histograms) and checks its content against the
logs tests/mpi/programs write (DIR/rank.<r>, one line per MPI call, in call order), for the three
programs of the merge-precision issue. What it requires:

At every precision
  - the header names N ranks and precision P;
  - every MPI function stands for as many calls as the program logged (loops expanded): exactly, or
    within 5% where a loop count on the way is a histogram (counted at its mean).
At P = 100 (lossless)
  - no histogram anywhere;
  - each rank's calls, walked in trace order, are its log line for line: function, bytes, peers.
Below 100
  - every histogram is whole: its count is the sum of its bins' counts, its min and max those of
    its bins, its bins ordered, disjoint, non-empty and holding their mean, the ranks of its min and
    max in the job;
  - the trace invents no value: every byte count and peer an event holds (exact, per rank, or a
    histogram's min, max and bin bounds) is one the program logged for that function (a rank's own
    value: one that rank logged);
  - where a function is one event for every rank that called it, each of its byte and peer
    histograms holds exactly the program's calls: count = calls logged, min and max = the smallest
    and largest logged value, each bin the number of logged values in its range, with their mean,
    and one value per bin while the distinct values fit in the header's bins;
  - at P = 0, each function is one event for all ranks (each of these programs calls every MPI
    function from one line, and at 0 everything of one call site merges), and no value is kept per
    rank (values that differ merge into histograms), except peers that take no more bytes per rank
    than as a histogram: each rank's is then the one peer it logged for the function.
  Per program:
  - convergence: the inner loop (a loop whose body holds one MPI_Send) iterates counts the program
    ran (a rank's own, or a histogram within the logged ones). At P = 0 MPI_Send is one event inside
    one inner loop whose count is a histogram with one value per timestep and rank, exactly as
    logged (bins, min and max, and ranks that ran the min and the max), and outer iterations x mean
    x ranks is within 5% of the MPI_Send calls the program made.
  - land_sea: where the precision rule does not let 80 and 90 merge (P > 88.9), no MPI_Isend or
    MPI_Irecv byte histogram holds both land's 80 and sea's 90 bytes. At P = 0 MPI_Isend's bytes
    (and MPI_Irecv's) are a histogram with a bin of its own for 80 and for 90 holding exactly the
    number of such calls the program logged, over all ranks and timesteps.
  - drifting: where the precision lets every timestep's size merge with the one before (P <= 97 for
    the default sizes; a merged value is a histogram from then on, docs/design.md "The precision rule"), MPI_Isend and
    MPI_Irecv are each one event for all ranks whose byte histogram spans the smallest to the largest
    logged size and counts every logged call.

Exit status: 0 when the trace holds what the program did, 1 when it does not (every difference is
printed), 2 when the comparison cannot be made (h-dump fails, a log is malformed or missing).
"""

import argparse
import collections
import subprocess
import sys

from check_calls import CannotCompare, first_difference, load_dump, plural, print_differences, read_call_logs

PROGRAMS = ("convergence", "land_sea", "drifting")
# How far the calls a trace stands for may be from the logged ones when a loop count is a histogram:
# the walk takes the histogram's mean for every instance of the loop.
COUNT_TOLERANCE = 0.05
# h-dump prints means with 6 significant digits.
MEAN_TOLERANCE = 1e-5
MAX_DIFFERENCES_SHOWN = 100
# The JSON spells symbolic peers as names where a value is exact, and as these numbers elsewhere.
SYMBOLIC_PEERS = {"ANY_SOURCE": -1, "PROC_NULL": -2, "ROOT": -3}
PEER_NAMES = {number: name for name, number in SYMBOLIC_PEERS.items()}
BYTE_ROLES = ("bytes", "recv_bytes")
PEER_ROLES = ("peer", "source")  # relative to the caller, (peer - me) mod size
WORLD = 0  # the communicator id of MPI_COMM_WORLD in a trace
LAND_BYTES, SEA_BYTES = 80, 90


# --- The trace, read from `h-dump --json` -------------------------------------------------------

def parse_rank_list_text(text, where):
    """The ranks of a rank-list string such as "0-6^8:8,7" (see src/trace/rank_list.hpp) as a set."""
    ranks = set()
    try:
        for run in text.split(",") if text else []:
            head, *outer = run.split("^")
            start_text, _, rest = head.partition("-")
            start = int(start_text)
            if rest:
                last_text, _, stride_text = rest.partition(":")
                last, stride = int(last_text), int(stride_text or 1)
                offsets = list(range(0, last - start + 1, stride))
            else:
                offsets = [0]
            for dimension in outer:
                count_text, stride_text = dimension.split(":")
                offsets = [offset + i * int(stride_text) for i in range(int(count_text)) for offset in offsets]
            ranks.update(start + offset for offset in offsets)
    except ValueError as error:
        raise CannotCompare(f"{where}: '{text}' is not a rank list ({error})") from error
    return frozenset(ranks)


class Value:
    """A parameter or loop count: exact, a lossless per-rank list, or a histogram."""

    def __init__(self, raw, where):
        self.where = where
        self.exact = None
        self.per_rank = None  # [(value, ranks)]
        self.histogram = None  # the JSON object
        if isinstance(raw, str):
            if raw not in SYMBOLIC_PEERS:
                raise CannotCompare(f"{where}: unknown symbolic value '{raw}'")
            self.exact = SYMBOLIC_PEERS[raw]
        elif isinstance(raw, int):
            self.exact = raw
        elif isinstance(raw, dict) and "per_rank" in raw:
            # An entry's i-th rank (ascending) has value + i * step: regrouped per value.
            by_value = {}
            for entry in raw["per_rank"]:
                ranks = sorted(parse_rank_list_text(entry["ranks"], where))
                for i, rank in enumerate(ranks):
                    by_value.setdefault(entry["value"] + i * entry.get("step", 0), set()).add(rank)
            self.per_rank = sorted(by_value.items())
        elif isinstance(raw, dict) and "histogram" in raw:
            self.histogram = raw["histogram"]
            for key in ("count", "mean", "min", "max", "min_rank", "max_rank", "bins"):
                if key not in self.histogram:
                    raise CannotCompare(f"{where}: histogram without '{key}'")
        else:
            raise CannotCompare(f"{where}: expected a number, per_rank or histogram, got {raw!r}")

    def for_rank(self, rank):
        """The exact value of `rank`, or None (a histogram, or a rank the per-rank list omits)."""
        if self.exact is not None:
            return self.exact
        for value, ranks in self.per_rank or []:
            if rank in ranks:
                return value
        return None

    def values_named(self):
        """Every concrete value the trace names here: exact, per-rank entries, histogram bounds."""
        if self.exact is not None:
            return {self.exact}
        if self.per_rank is not None:
            return {value for value, _ in self.per_rank}
        bounds = {self.histogram["min"], self.histogram["max"]}
        for b in self.histogram["bins"]:
            bounds.update((b["min"], b["max"]))
        return bounds

    def describe(self):
        if self.exact is not None:
            return str(self.exact)
        if self.per_rank is not None:
            return "{" + ", ".join(f"{value}@{sorted(ranks)}" for value, ranks in self.per_rank) + "}"
        h = self.histogram
        bins = " ".join(f"{b['min']}" + (f"..{b['max']}" if b["max"] != b["min"] else "") + f":{b['count']}"
                        for b in h["bins"])
        return f"histogram(n={h['count']} mean={h['mean']} min={h['min']} max={h['max']} bins=[{bins}])"


class Event:
    def __init__(self, raw, where):
        self.op = raw["op"]
        self.where = f"{where} {self.op}"
        self.ranks = parse_rank_list_text(raw["ranks"], self.where)
        self.params = {role: Value(value, f"{self.where} {role}") for role, value in raw["params"].items()}


class Loop:
    def __init__(self, raw, where):
        self.where = where
        self.count = Value(raw["loop"], f"{where} iteration count")
        self.body = read_sequence(raw["body"], where + ".body")
        # Each rank's last iteration leaves out this many nodes at the end of the body.
        self.last_leaves_out = raw.get("last_leaves_out", 0)
        self.head = self.body[:len(self.body) - self.last_leaves_out]
        self.rest = self.body[len(self.body) - self.last_leaves_out:]


def read_sequence(raw, where):
    if not isinstance(raw, list):
        raise CannotCompare(f"{where}: expected a list of nodes, got {raw!r}")
    nodes = []
    for index, node in enumerate(raw):
        here = f"{where}[{index}]"
        try:
            nodes.append(Loop(node, here) if "loop" in node else Event(node, here))
        except (KeyError, TypeError) as error:
            raise CannotCompare(f"{here}: not an event or a loop ({error!r}): {str(node)[:200]}") from error
    return nodes


def each_node(sequence, enclosing=()):
    """(node, the loops around it, outermost first) for every node of the trace."""
    for node in sequence:
        yield node, enclosing
        if isinstance(node, Loop):
            yield from each_node(node.body, enclosing + (node,))


def events_of(body, op=None):
    return [(node, loops) for node, loops in each_node(body) if isinstance(node, Event) and op in (None, node.op)]


def histograms_in(body):
    for node, _ in each_node(body):
        values = [node.count] if isinstance(node, Loop) else node.params.values()
        yield from (value for value in values if value.histogram is not None)


def calls_stood_for(body, ranks):
    """{function: (calls, whether a histogram count was on the way)}, all ranks, loops expanded."""
    totals = collections.defaultdict(float)
    approximate = set()

    def walk(sequence, weight, estimated):
        for node in sequence:
            if isinstance(node, Event):
                totals[node.op] += sum(w for rank, w in weight.items() if rank in node.ranks)
                if estimated:
                    approximate.add(node.op)
                continue
            count = node.count
            if count.histogram is not None:
                walk(node.head, {rank: w * count.histogram["mean"] for rank, w in weight.items()}, True)
                # What the last iteration leaves out runs one time fewer where the loop runs at all.
                but_last = sum(b["count"] * max(b["mean"] - 1, 0) for b in count.histogram["bins"])
                but_last /= max(count.histogram["count"], 1)
                walk(node.rest, {rank: w * but_last for rank, w in weight.items()}, True)
            else:
                # Ranks a per-rank count omits do not enter the loop, as in src/trace/walk.cpp.
                inner = {rank: w * count.for_rank(rank) for rank, w in weight.items() if count.for_rank(rank)}
                walk(node.head, inner, estimated)
                walk(node.rest, {rank: w * (count.for_rank(rank) - 1) for rank, w in weight.items()
                                 if count.for_rank(rank)}, estimated)

    walk(body, {rank: 1.0 for rank in range(ranks)}, False)
    return {op: (calls, op in approximate) for op, calls in totals.items()}


def calls_in_trace_order(body, ranks):
    """{rank: [(function, bytes, peers)]} by walking a trace without histograms the way
    src/trace/walk.cpp does: ranks with a shorter per-rank loop count leave the loop early."""
    calls = {rank: [] for rank in range(ranks)}

    def walk(sequence, active):
        for node in sequence:
            if isinstance(node, Event):
                for rank in sorted(active & node.ranks):
                    calls[rank].append(describe_call(node, rank, ranks))
                continue
            if node.count.per_rank is None:
                for iteration in range(node.count.exact):
                    walk(node.head, active)
                    if iteration + 1 < node.count.exact:
                        walk(node.rest, active)
                continue
            for iteration in range(max(value for value, _ in node.count.per_rank)):
                walk(node.head, frozenset(rank for value, members in node.count.per_rank if value > iteration
                                          for rank in members & active))
                walk(node.rest, frozenset(rank for value, members in node.count.per_rank if value > iteration + 1
                                          for rank in members & active))

    walk(body, frozenset(range(ranks)))
    return calls


def world_peer_name(relative, rank, ranks):
    return PEER_NAMES.get(relative) or str((rank + relative) % ranks)


def describe_call(event, rank, ranks):
    """(function, bytes, sorted peers as world ranks or symbolic names) of `rank`, as the log has it."""
    comm = event.params.get("comm")
    if comm is not None and comm.for_rank(rank) != WORLD:
        raise CannotCompare(f"{event.where}: a communicator other than MPI_COMM_WORLD; these programs use only that")
    byte_count = sum(event.params[role].for_rank(rank) or 0 for role in BYTE_ROLES if role in event.params)
    peers = [world_peer_name(event.params[role].for_rank(rank), rank, ranks)
             for role in PEER_ROLES if role in event.params]
    return event.op, byte_count, tuple(sorted(peers))


# --- The program logs -----------------------------------------------------------------------------

Call = collections.namedtuple("Call", "function bytes peers")


def read_logs(log_dir, ranks):
    """{rank: [Call]} in call order, peers as world ranks or ANY_SOURCE / PROC_NULL (check_calls.py
    reads the lines)."""
    return {rank: [Call(call.function, call.bytes, tuple(sorted(call.peers))) for call in calls]
            for rank, calls in read_call_logs(log_dir, ranks).items()}


def relative_peer(peer, rank, ranks):
    """A logged peer as the trace stores it: (peer - me) mod size, or the symbolic number."""
    return SYMBOLIC_PEERS[peer] if peer in SYMBOLIC_PEERS else (int(peer) - rank) % ranks


def logged_values(logs, function, role, rank, ranks):
    """What `rank` logged for `function` in the trace's terms: bytes, or relative peers."""
    values = []
    for call in logs[rank]:
        if call.function != function:
            continue
        if role in BYTE_ROLES:
            values.append(call.bytes)
        else:
            values.extend(relative_peer(peer, rank, ranks) for peer in call.peers)
    return values


def inner_counts(logs):
    """{rank: [MPI_Send calls before each MPI_Allreduce]}: convergence's inner loop counts."""
    counts = {}
    for rank, calls in logs.items():
        counts[rank], sends = [], 0
        for call in calls:
            if call.function == "MPI_Send":
                sends += 1
            elif call.function == "MPI_Allreduce":
                counts[rank].append(sends)
                sends = 0
    return counts


def describe_events(events, role=None, most=3):
    """The first few events' places, ranks, loop depth and one parameter, for a message."""
    shown = [f"{e.where} ({len(loops)} loops deep) ranks {sorted(e.ranks)}"
             + (f" {role}={e.params[role].describe()}" if role in e.params else "")
             for e, loops in events[:most]]
    return "; ".join(shown) + (f"; ... {len(events) - most} more" if len(events) > most else "")


def show_calls(calls):
    return ", ".join(f"{function} {size} [{' '.join(peers)}]" for function, size, peers in calls) or "(end)"


def tolerance(mean):
    """How far a mean h-dump printed may be from the true one."""
    return MEAN_TOLERANCE * max(1.0, abs(mean))


def merges_at(a, b, precision):
    """The precision rule of docs/design.md for two values."""
    return abs(a - b) <= (100 - precision) / 100 * max(abs(a), abs(b))


# --- The checks -----------------------------------------------------------------------------------

class Checker:
    def __init__(self, dump, logs, program, ranks, precision):
        self.dump, self.logs, self.program = dump, logs, program
        self.ranks, self.precision = ranks, precision
        self.body = read_sequence(dump.get("body"), "body")
        self.bins = dump.get("bins", 0)
        self.differences = []

    def differ(self, text):
        self.differences.append(text)

    def run(self):
        self.check_header()
        self.check_call_totals()
        if self.precision == 100:
            self.check_lossless()
        else:
            self.check_histograms_whole()
            self.check_no_invented_values()
            self.check_single_call_sites()
            if self.precision == 0:
                self.check_nothing_per_rank()
            getattr(self, "check_" + self.program)()
        return self.differences

    def check_header(self):
        if self.dump.get("ranks") != self.ranks:
            self.differ(f"header: the job ran {self.ranks} ranks, the trace says {self.dump.get('ranks')!r}")
        if self.dump.get("precision") != self.precision:
            self.differ(f"header: the job ran at precision {self.precision}, "
                        f"the trace says {self.dump.get('precision')!r}")

    def check_call_totals(self):
        logged = collections.Counter(call.function for calls in self.logs.values() for call in calls)
        traced = calls_stood_for(self.body, self.ranks)
        for function in sorted(set(logged) | set(traced)):
            calls, estimated = traced.get(function, (0.0, False))
            expected = logged.get(function, 0)
            if estimated:
                if abs(calls - expected) > COUNT_TOLERANCE * expected:
                    self.differ(f"{function}: the trace stands for {calls:.1f} calls (histogram loop counts at "
                                f"their mean), more than {COUNT_TOLERANCE:.0%} from the {expected} the program logged")
            elif round(calls) != expected:
                self.differ(f"{function}: the trace stands for {round(calls)} calls, the program logged {expected}")

    def check_lossless(self):
        lossy = list(histograms_in(self.body))
        for value in lossy:
            self.differ(f"precision 100 must be lossless, but {value.where} is a {value.describe()}")
        if lossy:
            return
        traced = calls_in_trace_order(self.body, self.ranks)
        for rank in range(self.ranks):
            logged = [tuple(call) for call in self.logs[rank]]
            mine = traced[rank]
            if logged == mine:
                continue
            first = first_difference(logged, mine)
            self.differ(f"rank {rank}: the trace walks {len(mine)} calls, the log has {len(logged)}; first "
                        f"difference at call {first + 1}: log {show_calls(logged[first:first + 3])} / trace "
                        f"{show_calls(mine[first:first + 3])}")

    def check_histograms_whole(self):
        for value in histograms_in(self.body):
            h, bins = value.histogram, value.histogram["bins"]
            problems = []
            if not bins:
                problems.append("it has no bins")
            else:
                if sum(b["count"] for b in bins) != h["count"]:
                    problems.append(f"its bins count {sum(b['count'] for b in bins)}, it says {h['count']}")
                if h["min"] != bins[0]["min"] or h["max"] != max(b["max"] for b in bins):
                    problems.append("its min/max are not those of its bins")
                if any(b["min"] > b["max"] for b in bins) or any(a["max"] >= b["min"] for a, b in zip(bins, bins[1:])):
                    problems.append("its bins are not ordered and disjoint")
                if any(b["count"] <= 0 or not b["min"] - tolerance(b["mean"]) <= b["mean"] <= b["max"] +
                       tolerance(b["mean"]) for b in bins):
                    problems.append("a bin is empty or its mean lies outside it")
            # The precision rule holds for every pair of values a histogram stands for.
            if 0 < self.precision < 100 and not merges_at(h["min"], h["max"], self.precision):
                problems.append(f"its values {h['min']}..{h['max']} differ by more than precision "
                                f"{self.precision} allows")
            if not (0 <= h["min_rank"] < self.ranks and 0 <= h["max_rank"] < self.ranks):
                problems.append(f"min_rank {h['min_rank']} / max_rank {h['max_rank']} are not ranks of the job")
            if problems:
                self.differ(f"{value.where}: broken histogram ({'; '.join(problems)}): {value.describe()}")

    def check_no_invented_values(self):
        for event, _ in events_of(self.body):
            for role in BYTE_ROLES + PEER_ROLES:
                if role not in event.params:
                    continue
                value = event.params[role]
                if value.histogram is None:
                    for rank in sorted(event.ranks):
                        mine = value.for_rank(rank)
                        allowed = logged_values(self.logs, event.op, role, rank, self.ranks)
                        if mine is not None and mine not in allowed:
                            self.differ(f"{value.where}: rank {rank} has {mine}, but it logged "
                                        f"{sorted(set(allowed)) or 'no such call'}")
                    continue
                allowed = {v for rank in event.ranks
                           for v in logged_values(self.logs, event.op, role, rank, self.ranks)}
                invented = sorted(value.values_named() - allowed)
                if invented:
                    self.differ(f"{value.where}: the histogram names {invented}, which its ranks never logged "
                                f"(they logged {sorted(allowed)}): {value.describe()}")

    def callers(self, function):
        return {rank for rank, calls in self.logs.items() if any(call.function == function for call in calls)}

    def check_nothing_per_rank(self):
        """At precision 0 every two values may merge, so a value that differs between ranks is a
        histogram, never a lossless per-rank list. Except peers: they stay per rank where that takes
        no more bytes than their histogram (docs/guide/precision.md, "The rule"), and must then be exact:
        each rank logged that one peer for the function, on every call."""
        for node, _ in each_node(self.body):
            if isinstance(node, Loop):
                values = [(None, node.count)]
            else:
                values = list(node.params.items())
            for role, value in values:
                if value.per_rank is None:
                    continue
                if role not in PEER_ROLES:
                    self.differ(f"{value.where}: at precision 0 values that differ merge into a histogram, but "
                                f"this is kept per rank: {value.describe()}")
                    continue
                for rank in sorted(node.ranks):
                    logged = set(logged_values(self.logs, node.op, role, rank, self.ranks))
                    if logged != {value.for_rank(rank)}:
                        self.differ(f"{value.where}: kept per rank, rank {rank} has {value.for_rank(rank)}, but "
                                    f"it logged {sorted(logged) or 'no such call'}")

    def check_single_call_sites(self):
        """Where a function is one event for all its callers, its histograms hold the program's calls."""
        functions = sorted({call.function for calls in self.logs.values() for call in calls})
        for function in functions:
            events = events_of(self.body, function)
            if self.precision == 0 and (len(events) != 1 or events[0][0].ranks != frozenset(range(self.ranks))):
                self.differ(f"{function}: at precision 0 its one call site must be one event for ranks "
                            f"0-{self.ranks - 1}; the trace has {plural(len(events), 'event')}: "
                            + describe_events(events))
            if len(events) != 1 or events[0][0].ranks != self.callers(function):
                continue
            event = events[0][0]
            for role in BYTE_ROLES + PEER_ROLES:
                if role in event.params and event.params[role].histogram is not None:
                    logged = [v for rank in sorted(event.ranks)
                              for v in logged_values(self.logs, function, role, rank, self.ranks)]
                    self.compare_histogram(event.params[role], logged, f"{function} calls")

    def compare_histogram(self, value, logged, what):
        """A histogram that stands for every value in `logged` must hold exactly those."""
        h = value.histogram
        problems = []
        if h["count"] != len(logged):
            problems.append(f"count {h['count']}, the program logged {len(logged)} {what}")
        if logged and (h["min"], h["max"]) != (min(logged), max(logged)):
            problems.append(f"min..max {h['min']}..{h['max']}, logged {min(logged)}..{max(logged)}")
        distinct = len(set(logged))
        if distinct <= self.bins and any(b["min"] != b["max"] for b in h["bins"]):
            problems.append(f"the {distinct} distinct values fit in the {self.bins} bins, so every bin must hold "
                            "one value (a histogram is exact while they fit)")
        for b in h["bins"]:
            inside = [v for v in logged if b["min"] <= v <= b["max"]]
            span = f"{b['min']}" + (f"..{b['max']}" if b["max"] != b["min"] else "")
            if b["count"] != len(inside):
                problems.append(f"bin {span} holds {b['count']}, the program logged {len(inside)} {what} there")
            elif inside and abs(b["mean"] - sum(inside) / len(inside)) > tolerance(b["mean"]):
                problems.append(f"bin {span} has mean {b['mean']}, the logged values there "
                                f"{sum(inside) / len(inside):.6g}")
        if problems:
            self.differ(f"{value.where}: {'; '.join(problems)}: {value.describe()}")

    # Per program.

    def check_convergence(self):
        counts = inner_counts(self.logs)
        every = [count for rank in sorted(counts) for count in counts[rank]]
        if len(set(every)) < 2:
            raise CannotCompare(f"convergence logged only inner loop counts {sorted(set(every))}: the program "
                                "no longer varies its loop, so there is nothing to check")
        # A loop whose body holds one MPI_Send is one iteration of the inner loop: its count is a count
        # the program ran. (A loop of two iterations per body would count half; none is expected.)
        inner_loops = [node for node, _ in each_node(self.body) if isinstance(node, Loop)
                       and sum(isinstance(n, Event) and n.op == "MPI_Send" for n in node.body) == 1]
        for loop in inner_loops:
            count = loop.count
            if count.histogram is not None:
                named = count.values_named()
                if not named <= set(every):
                    self.differ(f"{count.where}: names counts {sorted(named - set(every))} the program never ran "
                                f"(it ran {sorted(set(every))}): {count.describe()}")
                continue
            senders = set().union(*(n.ranks for n in loop.body if isinstance(n, Event) and n.op == "MPI_Send"))
            for rank in sorted(senders):
                mine = count.for_rank(rank)
                if mine is not None and mine not in counts[rank]:
                    self.differ(f"{count.where}: rank {rank} iterates {mine} times, but it ran the inner loop "
                                f"{sorted(set(counts[rank]))} times")
        if self.precision != 0:
            return

        sends = events_of(self.body, "MPI_Send")
        if len(sends) != 1 or not sends[0][1]:
            self.differ(f"convergence at precision 0: MPI_Send must be one event inside one inner loop; the "
                        f"trace has {plural(len(sends), 'MPI_Send event')}: " + describe_events(sends))
            return
        inner = sends[0][1][-1].count
        if inner.histogram is None:
            self.differ(f"convergence at precision 0: the inner loop's count must be a histogram of the counts "
                        f"{sorted(set(every))} the program ran, it is {inner.describe()}")
            return
        h = inner.histogram
        if (h["min"], h["max"]) != (min(every), max(every)):
            self.differ(f"{inner.where}: min..max {h['min']}..{h['max']}, the program ran {min(every)}..{max(every)} "
                        f"iterations: {inner.describe()}")
        for key in ("min", "max"):
            rank = h[f"{key}_rank"]
            if h[key] not in counts.get(rank, []):
                self.differ(f"{inner.where}: says rank {rank} ran the {key} count {h[key]}, but it ran "
                            f"{sorted(set(counts.get(rank, [])))}")
        # One value per loop instance: per rank and timestep (the outer loop folds the timesteps).
        self.compare_histogram(inner, every, "inner loops (rank x timestep)")
        logged_sends = sum(every)
        outer = 1.0
        for loop in sends[0][1][:-1]:
            outer *= loop.count.histogram["mean"] if loop.count.histogram else (loop.count.exact or 0)
        expected = outer * h["mean"] * len(sends[0][0].ranks)
        if abs(expected - logged_sends) > COUNT_TOLERANCE * logged_sends:
            self.differ(f"{inner.where}: outer iterations x mean x ranks = {outer:g} x {h['mean']:g} x "
                        f"{len(sends[0][0].ranks)} = {expected:.1f} MPI_Send calls, more than "
                        f"{COUNT_TOLERANCE:.0%} from the {logged_sends} the program made")

    def check_land_sea(self):
        # Land and sea sizes stay apart wherever the precision rule does not allow 80 with 90.
        if not merges_at(LAND_BYTES, SEA_BYTES, self.precision):
            for function, role in (("MPI_Isend", "bytes"), ("MPI_Irecv", "recv_bytes")):
                for event, _ in events_of(self.body, function):
                    value = event.params.get(role)
                    if value is not None and value.histogram is not None and \
                            value.histogram["min"] <= LAND_BYTES and value.histogram["max"] >= SEA_BYTES:
                        self.differ(f"{value.where}: at precision {self.precision} land's {LAND_BYTES} bytes and "
                                    f"sea's {SEA_BYTES} may not merge (they differ by more than "
                                    f"{100 - self.precision}%), but the histogram holds both: {value.describe()}")
        if self.precision != 0:
            return
        # At 0 the exchange is one event per call site; check_single_call_sites compared its histogram
        # with the logs. Here: it must be a histogram at all, with both sizes in it.
        for function, role in (("MPI_Isend", "bytes"), ("MPI_Irecv", "recv_bytes")):
            sizes = collections.Counter(v for rank in range(self.ranks)
                                        for v in logged_values(self.logs, function, role, rank, self.ranks))
            events = events_of(self.body, function)
            if len(events) != 1 or len(sizes) < 2:
                continue  # reported by check_single_call_sites; or one region only: nothing to merge
            value = events[0][0].params.get(role)
            exact_bins = {b["min"]: b["count"] for b in value.histogram["bins"] if b["min"] == b["max"]} \
                if value is not None and value.histogram is not None else None
            if exact_bins != dict(sizes):
                self.differ(f"land_sea at precision 0: {function} {role} must be a histogram with the logged "
                            f"counts per size {dict(sorted(sizes.items()))} in bins of their own, it is "
                            f"{value.describe() if value else 'missing'}")

    def check_drifting(self):
        sizes = {rank: [call.bytes for call in calls if call.function == "MPI_Isend"]
                 for rank, calls in self.logs.items()}
        all_sizes = [size for rank in sorted(sizes) for size in sizes[rank]]
        if len(set(all_sizes)) < 2:
            raise CannotCompare("drifting logged only one message size: the program no longer drifts")
        # All sizes may stand as one histogram only where every pair of them is within the precision
        # (the rule is over all pairs, not step by step); elsewhere check_histograms_whole covers it.
        if not merges_at(min(all_sizes), max(all_sizes), self.precision):
            return
        for function, role in (("MPI_Isend", "bytes"), ("MPI_Irecv", "recv_bytes")):
            events = events_of(self.body, function)
            value = events[0][0].params.get(role) if len(events) == 1 else None
            if len(events) != 1 or events[0][0].ranks != frozenset(range(self.ranks)):
                self.differ(f"drifting at precision {self.precision}: every size is within the precision of the "
                            f"one before, so {function} must be one event for ranks 0-{self.ranks - 1}; the trace "
                            f"has {plural(len(events), 'event')}: "
                            + describe_events(events, role))
            elif value is None or value.histogram is None:
                self.differ(f"drifting at precision {self.precision}: {function} {role} must be a histogram of "
                            f"{min(all_sizes)}..{max(all_sizes)} bytes, it is "
                            f"{value.describe() if value else 'missing'}")
            else:
                h = value.histogram
                if (h["min"], h["max"], h["count"]) != (min(all_sizes), max(all_sizes), len(all_sizes)):
                    self.differ(f"{value.where}: must span the logged {min(all_sizes)}..{max(all_sizes)} bytes over "
                                f"{len(all_sizes)} calls; it spans {h['min']}..{h['max']} over {h['count']}: "
                                f"{value.describe()}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--h-dump", help="the h-dump executable")
    parser.add_argument("--trace", help="the trace file to check")
    parser.add_argument("--json", help="a saved `h-dump --json` output instead of --h-dump/--trace")
    parser.add_argument("--program", required=True, choices=PROGRAMS, help="which test program made the trace")
    parser.add_argument("--ranks", required=True, type=int, help="how many ranks the job ran")
    parser.add_argument("--precision", required=True, type=int, choices=range(101), metavar="0..100",
                        help="the MERGE_PRECISION the job ran at")
    parser.add_argument("--log-dir", required=True, help="the directory the program wrote rank.<N> logs into")
    args = parser.parse_args()
    if args.json is None and (args.h_dump is None or args.trace is None):
        parser.error("give --h-dump and --trace, or --json")

    where = f"{args.program}, {args.ranks} ranks, precision {args.precision}"
    try:
        logs = read_logs(args.log_dir, args.ranks)
        dump = load_dump(args, options=("--json",))
        differences = Checker(dump, logs, args.program, args.ranks, args.precision).run()
    except CannotCompare as error:
        print(f"check_precision ({where}): cannot compare: {error}", file=sys.stderr)
        return 2

    if differences:
        print_differences(f"check_precision ({where}): the trace does not hold what the program did, in "
                                      f"{plural(len(differences), 'place')}:", differences, MAX_DIFFERENCES_SHOWN)
        return 1
    print(f"check_precision ({where}): the trace holds what the program did"
          + (" (lossless, call for call)" if args.precision == 100 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
