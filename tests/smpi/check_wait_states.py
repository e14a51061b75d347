#!/usr/bin/env python3
"""Wait states of a replay against what the program's own timers say it waited (issue 30, point 6).

    check_wait_states.py --smpirun PATH --platform XML --h-replay-smpi PATH --h-trace PATH --np N
                         [--mpirun PATH] [--timeout SECONDS] [--keep] -- LOAD_IMBALANCE ITERATIONS SLOW FAST

load_imbalance logs, before each MPI_Allreduce, the computation its rank did since its previous
call returned (compute_us=); it sends no message. The real MPI build is traced, and h-replay-smpi
replays the trace on the platform, where the simulated clock makes the replay's waits exactly what the
re-enacted computation makes them. The trace keeps a rank's computation before a call as statistics
over the iterations (its mean, per group of ranks that computed alike), not iteration by iteration, so
the replay's ranks compute their own mean each time and leave each MPI_Allreduce together: over the
run rank r waits max_j T[j] - T[r], where T[j] is rank j's total computation by its own timers. Each
rank's wait_at_collective in --report-json must be that within 5% of the largest wait plus 1 ms (the
traced computation is the program's within check_compute.py's bounds), and no rank may have a late
sender or late receiver. The call site the report lists first must be the MPI_Allreduce's, waiting
at a collective, with the most waiting rank one that by the program's timers waited the most.

Exit status: 0 agrees, 1 differs, 77 skipped (no SimGrid or mpirun)."""
import argparse
import json
import os
import pathlib
import shutil
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "mpi"))
from check_calls import read_call_logs  # noqa: E402
from mpi_launch import mpirun_command  # noqa: E402
from run_traced import TestFailure, run, run_in_scratch  # noqa: E402

SKIP = 77
TOLERANCE = 0.05
SLACK = 1e-3
QUIET = ["--log=xbt_cfg.thres:warning", "--log=smpi_config.thres:warning"]


def program_waits(logs, ranks):
    """{rank: seconds} each rank of the replay should wait at its MPI_Allreduce calls, from the
    program's own timers (the docstring above says why)."""
    totals = {rank: sum(int(call.fields["compute_us"]) * 1e-6 for call in logs.get(rank, [])
                        if call.function == "MPI_Allreduce" and "compute_us" in call.fields) for rank in range(ranks)}
    if not all(totals.values()):
        raise TestFailure(f"a rank logged no computation before its MPI_Allreduce calls: {totals}")
    slowest = max(totals.values())
    return {rank: slowest - total for rank, total in totals.items()}


def run_case(args, mpirun, scratch):
    logs, trace, report = scratch / "calls", scratch / "trace.h", scratch / "replay.json"
    logs.mkdir()
    status, stdout, stderr = run(mpirun_command(mpirun, args.np, [os.path.abspath(args.h_trace)] + args.command),
                                 {"HTRACE_FILE": str(trace), "CALL_LOG_DIR": str(logs), "HTRACE_IO_EXCLUDE": str(logs)},
                                 scratch, args.timeout)
    if status != 0 or not trace.is_file():
        raise TestFailure(f"tracing failed (exit status {status})\n{stdout}\n{stderr}")
    command = [args.smpirun, "-platform", os.path.abspath(args.platform), "-np", str(args.np)] + QUIET + [
        os.path.abspath(args.h_replay_smpi), "--report-json", str(report), str(trace)]
    status, stdout, stderr = run(command, {}, scratch, args.timeout)
    print(stderr, end="")
    if status != 0 or not report.is_file():
        raise TestFailure(f"the replay failed (exit status {status})\n{stdout}\n{stderr}")
    waits = json.loads(report.read_text())["wait_states"]
    expected = program_waits(read_call_logs(logs, args.np), args.np)
    bound = TOLERANCE * max(expected.values()) + SLACK
    differences = []
    per_rank = {entry["rank"]: entry for entry in waits["per_rank"]}
    for rank, seconds in expected.items():
        found = per_rank.get(rank, {})
        print(f"rank {rank}: waited at collectives {found.get('wait_at_collective')} s in the replay, "
              f"{seconds:.6f} s by the program's timers")
        if found.get("wait_at_collective") is None or abs(found["wait_at_collective"] - seconds) > bound:
            differences.append(f"rank {rank}: {found.get('wait_at_collective')} s waiting at collectives, the "
                               f"program's timers say {seconds:.6f} s (bound {bound:.6f} s)")
        if found.get("late_sender", 0) != 0 or found.get("late_receiver", 0) != 0:
            differences.append(f"rank {rank}: late senders or receivers in a program that sends no message: {found}")
    sites = waits["sites"]
    most = max(expected.values())
    if not sites or sites[0]["op"] != "MPI_Allreduce" or sites[0]["kind"] != "wait_at_collective" or \
            expected.get(sites[0]["most_rank"], 0) < most - bound:
        differences.append(f"the first waiting site is {sites[:1]}, expected MPI_Allreduce waiting at a collective "
                           f"with a rank that waited about {most:.6f} s")
    if differences:
        raise TestFailure("\n".join(differences))


def main():
    split = sys.argv.index("--") if "--" in sys.argv else len(sys.argv)
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    parser.add_argument("--smpirun")
    parser.add_argument("--platform", required=True)
    parser.add_argument("--h-replay-smpi")
    parser.add_argument("--h-trace", required=True)
    parser.add_argument("--np", required=True, type=int)
    parser.add_argument("--mpirun")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(sys.argv[1:split])
    args.command = [os.path.abspath(sys.argv[split + 1])] + sys.argv[split + 2:]
    if not (args.smpirun and args.h_replay_smpi):
        print("check_wait_states.py: SimGrid not found at configure time: skipped")
        return SKIP
    mpirun = args.mpirun or shutil.which("mpirun") or shutil.which("mpiexec")
    if mpirun is None:
        print("check_wait_states.py: no mpirun: skipped")
        return SKIP
    return run_in_scratch("h-trace-waits-", args.keep, lambda scratch: run_case(args, mpirun, scratch))


if __name__ == "__main__":
    sys.exit(main())
