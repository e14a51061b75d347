#!/usr/bin/env python3
"""Thousands of ranks on one machine (issue 28): shipped programs traced under SimGrid at many rank
counts, with trace size, the merge's time, memory, and the replay of each trace.

    smpi_scale.py BUILD [--ranks 64,256,1024,4096] [--programs stencil,amr,...] [--precisions 100,0]
                  [--platform platforms/cluster.xml] [--privatization mmap|dlopen] [--no-replay]
                  [--host-time] [--keep-traces DIR] [--timeout SECONDS] [--csv FILE]

BUILD is a build directory with libhtrace-smpi.a and h-replay-smpi. Each program is compiled twice
with smpicc into a scratch directory: linked whole with the tracer (its debug information stripped,
since SimGrid copies the program for every simulated rank), and with tests/smpi/job_timer.c. Per
program, rank count and precision:

- traced: `smpirun -np N PROGRAM` with MERGE_PRECISION, communication only (`smpi/simulate-computation:no`),
  so the merge's simulated time at MPI_Finalize is that of its messages over the platform, the same
  on every run. With --host-time, host time between MPI calls counts as simulated computation at the
  platform's host speed (1 Gflop per host second), the merge's own work included; it then varies with
  the host's load, and the simulation takes twice as long. The tracer prints the trace's bytes and
  the merge's host and simulated time; `/usr/bin/time` gives the simulation's wall time and peak
  resident set.
- untraced: the job_timer build, communication only (`smpi/simulate-computation:no`, `smpi/test:0`,
  as tests/smpi/check_fidelity.py runs it): its simulated time and peak resident set. The tracer's
  memory per simulated rank is the traced run's peak minus this one's, over N.
- replay: `h-replay-smpi --no-compute` of the trace, as check_fidelity.py runs it: its simulated time
  against the untraced run's, its wall time and peak resident set.

Every run uses SimGrid's privatization --privatization (default mmap: one copy of the program's code
for all ranks, a data segment each; dlopen copies the whole program per rank, about 1.4 MB of resident
code each with the tracer linked in). Prints one CSV row per case (also to --csv). Programs whose path depends on timing (master_worker)
take another path simulated than traced, so their replay ratio is not a fidelity figure.
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
PROGRAMS_DIR = ROOT / "tests" / "mpi" / "programs"
# Arguments as tests/smpi runs them: communication only for programs that compute by spinning on
# MPI_Wtime (wavefront), the tests' own elsewhere (tests/mpi/meson.build).
PROGRAMS = {
    "stencil": ["20", "16"],
    "land_sea": ["10"],
    "convergence": ["10"],
    "multigrid": ["5", "6"],
    "wavefront": ["4", "16", "0", "64"],
    "master_worker": ["60"],
    "amr": ["24", "4"],
    # Weak scaling: 2 x 2 root blocks per rank, blocks that move, neighbours that change.
    "amr_moving": ["24", "4"],
}
QUIET = ["--log=xbt_cfg.thres:warning", "--log=smpi_config.thres:warning"]
COUNT_HOST_TIME = ["--cfg=smpi/simulate-computation:yes", "--cfg=smpi/host-speed:1Gf"]
COMMUNICATION_ONLY = ["--cfg=smpi/simulate-computation:no", "--cfg=smpi/test:0"]
WROTE = re.compile(r"h-trace: wrote \S+ \((\d+) ranks, (\d+) bytes; merge ([0-9.]+) s \(simulated ([0-9.]+) s\)")
JOB_TIME = re.compile(r"^job_timer: ([0-9.eE+-]+) s$", re.MULTILINE)
TIMED = re.compile(r"^scale_wall ([0-9.]+) maxrss_kib (\d+)$", re.MULTILINE)
UNTRACED = {}  # (program, ranks) -> (peak resident set, job_timer lines)
FIELDS = ["program", "ranks", "precision", "privatization", "host_time", "trace_bytes", "merge_host_s", "merge_simulated_s", "traced_wall_s",
          "traced_rss_kib", "untraced_rss_kib", "tracer_kib_per_rank", "application_simulated_s",
          "replay_simulated_s", "replay_ratio", "replay_wall_s", "replay_rss_kib"]


def compile_programs(build, names, scratch):
    library = build / "src" / "capture" / "libhtrace-smpi.a"
    built = {}
    for name in names:
        source = PROGRAMS_DIR / f"{name}.c"
        traced, timed = scratch / f"{name}-traced", scratch / f"{name}-timed"
        subprocess.run(["smpicc", "-O2", f"-I{PROGRAMS_DIR}", str(source), "-Wl,--whole-archive", str(library),
                        "-Wl,--no-whole-archive", "-Wl,-Bsymbolic-functions", "-lzstd", "-lstdc++", "-o", str(traced)], check=True)
        subprocess.run(["strip", "--strip-debug", str(traced)], check=True)
        # -Bsymbolic-functions: job_timer.c's MPI_Init and MPI_Finalize come before SMPI's however SimGrid
        # loads the program (with smpi/privatization:mmap it does not bind the program to itself first).
        subprocess.run(["smpicc", "-O2", f"-I{PROGRAMS_DIR}", str(source), str(ROOT / "tests" / "smpi" / "job_timer.c"),
                        "-Wl,-Bsymbolic-functions", "-o", str(timed)], check=True)
        built[name] = (traced, timed)
    return built


def timed_run(command, env, cwd, timeout):
    """Runs under /usr/bin/time; returns stderr, wall seconds and peak resident set (KiB)."""
    done = subprocess.run(["/usr/bin/time", "-f", "scale_wall %e maxrss_kib %M"] + command, env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)
    measured = TIMED.search(done.stderr)
    if done.returncode != 0 or measured is None:
        raise RuntimeError(f"{' '.join(command)} failed (exit status {done.returncode}):\n{done.stderr[-3000:]}")
    return done.stderr, float(measured[1]), int(measured[2])


def smpirun(args, ranks, options, program):
    return ["smpirun", "-platform", str(args.platform), "-np", str(ranks),
            f"--cfg=smpi/privatization:{args.privatization}"] + QUIET + options + [str(program)]


def one_case(args, name, built, ranks, precision, scratch):
    traced, timed = built
    trace = (args.keep_traces or scratch) / f"{name}-{ranks}-p{precision}.h"
    env = dict(os.environ, HTRACE_FILE=str(trace), MERGE_PRECISION=str(precision))
    traced_options = COUNT_HOST_TIME if args.host_time else COMMUNICATION_ONLY
    stderr, traced_wall, traced_rss = timed_run(smpirun(args, ranks, traced_options, traced) +
                                                PROGRAMS[name], env, scratch, args.timeout)
    wrote = WROTE.search(stderr)
    if wrote is None:
        raise RuntimeError(f"{name} at {ranks} ranks wrote no trace:\n{stderr[-3000:]}")
    row = {"program": name, "ranks": ranks, "precision": precision, "privatization": args.privatization,
           "host_time": "yes" if args.host_time else "no",
           "trace_bytes": int(wrote[2]),
           "merge_host_s": float(wrote[3]), "merge_simulated_s": float(wrote[4]), "traced_wall_s": traced_wall,
           "traced_rss_kib": traced_rss}

    # The untraced run is the same at every precision: once per program and rank count.
    if (name, ranks) not in UNTRACED:
        stderr, _, rss = timed_run(smpirun(args, ranks, COMMUNICATION_ONLY, timed) + PROGRAMS[name],
                                   dict(os.environ), scratch, args.timeout)
        UNTRACED[(name, ranks)] = (rss, JOB_TIME.findall(stderr))
    untraced_rss, times = UNTRACED[(name, ranks)]
    row["untraced_rss_kib"] = untraced_rss
    row["tracer_kib_per_rank"] = round((traced_rss - untraced_rss) / ranks, 1)
    row["application_simulated_s"] = float(times[0]) if times else ""

    if not args.no_replay:
        report = scratch / "replay.json"
        replay_smpi = args.build / "src" / "replay" / "h-replay-smpi"
        _, replay_wall, replay_rss = timed_run(
            smpirun(args, ranks, COUNT_HOST_TIME + ["--cfg=smpi/test:0"], replay_smpi.resolve()) +
            ["--no-compute", "--report-json", str(report), str(trace)], dict(os.environ), scratch, args.timeout)
        replay = json.loads(report.read_text())["replay_seconds"]
        row.update(replay_simulated_s=replay, replay_wall_s=replay_wall, replay_rss_kib=replay_rss,
                   replay_ratio=round(replay / row["application_simulated_s"], 4) if times else "")
    if not args.keep_traces:
        trace.unlink(missing_ok=True)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", type=pathlib.Path)
    parser.add_argument("--ranks", default="64,256,1024,4096")
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--precisions", default="100,0")
    parser.add_argument("--platform", type=pathlib.Path, default=ROOT / "platforms" / "cluster.xml")
    parser.add_argument("--privatization", choices=["mmap", "dlopen"], default="mmap")
    parser.add_argument("--no-replay", action="store_true")
    parser.add_argument("--host-time", action="store_true", help="count host time as simulated computation")
    parser.add_argument("--keep-traces", type=pathlib.Path, help="keep the traces in this directory")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--csv", type=pathlib.Path)
    args = parser.parse_args()
    args.build = args.build.resolve()
    args.platform = args.platform.resolve()
    if args.keep_traces:
        args.keep_traces = args.keep_traces.resolve()
        args.keep_traces.mkdir(parents=True, exist_ok=True)
    names = args.programs.split(",")
    out = open(args.csv, "a") if args.csv else None
    header = ",".join(FIELDS)
    print(header, flush=True)
    if out and out.tell() == 0:
        print(header, file=out, flush=True)
    with tempfile.TemporaryDirectory(prefix="smpi-scale-") as scratch:
        scratch = pathlib.Path(scratch)
        built = compile_programs(args.build, names, scratch)
        for ranks in [int(r) for r in args.ranks.split(",")]:
            for name in names:
                for precision in [int(p) for p in args.precisions.split(",")]:
                    try:
                        row = one_case(args, name, built[name], ranks, precision, scratch)
                    except (RuntimeError, subprocess.TimeoutExpired) as failure:
                        print(f"# {name} at {ranks} ranks, p = {precision}: {str(failure)[:2000]}", file=sys.stderr,
                              flush=True)
                        continue
                    line = ",".join(str(row.get(field, "")) for field in FIELDS)
                    print(line, flush=True)
                    if out:
                        print(line, file=out, flush=True)


if __name__ == "__main__":
    main()
