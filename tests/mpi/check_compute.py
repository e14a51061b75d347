#!/usr/bin/env python3
"""Checks that the computation time the trace gives each rank before a call is what the rank measured
itself: a load imbalance (one rank computing longer than the others) must survive the merge of ranks;
and that the time in those calls is what the ranks measured around them.

    check_compute.py --h-dump H_DUMP --trace TRACE --log-dir DIR --ranks N

The program logs compute_us= on the calls of one function inside its loop (load_imbalance.c: each
MPI_Allreduce): the microseconds from its previous MPI call's return to that call. The trace must
hold those calls as one event in a loop; from `h-dump --json`, each rank's time is that of the group
of `compute_by_rank` it is in (or the event's, where there are none). For every rank, that mean must
be within TOLERANCE (10%) plus SLACK (0.5 ms: the tracer's clock also counts the program's logging)
of the mean of what the rank logged. Where the program also logs in_call_us= (the microseconds from
before the call to after it), the event's `in_call` mean and maximum over all ranks must be those of
what all ranks logged, within the same bounds (and the maximum also within the 12% the file may
round it up by); the program's timers also see the tracer recording the call, which the trace
leaves out, so the mean may fall short by up to all ranks' time in the tracer over the calls
logged, and the maximum by the most one rank spent in the tracer (`rank_times` `tracer`).
Exit status: 0 all agree, 1 a difference, 2 cannot compare."""
import statistics
import sys

import check_calls
from check_calls import CannotCompare
from check_precision import parse_rank_list_text

TOLERANCE = 0.10
SLACK_SECONDS = 0.5e-3
MAX_ROUNDING = 2 ** (1 / 6)


def events_in_loops(body, function, inside=False):
    for node in body:
        if "body" in node:
            yield from events_in_loops(node["body"], function, True)
        elif inside and node["op"] == function:
            yield node


def time_of(event, rank):
    """The mean computation time the trace gives `rank` before `event`."""
    for group in event.get("compute_by_rank", []):
        if rank in parse_rank_list_text(group["ranks"], event["op"]):
            return group["compute"]["mean"]
    return event["compute"]["mean"]


def check(dump, logs, ranks):
    logged = {}  # function -> rank -> [seconds]
    for rank, calls in logs.items():
        for call in calls:
            if "compute_us" in call.fields:
                logged.setdefault(call.function, {}).setdefault(rank, []).append(int(call.fields["compute_us"]) * 1e-6)
    if len(logged) != 1:
        raise CannotCompare(f"the program logged compute_us= on {len(logged)} functions, expected one")
    function, per_rank = next(iter(logged.items()))
    events = list(events_in_loops(dump["body"], function))
    if len(events) != 1:
        return [f"{function}: {len(events)} events inside loops, expected one for the program's loop"]
    differences = in_call_differences(events[0], function, logs, dump["rank_times"], ranks)
    for rank in range(ranks):
        if rank not in per_rank:
            differences.append(f"rank {rank}: logged no {function} with compute_us=")
            continue
        measured = statistics.mean(per_rank[rank])
        traced = time_of(events[0], rank)
        if abs(traced - measured) > TOLERANCE * measured + SLACK_SECONDS:
            differences.append(f"rank {rank}: measured {measured * 1e3:.3f} ms of computation before each "
                               f"{function}, the trace says {traced * 1e3:.3f} ms")
    return differences


def in_call_differences(event, function, logs, rank_times, ranks):
    logged = [int(call.fields["in_call_us"]) * 1e-6 for calls in logs.values() for call in calls
              if call.function == function and "in_call_us" in call.fields]
    if not logged:
        return []
    if "in_call" not in event:
        return [f"{function}: the program measured its time in the calls; the trace has none"]
    if not rank_times or rank_times.get("tracer") is None:
        raise CannotCompare("the trace has no time in the tracer (older than format 21, or not measured)")
    in_tracer = rank_times["tracer"]
    differences = []
    for what, measured, allowance in (("mean", statistics.mean(logged), in_tracer["mean"] * ranks / len(logged)),
                                      ("max", max(logged), in_tracer["max"])):
        traced = event["in_call"][what]
        # A file keeps the maximum rounded up to the next sixth of a doubling (trace/time_code.hpp).
        rounded_up = MAX_ROUNDING if what == "max" else 1.0
        if not (measured - allowance - TOLERANCE * measured - SLACK_SECONDS <= traced
                <= measured * rounded_up + TOLERANCE * measured + SLACK_SECONDS):
            differences.append(f"{function}: the ranks measured {measured * 1e3:.3f} ms in each call ({what}), "
                               f"the trace says {traced * 1e3:.3f} ms")
    return differences


def main():
    return check_calls.main_of_log_check("check_compute", __doc__.split("\n\n")[1], check)


if __name__ == "__main__":
    sys.exit(main())
