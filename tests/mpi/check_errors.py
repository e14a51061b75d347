#!/usr/bin/env python3
"""Clear errors, never a hang or a crash:

- a bad MERGE_PRECISION, HTRACE_BINS or an HTRACE_FILE whose directory cannot be written stops the
  job at MPI_Init: one line from rank 0 naming the variable, a non-zero exit, and the program never
  gets past MPI_Init (its own call log stays empty);
- h-dump on a truncated, corrupt, unknown-version or missing trace prints one line naming the file
  and the problem, and exits non-zero;
- so does h-replay, as a job (every rank reads the trace and they agree to stop), and also on a
  trace recorded with another rank count; no job may outlive its time limit;
- a replay that cannot go on stops: a program that is only correct because MPI buffers small
  messages (head_to_head: both ranks send first), traced as it ran, then replayed by an Open MPI
  told to buffer nothing that large, must end within --stall-limit with one line naming the call and
  the trace event, and a non-zero exit (with another MPI library this case is skipped: the knob
  that stops buffering is Open MPI's);
- a timeline (h-dump and h-replay --chrome-trace, --otf2) whose file cannot be written, or whose
  directory holds an OTF2 archive already, is one line naming it and a non-zero exit, before any
  replay.

    check_errors.py --h-trace PATH --h-dump PATH --h-replay PATH --program RING --head-to-head PROGRAM
                    [--mpirun PATH]
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from mpi_launch import is_open_mpi, mpirun_command

TIMEOUT = 120


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--h-trace", required=True)
    parser.add_argument("--h-dump", required=True)
    parser.add_argument("--h-replay", required=True)
    parser.add_argument("--program", required=True)
    parser.add_argument("--head-to-head", required=True)
    parser.add_argument("--mpirun", default=shutil.which("mpirun") or shutil.which("mpiexec"))
    args = parser.parse_args()
    # The runs below happen in a scratch directory.
    args.h_trace, args.h_dump, args.h_replay, args.program, args.head_to_head = (
        os.path.abspath(p) for p in (args.h_trace, args.h_dump, args.h_replay, args.program, args.head_to_head))
    if not args.mpirun:
        print("no mpirun here")
        return 77
    failures = []
    with tempfile.TemporaryDirectory(prefix="htrace-errors-") as scratch:
        scratch = pathlib.Path(scratch)
        base_env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
        for case, (variable, value, expected) in enumerate([
            ("MERGE_PRECISION", "abc", "MERGE_PRECISION='abc'"),
            ("MERGE_PRECISION", "101", "MERGE_PRECISION='101'"),
            ("HTRACE_BINS", "0", "HTRACE_BINS='0'"),
            ("HTRACE_FILE", "/nonexistent-htrace-dir/trace.h", "/nonexistent-htrace-dir"),
        ]):
            logs = scratch / f"log-{case}"
            logs.mkdir()
            env = dict(base_env, CALL_LOG_DIR=str(logs), HTRACE_FILE=str(scratch / "trace.h"))
            env[variable] = value
            command = mpirun_command(args.mpirun, 4, [args.h_trace, args.program, "5"])
            print(f"$ {variable}={value} {' '.join(command)}")
            run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=TIMEOUT, cwd=scratch)
            ours = [line for line in run.stderr.splitlines() if line.startswith("h-trace:")]
            print(run.stderr.strip())
            if run.returncode == 0:
                failures.append(f"{variable}={value}: the job exited 0")
            if len(ours) != 1 or expected not in ours[0]:
                failures.append(f"{variable}={value}: expected one h-trace line naming {expected!r}, got {ours}")
            if any(f.stat().st_size > 0 for f in logs.iterdir()):
                failures.append(f"{variable}={value}: the program got past MPI_Init")

        # A good trace to damage.
        trace = scratch / "good.h"
        env = dict(base_env, HTRACE_FILE=str(trace))
        subprocess.run(mpirun_command(args.mpirun, 2, [args.h_trace, args.program, "5"]), env=env,
                       capture_output=True, timeout=TIMEOUT, check=True, cwd=scratch)
        data = trace.read_bytes()
        cases = {
            "truncated.h": (data[: len(data) // 2], "truncated at byte"),
            "corrupt.h": (data[:40] + bytes([data[40] ^ 0xFF]) + data[41:], "corrupt"),
            "newer.h": (data[:16] + bytes([99]) + data[17:], "format version 99"),
            "empty.h": (b"", "not an h-trace file"),
        }
        for name, (content, expected) in cases.items():
            (scratch / name).write_bytes(content)
        cases["missing.h"] = (None, "No such file")
        for name, (_, expected) in cases.items():
            path = scratch / name
            run = subprocess.run([args.h_dump, str(path)], capture_output=True, text=True, timeout=TIMEOUT)
            print(f"$ h-dump {name}: exit {run.returncode}: {run.stderr.strip()}")
            lines = run.stderr.strip().splitlines()
            if run.returncode == 0 or run.stdout:
                failures.append(f"h-dump {name}: exit {run.returncode}, output {run.stdout[:80]!r}")
            if len(lines) != 1 or str(path) not in lines[0] or expected not in lines[0]:
                failures.append(f"h-dump {name}: expected one line naming the file and {expected!r}, got {lines}")

        # The good trace has 2 ranks: replaying it with 3 is an error too.
        replay_cases = [(name, expected, 2) for name, (_, expected) in cases.items()]
        replay_cases.append(("good.h", "recorded with 2 ranks, this job has 3", 3))
        for name, expected, ranks in replay_cases:
            path = scratch / name
            command = mpirun_command(args.mpirun, ranks, [args.h_replay, str(path)])
            try:
                run = subprocess.run(command, env=base_env, capture_output=True, text=True, timeout=TIMEOUT,
                                     cwd=scratch)
            except subprocess.TimeoutExpired:
                failures.append(f"h-replay {name} at {ranks} ranks: still running after {TIMEOUT} s")
                continue
            ours = [line for line in run.stderr.splitlines() if line.startswith("h-replay:")]
            print(f"$ h-replay {name} at {ranks} ranks: exit {run.returncode}: {ours}")
            if run.returncode == 0:
                failures.append(f"h-replay {name} at {ranks} ranks: the job exited 0")
            if len(ours) != 1 or str(path) not in ours[0] or expected not in ours[0]:
                failures.append(f"h-replay {name}: expected one line naming the file and {expected!r}, got {ours}")

        failures += timeline_errors(args, base_env, scratch, trace)
        if is_open_mpi(args.mpirun):
            failures += stalled_replay(args, base_env, scratch)
        else:
            print("(the stalled replay case needs Open MPI's btl_vader_eager_limit: skipped)")
    for failure in failures:
        print("FAIL:", failure)
    print(f"check_errors: {len(failures)} failures")
    return 1 if failures else 0


def timeline_errors(args, base_env, scratch, trace):
    """A timeline that cannot be written: one line naming it, a non-zero exit, and no replay run."""
    failures = []
    unwritable = "/nonexistent-htrace-dir/timeline.json"
    runs = {"h-dump --chrome-trace": [args.h_dump, "--chrome-trace", unwritable, str(trace)],
            "h-replay --chrome-trace": mpirun_command(args.mpirun, 2, [args.h_replay, "--chrome-trace", unwritable,
                                                                       str(trace)])}
    archive = scratch / "archive"
    made = subprocess.run([args.h_dump, "--otf2", str(archive), str(trace)], capture_output=True, text=True,
                          timeout=TIMEOUT)
    if made.returncode == 0:
        runs["h-dump --otf2 (a directory that holds an archive)"] = [args.h_dump, "--otf2", str(archive), str(trace)]
        runs["h-replay --otf2 (a directory that holds an archive)"] = mpirun_command(
            args.mpirun, 2, [args.h_replay, "--otf2", str(archive), str(trace)])
        named = {"--otf2": "already holds an OTF2 archive"}
    else:
        print(f"(h-dump --otf2: {made.stderr.strip()}: the OTF2 cases are skipped)")
        named = {}
    for name, command in runs.items():
        try:
            run = subprocess.run(command, env=base_env, capture_output=True, text=True, timeout=TIMEOUT, cwd=scratch)
        except subprocess.TimeoutExpired:
            failures.append(f"{name}: still running after {TIMEOUT} s")
            continue
        tool = name.split()[0]
        # mpirun adds its own lines about the exit status.
        ours = [line for line in run.stderr.splitlines() if line.startswith(tool + ":")]
        print(f"$ {name}: exit {run.returncode}: {ours}")
        expected = named.get("--otf2", "") if "--otf2" in name else unwritable
        if run.returncode == 0 or len(ours) != 1 or expected not in ours[0]:
            failures.append(f"{name}: expected a non-zero exit and one {tool} line naming {expected!r}, got exit "
                            f"{run.returncode} and {ours}")
        if "replay" in name and "h-replay: replay " in run.stderr:
            failures.append(f"{name}: the replay ran before the timeline's file was found unwritable")
    return failures


def stalled_replay(args, base_env, scratch):
    """Replays head_to_head where MPI does not buffer its messages: the replay must stop itself."""
    trace = scratch / "head_to_head.h"
    subprocess.run(mpirun_command(args.mpirun, 2, [args.h_trace, args.head_to_head, "2000"]),
                   env=dict(base_env, HTRACE_FILE=str(trace)), capture_output=True, timeout=TIMEOUT, check=True,
                   cwd=scratch)
    # 2000 bytes go eagerly by default (4096 is Open MPI's shared-memory limit). With both limits at
    # 56, the least it takes, a 2000-byte send waits for its receive, and both ranks send first.
    limits = {f"OMPI_MCA_btl_{btl}_{limit}": "56" for btl in ("vader", "tcp") for limit in ("eager_limit",
                                                                                          "rndv_eager_limit")}
    env = dict(base_env, **limits)
    command = mpirun_command(args.mpirun, 2, [args.h_replay, "--stall-limit", "3", str(trace)])
    print(f"$ {' '.join(f'{k}={v}' for k, v in limits.items())} {' '.join(command)}")
    try:
        run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=TIMEOUT, cwd=scratch)
    except subprocess.TimeoutExpired:
        return [f"a replay that cannot go on was still running after {TIMEOUT} s"]
    ours = [line for line in run.stderr.splitlines() if line.startswith("h-replay: rank")]
    print(f"exit {run.returncode}: {ours}")
    failures = []
    if run.returncode == 0:
        failures.append("a replay that cannot go on exited 0")
    if not ours or not all("no progress" in line and "MPI_Send" in line and "trace event MPI_Send @" in line
                           for line in ours):
        failures.append(f"a replay that cannot go on: expected a line naming MPI_Send and its trace event, got "
                        f"{run.stderr.strip()[-2000:]}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
