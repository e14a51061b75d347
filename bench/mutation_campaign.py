#!/usr/bin/env python3
"""The mutation campaign of issue 26: damaged traces, with their size field and checksum fixed up so
that they pass the integrity check, fed to every tool that reads traces.

    mutation_campaign.py TRACES --build BUILD [--mutants 10000] [--seed 26] [--report-every 10]
                         [--replay 200] [--replay-timeout 30] [--timeout 5] [--memory-mib 1024]
                         [--keep DIR] [--csv OUT]

TRACES: a directory of trace files (bench/trace_programs.py makes them from the shipped programs).
Each mutant comes from one of them, in its stored form or with its contents stored plain (so that the
mutation reaches the encoding rather than only zstd's frame), by one of: flipping bits of a byte,
bumping a variable-length integer (to 0, +-1, 2^31, 2^40, 10^15 or a random 64-bit value), splicing in
bytes of another trace (or of itself), or truncating the contents.

Each mutant goes to h-dump (text, --json, --calls, --sequence, --matrix) with a time limit (--timeout)
and an address-space limit (--memory-mib); to h-report where h-dump read it, and for every
--report-every-th mutant besides; and, for --replay mutants h-dump read, to h-replay --no-compute under
mpirun with the trace's rank count. Each run is classified:

  refused   exit status 1 and one line on stderr, "TOOL: ..." (the reader's refusal)
  read      exit status 0, nothing on stderr
  crash     a signal, another exit status, a traceback or more than one line on stderr
  hang      the time limit
  memory    an allocation refused under the memory limit (bad_alloc, MemoryError)

Prints a table of counts per tool and class, the commands, and where the mutants of each crash, hang
or memory class went (--keep). Exit status 1 if any run crashed, hung or ran out of memory.
"""
import argparse
import collections
import csv
import pathlib
import random
import resource
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "fuzz"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests" / "mpi"))
from trace_bytes import contents_start, plain, with_size_and_crc  # noqa: E402
from mpi_launch import mpirun_command, run_job  # noqa: E402

DUMP_VIEWS = {"dump": [], "json": ["--json"], "calls": ["--calls"], "sequence": ["--sequence"],
              "matrix": ["--matrix"]}
BUMPS = [0, 1, -1, 1 << 31, 1 << 40, 10 ** 15, None]


def read_varint(data, at):
    value, shift = 0, 0
    while at < len(data):
        value |= (data[at] & 0x7f) << shift
        shift += 7
        at += 1
        if not data[at - 1] & 0x80:
            return value, at
    return None, at


def varint(value):
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7f | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def mutate(data, others, rng):
    """(mutation name, damaged bytes) from a trace file's bytes."""
    start = contents_start(data)
    body = bytearray(data[start:-4])
    if len(body) < 2:
        return "none", data
    kind = rng.choice(["flip", "bump", "bump", "splice", "truncate"])
    at = rng.randrange(len(body))
    if kind == "flip":
        body[at] ^= rng.randrange(1, 256)
    elif kind == "bump":
        while at > 0 and body[at - 1] & 0x80:  # to the start of the integer the byte is in
            at -= 1
        value, end = read_varint(body, at)
        if value is None:
            return "none", data
        bump = rng.choice(BUMPS)
        new = rng.getrandbits(64) if bump is None else (value + bump if bump in (1, -1) else bump)
        body[at:end] = varint(new)
    elif kind == "splice":
        donor = rng.choice(others)
        donor_body = donor[contents_start(donor):-4]
        length = rng.randrange(1, min(len(donor_body), 256) + 1)
        first = rng.randrange(len(donor_body) - length + 1)
        replaced = rng.randrange(0, min(len(body) - at, 256) + 1)
        body[at:at + replaced] = donor_body[first:first + length]
    else:
        del body[at:]
    return kind, with_size_and_crc(data[:start] + bytes(body) + b"\0\0\0\0")


def limited(memory_mib):
    def apply():
        limit = memory_mib << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def classify(command, timeout, memory_mib):
    try:
        result = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=timeout,
                                preexec_fn=limited(memory_mib) if memory_mib else None)
    except subprocess.TimeoutExpired:
        return "hang", ""
    lines = result.stderr.strip().splitlines()
    if "bad_alloc" in result.stderr or "MemoryError" in result.stderr:
        return "memory", result.stderr
    if result.returncode == 0 and not lines:
        return "read", ""
    if result.returncode == 1 and len(lines) == 1 and "Traceback" not in result.stderr:
        return "refused", lines[0]
    return "crash", f"status {result.returncode}: {result.stderr[-2000:]}"


def replay_classify(h_replay, mpirun, trace, ranks, timeout):
    """h-replay under mpirun: mpirun adds lines of its own around a failing rank's, so a refusal is a
    non-zero status with an h-replay: line and no sign of a signal."""
    with tempfile.TemporaryDirectory(prefix="h-trace-mutant-replay-") as scratch:
        command = mpirun_command(mpirun, ranks, [str(h_replay), "--no-compute", "--stall-limit", "10", str(trace)])
        try:
            status, _, stderr = run_job(command, {}, scratch, timeout, timed_out=TimeoutError)
        except TimeoutError:
            return "hang", ""
    result = subprocess.CompletedProcess(command, status, "", stderr)
    signs = ("Segmentation", "signal", "Aborted", "core dumped", "terminate called", "Traceback")
    if any(sign in result.stderr for sign in signs):
        return "crash", result.stderr[-2000:]
    if "bad_alloc" in result.stderr:
        return "memory", next(line for line in result.stderr.splitlines() if "bad_alloc" in line)
    if result.returncode == 0:
        return "read", ""
    if "h-replay:" in result.stderr:
        return "refused", next(line for line in result.stderr.splitlines() if "h-replay:" in line)
    return "crash", f"status {result.returncode}: {result.stderr[-2000:]}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", type=pathlib.Path)
    parser.add_argument("--build", type=pathlib.Path, required=True)
    parser.add_argument("--mutants", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--report-every", type=int, default=10)
    parser.add_argument("--replay", type=int, default=200)
    parser.add_argument("--replay-timeout", type=float, default=30)
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--timeout", type=float, default=5)
    parser.add_argument("--memory-mib", type=int, default=1024)
    parser.add_argument("--keep", type=pathlib.Path, default=pathlib.Path("mutants"))
    parser.add_argument("--csv", type=pathlib.Path)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    h_dump = (args.build / "h-dump").resolve()
    h_report = pathlib.Path(__file__).resolve().parent.parent / "src" / "studies" / "h_report.py"
    h_replay = (args.build / "src" / "replay" / "h-replay").resolve()
    sources = []
    for path in sorted(args.traces.glob("*.h")):
        data = path.read_bytes()
        sources.append((path.name, data))
        sources.append(("plain-" + path.name, plain(data)))
    others = [data for _, data in sources]
    args.keep.mkdir(parents=True, exist_ok=True)
    counts = collections.defaultdict(collections.Counter)
    rows = []
    replayed = 0
    with tempfile.TemporaryDirectory(prefix="h-trace-mutants-") as scratch:
        mutant_path = pathlib.Path(scratch) / "mutant.h"
        for number in range(args.mutants):
            source, data = rng.choice(sources)
            kind, damaged = mutate(data, others, rng)
            mutant_path.write_bytes(damaged)
            results = {}
            for view, options in DUMP_VIEWS.items():
                results[view] = classify([str(h_dump), *options, str(mutant_path)], args.timeout, args.memory_mib)
            if results["dump"][0] == "read" or number % args.report_every == 0:
                results["report"] = classify([sys.executable, str(h_report), str(mutant_path), "-o",
                                              str(pathlib.Path(scratch) / "report.html"), "--h-dump", str(h_dump)],
                                             args.timeout * 4, args.memory_mib)
            if results["dump"][0] == "read" and replayed < args.replay:
                ranks = int(next(line for line in subprocess.run([str(h_dump), str(mutant_path)], capture_output=True,
                                                                  text=True, errors="replace").stdout.splitlines()
                                 if line.startswith("ranks ")).split()[1])
                if ranks <= 16:
                    replayed += 1
                    results["replay"] = replay_classify(h_replay, args.mpirun, mutant_path, ranks, args.replay_timeout)
            for tool, (verdict, detail) in results.items():
                counts[tool][verdict] += 1
                rows.append((number, source, kind, tool, verdict, detail.splitlines()[0] if detail else ""))
                if verdict in ("crash", "hang", "memory"):
                    kept = args.keep / f"{tool}-{verdict}-{number}.h"
                    shutil.copy(mutant_path, kept)
                    print(f"mutant {number} ({source}, {kind}): {tool}: {verdict}: {detail[:300]} -> {kept}",
                          flush=True)
            if (number + 1) % 500 == 0:
                print(f"{number + 1} mutants", flush=True)
    verdicts = ["refused", "read", "crash", "hang", "memory"]
    print("| tool | runs | " + " | ".join(verdicts) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in verdicts) + " |")
    for tool in list(DUMP_VIEWS) + ["report", "replay"]:
        total = sum(counts[tool].values())
        print(f"| {tool} | {total} | " + " | ".join(str(counts[tool][v]) for v in verdicts) + " |")
    refusals = collections.Counter(row[5].split(": ", 2)[-1].split(" at byte")[0][:60]
                                   for row in rows if row[3] == "dump" and row[4] == "refused")
    print("most common refusals (h-dump):")
    for message, n in refusals.most_common(12):
        print(f"  {n:6d}  {message}")
    if args.csv:
        with open(args.csv, "w", newline="") as out:
            csv.writer(out).writerows([("mutant", "source", "mutation", "tool", "verdict", "detail")] + rows)
    bad = sum(counts[tool][v] for tool in counts for v in ("crash", "hang", "memory"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
