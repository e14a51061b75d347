#!/usr/bin/env python3
"""Checks the calls of a trace, per rank and in order, against the traced program's own log.

    check_sequence.py --h-dump PATH --trace TRACE --log-dir DIR --ranks N [--label TEXT] [--report REPORT.json]
    check_sequence.py --sequence DUMP.txt --log-dir DIR --ranks N      (a saved `h-dump --sequence` output)
    ... --steps-in-any-order

check_calls.py compares totals per rank and function; this script compares order. Each rank's calls,
from `h-dump --sequence TRACE` and from the program's log (DIR/rank.<r>, see programs/call_log.h),
are both reduced to the list of:

  sends         (function, destination, tag, bytes), the function normalised as replay issues it:
                MPI_Send/Bsend/Rsend as MPI_Send, MPI_Isend/Ibsend/Irsend as MPI_Isend, MPI_Ssend and
                MPI_Issend as they are; the destination a world rank or PROC_NULL
  receives      (MPI_Recv or MPI_Irecv, source, tag, bytes), MPI_Mrecv as MPI_Recv and MPI_Imrecv as
                MPI_Irecv (replay receives a probed message so): the source (tag) that matched where the
                call asked for MPI_ANY_SOURCE (MPI_ANY_TAG) and learnt the match itself, else the one
                it asked for. An MPI_Irecv from MPI_ANY_SOURCE learns its match only at its completion:
                the log keeps it as ANY_SOURCE, and a replay (which posts it from the source that
                matched) may name any source there -- but per rank, the sources it names must be the
                multiset of sources the program's completions say its wildcard receives matched. Alike
                for MPI_ANY_TAG, without the multiset (the log does not keep matched tags there)
  MPI_Sendrecv, MPI_Sendrecv_replace
                (function, destination, send tag, source, receive tag, bytes), wildcards as receives
  starts        each request an MPI_Start / MPI_Startall started, as replay issues it: the send of an
                MPI_Send_init, MPI_Bsend_init, MPI_Rsend_init as MPI_Isend, of an MPI_Ssend_init as
                MPI_Issend, the receive of an MPI_Recv_init as MPI_Irecv (the log's started=, the
                trace's recv_bytes or bytes and synchronous=1)
  completions   ('complete', requests completed) for every Wait/Test call that completed at least
                one, whichever it was: the trace's `completes=`, the log's `completed=` (a log line
                with `of=MPI_X` completed the request of a call to MPI_X: left out with that call);
                where the log says which requests (`positions=`), the trace's `positions=` must too
  collectives   (function, root as a world rank or None, bytes): the trace's bytes + recv_bytes

A receive or send whose cancel won (the log's `cancelled=1`) moved no message, and replay leaves it out: for
the trace of a replay (--report) it is left out of the log's list, and the completions that
completed it count one request less (none left: left out).

Left out on both sides: MPI_Init, MPI_Finalize, calls recorded by name only (kind `opaque`), probes,
completion calls that completed nothing (a polling loop's count depends on timing), communicator
creation and free. For the trace of a replay, --report (h-replay's --report-json) also leaves out the
functions replay says it could not replay (check_replay.py requires that there are none). Byte counts
are what the log and the trace count: send side, receive capacity.

With --steps-in-any-order, for the replay of a trace whose loop counts were drawn once per instance
for all participants (causal replay below precision 100), each rank's list is cut into steps, each
step its calls up to and including a collective: the collectives must be the program's, in order,
and the steps the program's steps, as many of each, in any order (the draws hand out the recorded
counts in another order).

A trace whose completion calls carry no `completes=` cannot be compared on completions: the other
calls are then compared without them, and the check says so and does not pass.

Prints, for each rank that differs, the first difference (its index in the reduced list and both
sides). Exit status: 0 when every rank's list is the program's, 1 on any difference, 2 when the
comparison cannot be made (h-dump fails, a log is malformed, the trace has no completes=, or holds
values that are not exact: this check is for lossless traces, MERGE_PRECISION=100).
"""

import argparse
import collections
import json
import pathlib
import re
import sys

import check_calls
from check_calls import CannotCompare
import check_replay

# Each send mode as replay issues it (docs/design.md, "Replay").
SEND_FUNCTIONS = {"MPI_Send": "MPI_Send", "MPI_Bsend": "MPI_Send", "MPI_Rsend": "MPI_Send",
                  "MPI_Ssend": "MPI_Ssend",
                  "MPI_Isend": "MPI_Isend", "MPI_Ibsend": "MPI_Isend", "MPI_Irsend": "MPI_Isend",
                  "MPI_Issend": "MPI_Issend"}
# Each receive as replay issues it.
RECEIVE_FUNCTIONS = {"MPI_Recv": "MPI_Recv", "MPI_Irecv": "MPI_Irecv", "MPI_Mrecv": "MPI_Recv",
                     "MPI_Imrecv": "MPI_Irecv"}
# What MPI_Start of a request made by each init is replayed as.
STARTED = {"MPI_Send_init": "MPI_Isend", "MPI_Bsend_init": "MPI_Isend", "MPI_Rsend_init": "MPI_Isend",
           "MPI_Ssend_init": "MPI_Issend", "MPI_Recv_init": "MPI_Irecv"}
SENDRECV_FUNCTIONS = {"MPI_Sendrecv", "MPI_Sendrecv_replace"}
COMPLETION_FUNCTIONS = {"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome",
                        "MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome"}
_BLOCKING_COLLECTIVES = ["Barrier", "Bcast", "Reduce", "Allreduce", "Gather", "Gatherv", "Scatter", "Scatterv",
                         "Allgather", "Allgatherv", "Alltoall", "Alltoallv", "Alltoallw", "Reduce_scatter",
                         "Reduce_scatter_block", "Scan", "Exscan", "Neighbor_allgather", "Neighbor_allgatherv",
                         "Neighbor_alltoall", "Neighbor_alltoallv", "Neighbor_alltoallw"]
# The program logs name functions only, so the collectives are listed: each and its MPI_I twin.
COLLECTIVE_FUNCTIONS = ({f"MPI_{name}" for name in _BLOCKING_COLLECTIVES}
                        | {f"MPI_I{name[0].lower()}{name[1:]}" for name in _BLOCKING_COLLECTIVES}
                        # Collectives on windows: their creation (bytes: its size), free and fence.
                        | {"MPI_Win_create", "MPI_Win_allocate", "MPI_Win_allocate_shared", "MPI_Win_create_dynamic",
                           "MPI_Win_free", "MPI_Win_fence"})
ANY_TAG = "ANY_TAG"
TRACE_ANY_TAG = "-1"  # h-dump --sequence prints an exact MPI_ANY_TAG as the number the trace stores
MAX_RANKS_SHOWN = 32


class Reduced:
    """One rank's reduced list: the comparable tuples, and for each where it came from."""

    def __init__(self):
        self.calls = []
        self.origins = []
        self.cancelled = []  # per call: receives whose cancel won it is or completed

    def add(self, call, origin, cancelled=0):
        if call is not None:
            self.calls.append(call)
            self.origins.append(origin)
            self.cancelled.append(cancelled)

    def without_cancelled(self):
        """The list as a replay makes it: without receives whose cancel won, nor their completions."""
        kept = Reduced()
        for call, origin, cancelled in zip(self.calls, self.origins, self.cancelled):
            if call[0] == "complete" and call[1] > cancelled:
                kept.add(("complete", call[1] - cancelled) + call[2:], origin)
            elif not cancelled:
                kept.add(call, origin)
        return kept

    def without(self, functions):
        """The list without calls of `functions`, nor the completions of the requests they made."""
        kept = Reduced()
        for call, origin, cancelled in zip(self.calls, self.origins, self.cancelled):
            if call[0] in functions or (call[0] == "complete" and len(call) > 2 and call[2] in functions):
                continue
            kept.add(call[:2] if call[0] == "complete" else call, origin, cancelled)
        return kept

    def without_completions(self):
        return self.without({"complete"})


# --- The program's log ----------------------------------------------------------------------------------

def log_field(call, key):
    if key not in call.fields:
        raise CannotCompare(f"{call.where}: {call.function} has no {key}= (a program that does not log it yet: "
                            f"see programs/call_log.h)")
    return call.fields[key]


def only_peer(call, count=1):
    if len(call.peers) != count:
        raise CannotCompare(f"{call.where}: {call.function} should name {count} peer(s), names {call.peers}")
    return call.peers


def logged_source(call, source):
    """The source a receive asked for, or what it matched where it asked for any source and knew."""
    return call.matched[0] if source == "ANY_SOURCE" and call.matched else source


def logged_tag(call, key):
    tag = log_field(call, key)
    return call.fields.get("matched_tag", tag) if tag == ANY_TAG else tag


def reduce_logged(call):
    """The comparable tuple of one log line, or None for a call left out."""
    function = call.function
    if function in SEND_FUNCTIONS:
        (dest,) = only_peer(call)
        return (SEND_FUNCTIONS[function], dest, log_field(call, "tag"), call.bytes)
    if function in RECEIVE_FUNCTIONS:
        (source,) = only_peer(call)
        return (RECEIVE_FUNCTIONS[function], logged_source(call, source), logged_tag(call, "tag"), call.bytes)
    if function == "MPI_Start":
        started = STARTED.get(log_field(call, "started"))
        if started is None:
            raise CannotCompare(f"{call.where}: started={call.fields['started']} is not an init of a persistent request")
        (peer,) = only_peer(call)
        if started == "MPI_Irecv":
            return (started, logged_source(call, peer), logged_tag(call, "tag"), call.bytes)
        return (started, peer, log_field(call, "tag"), call.bytes)
    if function in SENDRECV_FUNCTIONS:
        dest, source = only_peer(call, 2)
        return (function, dest, log_field(call, "tag"), logged_source(call, source), logged_tag(call, "recv_tag"),
                call.bytes)
    if function in COMPLETION_FUNCTIONS:
        completed = log_field(call, "completed")
        if not completed.isdigit():
            raise CannotCompare(f"{call.where}: completed={completed} is not a count")
        if int(completed) == 0:
            return None
        # The request of a call a replay cannot make goes when that call does (Reduced.without).
        return ("complete", int(completed), call.fields["of"]) if "of" in call.fields else ("complete", int(completed))
    if function in COLLECTIVE_FUNCTIONS:
        return (function, call.peers[0] if call.peers else None, call.bytes)
    return None


def reduce_logs(log_dir, ranks):
    reduced = {}
    for rank, calls in check_calls.read_call_logs(log_dir, ranks).items():
        reduced[rank] = Reduced()
        for call in calls:
            cancelled = call.fields.get("cancelled", "0")
            if not cancelled.isdigit():
                raise CannotCompare(f"{call.where}: cancelled={cancelled} is not a count")
            reduced[rank].add(reduce_logged(call), call.where, int(cancelled))
    return reduced


# --- The trace ------------------------------------------------------------------------------------------

class TraceReducer:
    """Reduces `h-dump --sequence` calls; counts completion calls that do not say what they completed."""

    def __init__(self):
        self.completions_without_count = 0

    @staticmethod
    def exact(params, role, where, default=None):
        value = params.get(role, default)
        if value is None:
            raise CannotCompare(f"{where}: no {role}=")
        if "(" in value or "," in value:
            raise CannotCompare(f"{where}: {role}={value} is not one exact value (a merged trace? this check is "
                                f"for MERGE_PRECISION=100)")
        return value

    def number(self, params, role, where):
        value = self.exact(params, role, where, "0")
        if not re.fullmatch(r"-?\d+", value):
            raise CannotCompare(f"{where}: {role}={value} is not a number")
        return int(value)

    def tag(self, params, role, where):
        tag = self.exact(params, role, where)
        if tag in (TRACE_ANY_TAG, ANY_TAG):
            matched = self.exact(params, "matched_tag", where, ANY_TAG)
            # What a receive from MPI_PROC_NULL matched: MPI_ANY_TAG, as MPI says.
            return ANY_TAG if matched == TRACE_ANY_TAG else matched
        return tag

    def source(self, params, role, where):
        source = self.exact(params, role, where)
        return self.exact(params, "matched_peer", where) if source == "ANY_SOURCE" and "matched_peer" in params \
            else source

    def reduce(self, kind, function, params, where):
        """The comparable tuple of one traced call, or None for a call left out."""
        if kind == "send":
            return (SEND_FUNCTIONS.get(function, function), self.exact(params, "peer", where),
                    self.tag(params, "tag", where), self.number(params, "bytes", where))
        if kind == "recv" or (kind == "start" and "recv_bytes" in params):
            return (RECEIVE_FUNCTIONS.get(function, "MPI_Irecv"), self.source(params, "peer", where),
                    self.tag(params, "tag", where), self.number(params, "recv_bytes", where))
        if kind == "start":
            return ("MPI_Issend" if params.get("synchronous") == "1" else "MPI_Isend", self.exact(params, "peer", where),
                    self.tag(params, "tag", where), self.number(params, "bytes", where))
        if kind == "sendrecv":
            return (function, self.exact(params, "peer", where), self.exact(params, "tag", where),
                    self.source(params, "source", where), self.tag(params, "recv_tag", where),
                    self.number(params, "bytes", where) + self.number(params, "recv_bytes", where))
        if kind == "completion":
            if "completes" not in params:
                self.completions_without_count += 1
                return None
            completed = self.number(params, "completes", where)
            return ("complete", completed) if completed > 0 else None
        if kind == "collective":
            root = self.exact(params, "root", where) if "root" in params else None
            return (function, root, self.number(params, "bytes", where) + self.number(params, "recv_bytes", where))
        return None


def reduce_trace(sequence):
    reducer = TraceReducer()
    reduced = {}
    for rank, calls in sequence.items():
        reduced[rank] = Reduced()
        for index, (kind, function, params) in enumerate(calls):
            text = " ".join([kind, function] + [f"{role}={value}" for role, value in params.items()])
            where = f"rank {rank}, traced call #{index}: {text}"
            reduced[rank].add(reducer.reduce(kind, function, params, where), f"traced call #{index}")
    return reduced, reducer.completions_without_count


# --- The comparison -------------------------------------------------------------------------------------

def show(reduced, at):
    if at >= len(reduced.calls):
        return "nothing (the list ends here)"
    return f"{reduced.calls[at]} ({reduced.origins[at]})"


def agrees(logged, traced):
    """Whether a traced call is the logged one; an MPI_Irecv the log keeps with a wildcard agrees with
    one from any source (tag)."""
    if logged == traced:
        return True
    if logged[0] != "MPI_Irecv" or traced[0] != "MPI_Irecv" or logged[3] != traced[3]:
        return False
    return logged[1] in ("ANY_SOURCE", traced[1]) and logged[2] in (ANY_TAG, traced[2])


def compare(logged, traced, ranks, wildcard_matches):
    """For each rank whose lists differ, a line with the first difference. `wildcard_matches`: per rank,
    the multiset of sources the program's completions say its wildcard receives matched."""
    differences = [f"rank {rank}: in the trace, but the job had only ranks 0..{ranks - 1}"
                   for rank in sorted(set(traced) - set(range(ranks)))]
    for rank in range(ranks):
        mine, theirs = logged.get(rank, Reduced()), traced.get(rank, Reduced())
        at = next((i for i, (a, b) in enumerate(zip(mine.calls, theirs.calls)) if not agrees(a, b)),
                  min(len(mine.calls), len(theirs.calls)))
        if at < len(mine.calls) or at < len(theirs.calls):
            differences.append(f"rank {rank}: program {len(mine.calls)} calls, trace {len(theirs.calls)}; first "
                               f"difference at #{at}:\n    program {show(mine, at)}\n    trace   {show(theirs, at)}")
            continue
        named = collections.Counter(b[1] for a, b in zip(mine.calls, theirs.calls)
                                    if a[0] == "MPI_Irecv" and a[1] == "ANY_SOURCE" and b[1] != "ANY_SOURCE")
        if named and named != wildcard_matches.get(rank, collections.Counter()):
            differences.append(f"rank {rank}: the trace's MPI_Irecv from ANY_SOURCE name the sources "
                               f"{dict(named)}, the program's completions matched {dict(wildcard_matches.get(rank, {}))}")
    return differences


def step_differences(logged, traced, ranks):
    """For each rank whose steps (its calls up to and including a collective) are not the program's
    ones in some order, or whose collectives are not the program's in order, a line saying so."""
    def steps(reduced):
        cut, current = [], []
        for call in reduced.calls:
            current.append(call)
            if call[0] in COLLECTIVE_FUNCTIONS:
                cut.append(tuple(current))
                current = []
        if current:
            cut.append(tuple(current))
        return cut

    differences = []
    for rank in range(ranks):
        mine, theirs = steps(logged.get(rank, Reduced())), steps(traced.get(rank, Reduced()))
        if [step[-1] for step in mine] != [step[-1] for step in theirs]:
            differences.append(f"rank {rank}: the collectives ending its {len(mine)} steps are not the program's, in "
                               f"order ({len(theirs)} steps in the trace)")
            continue
        missing = collections.Counter(mine) - collections.Counter(theirs)
        if missing:
            step = next(iter(missing))
            differences.append(f"rank {rank}: {len(missing)} kinds of the program's steps are not in the trace as often; "
                               f"one of {len(step)} calls ending in {step[-1]}: {step[:3]}...")
    return differences


def position_differences(log_dir, ranks, sequence):
    """Where the program logged which of its pending requests a completion call completed (positions=),
    the trace's completion call that completed something at the same place among the rank's ones must
    name the same (its positions=). A log with cancelled receives is left out: a replay does not make
    them."""
    differences = []
    for rank, calls in check_calls.read_call_logs(log_dir, ranks).items():
        logged = [call for call in calls
                  if call.function in COMPLETION_FUNCTIONS and call.fields.get("completed", "0") != "0"]
        if (any(call.fields.get("cancelled", "0") != "0" for call in calls)
                or not any("positions" in call.fields for call in logged)):
            continue
        traced = [params for kind, _, params in sequence.get(rank, []) if kind == "completion"
                  and params.get("completes", "0") not in ("0", "unknown")]
        for index, (call, params) in enumerate(zip(logged, traced)):
            if "positions" in call.fields and call.fields["positions"] != params.get("positions"):
                differences.append(f"rank {rank}: completion #{index} ({call.where}) completed the requests at "
                                   f"positions {call.fields['positions']}, the trace says {params.get('positions')}")
                break
    return differences


def wildcard_receive_matches(log_dir, ranks):
    """Per rank, the sources the program's completion calls say its wildcard receives matched."""
    return {rank: collections.Counter(source for call in calls if call.function in COMPLETION_FUNCTIONS
                                      for source in call.matched)
            for rank, calls in check_calls.read_call_logs(log_dir, ranks).items()}


def main():
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    parser.add_argument("--h-dump", help="the h-dump executable")
    parser.add_argument("--trace", help="the trace file to check")
    parser.add_argument("--sequence", help="a saved `h-dump --sequence` output instead of --h-dump/--trace")
    parser.add_argument("--log-dir", required=True, help="the directory the program wrote rank.<N> logs into")
    parser.add_argument("--ranks", required=True, type=int, help="how many ranks the job ran")
    parser.add_argument("--label", default="trace", help="what the trace is, in the messages (default: trace)")
    parser.add_argument("--report", help="h-replay's --report-json of the replay this trace is of")
    parser.add_argument("--steps-in-any-order", action="store_true",
                        help="the steps between collectives may come in another order (see above)")
    args = parser.parse_args()
    if args.sequence is None and (args.h_dump is None or args.trace is None):
        parser.error("give --h-dump and --trace, or --sequence")
    name = f"check_sequence ({args.label})"

    try:
        logged = reduce_logs(args.log_dir, args.ranks)
        if args.sequence is not None:
            text = pathlib.Path(args.sequence).read_text()
            sequence = check_replay.parse_sequence(text, args.sequence)
        else:
            print(f"$ {args.h_dump} --sequence {args.trace}", flush=True)
            sequence = check_replay.sequence(args.h_dump, args.trace)
        traced, completions_without_count = reduce_trace(sequence)
        not_replayed = set()
        if args.report is not None:
            not_replayed = set(json.loads(pathlib.Path(args.report).read_text())["not_replayed"])
        logged = {rank: reduced.without(not_replayed) for rank, reduced in logged.items()}
        if args.report is not None:
            logged = {rank: reduced.without_cancelled() for rank, reduced in logged.items()}
    except (CannotCompare, check_replay.CannotCompare, OSError, ValueError, KeyError) as error:
        print(f"{name}: cannot compare: {error}")
        return 2

    missing_completes = ""
    if completions_without_count:
        missing_completes = (f"trace has no completes= field on {completions_without_count} completion calls "
                             f"(h-dump --sequence does not say how many requests they completed), so completions "
                             f"cannot be compared; the other calls are compared without them")
        print(f"{name}: {missing_completes}")
        logged = {rank: reduced.without_completions() for rank, reduced in logged.items()}
        traced = {rank: reduced.without_completions() for rank, reduced in traced.items()}

    if args.steps_in_any_order:
        differences = step_differences(logged, traced, args.ranks)
    else:
        differences = compare(logged, traced, args.ranks, wildcard_receive_matches(args.log_dir, args.ranks))
        differences += position_differences(args.log_dir, args.ranks, sequence)
    if differences:
        check_calls.print_differences(f"{name}: the calls of {check_calls.plural(len(differences), 'rank')} differ "
                                      f"from the program logs, in order:", differences, MAX_RANKS_SHOWN)
        return 1
    calls = sum(len(reduced.calls) for reduced in logged.values())
    if missing_completes:
        print(f"{name}: cannot compare: trace has no completes= field; the other {calls} calls agree")
        return 2
    order = "in the program's steps, in some order" if args.steps_in_any_order else "in the program's order"
    print(f"{name}: {args.ranks} ranks, {calls} sends, receives, completions and collectives: {order}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
