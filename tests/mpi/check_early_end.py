#!/usr/bin/env python3
"""No trace lost silently, and a job that ends early still leaves one (issue 26). Each case builds its
own hostile condition with tests/mpi/programs/early_end.c and checks against what the test itself did
and the program's own call log:

  unwritable    HTRACE_FILE=/dev/full: one h-trace line naming it, a non-zero exit at MPI_Init, and
                the program never gets past MPI_Init (its log stays empty).
  write-fails   rank 0 limits its file size (RLIMIT_FSIZE) after MPI_Init, so the trace's write fails
                as on a full disk: the trace an earlier run left is byte for byte as it was, no
                temporary file is left, one line says so, and the job exits non-zero.
  abort         the last rank calls MPI_Abort: it says no trace was written, its partial file exists,
                and h-merge of the partial files found makes a trace marked incomplete that h-dump
                reads, holding the aborting rank, whose calls are those the program logged.
  crash         the last rank gets SIGSEGV: it says, in one line, that no trace was written, and the
                job exits non-zero.
  exit          every rank calls exit without MPI_Finalize: rank 0 says so, in one line (or that it got
                the SIGTERM the launcher sends after the first exit), and every rank's partial file
                merges into the calls the program logged.
  sigterm       the test sends SIGTERM to every rank while they wait outside MPI: rank 0 says no trace
                was written, every rank leaves a partial file, and their merge holds every rank's
                logged calls. The program's own SIGTERM handler (installed before MPI_Init) must
                still run, after the tracer's part: the test then SIGKILLs the ranks (a rank that
                died of the SIGTERM would have the launcher kill the others, MPICH's before they
                are through).
  flush         HTRACE_FLUSH_SECONDS=1, ranks SIGKILLed (nothing can run at a SIGKILL) once their
                periodic partial files hold everything they logged: the parts merge into the calls
                the program logged.
  replay        h-replay refuses the merged trace of `sigterm` with one line unless --partial is
                given, and replays it with --partial.

    check_early_end.py CASE --program EARLY_END --h-trace PATH --h-dump PATH --h-merge PATH
                       --h-replay PATH [--mpirun PATH] [--np N]
"""
import argparse
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from check_calls import CannotCompare, compare, read_program_logs, read_trace_tallies, run_h_dump
from mpi_launch import TRACER_VARIABLES, is_open_mpi, mpirun_command

TIMEOUT = 120
LAPS = "5"


class Failed(Exception):
    pass


def environment(extra):
    env = {name: value for name, value in os.environ.items() if name not in TRACER_VARIABLES + ("HTRACE_FLUSH_SECONDS",)}
    env["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
    env.update(extra)
    return env


def log_variables(logs):
    """The program logs its calls into `logs`, whose I/O the tracer leaves out, as run_traced.py does."""
    return {"CALL_LOG_DIR": str(logs), "HTRACE_IO_EXCLUDE": str(logs)}


def run(command, env, cwd):
    print("$", *(f"{k}={v}" for k, v in env.items() if k in TRACER_VARIABLES + ("HTRACE_FLUSH_SECONDS",)),
          " ".join(map(str, command)), flush=True)
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
    print(done.stdout + done.stderr, flush=True)
    return done


def tracer_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("h-trace:")]


def wait_for(condition, what, seconds=60):
    """Polls `condition` until it holds; a bound, not a measurement: the test never depends on how
    fast the machine is, it only gives up on a job that is stuck."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise Failed(f"gave up after {seconds} s waiting for {what}")
        time.sleep(0.1)


def rank_pids(logs, ranks):
    return [int((logs / f"ready.{rank}").read_text()) for rank in range(ranks)]


def parts_of(trace):
    """The partial files beside `trace`, not the temporary file of a rank killed while it wrote one."""
    return sorted(p for p in trace.parent.glob(trace.name + ".part.*") if p.name.rsplit(".", 1)[1].isdigit())


def merge_and_check(args, trace, logs, ranks, needed_ranks):
    """h-merge the parts beside `trace`; the merged trace must be incomplete, hold `needed_ranks` at
    least, and hold for each rank it holds exactly the calls that rank logged."""
    parts = parts_of(trace)
    if not parts:
        raise Failed(f"no partial file beside {trace}")
    merged = trace.parent / "merged.h"
    done = run([args.h_merge, *map(str, parts), "-o", str(merged)], environment({}), trace.parent)
    if done.returncode != 0:
        raise Failed(f"h-merge exited {done.returncode}")
    header = run_h_dump(args.h_dump, str(merged), ("--json",))
    if header.get("incomplete") is not True:
        raise Failed("the merged trace is not marked incomplete")
    present = sorted(stop["rank"] for stop in header.get("stops", []))
    if not set(needed_ranks) <= set(present):
        raise Failed(f"the merged trace holds ranks {present}, not all of {sorted(needed_ranks)}")
    expected = {rank: tally for rank, tally in read_program_logs(logs, ranks).items() if rank in present}
    dump = run_h_dump(args.h_dump, str(merged))
    differences = compare(expected, read_trace_tallies(dump), ranks, dump)
    if differences:
        raise Failed("the merged trace differs from the program's logs:\n  " + "\n  ".join(differences))
    return merged


def start_waiting_job(args, scratch, extra_env, own_handler=False):
    logs = scratch / "logs"
    logs.mkdir()
    trace = scratch / "trace.h"
    env = environment(dict(extra_env, HTRACE_FILE=str(trace), **log_variables(logs)))
    command = mpirun_command(args.mpirun, args.np,
                             [args.h_trace, args.program, "wait", LAPS] + (["1"] if own_handler else []))
    print("$", " ".join(command), flush=True)
    job = subprocess.Popen(command, env=env, cwd=scratch, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        wait_for(lambda: all((logs / f"ready.{r}").exists() for r in range(args.np)) or job.poll() is not None,
                 "every rank to be ready")
        if job.poll() is not None:
            raise Failed(f"the job ended by itself ({job.returncode}): {job.communicate()}")
    except BaseException:
        os.killpg(job.pid, signal.SIGKILL)
        job.communicate()
        raise
    return job, logs, trace


def kill_if_alive(pid):
    # A rank may have ended by itself already (its own SIGTERM handler exits, or MPICH's launcher
    # ended it once another rank had): nothing left to kill.
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def finish_job(job):
    try:
        stdout, stderr = job.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        stdout, stderr = job.communicate()
        raise Failed(f"the job outlived its ranks:\n{stdout}\n{stderr}")
    print(stdout + stderr, flush=True)
    return job.returncode, stderr


def case_unwritable(args, scratch):
    logs = scratch / "logs"
    logs.mkdir()
    done = run(mpirun_command(args.mpirun, args.np, [args.h_trace, args.program, "finish", LAPS]),
               environment(dict(log_variables(logs), HTRACE_FILE="/dev/full")), scratch)
    ours = tracer_lines(done.stderr)
    if done.returncode == 0:
        raise Failed("the job exited 0")
    if len(ours) != 1 or "/dev/full" not in ours[0]:
        raise Failed(f"expected one h-trace line naming /dev/full, got {ours}")
    if any(f.stat().st_size > 0 for f in logs.iterdir()):
        raise Failed("the program got past MPI_Init")


def case_write_fails(args, scratch):
    trace = scratch / "trace.h"
    command = mpirun_command(args.mpirun, args.np, [args.h_trace, args.program, "finish", LAPS])
    earlier = run(command, environment({"HTRACE_FILE": str(trace)}), scratch)
    if earlier.returncode != 0 or not trace.is_file():
        raise Failed("the earlier run wrote no trace")
    before = trace.read_bytes()
    # Larger than MPI's own small files, smaller than any trace.
    limit = str(len(before) // 2)
    done = run(mpirun_command(args.mpirun, args.np, [args.h_trace, args.program, "finish", LAPS, limit]),
               environment({"HTRACE_FILE": str(trace)}), scratch)
    ours = [line for line in tracer_lines(done.stderr) if "no trace written" in line]
    if done.returncode == 0:
        raise Failed("the job exited 0 although its trace was not written")
    if len(ours) != 1 or "previous one is kept" not in ours[0]:
        raise Failed(f"expected one line saying no trace was written and the previous one kept, got {ours}")
    if trace.read_bytes() != before:
        raise Failed("the earlier run's trace changed")
    leftovers = [p.name for p in scratch.iterdir() if p.name.startswith("trace.h.")]
    if leftovers:
        raise Failed(f"files left beside the trace: {leftovers}")


def case_abort(args, scratch):
    logs = scratch / "logs"
    logs.mkdir()
    trace = scratch / "trace.h"
    done = run(mpirun_command(args.mpirun, args.np, [args.h_trace, args.program, "abort", LAPS]),
               environment(dict(log_variables(logs), HTRACE_FILE=str(trace))), scratch)
    aborting = args.np - 1
    if done.returncode == 0:
        raise Failed("the job exited 0")
    said = [line for line in tracer_lines(done.stderr)
            if line.startswith(f"h-trace: no trace written: rank {aborting} called MPI_Abort (error code 3)")]
    if len(said) != 1:
        raise Failed(f"expected one line from rank {aborting} about MPI_Abort, got {tracer_lines(done.stderr)}")
    if trace.exists():
        raise Failed("a trace.h appeared, though the job never finalized")
    merge_and_check(args, trace, logs, args.np, [aborting])


def case_crash(args, scratch):
    trace = scratch / "trace.h"
    done = run(mpirun_command(args.mpirun, args.np, [args.h_trace, args.program, "crash", LAPS]),
               environment({"HTRACE_FILE": str(trace)}), scratch)
    crashing = args.np - 1
    if done.returncode == 0:
        raise Failed("the job exited 0")
    # (Other ranks may say they got the SIGTERM the launcher ends the job with.)
    said = [line for line in tracer_lines(done.stderr) if f"rank {crashing} got SIGSEGV" in line]
    if said != [f"h-trace: no trace written: rank {crashing} got SIGSEGV before MPI_Finalize"]:
        raise Failed(f"expected one line from rank {crashing} about SIGSEGV, got {tracer_lines(done.stderr)}")


def case_exit(args, scratch):
    logs = scratch / "logs"
    logs.mkdir()
    trace = scratch / "trace.h"
    command = mpirun_command(args.mpirun, args.np, [args.h_trace, args.program, "exit", LAPS])
    if not is_open_mpi(args.mpirun):
        # MPICH's launcher SIGKILLs every rank as soon as one exits without MPI_Finalize, while the
        # others are still writing their parts; a batch system lets each process end by itself.
        command.insert(1, "-disable-auto-cleanup")
    done = run(command, environment(dict(log_variables(logs), HTRACE_FILE=str(trace))), scratch)
    said = [line for line in tracer_lines(done.stderr) if "no trace written" in line]
    # The launcher answers the first rank's exit with SIGTERM to the others: a rank 0 that had not
    # reached its own exit yet rightly says it got that signal.
    ends = ("h-trace: no trace written: rank 0 exited without calling MPI_Finalize",
            "h-trace: no trace written: rank 0 got SIGTERM before MPI_Finalize")
    if len(said) != 1 or not said[0].startswith(ends):
        raise Failed(f"expected one line from rank 0 about the exit, got {tracer_lines(done.stderr)}")
    merge_and_check(args, trace, logs, args.np, range(args.np))


def case_sigterm(args, scratch):
    job, logs, trace = start_waiting_job(args, scratch, {}, own_handler=True)
    pids = rank_pids(logs, args.np)
    try:
        for pid in pids:
            os.kill(pid, signal.SIGTERM)
        wait_for(lambda: all((logs / f"terminated.{r}").exists() for r in range(args.np)),
                 "the program's own SIGTERM handler on every rank")
    finally:
        for pid in pids:
            kill_if_alive(pid)
        _, stderr = finish_job(job)
    said = [line for line in tracer_lines(stderr) if line.startswith("h-trace: no trace written: rank 0 got SIGTERM")]
    if len(said) != 1:
        raise Failed(f"expected one line from rank 0 about SIGTERM, got {tracer_lines(stderr)}")
    if len(parts_of(trace)) != args.np:
        raise Failed(f"expected {args.np} partial files, found {[p.name for p in parts_of(trace)]}")
    return merge_and_check(args, trace, logs, args.np, range(args.np))


def case_flush(args, scratch):
    job, logs, trace = start_waiting_job(args, scratch, {"HTRACE_FLUSH_SECONDS": "1"})
    logged = {rank: len((logs / f"rank.{rank}").read_text().splitlines()) for rank in range(args.np)}

    def parts_complete():
        for rank in range(args.np):
            part = trace.parent / f"{trace.name}.part.{rank}"
            if not part.exists():
                return False
            dump = subprocess.run([args.h_dump, "--json", str(part)], capture_output=True, text=True)
            if dump.returncode != 0:
                raise Failed(f"h-dump cannot read {part.name}: {dump.stderr.strip()}")
            stops = json.loads(dump.stdout).get("stops", [])
            if [s["calls"] for s in stops] != [logged[rank]]:
                return False
        return True

    try:
        wait_for(parts_complete, "partial files holding every logged call")
    finally:
        for pid in rank_pids(logs, args.np):
            kill_if_alive(pid)
        finish_job(job)
    merge_and_check(args, trace, logs, args.np, range(args.np))


def case_replay(args, scratch):
    merged = case_sigterm(args, scratch)
    replay_dir = scratch / "replay"
    replay_dir.mkdir()
    refused = run(mpirun_command(args.mpirun, args.np, [args.h_replay, str(merged)]), environment({}), replay_dir)
    lines = [line for line in refused.stderr.splitlines() if line.startswith("h-replay:")]
    if refused.returncode == 0:
        raise Failed("h-replay replayed an incomplete trace without --partial")
    if len(lines) != 1 or "--partial" not in lines[0]:
        raise Failed(f"expected one h-replay line naming --partial, got {lines}")
    replayed = run(mpirun_command(args.mpirun, args.np, [args.h_replay, "--partial", str(merged)]), environment({}),
                   replay_dir)
    if replayed.returncode != 0:
        raise Failed(f"h-replay --partial exited {replayed.returncode}")


CASES = {"unwritable": case_unwritable, "write-fails": case_write_fails, "abort": case_abort,
         "crash": case_crash, "exit": case_exit,
         "sigterm": case_sigterm, "flush": case_flush, "replay": case_replay}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=sorted(CASES))
    for tool in ("program", "h-trace", "h-dump", "h-merge", "h-replay"):
        parser.add_argument("--" + tool, required=True)
    parser.add_argument("--mpirun", default=shutil.which("mpirun") or shutil.which("mpiexec"))
    parser.add_argument("--np", type=int, default=3)
    args = parser.parse_args()
    if not args.mpirun:
        print("no mpirun here")
        return 77
    for name in ("program", "h_trace", "h_dump", "h_merge", "h_replay"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    with tempfile.TemporaryDirectory(prefix=f"htrace-{args.case}-") as scratch:
        try:
            CASES[args.case](args, pathlib.Path(scratch))
        except (Failed, CannotCompare, subprocess.TimeoutExpired) as error:
            print(f"check_early_end {args.case}: FAILED: {error}")
            return 1
    print(f"check_early_end {args.case}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
