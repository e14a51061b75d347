#!/usr/bin/env python3
"""The conformance suite's table for bench/RESULTS.md, from a Meson test log.

    conformance_table.py BUILD_DIR        (or the path of a testlog.json)

Reads BUILD_DIR/meson-logs/testlog.json (one JSON object per test run and line, as `meson test`
writes it), keeps the tests of the `conformance` suite (named `<family>/<program>`), and takes from
each one's stdout the line tests/conformance/run_conformance.py prints last,

    conformance: p100=<state> p0=<state>

(states: full, partial, stall, refused, error, traced-failed, untraced-failed) and its `conformance-reason:
pP: <why>` lines. Prints a Markdown table by family -- programs, how many replay fully at p = 100 and
at p = 0, how many stall (at either precision) -- with the totals, then every program that does not
replay fully at some precision, with its state and reason. A test that printed no summary line (Meson
stopped it at its timeout, or it was skipped) is listed with Meson's result.

Exit status 0; 1 when the log holds no conformance test.
"""

import collections
import json
import pathlib
import re
import sys

SUMMARY = re.compile(r"^conformance: p100=(\S+) p0=(\S+)\s*$")
REASON = re.compile(r"^conformance-reason: (p100|p0|untraced): (.*)$")
EXPECTED = re.compile(r"^p = 0: expected failure \((.*)\): ")
VARIES = re.compile(r"^p = 0: varies with the run \((.*)\): ")


def suites_and_name(entry):
    """The test's suites and its own name. Meson 1.0 names a test in the log "project:suite / name"
    (suites joined by '+'); later versions also give "suite" as a list."""
    name = entry["name"]
    suites = list(entry.get("suite") or [])
    if " / " in name:
        prefix, name = name.split(" / ", 1)
        suites += prefix.split(":", 1)[-1].split("+")
    return [suite.split(":")[-1] for suite in suites], name


def read_results(build_dir):
    """{test name: result} for the conformance tests of the log (the last run of each name wins);
    a result is a dict: family, program, p100, p0, reasons {precision: why}, expected (the p = 0
    failure the test expects, or None), meson (Meson's verdict)."""
    log = pathlib.Path(build_dir)
    if log.is_dir():
        log = log / "meson-logs" / "testlog.json"
    results = {}
    for number, line in enumerate(log.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as error:
            sys.exit(f"conformance_table.py: {log}:{number}: not JSON: {error}")
        suites, name = suites_and_name(entry)
        if "conformance" not in suites:
            continue
        family, _, program = name.partition("/")
        result = {"family": family, "program": program or family, "p100": None, "p0": None, "reasons": {},
                  "expected": None, "meson": entry.get("result", "?")}
        for text in (entry.get("stdout") or "").splitlines():
            summary = SUMMARY.match(text)
            if summary:
                result["p100"], result["p0"] = summary.groups()
            reason = REASON.match(text)
            if reason:
                result["reasons"][reason.group(1)] = reason.group(2).strip()
            expected = EXPECTED.match(text)
            if expected:
                result["expected"] = expected.group(1).removeprefix("expected failure:").strip()
            varies = VARIES.match(text)
            if varies:
                result["expected"] = "varies with the run: " + varies.group(1)
        results[name] = result
    return results


def table(results):
    families = collections.OrderedDict()
    for name in sorted(results):
        families.setdefault(results[name]["family"], []).append(results[name])
    lines = ["| family | programs | full at p = 100 | full at p = 0 | refused (both) | stalls |",
             "|---|---:|---:|---:|---:|---:|"]
    totals = [0, 0, 0, 0, 0]
    for family, rows in families.items():
        counts = [len(rows), sum(r["p100"] == "full" for r in rows), sum(r["p0"] == "full" for r in rows),
                  sum(r["p100"] == "refused" and r["p0"] == "refused" for r in rows),
                  sum("stall" in (r["p100"], r["p0"]) for r in rows)]
        totals = [a + b for a, b in zip(totals, counts)]
        lines.append(f"| {family} | " + " | ".join(str(c) for c in counts) + " |")
    share = lambda n: f"{n} ({100 * n / totals[0]:.0f}%)" if totals[0] else str(n)
    lines.append(f"| **all** | **{totals[0]}** | **{share(totals[1])}** | **{share(totals[2])}** | **{totals[3]}** | "
                 f"**{totals[4]}** |")
    return lines


def not_full(results):
    lines = []
    for name in sorted(results):
        result = results[name]
        if result["p100"] is None:
            lines.append(f"- `{name}`: no result (Meson: {result['meson']})"
                         + (f": {result['reasons']['untraced']}" if "untraced" in result["reasons"] else ""))
            continue
        for precision in ("p100", "p0"):
            state = result[precision]
            if state == "full":
                continue
            reason = result["reasons"].get(precision, "")
            reason = reason.replace("|", "\\|")
            expected = (f" (expected: {result['expected']})" if precision == "p0" and result["expected"] else "")
            lines.append(f"- `{name}` at p = {precision[1:]}: **{state}**{expected}: {reason}")
    return lines


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    results = read_results(sys.argv[1])
    if not results:
        print(f"conformance_table.py: no test of the conformance suite in the test log of {sys.argv[1]}")
        return 1
    print("\n".join(table(results)))
    rest = not_full(results)
    if rest:
        print("\nNot replayed fully:\n")
        print("\n".join(rest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
