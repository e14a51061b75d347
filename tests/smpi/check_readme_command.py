#!/usr/bin/env python3
"""The README's h-replay-smpi commands work as typed after `meson install`, the install's bin directory
on PATH and nothing else: no h-replay-smpi in the directory they run in, no path to it typed.

    check_readme_command.py --readme README.md --platforms DIR --meson PATH --build-root DIR
                            --h-trace PATH [--smpirun PATH --h-replay-smpi PATH] [--mpirun PATH]
                            [--timeout SECONDS] [--keep] -- PROGRAM ARGS...

1. Takes every line of the README's command blocks that runs h-replay-smpi under smpirun (at least
   one), and the rank count each gives with -np.
2. Installs the build into a staging directory (`meson install --destdir`), and checks that the
   installed h-replay-smpi's run path names its library's installed directory, where the staged
   copy stands in for it (LD_LIBRARY_PATH, as staging moves the install away from its prefix).
3. Per rank count, traces PROGRAM (the stencil) with the real MPI into trace.h in a scratch
   directory, beside a copy of the platforms (the README names platforms/cluster.xml).
4. Runs each line there with `sh -c`, the staged bin directory first on PATH, and requires exit
   status 0 and h-replay's report; then runs the same line with the build's h-replay-smpi given by
   its absolute path instead, which SMPI has always loaded, and requires the same simulated replay
   time (simulation is deterministic).

Exit status 0 passes, 1 fails, 77 skips (no SimGrid, meson or mpirun), as Meson reads them. The
scratch directory is kept after a failure.
"""

import argparse
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "mpi"))
from mpi_launch import mpirun_command  # noqa: E402
from run_traced import TestFailure, run, run_in_scratch  # noqa: E402

SKIP = 77
PROGRAM_NAME = "h-replay-smpi"
# h-replay's first line on rank 0's stderr: the simulated replay time.
REPLAY_LINE = re.compile(r"^h-replay: replay ([0-9.eE+-]+) s, traced .*$", re.MULTILINE)
RANKS = re.compile(r"(?:^|\s)-np\s+([0-9]+)(?:\s|$)")
# The shell word that names the program: a command substitution that finds it, or a path to it.
PROGRAM_WORD = re.compile(r'"?\$\([^)]*' + PROGRAM_NAME + r'[^)]*\)"?|\S*' + PROGRAM_NAME + r'\S*')


def parse_arguments(argv):
    if "--" not in argv:
        sys.exit("check_readme_command.py: put the program and its arguments after '--'")
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    if not command:
        sys.exit("check_readme_command.py: no program after '--'")
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    parser.add_argument("--readme", required=True)
    parser.add_argument("--platforms", required=True, help="the source tree's platforms directory")
    parser.add_argument("--meson", help="meson, to install the build (absent: skipped)")
    parser.add_argument("--build-root", required=True)
    parser.add_argument("--h-trace", required=True, help="the h-trace launcher")
    parser.add_argument("--smpirun", help="SimGrid's smpirun (absent: skipped)")
    parser.add_argument("--h-replay-smpi", help="the build's h-replay-smpi (absent: skipped)")
    parser.add_argument("--mpirun", help="mpirun to trace with (default: mpirun or mpiexec from PATH)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds each run may take (default 120)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory even after a pass")
    args = parser.parse_args(options)
    args.command = [os.path.abspath(command[0])] + command[1:]
    return args


def readme_commands(readme):
    """The lines of the README's ``` blocks that run h-replay-smpi under smpirun, without comments."""
    commands = []
    in_block = False
    for line in pathlib.Path(readme).read_text().splitlines():
        if line.startswith("```"):
            in_block = not in_block
            continue
        command = line.split(" #")[0].strip()
        if in_block and command.startswith("smpirun ") and PROGRAM_NAME in command:
            commands.append(command)
    return commands


def install(args, staging):
    """Installs the build under `staging`; returns the staged bin directory and h-replay-smpi's library's."""
    status, stdout, stderr = run([args.meson, "install", "-C", args.build_root, "--no-rebuild", "--quiet",
                                  "--destdir", str(staging)], {}, None, args.timeout)
    if status != 0:
        raise TestFailure(f"meson install failed (exit status {status})\nstdout:\n{stdout}\nstderr:\n{stderr}")
    installed = staging.rglob(PROGRAM_NAME)
    program = next((path for path in installed if path.parent.name == "bin"), None)
    library = next(staging.rglob("libhtrace_replay_smpi.so"), None)
    if program is None or library is None:
        raise TestFailure(f"the install holds no bin/{PROGRAM_NAME} or no libhtrace_replay_smpi.so")
    # The run path the installed program carries must name where the library is installed: its staged
    # directory with the staging directory taken off.
    dynamic = subprocess.run(["readelf", "-d", str(program)], capture_output=True, text=True).stdout
    expected = "/" + str(library.parent.relative_to(staging))
    run_path = re.search(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(.*)\]", dynamic)
    if run_path is None or expected not in run_path[1].split(":"):
        raise TestFailure(f"the installed {PROGRAM_NAME}'s run path is "
                          f"{run_path[1] if run_path else 'missing'}, not {expected}")
    return program.parent, library.parent


def trace(args, mpirun, directory, ranks):
    command = mpirun_command(mpirun, ranks, [os.path.abspath(args.h_trace)] + args.command)
    status, stdout, stderr = run(command, {"HTRACE_FILE": str(directory / "trace.h"), "MERGE_PRECISION": "100"},
                                 directory, args.timeout)
    if status != 0 or not (directory / "trace.h").is_file():
        raise TestFailure(f"tracing failed (exit status {status})\nstdout:\n{stdout}\nstderr:\n{stderr}")


def replay_time(command, env, directory, timeout):
    status, stdout, stderr = run(["sh", "-c", command], env, directory, timeout)
    times = REPLAY_LINE.findall(stderr)
    if status != 0 or len(times) != 1:
        raise TestFailure(f"`{command}` failed (exit status {status}, {len(times)} replay lines)\n"
                          f"stdout:\n{stdout}\nstderr:\n{stderr}")
    return times[0]


def run_case(args, mpirun, commands, scratch):
    bin_dir, library_dir = install(args, scratch / "staging")
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "LD_LIBRARY_PATH": f"{library_dir}{os.pathsep}{os.environ.get('LD_LIBRARY_PATH', '')}".rstrip(os.pathsep)}
    # smpirun is found where it was at configure time, as a user's PATH would find it.
    env["PATH"] += os.pathsep + str(pathlib.Path(args.smpirun).parent)
    for ranks in sorted({int(RANKS.search(command)[1]) for command in commands}):
        directory = scratch / f"np{ranks}"
        directory.mkdir()
        shutil.copytree(args.platforms, directory / "platforms")
        trace(args, mpirun, directory, ranks)
        for command in commands:
            if int(RANKS.search(command)[1]) != ranks:
                continue
            if (directory / PROGRAM_NAME).exists():
                raise TestFailure(f"{PROGRAM_NAME} is in the directory the command runs in")
            as_typed = replay_time(command, env, directory, args.timeout)
            by_path = PROGRAM_WORD.sub(shlex.quote(os.path.abspath(args.h_replay_smpi)), command, count=1)
            expected = replay_time(by_path, {}, directory, args.timeout)
            print(f"{command}\n  replay {as_typed} s; by the build's path: {expected} s", flush=True)
            if as_typed != expected:
                raise TestFailure(f"`{command}` gave a replay of {as_typed} s, the build's {PROGRAM_NAME} "
                                  f"{expected} s")


def main():
    args = parse_arguments(sys.argv[1:])
    if not (args.smpirun and args.h_replay_smpi):
        print("check_readme_command.py: SimGrid (smpirun, smpicxx) not found at configure time: skipped")
        return SKIP
    if not args.meson:
        print("check_readme_command.py: meson not found at configure time: skipped")
        return SKIP
    mpirun = args.mpirun or shutil.which("mpirun") or shutil.which("mpiexec")
    if mpirun is None:
        print("check_readme_command.py: no mpirun or mpiexec on PATH: skipped")
        return SKIP
    commands = readme_commands(args.readme)
    if not commands or any(RANKS.search(command) is None for command in commands):
        print(f"FAIL: the README shows no smpirun command of {PROGRAM_NAME} with -np: {commands}")
        return 1
    return run_in_scratch("h-trace-readme-", args.keep, lambda scratch: run_case(args, mpirun, commands, scratch))


if __name__ == "__main__":
    sys.exit(main())
