#!/usr/bin/env python3
"""h-replay-smpi's simulation reads the trace once, for all its ranks, and refuses a trace it cannot read
in one line.

    check_shared_trace.py --smpirun PATH --h-replay-smpi PATH --h-dump PATH --platform XML --np N
                          [--timeout SECONDS]

Under SimGrid the first simulated rank decodes the trace for all of them (src/replay/shared_trace.cpp).
For a file that is not a trace, an empty one, one with a trace's magic number and size and nothing
else, and one that is missing, runs `smpirun -platform XML -np N h-replay-smpi FILE` and requires a
failing exit status and exactly one line from h-replay: the reader's error as h-dump reports it for
the same file (`h-dump: FILE: ...`, with h-replay's name). Where strace is installed, the first of
them runs under it too, and the whole simulation (smpirun and what it starts) must open the file
once, not once per rank. Exit status 0 passes, 1 fails, 77 skips (no SimGrid).
"""
import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
QUIET = ["--log=xbt_cfg.thres:warning", "--log=smpi_config.thres:warning"]
# A trace file starts with this magic number and its total size in 8 bytes (trace/trace_file.cpp):
# the third file says it is this long and holds zeros after them.
TRACE_MAGIC = b"\x89HTRACE\n"
CLAIMED_SIZE = 1000


def main():
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    parser.add_argument("--smpirun")
    parser.add_argument("--h-replay-smpi")
    parser.add_argument("--h-dump", required=True)
    parser.add_argument("--platform", required=True)
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    if not (args.smpirun and args.h_replay_smpi):
        print("check_shared_trace.py: SimGrid (smpirun, smpicxx) not found at configure time: skipped")
        return SKIP
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="h-trace-shared-trace-"))
    files = {"garbage.h": b"not a trace at all\n", "empty.h": b"",
             "header_only.h": TRACE_MAGIC + CLAIMED_SIZE.to_bytes(8, "little") + bytes(20)}
    for name, content in files.items():
        (scratch / name).write_bytes(content)
    failed = []
    for name in list(files) + ["missing.h"]:
        dump = subprocess.run([str(pathlib.Path(args.h_dump).resolve()), name], cwd=scratch, capture_output=True, text=True)
        expected = re.sub(r"^h-dump:", "h-replay:", dump.stderr.strip())
        if dump.returncode == 0 or "\n" in expected or not expected.startswith("h-replay: " + name + ": "):
            failed.append(f"{name}: h-dump does not refuse it in one line: {dump.stderr!r}")
            continue
        command = [args.smpirun, "-platform", str(pathlib.Path(args.platform).resolve()), "-np", str(args.np)] + \
            QUIET + [str(pathlib.Path(args.h_replay_smpi).resolve()), name]
        print("$", " ".join(command), flush=True)
        try:
            replay = subprocess.run(command, cwd=scratch, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            failed.append(f"{name}: no refusal within {args.timeout:g} s")
            continue
        lines = [line for line in (replay.stdout + replay.stderr).splitlines() if line.startswith("h-replay")]
        print(f"{name}: exit status {replay.returncode}, h-replay's lines: {lines}", flush=True)
        if replay.returncode == 0 or lines != [expected]:
            failed.append(f"{name}: expected a failing exit status and the one line {expected!r}, got exit status "
                          f"{replay.returncode} and {lines}")
    strace = shutil.which("strace")
    if strace:
        # Every open of the file by any process of the simulation, SimGrid's included.
        log = scratch / "strace.log"
        command = [strace, "-f", "-e", "trace=open,openat", "-o", str(log), args.smpirun, "-platform",
                   str(pathlib.Path(args.platform).resolve()), "-np", str(args.np)] + QUIET + \
            [str(pathlib.Path(args.h_replay_smpi).resolve()), "garbage.h"]
        print("$", " ".join(command), flush=True)
        subprocess.run(command, cwd=scratch, capture_output=True, timeout=args.timeout)
        opens = len(re.findall(r'open(?:at)?\(.*"garbage\.h"', log.read_text()))
        print(f"garbage.h opened {opens} times by a simulation of {args.np} ranks", flush=True)
        if opens != 1:
            failed.append(f"garbage.h was opened {opens} times, not once, by a simulation of {args.np} ranks")
    else:
        print("check_shared_trace.py: no strace: how often the file is opened is not checked")
    if failed:
        print("FAIL:\n" + "\n".join(failed) + f"\n(scratch directory kept: {scratch})")
        return 1
    shutil.rmtree(scratch, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
