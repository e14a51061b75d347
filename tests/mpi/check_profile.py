#!/usr/bin/env python3
"""Checks `h-dump --profile` against the program's own timers: where each rank's time went.

    check_profile.py --h-dump H_DUMP --trace TRACE --log-dir DIR --ranks N

The program logs, on the calls of its loop (load_imbalance.c: each MPI_Allreduce), compute_us= (from
its previous MPI call's return to the call) and in_call_us= (from before the call to after it). Per
rank, its time in MPI is the sum of its in_call_us, its computation the sum of its compute_us, and
its share in MPI the first over both. The profile's least, mean and most of each over the ranks must
be the program's within TOLERANCE (10%) plus SLACK (1 ms, 1% for shares: the calls the program does
not time, MPI_Comm_rank and the like, and its logging between calls); the ranks the profile names as
least and most must have logged that value within the same bounds (two ranks may tie). The
program's timers around a call also see the tracer recording it, which the trace's time in the call
leaves out and the profile gives apart ("in the tracer"): so a rank's time in MPI, and its share,
may fall short of the program's by up to the most any rank spent in the tracer (a rank preempted
while the tracer records loses a whole time slice there), never more. The call
site of the logged function must count the calls the program logged, and their time in calls must
be the sum of in_call_us within the same bounds (short by at most all ranks' time in the tracer),
and where the program logged its call's source
(source_file=, source_line=) the site's location must be that file (by its last component) and line:
the tracer kept the call's address, and h-dump found the line in the binary's debug information.
Exit status: 0 all agree, 1 a difference, 2 cannot compare."""
import pathlib
import statistics
import sys

import check_calls
from check_calls import CannotCompare

TOLERANCE = 0.10
SLACK = {"seconds": 1e-3, "share": 0.01}


def logged_times(logs, ranks):
    """({rank: seconds in MPI}, {rank: seconds computing}, function) from the logs."""
    mpi, computation, functions = {}, {}, set()
    for rank in range(ranks):
        for call in logs.get(rank, []):
            if "in_call_us" in call.fields and "compute_us" in call.fields:
                functions.add(call.function)
                mpi[rank] = mpi.get(rank, 0) + int(call.fields["in_call_us"]) * 1e-6
                computation[rank] = computation.get(rank, 0) + int(call.fields["compute_us"]) * 1e-6
    if len(functions) != 1 or len(mpi) != ranks:
        raise CannotCompare(f"expected every rank to log in_call_us= and compute_us= on one function, "
                            f"got {len(mpi)} ranks and functions {sorted(functions)}")
    return mpi, computation, functions.pop()


def close(traced, measured, unit):
    """Whether `traced` is the measured interval (least, most) within the bounds."""
    least, most = measured
    return (least - TOLERANCE * abs(least) - SLACK[unit] <= traced
            <= most + TOLERANCE * abs(most) + SLACK[unit])


def shown(interval):
    least, most = interval
    return f"{most:.6g}" if least == most else f"{least:.6g} to {most:.6g}"


def spread_differences(name, spread, measured, unit):
    """`measured`: {rank: (least, most)} the rank's value may be, by its own timers."""
    differences = []
    for what, key, interval in (
            ("least", "min", tuple(min(bounds[i] for bounds in measured.values()) for i in (0, 1))),
            ("mean", "mean", tuple(statistics.mean(bounds[i] for bounds in measured.values()) for i in (0, 1))),
            ("most", "max", tuple(max(bounds[i] for bounds in measured.values()) for i in (0, 1)))):
        if not close(spread[key], interval, unit):
            differences.append(f"{name}: the profile's {what} is {spread[key]:.6g}, the program's {shown(interval)}")
    for key in ("min", "max"):
        rank = spread[f"{key}_rank"]
        if rank not in measured or not close(spread[key], measured[rank], unit):
            differences.append(f"{name}: the profile names rank {rank} with {spread[key]:.6g} as its {key}; "
                               f"that rank measured {shown(measured[rank]) if rank in measured else None}")
    return differences


def check(profile, logs, ranks):
    mpi, computation, function = logged_times(logs, ranks)
    times = profile["rank_times"]
    if times is None:
        return ["the profile has no time per rank"]
    if times.get("tracer") is None:
        raise CannotCompare("the profile has no time in the tracer (a trace older than format 21)")
    in_tracer = times["tracer"]["max"]
    mpi_bounds = {rank: (max(0.0, mpi[rank] - in_tracer), mpi[rank]) for rank in mpi}
    share_bounds = {rank: tuple(m / (m + computation[rank]) for m in mpi_bounds[rank]) for rank in mpi}
    differences = (spread_differences("time in MPI", times["mpi"], mpi_bounds, "seconds") +
                   spread_differences("computation", times["computation"],
                                      {rank: (value, value) for rank, value in computation.items()}, "seconds") +
                   spread_differences("share in MPI", times["mpi_share"], share_bounds, "share"))
    if differences:
        differences.append(f"(the most a rank spent in the tracer: {in_tracer:.6g} s)")
    sites = [site for site in profile["sites"] if site["op"] == function]
    calls = sum(len([c for c in logs.get(rank, []) if c.function == function]) for rank in range(ranks))
    if len(sites) != 1:
        return differences + [f"{function}: {len(sites)} call sites in the profile, expected one"]
    site = sites[0]
    if float(site["calls"]) != calls:
        differences.append(f"{function}: the profile counts {site['calls']} calls, the program logged {calls}")
    measured = sum(mpi.values())
    all_in_tracer = times["tracer"]["mean"] * ranks
    if site["seconds"] is None or not close(site["seconds"], (measured - all_in_tracer, measured), "seconds"):
        differences.append(f"{function}: the profile has {site['seconds']} s in its calls, the program measured "
                           f"{measured:.6g} s, of which the tracer took up to {all_in_tracer:.6g} s")
    return differences + source_differences(site, logs, function)


def source_differences(site, logs, function):
    logged = {(pathlib.PurePath(call.fields["source_file"]).name, int(call.fields["source_line"]))
              for calls in logs.values() for call in calls
              if call.function == function and "source_file" in call.fields and "source_line" in call.fields}
    if not logged:
        return []
    if len(logged) != 1:
        raise CannotCompare(f"{function}: the program logged more than one source line: {sorted(logged)}")
    expected = logged.pop()
    location = site.get("location") or {}
    found = (pathlib.PurePath(location["file"]).name if location.get("file") else None, location.get("line"))
    if found != expected:
        return [f"{function}: the profile puts the call site at {found[0]}:{found[1]} (location {location}), "
                f"the program's call is at {expected[0]}:{expected[1]}"]
    return []


def main():
    return check_calls.main_of_log_check("check_profile", __doc__.split("\n\n")[1], check,
                                         dump_options=("--profile", "--json"))


if __name__ == "__main__":
    sys.exit(main())
