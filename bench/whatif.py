#!/usr/bin/env python3
"""What-if benchmark (issue 11): h-whatif's predictions for one shipped program, the 2-D stencil, at 64
and 256 simulated ranks on the shipped platforms, with the simulations' own run time.

    bench/whatif.py [--build DIR] [--ranks 64,256] [--scratch DIR]

Per rank count: traces `stencil 20 16` (the simulated-fidelity arguments: 20 iterations, a 16x16 block
per rank) losslessly with the real Open MPI, all ranks on this machine's cores
(run_benchmarks.trace_real, as the simulated-fidelity benchmark took its 256-rank traces), then runs
h-whatif on platforms/cluster.xml, fat_tree_100g.xml and torus_40g.xml twice: as it runs by default
(the recorded computation simulated), and with --replay-arg=--no-compute (communication alone, which
does not depend on how busy the traced machine was). Writes bench/results/whatif.csv and prints a
Markdown table. Each simulation is one process on one core; they run one after another.

On 2 cores the 256-rank run shares each core among 128 processes, so its recorded compute phases
include time spent waiting for the core: the predictions with computation then overstate it, and the
--no-compute columns are the networks' comparison.
"""
import argparse
import csv
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from run_benchmarks import ROOT, trace_real, write_csv  # noqa: E402

PROGRAM, ARGUMENTS = "stencil", ["20", "16"]
PLATFORMS = ["cluster.xml", "fat_tree_100g.xml", "torus_40g.xml"]
HEADER = ["program", "ranks", "platform", "predicted_s", "simulation_wall_s", "predicted_no_compute_s",
          "simulation_no_compute_wall_s", "trace_bytes", "trace_wall_s", "note"]


def whatif(build, trace, directory, extra=()):
    """h-whatif on the shipped platforms; returns {platform name: CSV row}."""
    command = [sys.executable, str(ROOT / "src/studies/h_whatif.py"), "--output-dir", str(directory),
               "--h-replay-smpi", str(build / "src/replay/h-replay-smpi"), "--h-dump", str(build / "h-dump"),
               *extra, str(trace)] + [str(ROOT / "platforms" / name) for name in PLATFORMS]
    print("$ " + " ".join(command), flush=True)
    if subprocess.run(command).returncode != 0:
        sys.exit(f"h-whatif failed on {trace} (its logs are in {directory})")
    with open(directory / "whatif.csv") as table:
        return {pathlib.Path(row["platform"]).name: row for row in csv.DictReader(table)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--ranks", default="64,256")
    parser.add_argument("--scratch", help="keep traces, reports and logs here")
    args = parser.parse_args()
    build = pathlib.Path(args.build).resolve()
    scratch = pathlib.Path(args.scratch or tempfile.mkdtemp(prefix="htrace-whatif-"))
    scratch.mkdir(parents=True, exist_ok=True)
    rows = []
    for ranks in [int(word) for word in args.ranks.split(",")]:
        traced = trace_real(build, PROGRAM, ARGUMENTS, ranks, 100, scratch, timeout=1800)
        if "error" in traced:
            sys.exit(f"{PROGRAM} at {ranks} ranks: {traced['error']}")
        with_compute = whatif(build, traced["trace"], scratch / f"whatif-{ranks}")
        communication = whatif(build, traced["trace"], scratch / f"whatif-{ranks}-no-compute",
                               ["--replay-arg=--no-compute"])
        for name in PLATFORMS:
            rows.append([PROGRAM, ranks, name.removesuffix(".xml"), with_compute[name]["predicted_seconds"],
                         with_compute[name]["simulation_wall_seconds"], communication[name]["predicted_seconds"],
                         communication[name]["simulation_wall_seconds"], traced["trace"].stat().st_size,
                         f"{traced['wall']:.1f}", traced.get("note", "")])
        write_csv("whatif", HEADER, rows)
    print(f"\n(traces, reports and logs in {scratch})\n")
    print("| ranks | platform | predicted ms | simulation wall s | predicted ms, --no-compute | simulation wall s, "
          "--no-compute |\n| --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row[1]} | {row[2]} | {1e3 * float(row[3]):.3f} | {float(row[4]):.1f} | {1e3 * float(row[5]):.3f} | "
              f"{float(row[6]):.1f} |")


if __name__ == "__main__":
    main()
