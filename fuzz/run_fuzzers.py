#!/usr/bin/env python3
"""Runs the libFuzzer harnesses of a fuzzing build (fuzz/meson.build) on a seed corpus, each for a
time or a number of inputs, and sums up what libFuzzer said (issue 26).

    run_fuzzers.py FUZZ_BUILD SEEDS (--seconds S | --runs N) [--work DIR] [--only NAME,...] [--jobs J]
                   [--parallel P]

FUZZ_BUILD: a build made with -Dfuzz=enabled (its fuzz/fuzz-* executables). SEEDS: a directory of trace
files (bench/trace_programs.py makes them); each is taken as it is and with its contents stored plain
(WORK/seeds), so that mutations reach the encoding, not only zstd's, where it is at most MAX_LEN
bytes. Each harness starts from those and its own corpus in WORK/corpus-NAME (kept between runs),
with a time limit of 1 s and a memory limit of 256 MiB per input; a crash, a timeout, a leak or memory
beyond the limit writes WORK/NAME-*/ and fails the run. A timeout is run again alone: one that then
takes under the limit (the machine was busy) is reported, not counted as a failure. --jobs runs one
harness in libFuzzer's fork mode on J processes; --parallel runs P harnesses at once instead, each as
one process, so that every line below keeps libFuzzer's own counts.
Prints one line per harness (inputs run, coverage: libFuzzer's cov and ft, corpus size, peak memory,
time) and
exits non-zero if any harness found a problem.
"""
import argparse
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys
import time

from trace_bytes import plain

# Inputs of up to 8 KiB (the seeds that are longer are left out): most shipped programs' traces are a
# few hundred bytes to a few KiB, and longer inputs only make each run slower.
MAX_LEN = 8192
HARNESSES = ["read", "text", "json", "calls", "sequence", "matrix", "schedule"]
# libFuzzer's status lines: "#123456 DONE   cov: 1234 ft: 5678 corp: 90/12Kb ..."
STATUS = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/")


def alone_in_time(executable, path, env):
    """Whether the input that timed out runs in time when nothing else runs beside it (3 tries)."""
    for _ in range(3):
        result = subprocess.run([str(executable), "-timeout=1", path], capture_output=True, env=env)
        if result.returncode != 0:
            return False
    return True


def run(harness, executable, seeds, work, limit, jobs):
    corpus = work / f"corpus-{harness}"
    corpus.mkdir(parents=True, exist_ok=True)
    artifacts = work / f"{harness}-"
    command = [str(executable), "-timeout=1", "-rss_limit_mb=256", "-malloc_limit_mb=256", f"-max_len={MAX_LEN}",
               "-print_final_stats=1", f"-artifact_prefix={artifacts}", *limit, str(corpus), str(seeds)]
    if jobs > 1:
        command[1:1] = [f"-fork={jobs}", "-ignore_crashes=0", "-ignore_timeouts=0", "-ignore_ooms=0"]
    # AddressSanitizer keeps 256 MiB of freed memory by default, which -rss_limit_mb would count against
    # whichever input came last; the limit is meant for what one input holds.
    env = dict(os.environ, ASAN_OPTIONS="quarantine_size_mb=16:" + os.environ.get("ASAN_OPTIONS", ""))
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, errors="replace", env=env)
    seconds = time.monotonic() - started
    runs = cov = ft = corp = rss = 0
    for line in result.stderr.splitlines():
        if match := STATUS.match(line):
            runs, cov, ft, corp = (int(group) for group in match.groups())
        elif line.startswith("stat::number_of_executed_units:"):
            runs = int(line.split(":")[-1])
        elif line.startswith("stat::peak_rss_mb:"):
            rss = int(line.split(":")[-1])
    found = sorted(str(path) for path in work.glob(f"{harness}-*"))
    slow = [path for path in found if "/" + harness + "-timeout-" in path and alone_in_time(executable, path, env)]
    for path in slow:
        print(f"{harness}: {path} timed out, but runs alone in under 1 s: the machine was busy", flush=True)
        os.rename(path, path.replace("-timeout-", "-busy-"))
    found = [path for path in found if path not in slow]
    failed = (result.returncode != 0 and not slow) or bool(found)
    print(f"{harness}: {runs} inputs, cov {cov}, ft {ft}, corpus {corp}, peak {rss} MiB, {seconds:.0f} s"
          + (f", FAILED (status {result.returncode}): {' '.join(found)}" if failed else ""), flush=True)
    if failed:
        print("\n".join(result.stderr.splitlines()[-60:]), file=sys.stderr)
    return not failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", type=pathlib.Path)
    parser.add_argument("seeds", type=pathlib.Path)
    limit = parser.add_mutually_exclusive_group(required=True)
    limit.add_argument("--seconds", type=int)
    limit.add_argument("--runs", type=int)
    parser.add_argument("--work", type=pathlib.Path, default=pathlib.Path("fuzz-work"))
    parser.add_argument("--only", default=",".join(HARNESSES))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--parallel", type=int, default=1)
    args = parser.parse_args()
    limit = [f"-max_total_time={args.seconds}"] if args.seconds else [f"-runs={args.runs}"]
    seeds = args.work / "seeds"
    seeds.mkdir(parents=True, exist_ok=True)
    for trace in sorted(args.seeds.iterdir()):
        data = trace.read_bytes()
        for name, form in ((trace.name, data), (f"plain-{trace.name}", plain(data))):
            if len(form) <= MAX_LEN:
                (seeds / name).write_bytes(form)
    executables = {harness: args.build / "fuzz" / f"fuzz-{harness}" for harness in args.only.split(",")}
    for executable in executables.values():
        if not executable.exists():
            sys.exit(f"run_fuzzers.py: {executable} is not built")
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        results = list(pool.map(lambda harness: run(harness, executables[harness], seeds, args.work, limit, args.jobs),
                                executables))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
