#!/usr/bin/env python3
"""h-report and h-dump on hostile input (issue 26): each case a way a trace from elsewhere, or an
h-dump that does not match, used to end in a Python traceback, invalid JSON or a hang.

    check_report_input.py --h-report PATH --h-dump PATH --write-hostile-trace PATH

With a stand-in h-dump (a script printing what each case needs), h-report must either write its page
(exit 0) or print exactly one line "h-report: ..." naming the trace and exit 1, never a traceback:

1. h-dump's JSON holds bytes that are not UTF-8 (what h-dump wrote for a file name that was not);
2. a start time of 1e300 and of 2^70 s, which no date has: the page is written and shows the number;
3. the JSON lacks a field h-report reads ("body"), or a field has an odd type; and a body of 220,002
   events and loops, one loop longer than h-report reads at once, which it reads event by event;
4. loops nested 100,000 deep (beyond Python's recursion);
5. h-dump fails with a message that is not UTF-8.

With the real h-dump, on traces write_hostile_trace builds:

6. file names, command line and MPI library that are not UTF-8: h-dump --json writes valid UTF-8
   JSON (strictly decoded), with U+FFFD where the bytes were, and h-report writes its page;
7. a loop of 10^15 sends inside a loop of 1000 on 2 ranks: h-dump --calls counts 2 * 10^18 + ... at
   once and exactly (past 2^53), --matrix too, --sequence refuses in one line naming --max-calls,
   and h-report writes its page. Each within a time limit (they used to run for ever).

A reader that refuses such a trace in one line naming it (names held to UTF-8, counts to a limit)
passes 6 and 7 too, where h-report then says so in one line.

Exit status 0 passes, 1 fails.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

# Seconds for any one command: a bound on the runs that never ended, not a speed to meet. Alone each
# takes 1-5 s (the 220,002 events 20 s); beside the suite's MPI jobs, which spin, one took over 30.
TIME_LIMIT = 120


class TestFailure(Exception):
    pass


def run(command):
    try:
        return subprocess.run([str(part) for part in command], capture_output=True, timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        raise TestFailure(f"{' '.join(map(str, command))}: still running after {TIME_LIMIT} s")


def fake_h_dump(directory, name, trace_json=None, matrix_json=None, calls_json=None, stderr=None, profile_json=None):
    """A stand-in h-dump printing the given bytes for --json, --matrix --json, --calls --json and
    --profile --json (by default a profile of the valid trace's one site)."""
    for view, output in (("trace", trace_json), ("matrix", matrix_json), ("calls", calls_json),
                         ("profile", profile_json or encoded(PROFILE))):
        (directory / f"{name}.{view}").write_bytes(output or b"")
    script = directory / f"{name}-h-dump"
    script.write_text(f"""#!{sys.executable}
import sys
stderr = {stderr!r}
if stderr is not None:
    sys.stderr.buffer.write(stderr)
    sys.exit(1)
view = ("matrix" if "--matrix" in sys.argv else "calls" if "--calls" in sys.argv
        else "profile" if "--profile" in sys.argv else "trace")
with open({str(directory / name)!r} + "." + view, "rb") as output:
    sys.stdout.buffer.write(output.read())
""")
    script.chmod(0o755)
    return script


def valid_trace(**changes):
    trace = {"ranks": 2, "precision": 100, "bins": 32, "rebalance": 64, "seed": 1, "mpi": "Open MPI",
             "command": "./program", "start_time": 1700000000, "traced_seconds": 0.5, "file_names": {},
             "topologies": {}, "body": [{"op": "MPI_Send", "signature": "0000005e", "ranks": "0-1",
                                         "params": {"peer": 1, "bytes": 8}, "compute": {"count": 0, "mean": 0,
                                                                                     "min": 0, "max": 0}}]}
    trace.update(changes)
    return trace


MATRIX = {"ranks": 2, "pairs": [{"from": 0, "to": 1, "messages": 1, "bytes": 8},
                                {"from": 1, "to": 0, "messages": 1, "bytes": 8}],
          "total": {"messages": 2, "bytes": 16}, "unresolved": {"messages": 0, "bytes": 0}}
CALLS = {"ranks": 2, "by_rank": {"0": {"MPI_Send": {"calls": 1, "bytes": 8, "peers": {"1": 1}, "matched": {}}},
                                 "1": {"MPI_Send": {"calls": 1, "bytes": 8, "peers": {"0": 1}, "matched": {}}}},
         "operations": {"MPI_Send": 2}}
PROFILE = {"ranks": 2, "traced_seconds": 0.5, "rank_times": None, "seconds_in_calls": 0,
           "sites": [{"site": "0000005e", "op": "MPI_Send", "calls": 2, "in_call": None, "seconds": None, "bytes": 16,
                      "ranks": 2}]}


def encoded(value):
    return json.dumps(value).encode()


def report(h_report, h_dump, trace, output):
    if output.exists():
        output.unlink()
    result = run([sys.executable, h_report, trace, "-o", output, "--h-dump", h_dump])
    stderr = result.stderr.decode("utf-8", "replace")
    if "Traceback" in stderr:
        raise TestFailure(f"h-report died with a traceback:\n{stderr}")
    return result, stderr


def expect_one_line(h_report, h_dump, trace, output, words):
    result, stderr = report(h_report, h_dump, trace, output)
    lines = stderr.strip().splitlines()
    if result.returncode != 1 or len(lines) != 1 or not lines[0].startswith("h-report: ") or output.exists():
        raise TestFailure(f"expected exit 1, one line and no page; got {result.returncode}, {stderr!r}, "
                          f"page {'written' if output.exists() else 'not written'}")
    for word in words:
        if word not in lines[0]:
            raise TestFailure(f"h-report's line {lines[0]!r} does not say {word!r}")
    print(f"ok: {lines[0]}")


def expect_page(h_report, h_dump, trace, output, texts):
    result, stderr = report(h_report, h_dump, trace, output)
    if result.returncode != 0 or not output.exists():
        raise TestFailure(f"expected a page; h-report exited {result.returncode}: {stderr!r}")
    page = output.read_text(encoding="utf-8")
    for text in texts:
        if text not in page:
            raise TestFailure(f"the page does not show {text!r}")
    print(f"ok: page written, showing {', '.join(map(repr, texts))}")


def stand_in_cases(h_report, scratch):
    trace = scratch / "trace.h"
    trace.write_bytes(b"stand-in")
    output = scratch / "report.html"
    # 1. Bytes that are not UTF-8 in the JSON.
    latin1 = encoded(valid_trace(mpi="MPI")).replace(b'"MPI"', b'"caf\xe9"')
    expect_one_line(h_report, fake_h_dump(scratch, "latin1", latin1, encoded(MATRIX), encoded(CALLS)), trace,
                    output, [str(trace), "no valid JSON"])
    # 2. Start times that are no date.
    for start in (1e300, 2**70, -(2**70)):
        h_dump = fake_h_dump(scratch, "start", encoded(valid_trace(start_time=start)), encoded(MATRIX), encoded(CALLS))
        expect_page(h_report, h_dump, trace, output, [f"{start} s since 1970 (not a date)"])
    # An incomplete trace (h-merge's) says so, with where each rank stopped.
    stops = [{"rank": 0, "calls": 12345, "reason": "SIGTERM"}, {"rank": 1, "calls": 7, "reason": "MPI_Abort"}]
    incomplete = valid_trace(run_id="00c0ffee", host="node7", incomplete=True, stops=stops)
    incomplete["body"] = incomplete.pop("body")  # h-dump writes the body last
    h_dump = fake_h_dump(scratch, "incomplete", encoded(incomplete), encoded(MATRIX), encoded(CALLS))
    expect_page(h_report, h_dump, trace, output, ["00c0ffee on node7", "rank 0 stopped after 12,345 calls (SIGTERM)",
                                                  "rank 1 stopped after 7 calls (MPI_Abort)"])
    # 3. A missing field, and fields of odd types.
    missing = valid_trace()
    del missing["body"]
    for name, case in (("missing", missing), ("odd-ranks", valid_trace(ranks="many")),
                       ("odd-body", valid_trace(body={"op": 1})),
                       ("odd-event", valid_trace(body=[{"op": "MPI_Send"}]))):
        h_dump = fake_h_dump(scratch, name, encoded(case), encoded(MATRIX), encoded(CALLS))
        expect_one_line(h_report, h_dump, trace, output, [str(trace), "not what h-report reads"])
    expect_one_line(h_report, fake_h_dump(scratch, "odd-matrix", encoded(valid_trace()), encoded({"ranks": 2}),
                                          encoded(CALLS)), trace, output, [str(trace), "not what h-report reads"])
    # A body of 200,000 events, then a loop of 20,000 (more JSON than h-report reads at once), then one
    # more: h-report reads it event by event, and the page counts them all and lists the first 500.
    event = valid_trace()["body"][0]
    big = valid_trace(body=[event] * 200_000 + [{"loop": 3, "body": [event] * 20_000}, event])
    h_dump = fake_h_dump(scratch, "big", encoded(big), encoded(MATRIX), encoded(CALLS))
    expect_page(h_report, h_dump, trace, output, ["<th>Events and loops in the trace</th><td>220,002</td>",
                                                  "Only the first 500 of 220,002 events and loops are shown"])
    # 4. Loops nested deeper than Python recurses.
    depth = 100_000
    deep = b'{"loop": 2, "body": [' * depth + b"]}" * depth
    body = encoded(valid_trace(body=[])).replace(b'"body": []', b'"body": [' + deep + b"]")
    expect_one_line(h_report, fake_h_dump(scratch, "deep", body, encoded(MATRIX), encoded(CALLS)), trace, output,
                    [str(trace)])
    # 5. h-dump's own message, not UTF-8.
    h_dump = fake_h_dump(scratch, "stderr", stderr=b"h-dump: trace.h: a name \xff\xfe is bad\n")
    expect_one_line(h_report, h_dump, trace, output, ["a name \ufffd\ufffd is bad"])


def refused(h_report, h_dump, trace, output, result):
    """Whether h-dump's reader refused the trace in one line naming it (a validating reader may hold
    names to UTF-8, or counts to a limit): then h-report must say so in one line too, and the case
    has nothing more to check."""
    lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
    if result.returncode == 0:
        return False
    if result.returncode != 1 or len(lines) != 1 or not lines[0].startswith(f"h-dump: {trace}: ") or result.stdout:
        raise TestFailure(f"h-dump failed other than in one line naming {trace}: {result.returncode}, {lines!r}")
    print(f"ok: the reader refuses it: {lines[0]}")
    expect_one_line(h_report, h_dump, trace, output, [str(trace)])
    return True


def real_cases(h_report, h_dump, write_hostile_trace, scratch):
    names_case(h_report, h_dump, write_hostile_trace, scratch, scratch / "report.html")
    huge_loop_case(h_report, h_dump, write_hostile_trace, scratch, scratch / "report.html")


def names_case(h_report, h_dump, write_hostile_trace, scratch, output):
    # 6. Names that are not UTF-8. (A reader that refuses them, or 10^15 iterations, in one line
    # passes too: the case is then that refusal, in h-dump and h-report alike.)
    trace = scratch / "non_utf8.h"
    if run([write_hostile_trace, "non_utf8", trace]).returncode != 0:
        raise TestFailure("write_hostile_trace non_utf8 failed")
    dumped = run([h_dump, "--json", trace])
    if refused(h_report, h_dump, trace, output, dumped):
        return
    header = json.loads(dumped.stdout.decode("utf-8"))  # strict: any byte that is not UTF-8 fails here
    expected = {"mpi": "lib\ufffd", "command": "./program caf\ufffd \x01"}
    for field, text in expected.items():
        if header[field] != text:
            raise TestFailure(f"h-dump --json's {field} is {header[field]!r}, not {text!r}")
    if header["file_names"] != {"0": "r\ufffdsultat.dat", "1": "\ufffd\ufffd.log"}:
        raise TestFailure(f"h-dump --json's file names are {header['file_names']!r}")
    print("ok: h-dump --json of names that are not UTF-8 is valid UTF-8, U+FFFD where the bytes were")
    expect_page(h_report, h_dump, trace, output, ["r\ufffdsultat.dat", "lib\ufffd"])


def huge_loop_case(h_report, h_dump, write_hostile_trace, scratch, output):
    # 7. 10^18 calls per rank.
    trace = scratch / "huge_loop.h"
    if run([write_hostile_trace, "huge_loop", trace]).returncode != 0:
        raise TestFailure("write_hostile_trace huge_loop failed")
    sends = 1000 * 10**15  # per rank, as write_hostile_trace builds them
    calls = run([h_dump, "--calls", trace])
    if refused(h_report, h_dump, trace, output, calls):
        return
    expected_lines = ["MPI_Barrier 2", f"MPI_Send {2 * sends}", f"total {2 * sends + 2}"]
    if calls.returncode != 0 or calls.stdout.decode().split("\n")[:3] != expected_lines:
        raise TestFailure(f"h-dump --calls: {calls.returncode}, {calls.stdout!r}, {calls.stderr!r}")
    print(f"ok: h-dump --calls counts {2 * sends} sends exactly")
    matrix = json.loads(run([h_dump, "--matrix", "--json", trace]).stdout)
    if sorted((p["from"], p["to"], p["messages"], p["bytes"]) for p in matrix["pairs"]) != \
            [(0, 1, sends, 8 * sends), (1, 0, sends, 8 * sends)]:
        raise TestFailure(f"h-dump --matrix --json: {matrix!r}")
    print("ok: h-dump --matrix --json has 10^18 messages each way, exactly")
    sequence = run([h_dump, "--sequence", trace])
    lines = sequence.stderr.decode().strip().splitlines()
    expected_line = (f"h-dump: {trace}: the sequence has {2 * sends + 2} calls, more than --max-calls 100000000")
    if sequence.returncode != 1 or sequence.stdout or lines != [expected_line]:
        raise TestFailure(f"h-dump --sequence: {sequence.returncode}, {sequence.stdout[:200]!r}, {lines!r}")
    print(f"ok: {expected_line}")
    few = run([h_dump, "--sequence", "--max-calls", "nine", trace])
    if few.returncode != 2 or b"--max-calls wants a whole number" not in few.stderr:
        raise TestFailure(f"h-dump --max-calls nine: {few.returncode}, {few.stderr!r}")
    expect_page(h_report, h_dump, trace, output, [f"{2 * sends + 2:,}"])


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--h-report", required=True)
    parser.add_argument("--h-dump", required=True)
    parser.add_argument("--write-hostile-trace", required=True)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="report-input-") as directory:
        scratch = pathlib.Path(directory)
        try:
            stand_in_cases(os.path.abspath(args.h_report), scratch)
            real_cases(os.path.abspath(args.h_report), args.h_dump, args.write_hostile_trace, scratch)
        except TestFailure as failure:
            print(f"FAIL: {failure}", file=sys.stderr)
            return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
