#!/usr/bin/env python3
"""Checks the timelines of a replay (h-replay --otf2, --chrome-trace) and of a trace (h-dump --otf2,
--chrome-trace) against each other and against the program's own log.

    check_timeline.py --otf2-print PATH --h-dump PATH --original TRACE --replay-otf2 DIR
                      --replay-chrome FILE --work-dir DIR --log-dir DIR --ranks N --precision P

Counted per rank and operation (OTF2: the regions otf2-print shows entered at each location; Chrome:
the complete events of each thread):

1. the replay's OTF2 archive and its Chrome trace hold the same calls;
2. `h-dump --otf2 --chrome-trace ORIGINAL`, which runs nothing, holds them too: it lays out the
   schedule a replay at the trace's seed issues;
3. at precision 100, each rank's calls of each operation replay re-enacts call for call (sends,
   receives, collectives, communicator creations: re_enacted) are the program's own (its log);
   below, the job's calls of those operations are within 5% of the program's. Waits, polls and
   probes are left out: replay completes and probes where it must, not always where the program did
   (a cancelled receive, a poll that found nothing), and so are the non-blocking sends and receives
   of a rank that starts persistent requests or cancels (REISSUED_BY);
4. the Chrome traces' calls of a rank do not overlap, and none lasts less than nothing.

Exit status: 0 all agree, 1 a difference, 2 cannot compare."""
import argparse
import collections
import json
import pathlib
import re
import subprocess
import sys

import check_calls
from check_calls import CannotCompare

RE_ENACTED_BLOCKING = {
    "Send", "Ssend", "Bsend", "Rsend", "Recv", "Sendrecv", "Sendrecv_replace", "Barrier", "Bcast", "Gather", "Gatherv",
    "Scatter", "Scatterv", "Allgather", "Allgatherv", "Alltoall", "Alltoallv", "Alltoallw", "Allreduce", "Reduce",
    "Reduce_scatter", "Reduce_scatter_block", "Scan", "Exscan", "Comm_split", "Comm_dup", "Comm_create", "Cart_create",
    "Intercomm_create", "Intercomm_merge"}


def re_enacted(function):
    """Whether replay issues `function` (MPI_Send, MPI_Isend ...) where and as often as the program did."""
    name = function.removeprefix("MPI_")
    return name in RE_ENACTED_BLOCKING or (name.startswith("I") and name[1:].capitalize() in RE_ENACTED_BLOCKING)


TOTALS_TOLERANCE = 0.05
ENTER = re.compile(r"^ENTER\s+(\d+)\s+\d+\s+Region: \"([^\"]+)\"")
LEAVE = re.compile(r"^LEAVE\s+\d+\s+(\d+)\s")  # nanoseconds: the archives' clock


def otf2_counts(otf2_print, archive, with_last_leave=False):
    """Counter of (rank, operation) over the regions entered in `archive`/traces.otf2 (and with
    `with_last_leave`, the time in seconds of the last region left)."""
    command = [otf2_print, str(pathlib.Path(archive) / "traces.otf2")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise CannotCompare(f"{' '.join(command)} exited with {result.returncode}: {result.stderr.strip()[:500]}")
    counts, last_leave = collections.Counter(), 0
    for line in result.stdout.splitlines():
        entered = ENTER.match(line)
        if entered:
            counts[(int(entered.group(1)), entered.group(2))] += 1
        left = LEAVE.match(line)
        if left:
            last_leave = max(last_leave, int(left.group(1)) * 1e-9)
    return (counts, last_leave) if with_last_leave else counts


def chrome_counts(path, label):
    """(Counter of (rank, operation), differences) from a Chrome trace's complete events."""
    try:
        events = json.loads(pathlib.Path(path).read_text())["traceEvents"]
    except (OSError, ValueError, KeyError) as error:
        raise CannotCompare(f"{path}: {error}") from error
    counts, differences, last_end = collections.Counter(), [], {}
    for event in events:
        if event.get("ph") != "X":
            continue
        rank, start, duration = event["tid"], event["ts"], event["dur"]
        counts[(rank, event["name"])] += 1
        if duration < 0:
            differences.append(f"{label}: rank {rank}'s {event['name']} at {start} us lasts {duration} us")
        if start + 1e-3 < last_end.get(rank, 0):
            differences.append(f"{label}: rank {rank}'s {event['name']} starts at {start} us, before its previous "
                               f"call ended ({last_end[rank]} us)")
        last_end[rank] = start + duration
    return counts, differences[:20]


def compare(label, found, expected, expected_label):
    differences = []
    for key in sorted(set(found) | set(expected)):
        if found[key] != expected[key]:
            differences.append(f"{label}: rank {key[0]} {key[1]}: {found[key]} calls, {expected_label} "
                               f"{expected[key]}")
    return differences[:40]


NON_BLOCKING_POINT_TO_POINT = {"MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend", "MPI_Irecv"}
# A rank that calls these makes non-blocking sends and receives the replay issues otherwise: a started
# persistent request as the call it stands for (MPI_Start of a Bsend_init as an MPI_Ibsend), and a
# cancelled one not at all.
REISSUED_BY = {"MPI_Start", "MPI_Startall", "MPI_Cancel"}


def program_differences(archive, logs, ranks, precision):
    logged, reissuing = collections.Counter(), set()
    for rank in range(ranks):
        for call in logs.get(rank, []):
            logged[(rank, call.function)] += 1
            if call.function in REISSUED_BY:
                reissuing.add(rank)
    keys = {key for key in set(archive) | set(logged)
            if re_enacted(key[1]) and not (key[0] in reissuing and key[1] in NON_BLOCKING_POINT_TO_POINT)}
    if precision == 100:
        return [f"the replay's OTF2 archive: rank {rank} {function}: {archive[(rank, function)]} calls, the program "
                f"made {logged[(rank, function)]}" for rank, function in sorted(keys)
                if archive[(rank, function)] != logged[(rank, function)]][:40]
    found, made = sum(archive[key] for key in keys), sum(logged[key] for key in keys)
    if abs(found - made) > TOTALS_TOLERANCE * made:
        return [f"the replay's OTF2 archive: {found} sends, receives, collectives and communicator creations, the "
                f"program made {made}"]
    return []


def main():
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    for option in ("--otf2-print", "--h-dump", "--original", "--replay-otf2", "--replay-chrome",
                   "--work-dir", "--log-dir"):
        parser.add_argument(option, required=True)
    parser.add_argument("--ranks", required=True, type=int)
    parser.add_argument("--precision", required=True, type=int)
    args = parser.parse_args()
    work = pathlib.Path(args.work_dir)
    expected_otf2, expected_chrome = work / "expected-otf2", work / "expected.json"
    command = [args.h_dump, "--otf2", str(expected_otf2), "--chrome-trace", str(expected_chrome), args.original]
    print("$", " ".join(command), flush=True)
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=300)
        if result.returncode != 0:
            raise CannotCompare(f"h-dump exited with {result.returncode}: {result.stderr.strip()}")
        archive = otf2_counts(args.otf2_print, args.replay_otf2)
        chrome, differences = chrome_counts(args.replay_chrome, "the replay's Chrome trace")
        expected_archive = otf2_counts(args.otf2_print, expected_otf2)
        expected, expected_differences = chrome_counts(expected_chrome, "h-dump's Chrome trace")
        logs = check_calls.read_call_logs(args.log_dir, args.ranks)
    except (CannotCompare, OSError, subprocess.TimeoutExpired) as error:
        print(f"check_timeline: cannot compare: {error}")
        return 2
    if not archive:
        print("check_timeline: cannot compare: the replay's archive holds no calls")
        return 2
    differences += expected_differences
    differences += compare("the replay's Chrome trace", chrome, archive, "its OTF2 archive")
    differences += compare("h-dump's OTF2 archive", expected_archive, archive, "the replay's")
    differences += compare("h-dump's Chrome trace", expected, archive, "the replay's OTF2 archive")
    differences += program_differences(archive, logs, args.ranks, args.precision)
    for line in differences:
        print(f"check_timeline: {line}")
    if not differences:
        print(f"check_timeline: {sum(archive.values())} calls on {len({rank for rank, _ in archive})} ranks agree")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
