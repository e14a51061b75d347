#!/usr/bin/env python3
"""Issue 26: replay's I/O sandbox could be walked out of: a symbolic link planted at NAME.replayed was
followed by MPI-IO's open, and hard links planted at the names replay writes were written through.

Traces PROGRAM (2 ranks) in a directory of its own, and takes the names of the files it made there
(and beside it, where it escapes with `../`) as the names its trace uses. Then prepares a sandbox
where, at each such name (at the name flattened, where a directory on the way is a planted link to a
directory outside) and at NAME.replayed, it plants symbolic links and hard links to files outside,
in turns:

    NAME          NAME.replayed   replay's file
    hard link     -               NAME.replayed, of the program's size
    symlink       symlink         none: the open is refused
    symlink       -               NAME.replayed, of the program's size
    hard link     hard link       none: the open is refused

and runs `h-replay --io-dir SANDBOX`. The replay must end with status 0, say in one line how many
opens it refused, make the files where the table says, and change nothing outside the sandbox: every
file outside (the planted links' targets, the program's own files, those it wrote beside its
directory through `../`) keeps its content (SHA-256), size and modification time, and no file
appears or goes.

    check_sandbox.py --h-trace PATH --h-replay PATH [--mpirun PATH] -- PROGRAM [ARGS...]
"""
import argparse
import hashlib
import json
import os
import pathlib
import shutil
import sys
import tempfile

from mpi_launch import mpirun_command, run_job

TIMEOUT = 120
RANKS = 2
# What is planted at NAME and at NAME.replayed, in turns, and whether replay may use NAME.replayed.
PLANTS = [("hard", None, True), ("symbolic", "symbolic", False), ("symbolic", None, True), ("hard", "hard", False)]


def snapshot(root, leave_out):
    """{path: (SHA-256, size, mtime)} of every regular file under `root`, but those in `leave_out`
    and under its directories."""
    state = {}
    for path in root.rglob("*"):
        if any(path == out or out in path.parents for out in leave_out) or path.is_symlink() or not path.is_file():
            continue
        stat = path.stat()
        state[str(path.relative_to(root))] = (hashlib.sha256(path.read_bytes()).hexdigest(), stat.st_size,
                                              stat.st_mtime_ns)
    return state


def plant(sandbox, outside, names):
    """Plants links in `sandbox` at `names` (the trace's, relative). Returns {name: where replay's file
    must be, relative to the sandbox, or None where its open must be refused}."""
    expected = {}
    for index, name in enumerate(sorted(names)):
        parts = name.split("/")
        if len(parts) > 1:
            # A directory on the way is a link to a directory outside, which holds a file of that name.
            target_dir = outside / f"dir{index}"
            inner = target_dir.joinpath(*parts[1:])
            inner.parent.mkdir(parents=True)
            inner.write_text(f"outside, reached through the directory {parts[0]}\n")
            (sandbox / parts[0]).symlink_to(target_dir, target_is_directory=True)
            name = "_".join(parts)  # where replay goes instead, at the sandbox's top
        at_name, at_replayed, usable = PLANTS[index % len(PLANTS)]
        for suffix, kind in (("", at_name), (".replayed", at_replayed)):
            if kind is None:
                continue
            target = outside / f"file{index}{suffix}"
            target.write_text(f"outside: the target of a {kind} link at {name}{suffix}\n")
            link = sandbox / (name + suffix)
            if kind == "symbolic":
                link.symlink_to(target)
            else:
                os.link(target, link)
        expected["/".join(parts)] = name + ".replayed" if usable else None
    return expected


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--h-trace", required=True)
    parser.add_argument("--h-replay", required=True)
    parser.add_argument("--mpirun", default=shutil.which("mpirun") or shutil.which("mpiexec"))
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    if not args.mpirun:
        print("no mpirun here")
        return 77
    failures = []
    with tempfile.TemporaryDirectory(prefix="htrace-sandbox-") as scratch:
        scratch = pathlib.Path(scratch)
        run_dir, outside, sandbox = scratch / "run", scratch / "outside", scratch / "sandbox"
        for directory in (run_dir, outside, sandbox):
            directory.mkdir()
        trace = scratch / "trace.h"
        program = [os.path.abspath(args.command[0])] + args.command[1:]
        status, stdout, stderr = run_job(mpirun_command(args.mpirun, RANKS, [os.path.abspath(args.h_trace)] + program),
                                         {"HTRACE_FILE": str(trace)}, run_dir, TIMEOUT)
        if status != 0:
            print(stdout + stderr)
            print(f"FAIL: the traced program exited {status}")
            return 1
        # The program's files: in its directory, and beside it as '../run.*', which the trace names
        # with '..' and replay keeps inside its sandbox, without the '..'.
        program_sizes = {str(p.relative_to(run_dir)): p.stat().st_size for p in run_dir.rglob("*") if p.is_file()}
        program_sizes.update({p.name: p.stat().st_size for p in scratch.glob(run_dir.name + ".*")})
        print("the program's files:", program_sizes)
        expected = plant(sandbox, outside, program_sizes)
        print("replay's files (None: refused):", expected)
        report = scratch / "replay.json"
        before = snapshot(scratch, [sandbox, report])

        status, stdout, stderr = run_job(
            mpirun_command(args.mpirun, RANKS, [os.path.abspath(args.h_replay), "--io-dir", str(sandbox), "--keep-io",
                                                "--report-json", str(report), str(trace)]), {}, scratch, TIMEOUT)
        print(stdout + stderr, flush=True)
        if status != 0:
            failures.append(f"the replay exited {status}")

        after = snapshot(scratch, [sandbox, report])
        for path in sorted(set(before) | set(after)):
            if before.get(path) != after.get(path):
                failures.append(f"outside the sandbox, {path} changed: before {before.get(path)}, after {after.get(path)}")

        refused_names = [name for name, place in expected.items() if place is None]
        lines = [line for line in stderr.splitlines() if "file opens refused" in line]
        if refused_names and (len(lines) != 1 or not any(name.replace("/", "_") in lines[0] for name in refused_names)):
            failures.append(f"expected one line of refused opens naming one of {refused_names}, got {lines}")
        if report.exists():
            refused = json.loads(report.read_text())["io"].get("refused")
            if refused is None or bool(refused) != bool(refused_names):
                failures.append(f"the report counts {refused} refused opens, the sandbox made {len(refused_names)} "
                                f"names unusable")
        for name, place in expected.items():
            if place is None:
                continue
            made = sandbox / place
            if made.is_symlink() or not made.is_file() or made.stat().st_nlink != 1:
                failures.append(f"{name}: replay's file {place} is not a regular file of one name in the sandbox")
            elif made.stat().st_size != program_sizes[name]:
                failures.append(f"{name}: replay made {place} of {made.stat().st_size} bytes, the program "
                                f"{program_sizes[name]}")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
