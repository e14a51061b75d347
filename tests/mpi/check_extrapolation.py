#!/usr/bin/env python3
"""Extrapolation against the program itself: traces a program at a few rank counts and at a larger
one, has h-extrap make the larger one's trace from the smaller ones, and compares it with the trace
the program really made there: the same events in the same order (operation, call site, ranks), and
every value the same for every rank where the real trace's value is exact, within --tolerance where
either side is drawn from a histogram (means; loop counts likewise). Computation times are left out:
they are the machine's, not the program's, and on an oversubscribed machine mostly noise.

  check_extrapolation.py --h-trace H --h-dump D --h-extrap X --mpirun M --inputs 4,8,16 --target 64
      [--precision P] -- PROGRAM ARGS...
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

from check_calls import CannotCompare
from check_precision import Value, parse_rank_list_text
from mpi_launch import launcher_lost_a_finalized_rank, mpirun_command, run_job


def dump(h_dump, trace):
    done = subprocess.run([h_dump, "--json", str(trace)], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise CannotCompare(f"h-dump {trace}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def mean_of(value, ranks):
    """The mean over `ranks` of an exact or per-rank value, or a histogram's mean."""
    if value.histogram is not None:
        return value.histogram["mean"]
    values = [value.for_rank(rank) for rank in ranks]
    if any(v is None for v in values):
        raise CannotCompare(f"{value.where}: some ranks have no value")
    return sum(values) / len(values)


class Comparison:
    def __init__(self, tolerance):
        self.tolerance = tolerance
        self.problems = []
        self.structural = 0  # problems with the events themselves, not their values
        self.values = 0
        self.worst = 0.0

    def value(self, traced, extrapolated, ranks, where):
        self.values += 1
        if traced.histogram is None and extrapolated.histogram is None:
            for rank in sorted(ranks):
                want, got = traced.for_rank(rank), extrapolated.for_rank(rank)
                if want != got:
                    if want is not None and got is not None:
                        self.worst = max(self.worst, abs(got - want) / max(abs(want), 1))
                    self.problems.append(f"{where}: rank {rank} has {got}, the program's trace {want}")
                    return
            return
        want, got = mean_of(traced, ranks), mean_of(extrapolated, ranks)
        error = abs(got - want) / max(abs(want), 1e-300)
        self.worst = max(self.worst, error)
        if error > self.tolerance:
            self.problems.append(f"{where}: mean {got:g}, the program's trace {want:g} ({100 * error:.1f}% off)")

    def sequence(self, traced, extrapolated, where):
        if len(traced) != len(extrapolated):
            self.problems.append(f"{where}: {len(extrapolated)} nodes, the program's trace {len(traced)}")
            self.structural += 1
            return
        for index, (t, x) in enumerate(zip(traced, extrapolated)):
            here = f"{where}[{index}]"
            if ("loop" in t) != ("loop" in x):
                self.problems.append(f"{here}: a loop on one side only")
                self.structural += 1
                continue
            if "loop" in t:
                ranks = self.participants(t["body"], here)
                self.value(Value(t["loop"], here), Value(x["loop"], here), ranks, here + " iterations")
                self.sequence(t["body"], x["body"], here)
                continue
            here += " " + t["op"]
            if (t["op"], t["signature"]) != (x["op"], x["signature"]):
                self.problems.append(f"{here}: {x['op']} @{x['signature']} where the program's trace has "
                                     f"{t['op']} @{t['signature']}")
                self.structural += 1
                continue
            ranks = parse_rank_list_text(t["ranks"], here)
            if parse_rank_list_text(x["ranks"], here) != ranks:
                self.problems.append(f"{here}: ranks {x['ranks']}, the program's trace {t['ranks']}")
                self.structural += 1
                continue
            if set(t["params"]) != set(x["params"]):
                self.problems.append(f"{here}: parameters {sorted(x['params'])}, the program's {sorted(t['params'])}")
                self.structural += 1
                continue
            for role in t["params"]:
                self.value(Value(t["params"][role], here), Value(x["params"][role], here), ranks, f"{here} {role}")

    @staticmethod
    def participants(body, where):
        ranks = set()
        for node in body:
            ranks |= Comparison.participants(node["body"], where) if "loop" in node else \
                parse_rank_list_text(node["ranks"], where)
        return ranks


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for tool in ("h-trace", "h-dump", "h-extrap", "mpirun"):
        parser.add_argument("--" + tool, required=True)
    parser.add_argument("--inputs", required=True, help="rank counts to extrapolate from, comma-separated")
    parser.add_argument("--target", type=int, required=True)
    parser.add_argument("--precision", default="100")
    parser.add_argument("--tolerance", type=float, default=0.05)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("program", nargs="+")
    args = parser.parse_args()
    # Meson gives paths relative to the build directory; the jobs run in a scratch directory.
    for tool in ("h_trace", "h_dump", "h_extrap"):
        setattr(args, tool, os.path.abspath(getattr(args, tool)))
    if os.path.exists(args.program[0]):
        args.program[0] = os.path.abspath(args.program[0])

    with tempfile.TemporaryDirectory(prefix="h-trace-extrap-") as scratch:
        scratch = pathlib.Path(scratch)
        counts = [int(n) for n in args.inputs.split(",")] + [args.target]
        traces = {}
        for ranks in counts:
            traces[ranks] = scratch / f"trace-{ranks}.h"
            for _ in range(3):
                status, _, stderr = run_job(mpirun_command(args.mpirun, ranks, [args.h_trace] + args.program),
                                            {"HTRACE_FILE": str(traces[ranks]), "MERGE_PRECISION": args.precision},
                                            scratch, args.timeout)
                if not launcher_lost_a_finalized_rank(status, stderr):
                    break
                print(f"the traced run at {ranks} ranks: mpirun lost a finalized rank (Open MPI); run again")
            if status != 0:
                print(f"FAIL: the traced run at {ranks} ranks exited {status}:\n{stderr}")
                return 1
        extrapolated = scratch / f"extrapolated-{args.target}.h"
        inputs = [str(traces[n]) for n in counts[:-1]]
        command = [args.h_extrap] + inputs + ["--ranks", str(args.target), "-o", str(extrapolated)]
        print("$", " ".join(command), flush=True)
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
        print(done.stderr, end="")
        if done.returncode != 0:
            print(f"FAIL: h-extrap exited {done.returncode}")
            return 1
        try:
            traced, made = dump(args.h_dump, traces[args.target]), dump(args.h_dump, extrapolated)
            if not made["extrapolation"] or not made["extrapolation"][0].startswith("from "):
                print("FAIL: the extrapolated trace's header does not say where it came from")
                return 1
            comparison = Comparison(args.tolerance)
            comparison.sequence(traced["body"], made["body"], "body")
        except CannotCompare as error:
            print(f"FAIL: cannot compare: {error}")
            return 1
        print(f"{comparison.values} values compared; largest relative error {100 * comparison.worst:.2f}%")
        if comparison.problems:
            print(f"FAIL: the extrapolated trace differs from the program's at {args.target} ranks "
                  f"({len(comparison.problems)} differences):")
            for problem in comparison.problems[:20]:
                print("  " + problem)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
