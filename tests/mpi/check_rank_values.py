#!/usr/bin/env python3
"""Checks that a communicator creation's rank in the new communicator, a value that follows the
world rank in most programs, is in the trace what the program got, and costs the trace no more
entries at 12 ranks than at 4.

    check_rank_values.py --h-dump H_DUMP --trace TRACE --log-dir DIR --ranks N

The program logs its splits with color=C new_rank=R (programs/call_log.h; comm_split.c does): the
colour it gave and the rank MPI_Comm_rank returned in the new communicator. The i-th such logged call
of a function on a rank is the i-th event of that function among the trace's top-level events that
rank takes part in. For each, from `h-dump --json`:
  - every rank's `key` parameter (the caller's rank in the new communicator) is the rank it logged,
    reading per-rank entries as the trace defines them (the i-th rank of an entry has value + i*step);
  - the `key` holds no more per-rank entries than the program made communicators (colours): each new
    communicator's ranks are 0, 1, 2 ... in world order, one entry with a step where its members are
    evenly spaced, so the count does not grow with the job while the number of communicators does not.
Exit status: 0 all agree, 1 a difference, 2 cannot compare."""
import collections
import sys

import check_calls
from check_calls import CannotCompare
from check_precision import parse_rank_list_text


def rank_of_index(entry, where):
    """{rank: value} of one per-rank entry of the JSON."""
    ranks = sorted(parse_rank_list_text(entry["ranks"], where))
    return {rank: entry["value"] + i * entry["step"] for i, rank in enumerate(ranks)}


def top_level_events(body, function):
    return [node for node in body if "op" in node and node["op"] == function]


def check(dump, logs):
    """The differences, as lines (empty when all agree)."""
    differences = []
    logged = collections.defaultdict(lambda: collections.defaultdict(list))  # function -> rank -> [call]
    for rank, calls in logs.items():
        for call in calls:
            if "new_rank" in call.fields:
                logged[call.function][rank].append(call)
    if not logged:
        raise CannotCompare("the program logged no new_rank= field: nothing to check")
    for function, per_rank in sorted(logged.items()):
        events = top_level_events(dump["body"], function)
        takers = [{} for _ in events]  # per event: {rank: its logged call}
        for rank, calls in per_rank.items():
            mine = [i for i, e in enumerate(events) if rank in parse_rank_list_text(e["ranks"], function)]
            if len(mine) != len(calls):
                differences.append(f"rank {rank}: logged {len(calls)} {function}, the trace has {len(mine)} with it")
            for i, call in zip(mine, calls):
                takers[i][rank] = call
        for event, members in zip(events, takers):
            if not members:
                continue
            where = f"{function} @{event['signature']}"
            key = event["params"].get("key")
            if key is None:
                differences.append(f"{where}: no key parameter")
                continue
            value_of, entries = {}, 1
            if isinstance(key, int):
                value_of = {rank: key for rank in members}
            else:
                for entry in key["per_rank"]:
                    value_of.update(rank_of_index(entry, where))
                entries = len(key["per_rank"])
            for rank, call in sorted(members.items()):
                if value_of.get(rank) != int(call.fields["new_rank"]):
                    differences.append(f"{where}: rank {rank} got rank {call.fields['new_rank']} in the new "
                                       f"communicator, the trace says {value_of.get(rank)}")
            colours = {call.fields.get("color") for call in members.values()}
            print(f"{where}: {len(members)} ranks, {len(colours)} new communicator(s), key in {entries} "
                  f"entr{'y' if entries == 1 else 'ies'}: {key}")
            if entries > len(colours):
                differences.append(f"{where}: the key takes {entries} per-rank entries for {len(colours)} new "
                                   f"communicator(s) whose ranks follow the world rank")
    return differences


def main():
    return check_calls.main_of_log_check("check_rank_values", __doc__.split("\n\n")[1], lambda dump, logs, ranks: check(dump, logs))


if __name__ == "__main__":
    sys.exit(main())
