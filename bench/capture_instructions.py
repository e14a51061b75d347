#!/usr/bin/env python3
"""Issue 27: what the tracer runs per MPI call of deep-stacks, counted by callgrind (not timed).

Runs one rank of `deep-stacks DEPTH 256 N LANGUAGE` traced (LD_PRELOAD of libhtrace.so) under
callgrind with N and 2N passes and divides the difference by the difference in calls: the marginal
cost of a call, which start-up and MPI_Finalize (the merge, the trace's compression) leave out.
Per row it prints the instructions run in libhtrace per call, and with --cache the simulated
first-level misses (instruction, data) and mispredicted conditional branches in libhtrace per
call, and the distinct cache lines and 4 KiB pages of libhtrace code that the extra passes ran
(instructions run at least once per pass): what a call pays for once the kernel or the
application's own code has evicted the tracer.

    capture_instructions.py [--build DIR] [--library LIBHTRACE] [--depths 5,40,60]
                            [--languages c,cxx,fortran] [--passes N] [--cache]
"""
import argparse
import collections
import os
import pathlib
import re
import subprocess
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
NAME = re.compile(r"^(c?)(ob|fl|fi|fe|fn)=(?:\((\d+)\))?\s*(.*)$")


def costs(path, library):
    """Per instruction address of `library`'s object: its events (Ir first), self cost only."""
    names, obj, position, skip, events = {}, None, 0, False, None
    by_address = collections.defaultdict(lambda: None)
    with open(path) as lines:
        for line in lines:
            if line.startswith("events:"):
                events = line.split()[1:]
                continue
            if match := NAME.match(line.rstrip("\n")):
                callee, kind, index, name = match.groups()
                if index is not None:
                    if name:
                        names[(kind, index)] = name
                    name = names.get((kind, index), name)
                if kind == "ob" and not callee:
                    obj = name
                continue
            if line.startswith("calls="):
                skip = True  # the next line is the call's inclusive cost
                continue
            if line[:1] not in "0123456789+-*":
                continue
            fields = line.split()
            where = fields[0]
            if where.startswith("0x"):
                position = int(where, 16)
            elif where[0] in "+-":
                step = int(where[1:], 0)
                position += step if where[0] == "+" else -step
            if skip:
                skip = False
                continue
            if obj is None or library not in obj:
                continue
            values = [int(v) for v in fields[2:]]  # after the address and the line
            total = by_address[position] or [0] * len(events)
            for i, v in enumerate(values):
                total[i] += v
            by_address[position] = total
    return events, by_address


def run(args, depth, language, passes, scratch):
    out = pathlib.Path(scratch) / f"callgrind.{passes}"
    tool = ["valgrind", "--tool=callgrind", "--dump-instr=yes", f"--callgrind-out-file={out}"]
    if args.cache:
        tool += ["--cache-sim=yes", "--branch-sim=yes"]
    env = dict(os.environ, LD_PRELOAD=args.library, HTRACE_FILE=str(pathlib.Path(scratch) / "trace.h"),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    command = tool + [str(pathlib.Path(args.build) / "bench/deep-stacks"), str(depth), "256", str(passes), language]
    done = subprocess.run(command, env=env, cwd=scratch, capture_output=True, text=True, check=True)
    calls = int(re.search(r"calls_per_rank (\d+)", done.stdout)[1])
    return calls, costs(out, "libhtrace")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--library", help="the libhtrace.so to trace with (default: the build's)")
    parser.add_argument("--depths", default="5,40,60")
    parser.add_argument("--languages", default="c,cxx,fortran")
    parser.add_argument("--passes", type=int, default=100, help="N: the runs make N and 2N passes")
    parser.add_argument("--cache", action="store_true", help="simulate caches and branches too")
    args = parser.parse_args()
    args.build = str(pathlib.Path(args.build).resolve())  # the runs work in a scratch directory
    args.library = str(pathlib.Path(args.library or pathlib.Path(args.build) / "src/capture/libhtrace.so").resolve())
    header = "| language | depth | instructions per call in libhtrace |"
    if args.cache:
        header += " I1 misses | D1 misses | mispredicted branches | code lines, pages per pass |"
    print(header)
    print("|" + " --- |" * (header.count("|") - 1))
    for language in args.languages.split(","):
        for depth in (int(d) for d in args.depths.split(",")):
            with tempfile.TemporaryDirectory() as scratch:
                calls_n, (events, once) = run(args, depth, language, args.passes, scratch)
                calls_2n, (_, twice) = run(args, depth, language, 2 * args.passes, scratch)
            extra_calls = calls_2n - calls_n
            per_call = [0.0] * len(events)
            ran = []
            for address, values in twice.items():
                before = once.get(address) or [0] * len(events)
                for i, v in enumerate(values):
                    per_call[i] += (v - before[i]) / extra_calls
                if values[0] - before[0] >= args.passes:  # at least once per extra pass
                    ran.append(address)
            row = f"| {language} | {depth} | {per_call[events.index('Ir')]:.0f} |"
            if args.cache:
                pick = [events.index(e) for e in ("I1mr", "D1mr", "Bcm")]
                row += "".join(f" {per_call[i]:.1f} |" for i in pick)
                row += f" {len({a >> 6 for a in ran})}, {len({a >> 12 for a in ran})} |"
            print(row, flush=True)


if __name__ == "__main__":
    main()
