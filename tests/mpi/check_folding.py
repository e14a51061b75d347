#!/usr/bin/env python3
"""Checks that a program's repeated cycle folded into one loop, however long the cycle's body.

    check_folding.py --h-dump PATH --trace TRACE --output FILE

The program (multigrid) prints how many cycles it ran and how many MPI calls each cycle made
("cycles N ... calls per cycle C", the same C every cycle). The trace must hold a top-level loop of
exactly N iterations, and fewer events (each counted once, nested ones included) than two cycles'
calls: a trace that left the cycles unfolded holds N times C. Exit status 0 passes, 1 fails.
"""
import argparse
import json
import re
import subprocess
import sys


def events(nodes):
    return sum(events(node["body"]) if "loop" in node else 1 for node in nodes)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--h-dump", required=True)
    parser.add_argument("--trace", required=True)
    parser.add_argument("--output", required=True, help="the program's stdout")
    args = parser.parse_args()
    said = re.search(r"cycles (\d+), .*calls per cycle (-?\d+)", open(args.output).read())
    if not said or int(said[2]) <= 0:
        print("check_folding.py: the program did not say its cycles and calls per cycle (or its cycles differed)")
        return 1
    cycles, per_cycle = int(said[1]), int(said[2])
    trace = json.loads(subprocess.run([args.h_dump, "--json", args.trace], capture_output=True, text=True,
                                      check=True).stdout)
    loops = [node["loop"] for node in trace["body"] if "loop" in node]
    held = events(trace["body"])
    print(f"program: {cycles} cycles of {per_cycle} calls; trace: top-level loops {loops}, {held} events")
    failures = []
    if cycles not in loops:
        failures.append(f"no top-level loop of {cycles} iterations")
    if held >= 2 * per_cycle:
        failures.append(f"{held} events: at least two cycles' worth ({2 * per_cycle}), the cycles did not fold")
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
