#!/usr/bin/env python3
"""Extrapolation against the real thing (issue 29): each program traced at a few small rank counts,
h-extrap to a larger count, and the trace the program really makes there, compared.

    extrapolation.py BUILD [--real 64,256] [--simulated 1024,4096] [--programs stencil,...]
                     [--platform platforms/cluster.xml] [--csv FILE] [--timeout SECONDS] [--keep DIR]

Per program and target count, one CSV row: whether the events are the same (operation, call site,
ranks, in order), the number of values compared and the largest relative error of any of them
(tests/mpi/check_extrapolation.py's comparison; computation times left out), the bytes of the
extrapolated and the traced trace, and the simulated time of `h-replay-smpi --no-compute` of the
extrapolated trace against the program's own simulated time (its job_timer build, communication
only, as tests/smpi runs it) at that count, on --platform.

Real targets (--real) take their inputs and the target's trace from Open MPI (mpirun, h-trace);
simulated targets (--simulated) take both from the tracer under SimGrid (bench/smpi_scale.py's
builds). The inputs are each program's own (a 3-D grid needs sides of 3 and more; strong scaling
three different sides).
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "mpi"))
import smpi_scale  # noqa: E402
from check_extrapolation import Comparison, dump  # noqa: E402

# Program: (arguments, input rank counts).
PROGRAMS = {
    "stencil": (["20", "16"], [4, 8, 16]),
    "multigrid": (["5", "6"], [27, 36, 48]),
    "convergence": (["10"], [4, 8, 16]),
    "checkpoint": (["4", "256"], [4, 8, 16]),
    "strong_scaling": (["10", "960"], [4, 16, 36]),  # 960 divides by every grid side to 64
    "amr": (["24", "4"], [4, 8, 16]),
}
# SMPI's MPI_Dims_create makes 9 x 2 x 2 of 36 ranks in 3-D (Open MPI 4 x 3 x 3) and 9 x 4 in 2-D
# (Open MPI 6 x 6). A periodic dimension of 2 has no step h-extrap can tell (+1 and -1 are the same
# rank), and a program that calls MPI_Dims_create without making a Cartesian communicator leaves
# h-extrap to assume Open MPI's grid. Under SimGrid the inputs are counts where the two agree.
SIMULATED_INPUTS = {"multigrid": [27, 48, 64], "strong_scaling": [4, 16, 64]}
FIELDS = ["program", "ranks", "traced_on", "inputs", "outcome", "same_events", "values", "largest_relative_error",
          "extrapolated_bytes", "traced_bytes", "replay_simulated_s", "application_simulated_s", "replay_ratio"]


def trace_real(args, name, ranks, trace, scratch):
    program = args.build / "tests" / "mpi" / name
    command = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(ranks),
               str(args.build / "src" / "capture" / "h-trace"), str(program)] + PROGRAMS[name][0]
    for attempt in range(3):
        done = subprocess.run(command, env=dict(os.environ, HTRACE_FILE=str(trace), MERGE_PRECISION="100"), cwd=scratch,
                              capture_output=True, timeout=args.timeout)
        if done.returncode == 0:
            return
        # Open MPI 4.1 at a few hundred ranks on 2 cores now and then reports a rank "with PID 0"
        # as "exiting improperly" after every rank finalized: the run is made again.
        print(f"# {name} at {ranks}: mpirun exited with {done.returncode} (attempt {attempt + 1}): "
              f"{done.stderr.decode(errors='replace')[-300:]}", file=sys.stderr, flush=True)
    raise RuntimeError(f"mpirun failed 3 times for {name} at {ranks} ranks")


def trace_simulated(args, name, ranks, trace, scratch):
    traced, _ = args.built[name]
    smpi_scale.timed_run(smpi_scale.smpirun(args, ranks, smpi_scale.COMMUNICATION_ONLY, traced) + PROGRAMS[name][0],
                         dict(os.environ, HTRACE_FILE=str(trace), MERGE_PRECISION="100"), scratch, args.timeout)


def application_seconds(args, name, ranks, scratch):
    _, timed = args.built[name]
    stderr, _, _ = smpi_scale.timed_run(smpi_scale.smpirun(args, ranks, smpi_scale.COMMUNICATION_ONLY, timed) +
                                        PROGRAMS[name][0], dict(os.environ), scratch, args.timeout)
    times = smpi_scale.JOB_TIME.findall(stderr)
    return float(times[0]) if times else None


def replay_seconds(args, ranks, trace, scratch):
    report = scratch / "replay.json"
    replay_smpi = (args.build / "src" / "replay" / "h-replay-smpi").resolve()
    smpi_scale.timed_run(smpi_scale.smpirun(args, ranks, smpi_scale.COUNT_HOST_TIME + ["--cfg=smpi/test:0"], replay_smpi)
                         + ["--no-compute", "--report-json", str(report), str(trace)], dict(os.environ), scratch,
                         args.timeout)
    return json.loads(report.read_text())["replay_seconds"]


def one_case(args, name, ranks, simulated, scratch):
    make_trace = trace_simulated if simulated else trace_real
    where = "simgrid" if simulated else "openmpi"
    input_counts = SIMULATED_INPUTS.get(name, PROGRAMS[name][1]) if simulated else PROGRAMS[name][1]
    inputs = []
    for n in input_counts:
        path = scratch / f"{name}-{where}-{n}.h"
        if not path.is_file():
            make_trace(args, name, n, path, scratch)
        inputs.append(str(path))
    traced = scratch / f"{name}-{where}-{ranks}.h"
    make_trace(args, name, ranks, traced, scratch)
    extrapolated = scratch / f"{name}-{where}-{ranks}-extrapolated.h"
    row = {"program": name, "ranks": ranks, "traced_on": where, "inputs": " ".join(map(str, input_counts)),
           "traced_bytes": traced.stat().st_size}
    done = subprocess.run([str(args.build / "src" / "extrap" / "h-extrap")] + inputs +
                          ["--ranks", str(ranks), "-o", str(extrapolated)], capture_output=True, text=True)
    if done.returncode != 0:
        row["outcome"] = done.stderr.strip().replace(",", ";")
        return row
    h_dump = str(args.build / "h-dump")
    comparison = Comparison(0.05)
    comparison.sequence(dump(h_dump, traced)["body"], dump(h_dump, extrapolated)["body"], "body")
    row.update(outcome="written", same_events=comparison.structural == 0,
               values=comparison.values, largest_relative_error=round(comparison.worst, 4),
               extrapolated_bytes=extrapolated.stat().st_size)
    if name in args.built:
        application = application_seconds(args, name, ranks, scratch)
        replay = replay_seconds(args, ranks, extrapolated, scratch)
        row.update(replay_simulated_s=replay, application_simulated_s=application,
                   replay_ratio=round(replay / application, 4) if application else "")
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", type=pathlib.Path)
    parser.add_argument("--real", default="64,256")
    parser.add_argument("--simulated", default="1024,4096")
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--platform", type=pathlib.Path, default=HERE.parent / "platforms" / "cluster.xml")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--csv", type=pathlib.Path)
    parser.add_argument("--keep", type=pathlib.Path, help="write the traces here and keep them (default: a temporary directory)")
    args = parser.parse_args()
    args.build, args.platform, args.privatization = args.build.resolve(), args.platform.resolve(), "mmap"
    names = args.programs.split(",")
    out = open(args.csv, "a") if args.csv else None
    print(",".join(FIELDS), flush=True)
    if out and out.tell() == 0:
        print(",".join(FIELDS), file=out, flush=True)
    with tempfile.TemporaryDirectory(prefix="extrapolation-") as temporary:
        scratch = args.keep.resolve() if args.keep else pathlib.Path(temporary)
        scratch.mkdir(parents=True, exist_ok=True)
        # SMPI has no MPI-IO for the checkpoint: it runs on Open MPI only, without a simulated replay.
        args.built = smpi_scale.compile_programs(args.build, [n for n in names if n != "checkpoint"], scratch)
        cases = [(n, False) for n in args.real.split(",") if n] + [(n, True) for n in args.simulated.split(",") if n]
        for ranks, simulated in cases:
            for name in names:
                if simulated and name not in args.built:
                    continue
                try:
                    row = one_case(args, name, int(ranks), simulated, scratch)
                except (RuntimeError, subprocess.SubprocessError) as failure:
                    print(f"# {name} at {ranks}: {str(failure)[:1500]}", file=sys.stderr, flush=True)
                    continue
                line = ",".join(str(row.get(field, "")) for field in FIELDS)
                print(line, flush=True)
                if out:
                    print(line, file=out, flush=True)


if __name__ == "__main__":
    main()
