#!/usr/bin/env python3
"""Python programs (mpi4py) under the tracer: one case per run, on programs/python_ring.py.

    check_python.py CASE --h-trace PATH --h-dump PATH [--h-replay PATH] [--mpirun PATH] --program PY

CASE is one of:
  sites    calls from different Python functions and lines are different call sites, and one line
           in a loop is one: the trace's MPI_Sendrecv and MPI_Allreduce events, grouped by call
           site, hold the counts the program itself counted per calling line (send_halo from two
           lines, reduce_norm from the loop and once after it)
  folding  the loop folds: the trace holds as many events after 40 iterations as after 10
  imports  the modules the interpreter reads after MPI_Init (statistics, imported by the program) are
           left out of the trace, and the program's own file I/O is there with the counts it made,
           its read of a .py file of its own (its source) included; with HTRACE_PYTHON_IMPORTS=1
           the interpreter's reads of statistics are there
  output   the program prints the same (what it computes, what it counted) traced and untraced
  replay   h-replay replays the trace to the end and makes the program's MPI calls
  threads  programs/python_threads.py (beside --program): Python threads calling MPI while another
           holds the GIL finish traced within the time limit, print what they print untraced, and
           the trace holds the calls each thread made

The interpreter is the first of /usr/bin/python3, this script's own and `python3` on PATH that has
mpi4py. The case is skipped (exit 77) where none has, or where its mpi4py is built for another MPI
library than the tracer under test (Debian's is Open MPI's; the MPICH tree cannot use it), or where
there is no mpirun. Exit status 0 passes, 1 fails.
"""
import argparse
import collections
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

from mpi_launch import mpirun_command, program_output, run_job

RANKS = 4
EVERY = 5  # iterations between checkpoints
TIMEOUT = 120
SKIP = 77

# What the program counts per calling place (its "calls" line), and the MPI function or POSIX calls
# each makes.
PLACE_CALLS = {"send_halo right": ["MPI_Sendrecv"], "send_halo left": ["MPI_Sendrecv"],
               "reduce_norm loop": ["MPI_Allreduce"], "reduce_norm final": ["MPI_Allreduce"],
               "checkpoint": ["open", "write", "close"], "read_own_source": ["open", "read", "close"]}


class Skip(Exception):
    pass


def linked_mpi(binary):
    """The MPI library `binary` is linked with, as the file ldd resolves it to (None if none)."""
    result = subprocess.run(["ldd", str(binary)], capture_output=True, text=True)
    for line in result.stdout.splitlines():
        match = re.match(r"\s*(libmpi[^\s]*\.so[^\s]*) => (\S+)", line)
        if match:
            return os.path.realpath(match[2])
    return None


def find_python(h_trace):
    """An interpreter whose mpi4py runs on the tracer's MPI library, or Skip."""
    candidates = ["/usr/bin/python3", sys.executable, shutil.which("python3")]
    library = pathlib.Path(h_trace).resolve().parent / "libhtrace.so"
    tracer_mpi = linked_mpi(library)
    seen = []
    for python in dict.fromkeys(c for c in candidates if c and os.access(c, os.X_OK)):
        # Where the extension is, without importing it (its import initializes MPI).
        found = subprocess.run([python, "-c", "import importlib.util as u; s = u.find_spec('mpi4py.MPI'); "
                                "print(s.origin if s else '')"], capture_output=True, text=True)
        extension = found.stdout.strip()
        if found.returncode != 0 or not extension:
            seen.append(f"{python}: no mpi4py")
            continue
        mpi = linked_mpi(extension)
        if mpi != tracer_mpi:
            seen.append(f"{python}: mpi4py on {mpi}, the tracer on {tracer_mpi}")
            continue
        return python
    raise Skip("no interpreter with an mpi4py for the tracer's MPI library (" + "; ".join(seen) + ")")


class Runner:
    def __init__(self, args, python, scratch):
        self.args = args
        self.python = python
        self.scratch = scratch

    def run(self, iterations, traced, env=None, name="trace.h", program=None):
        """Runs the program (python_ring.py, or `program` given its arguments); returns (its output
        lines, mpirun's stderr, the trace's path)."""
        out = self.scratch / f"out-{name}"
        out.mkdir(exist_ok=True)
        command = [self.python, os.path.abspath(self.args.program), str(iterations), str(EVERY), str(out)]
        if program is not None:
            command = [self.python, str(program), str(iterations)]
        if traced:
            command = [os.path.abspath(self.args.h_trace)] + command
        trace = self.scratch / name
        status, stdout, stderr = run_job(mpirun_command(self.args.mpirun, RANKS, command),
                                         dict(env or {}, HTRACE_FILE=str(trace)), self.scratch, TIMEOUT)
        if status != 0:
            raise AssertionError(f"the program failed (exit status {status})\nstdout:\n{stdout}\nstderr:\n{stderr}")
        if traced and not trace.is_file():
            raise AssertionError(f"no trace written\nstderr:\n{stderr}")
        return program_output(stdout), stderr, trace

    def dump(self, trace):
        result = subprocess.run([self.args.h_dump, "--json", str(trace)], capture_output=True, text=True, check=True)
        return json.loads(result.stdout)


def program_counts(lines):
    """The program's own counts, summed over the ranks: {place: calls}."""
    total = collections.Counter()
    ranks = 0
    for line in lines:
        if line.startswith("calls rank "):
            total.update(json.loads(line.split(" ", 3)[3]))
            ranks += 1
    if ranks != RANKS:
        raise AssertionError(f"{ranks} ranks said what they called, not {RANKS}:\n" + "\n".join(lines))
    return total


def events(nodes):
    """Every event of the trace, nested ones once each."""
    for node in nodes:
        if "loop" in node:
            yield from events(node["body"])
        else:
            yield node


def calls_by_site(dump, op):
    """{signature: calls} of the trace's events of `op` (an event's compute count is its calls)."""
    sites = collections.Counter()
    for event in events(dump["body"]):
        if event["op"] == op:
            sites[event["signature"]] += event["compute"]["count"]
    return sites


def check_sites(runner):
    lines, _, trace = runner.run(10, traced=True)
    counts = program_counts(lines)
    dump = runner.dump(trace)
    failures = []
    for op in ("MPI_Sendrecv", "MPI_Allreduce"):
        places = sorted(place for place, made in PLACE_CALLS.items() if op in made)
        expected = sorted(counts[place] for place in places)
        found = calls_by_site(dump, op)
        print(f"{op}: the program called it from {places}, {expected} times; the trace has "
              f"{len(found)} call sites, {sorted(found.values())} calls")
        if sorted(found.values()) != expected:
            failures.append(f"{op}: call sites with {sorted(found.values())} calls, the program's places "
                            f"{expected}")
    return failures


def check_folding(runner):
    held = {}
    for iterations in (10, 40):
        _, _, trace = runner.run(iterations, traced=True, name=f"trace-{iterations}.h")
        held[iterations] = sum(1 for _ in events(runner.dump(trace)["body"]))
        print(f"{iterations} iterations: {held[iterations]} events, {trace.stat().st_size} bytes")
    if held[10] != held[40]:
        return [f"the trace grew with the iterations: {held}"]
    return []


def interpreter_files(python, module):
    """The source and cached bytecode paths of the interpreter's `module`."""
    script = (f"import importlib.util as u; s = u.find_spec({module!r}); print(s.origin); "
              "print(u.cache_from_source(s.origin))")
    return subprocess.run([python, "-c", script], capture_output=True, text=True, check=True).stdout.split()


def file_events(dump):
    """{(op, file name): calls} of the POSIX events, each call on a file named by its open's name."""
    names = {int(key): name for key, name in dump["file_names"].items()}
    tally = collections.Counter()
    opened = None
    for event in events(dump["body"]):
        if event["op"].startswith("MPI_"):
            continue
        if "file_name" in event["params"]:
            opened = names.get(int(event["params"]["file_name"]), event["params"]["file_name"])
        tally[(event["op"], opened)] += event["compute"]["count"]
    return tally


def check_imports(runner):
    failures = []
    module_files = set(interpreter_files(runner.python, "statistics"))
    source = os.path.abspath(runner.args.program)
    lines, stderr, trace = runner.run(10, traced=True)
    counts = program_counts(lines)
    dump = runner.dump(trace)
    names = set(dump["file_names"].values())
    print(f"files in the trace: {sorted(names)}")
    interpreters = sorted(n for n in names if n in module_files or n.endswith(".pyc"))
    if interpreters:
        failures.append(f"the interpreter's module files are in the trace: {interpreters}")
    if not re.search(r"\d+ POSIX I/O calls of Python's imports left out", stderr):
        failures.append("h-trace did not say how many calls of Python's imports it left out:\n" + stderr)
    found = file_events(dump)
    checkpoint_name = str(runner.scratch / "out-trace.h" / "ring.{rank}")
    expected = {("open", checkpoint_name): counts["checkpoint"], ("write", checkpoint_name): counts["checkpoint"],
                ("close", checkpoint_name): counts["checkpoint"], ("open", source): counts["read_own_source"],
                ("read", source): counts["read_own_source"], ("close", source): counts["read_own_source"]}
    for key, calls in expected.items():
        print(f"{key[0]} {key[1]}: the program {calls}, the trace {found.get(key, 0)}")
        if found.get(key, 0) != calls:
            failures.append(f"{key[0]} on {key[1]}: {found.get(key, 0)} calls in the trace, the program made {calls}")
    unexpected = {key: n for key, n in found.items() if key not in expected}
    if unexpected:
        failures.append(f"POSIX calls the program did not make itself: {unexpected}")

    _, stderr, kept = runner.run(10, traced=True, env={"HTRACE_PYTHON_IMPORTS": "1"}, name="kept.h")
    kept_names = set(runner.dump(kept)["file_names"].values())
    print(f"with HTRACE_PYTHON_IMPORTS=1, statistics' files {sorted(module_files & kept_names)}")
    if not module_files & kept_names:
        failures.append(f"with HTRACE_PYTHON_IMPORTS=1 the trace does not read statistics ({sorted(module_files)}); "
                        f"it names {sorted(kept_names)}")
    if "imports left out" in stderr:
        failures.append("with HTRACE_PYTHON_IMPORTS=1 h-trace still left imports out:\n" + stderr)
    return failures


def check_output(runner):
    untraced, _, _ = runner.run(10, traced=False, name="untraced.h")
    traced, _, _ = runner.run(10, traced=True)
    print("untraced:", *sorted(untraced), sep="\n  ")
    if sorted(untraced) != sorted(traced):
        return ["the program printed otherwise under the tracer:\n" + "\n".join(sorted(traced))]
    return []


def check_replay(runner):
    if not runner.args.h_replay:
        raise Skip("no --h-replay")
    lines, _, trace = runner.run(10, traced=True)
    counts = program_counts(lines)
    report = runner.scratch / "replay.json"
    command = mpirun_command(runner.args.mpirun, RANKS, [os.path.abspath(runner.args.h_replay), "--no-compute",
                                                          "--report-json", str(report), str(trace)])
    status, stdout, stderr = run_job(command, {}, runner.scratch, TIMEOUT)
    if status != 0 or not report.is_file():
        return [f"h-replay failed (exit status {status})\nstdout:\n{stdout}\nstderr:\n{stderr}"]
    replayed = json.loads(report.read_text())
    print(f"replay report: {json.dumps(replayed)[:600]}")
    failures = []
    for op in ("MPI_Sendrecv", "MPI_Allreduce"):
        made = sum(counts[place] for place, ops in PLACE_CALLS.items() if op in ops)
        calls = replayed["operations"].get(op, {}).get("calls", 0)
        print(f"{op}: the program {made}, the replay {calls}")
        if calls != made:
            failures.append(f"{op}: the replay made {calls} calls, the program {made}")
    return failures


def check_threads(runner):
    program = pathlib.Path(runner.args.program).parent / "python_threads.py"
    iterations = 50
    untraced, _, _ = runner.run(iterations, traced=False, name="untraced.h", program=program)
    traced, _, trace = runner.run(iterations, traced=True, program=program)
    failures = []
    if sorted(untraced) != sorted(traced) or len(traced) != RANKS:
        failures.append("the program printed otherwise under the tracer:\nuntraced:\n" + "\n".join(untraced) +
                        "\ntraced:\n" + "\n".join(traced))
    dump = runner.dump(trace)
    for op in ("MPI_Sendrecv", "MPI_Allreduce"):
        calls = sum(calls_by_site(dump, op).values())
        print(f"{op}: the threads made {iterations * RANKS}, the trace holds {calls}")
        if calls != iterations * RANKS:
            failures.append(f"{op}: {calls} calls in the trace, the program made {iterations * RANKS}")
    return failures


CASES = {"sites": check_sites, "folding": check_folding, "imports": check_imports, "output": check_output,
         "replay": check_replay, "threads": check_threads}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=sorted(CASES))
    parser.add_argument("--h-trace", required=True)
    parser.add_argument("--h-dump", required=True)
    parser.add_argument("--h-replay")
    parser.add_argument("--mpirun", default=shutil.which("mpirun"))
    parser.add_argument("--program", required=True)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    scratch = pathlib.Path(tempfile.mkdtemp(prefix=f"python-{args.case}-"))
    try:
        if not args.mpirun:
            raise Skip("no mpirun")
        failures = CASES[args.case](Runner(args, find_python(args.h_trace), scratch))
    except Skip as why:
        print(f"SKIP: {why}")
        shutil.rmtree(scratch, ignore_errors=True)
        return SKIP
    except AssertionError as error:
        failures = [str(error)]
    for failure in failures:
        print(f"FAIL: {failure}")
    if failures or args.keep:
        print(f"kept {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
