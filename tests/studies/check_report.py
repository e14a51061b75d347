#!/usr/bin/env python3
"""End-to-end test of h-report: trace two shipped programs, write their reports, open them in
headless Chromium, and check what the pages show against what the programs did.

    check_report.py --h-trace PATH --h-dump PATH --h-report PATH --h-replay PATH --ring PROGRAM
                    --convergence PROGRAM --load-imbalance PROGRAM [--smpirun PATH --h-replay-smpi PATH
                    --platform XML] [--mpirun PATH] [--chromium PATH] [--keep]

1. Chromium first shows that it can see what this test looks for: a page with a console error and a
   missing image, and an XHTML page with a markup error, must be caught. A Chromium whose log or DOM
   no longer shows them fails the test rather than letting every report pass.
2. ring (7 laps at 4 ranks, precision 100): rank r sends 7 messages of 32 bytes to rank r+1 mod 4, as
   tests/mpi/programs/ring.c does. The report's heat map must have 224 bytes in exactly those cells
   and 0 elsewhere, its pair table 7 messages and 224 bytes for exactly those pairs, and its calls
   table 7 MPI_Send and 7 MPI_Recv on every rank. A lossless ring has no histograms. Its timeline
   (h-dump --chrome-trace) must draw, for each rank, 7 MPI_Send, 7 MPI_Recv and 1 MPI_Allreduce and
   nothing else, none overlapping the next; its stacked bars one bar per rank with computation, MPI
   and I/O parts, none below 0, no I/O (the ring does none), and MPI the sum of that rank's calls in
   the timeline (within 1%). With --timeline-ranks 1,3 the timeline draws exactly ranks 1 and 3 (and
   h-report leaves no temporary file behind); a bad list (0-x, 3-1, a rank the trace does not have)
   exits non-zero in one line and writes nothing; and an h-dump that refuses the timeline (too many
   calls) leaves its pictures out with its reason, the page written.
3. convergence (10 timesteps at 4 ranks, precision 0): every value the merge turned into a histogram
   must have its chart (as many as h-dump --json has), whose bars add up to the histogram's count;
   the inner loop's count is one, within the 38..42 iterations the program documents; the matrix's
   messages must add up to the inner iterations the program prints (one send per rank and
   iteration), within 1% (loop counts count by their means), and its bytes to 32 per message.
4. Every page, as text/html and as XHTML (the same file named .xhtml): Chromium logs no console
   message, loads nothing but the page, and finds no markup error (an XML parse error shows as a
   <parsererror> element in the DOM; an HTML parser would repair it silently). The file itself has
   no script, no external reference and is well-formed XML. The checks of 2 and 3 read the DOM
   Chromium built from the HTML page (--dump-dom), by class names and data- attributes.
5. A truncated trace and a missing one: h-report exits 1 with one line naming the file, writes nothing.
6. load_imbalance (12 iterations at 4 ranks, rank 0 computing 10 ms each, the others 2 ms), replayed
   with h-replay --report-json (with --smpirun and --h-replay-smpi, on SimGrid's simulated platform,
   where the waits are deterministic; else by mpirun, whose times are noise and not checked), then
   its page with --replay-report: the section "Who waited for whom" must draw one bar per rank whose
   segments are that rank's late_sender, late_receiver and wait_at_collective seconds in the report
   (to 6 significant digits), and list the report's sites in its order with their operation, kind,
   seconds and most waiting rank. Against the program: it sends no message, so no rank is a late
   sender or receiver; the first site is its MPI_Allreduce, waiting at a collective, in
   load_imbalance.c where the profile knows the file; and, simulated, rank 0 (the slow one, that the
   others wait for) waits less than a tenth of the rank that waits most. A report whose ranks are not
   the trace's is refused (exit 1, one line naming the file, no page); one whose wait_states is null
   gives a page that says the replay reported none.

Exit status 0 passes, 1 fails, 77 skips (no Chromium, or no mpirun), as Meson reads them. The
scratch directory is kept after a failure (and with --keep).
"""

import argparse
import html.parser
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "mpi"))
from mpi_launch import mpirun_command  # noqa: E402

SKIP = 77
RANKS = 4
RING_LAPS = 7
RING_MESSAGE_BYTES = 32  # ring.c: 4 long longs
CONVERGENCE_TIMESTEPS = 10
CONVERGENCE_MESSAGE_BYTES = 32  # convergence.c: 4 long longs
CONVERGENCE_ITERATIONS = (38, 42)  # convergence.c: FEWEST_ITERATIONS .. + ITERATION_SPREAD - 1
MESSAGES_TOLERANCE = 0.01
SPLIT_TOLERANCE = 0.01  # the bars' MPI time against the timeline's calls
OVERLAP_TOLERANCE_US = 0.002  # h-dump writes times to the nanosecond
TIMELINE_RANKS = [1, 3]
BAD_TIMELINE_RANKS = ("0-x", "3-1", str(RANKS))
LOAD_IMBALANCE_ARGS = ("12", "10", "2")  # iterations, rank 0's and the others' milliseconds each
WAIT_KINDS = ("late_sender", "late_receiver", "wait_at_collective")
WAIT_DIGITS = 1e-6  # the page's seconds against the report's: 6 significant digits
RANK_0_WAIT_SHARE = 0.1  # simulated, rank 0 waits less than this share of the longest wait
SMPI_QUIET = ["--log=xbt_cfg.thres:warning", "--log=smpi_config.thres:warning"]
RUN_TIMEOUT = 120
# The only absolute addresses a self-contained page may hold: the namespaces of its markup.
NAMESPACES = {"http://www.w3.org/1999/xhtml", "http://www.w3.org/2000/svg"}


class TestFailure(Exception):
    pass


class TimedOut(TestFailure):
    pass


def run(command, env=None, timeout=RUN_TIMEOUT):
    """Runs a command in its own process group, so that a time limit ends mpirun's ranks too."""
    print("$ " + " ".join(str(part) for part in command), flush=True)
    process = subprocess.Popen([str(part) for part in command], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env, start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, err = process.communicate()
        raise TimedOut(f"{command[0]} ran into the time limit of {timeout} s; the end of its stderr:\n"
                          f"{err[-3000:]}")
    return subprocess.CompletedProcess(command, process.returncode, out, err)


# ---- Chromium ----

class Chromium:
    def __init__(self, binary, profiles):
        self.binary = binary
        self.profiles = profiles
        self.loads = 0

    def load(self, page):
        """Opens `page` headless; returns the DOM Chromium built, the console messages it logged and
        the URLs it loaded. --v=1 makes it log each file it loads; console messages it logs anyway.
        Chromium is the instrument here, not what is tested: a load that runs past the time limit
        (twice under CI's load, a few seconds otherwise, cause unknown) is tried once more, with a
        profile of its own as every load has, and a second time limit shows the end of its log."""
        url = page.resolve().as_uri()
        for attempt in (1, 2):
            self.loads += 1
            profile = self.profiles / str(self.loads)
            try:
                result = run([self.binary, "--headless", "--disable-gpu", "--no-sandbox", f"--user-data-dir={profile}",
                              "--enable-logging=stderr", "--v=1", "--dump-dom", url])
                break
            except TimedOut:
                if attempt == 2:
                    raise
                print(f"chromium: no page after {RUN_TIMEOUT} s; trying once more", flush=True)
        if result.returncode != 0 or "<html" not in result.stdout:
            raise TestFailure(f"chromium could not open {page} (exit status {result.returncode}): "
                              f"{result.stderr[-2000:]}")
        console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
        loaded = re.findall(r"FileURLLoader::Start: (\S+)", result.stderr)
        return result.stdout, console, loaded


def check_chromium_sees_errors(chromium, directory):
    """Chromium must show the errors this test looks for, on pages made to have them."""
    noisy = directory / "console-error.html"
    noisy.write_text('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"/><title>t</title></head>'
                     '<body><p>text</p><img src="missing.png" alt=""/>'
                     '<script>console.error("deliberate");</script></body></html>\n')
    _, console, loaded = chromium.load(noisy)
    if not any("deliberate" in line for line in console):
        raise TestFailure("this chromium does not log console errors to stderr: the test could not see them")
    if not any(url.endswith("missing.png") for url in loaded):
        raise TestFailure("this chromium does not log the files a page loads: the test could not see them")
    broken = directory / "markup-error.xhtml"
    broken.write_text('<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head>'
                      '<meta charset="utf-8"/><title>t</title></head><body><p>text<br></p></body></html>\n')
    dom, _, _ = chromium.load(broken)
    if "<parsererror" not in dom:
        raise TestFailure("this chromium does not show XHTML markup errors in the DOM: the test could not see them")


# ---- the page ----

class Element:
    def __init__(self, tag, attributes, parent):
        self.tag = tag
        self.attributes = attributes
        self.parent = parent
        self.children = []
        self.texts = []

    def text(self):
        """The element's text, its children's included, spaces as in the markup."""
        return "".join(self.texts + [child.text() for child in self.children])

    def classes(self):
        return set(self.attributes.get("class", "").split())

    def find_all(self, tag=None, css_class=None):
        for child in self.children:
            if (tag is None or child.tag == tag) and (css_class is None or css_class in child.classes()):
                yield child
            yield from child.find_all(tag, css_class)

    def find(self, tag=None, css_class=None):
        return next(self.find_all(tag, css_class), None)


class DomBuilder(html.parser.HTMLParser):
    """The tree of Chromium's serialized DOM: elements, attributes and text (a child's text is kept by
    the child, so an element's text() is in order only where it has no children and text both)."""
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self):
        super().__init__()
        self.root = Element("#document", {}, None)
        self.current = self.root

    def handle_starttag(self, tag, attrs):
        element = Element(tag, {name: value or "" for name, value in attrs}, self.current)
        self.current.children.append(element)
        if tag not in self.VOID:
            self.current = element

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Element(tag, {name: value or "" for name, value in attrs}, self.current))

    def handle_data(self, data):
        self.current.texts.append(data)

    def handle_endtag(self, tag):
        element = self.current
        while element is not self.root and element.tag != tag:
            element = element.parent
        if element is not self.root:
            self.current = element.parent


def dom_of(text):
    builder = DomBuilder()
    builder.feed(text)
    builder.close()
    return builder.root


def check_file_is_self_contained(page, failures):
    text = page.read_text(encoding="utf-8")
    try:
        ElementTree.fromstring(text.split("\n", 1)[1] if text.startswith("<!DOCTYPE") else text)
    except ElementTree.ParseError as error:
        failures.append(f"{page.name}: not well-formed XML: {error}")
    if re.search(r"<script", text, re.IGNORECASE):
        failures.append(f"{page.name}: holds a script")
    for reference in re.findall(r'\b(?:src|href)="([^"]*)"', text):
        if not reference.startswith("#"):
            failures.append(f"{page.name}: refers to {reference}, outside the page")
    for address in set(re.findall(r"https?://[^\s\"')]+", text)) - NAMESPACES:
        failures.append(f"{page.name}: names {address}")
    if re.search(r"url\(|@import", text):
        failures.append(f"{page.name}: its style fetches something (url() or @import)")


def load_page(chromium, page, failures):
    """Opens the report as HTML and as XHTML; returns the DOM of the HTML page."""
    check_file_is_self_contained(page, failures)
    dom, console, loaded = chromium.load(page)
    failures.extend(f"{page.name}: console: {line}" for line in console)
    failures.extend(f"{page.name}: loaded {url}" for url in loaded if url != page.resolve().as_uri())
    as_xhtml = page.with_suffix(".xhtml")
    shutil.copyfile(page, as_xhtml)
    xhtml_dom, console, _ = chromium.load(as_xhtml)
    if "<parsererror" in xhtml_dom:
        error = re.search(r"<parsererror.*?</parsererror>", xhtml_dom, re.DOTALL)
        failures.append(f"{page.name}: markup error as XHTML: {re.sub('<[^>]+>', ' ', error.group(0)).strip()}")
    failures.extend(f"{as_xhtml.name}: console: {line}" for line in console)
    root = dom_of(dom)
    for section in ("header", "structure", "histograms", "matrix", "calls", "timeline"):
        if not any(e.attributes.get("id") == section for e in root.find_all("section")):
            failures.append(f"{page.name}: no section '{section}'")
    return root


def section(root, name):
    return next((e for e in root.find_all("section") if e.attributes.get("id") == name), Element("section", {}, None))


def expand_ranks(text):
    """'0-2,5' -> [0, 1, 2, 5]"""
    ranks = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        ranks.extend(range(int(first), int(last or first) + 1))
    return ranks


def calls_per_rank(root):
    """{rank: {function: calls}} from the calls table."""
    calls = {}
    for row in section(root, "calls").find_all("tr", "rank-calls"):
        counts = {cell.attributes["data-op"]: float(cell.attributes["data-calls"]) for cell in row.find_all("td")}
        for rank in expand_ranks(row.attributes["data-ranks"]):
            calls[rank] = counts
    return calls


def matrix_cells(root):
    """{(sender, receiver): bytes} from the heat map's cells, and the pair table's
    {(sender, receiver): (messages, bytes)}."""
    matrix = section(root, "matrix")
    heat_map = matrix.find("svg", "heat-map")
    if heat_map is None:
        return None, None
    cells = {}
    for rect in heat_map.find_all("rect"):
        cell = rect.attributes
        if "data-row" in cell:
            cells[int(cell["data-row"]), int(cell["data-column"])] = float(cell["data-value"])
    pairs = {}
    for row in matrix.find_all("tr", "pair"):
        pair = row.attributes
        pairs[int(pair["data-from"]), int(pair["data-to"])] = (float(pair["data-messages"]), float(pair["data-bytes"]))
    return cells, pairs


# ---- the two programs ----

def trace(args, program, program_args, precision, trace_path):
    env = dict(os.environ, HTRACE_FILE=str(trace_path), MERGE_PRECISION=str(precision))
    env.pop("CALL_LOG_DIR", None)
    result = run(mpirun_command(args.mpirun, RANKS, [args.h_trace, program, *program_args]), env=env)
    if result.returncode != 0 or not trace_path.is_file():
        raise TestFailure(f"tracing {program} failed (exit status {result.returncode}):\n"
                          f"{result.stdout}{result.stderr}")
    return result.stdout


def report(args, trace_path, page, options=(), h_dump=None, env=None):
    result = run([sys.executable, args.h_report, "--h-dump", h_dump or args.h_dump, trace_path, "-o", page, *options],
                 env=env)
    if result.returncode != 0:
        raise TestFailure(f"h-report {trace_path} exited {result.returncode}: {result.stderr}")


def check_ring(args, chromium, directory, failures):
    trace_path = directory / "ring.h"
    trace(args, args.ring, [str(RING_LAPS)], 100, trace_path)
    page = directory / "ring.html"
    report(args, trace_path, page)
    root = load_page(chromium, page, failures)

    expected_bytes = RING_LAPS * RING_MESSAGE_BYTES
    right = {(rank, (rank + 1) % RANKS) for rank in range(RANKS)}
    cells, pairs = matrix_cells(root)
    if cells is None:
        failures.append("ring.html: no heat map (svg.heat-map) in the matrix section")
    else:
        expected_cells = {(s, r): (expected_bytes if (s, r) in right else 0)
                          for s in range(RANKS) for r in range(RANKS)}
        if cells != expected_cells:
            failures.append(f"ring.html: heat map {sorted(cells.items())}, expected {sorted(expected_cells.items())}")
        expected_pairs = {pair: (RING_LAPS, expected_bytes) for pair in right}
        if pairs != expected_pairs:
            failures.append(f"ring.html: pair table {sorted(pairs.items())}, expected {sorted(expected_pairs.items())}")
    calls = calls_per_rank(root)
    for rank in range(RANKS):
        mine = calls.get(rank, {})
        if mine.get("MPI_Send") != RING_LAPS or mine.get("MPI_Recv") != RING_LAPS or mine.get("MPI_Allreduce") != 1:
            failures.append(f"ring.html: rank {rank} calls {mine}, expected {RING_LAPS} MPI_Send, {RING_LAPS} "
                            "MPI_Recv and 1 MPI_Allreduce")
    if any(True for _ in section(root, "histograms").find_all("figure", "histogram")):
        failures.append("ring.html: a lossless ring trace shows histograms")
    check_profile_pictures(root, failures)
    calls = check_ring_timeline(root, "ring.html", list(range(RANKS)), failures)
    check_rank_split(root, calls, failures)
    check_timeline_ranks(args, chromium, directory, trace_path, failures)
    check_bad_timeline_ranks(args, directory, trace_path, failures)
    check_timeline_refused(args, directory, trace_path, failures)


def check_profile_pictures(root, failures):
    """The ring's profile: each site's calls as the program made them, and both charts drawn."""
    profile = section(root, "profile")
    calls = {}
    for row in profile.find_all("tr", "site"):
        calls[row.attributes["data-op"]] = calls.get(row.attributes["data-op"], 0) + float(row.attributes["data-calls"])
    for op, expected in (("MPI_Send", RING_LAPS * RANKS), ("MPI_Recv", RING_LAPS * RANKS), ("MPI_Allreduce", RANKS)):
        if calls.get(op) != expected:
            failures.append(f"ring.html: the profile's sites call {op} {calls.get(op)} times, expected {expected}")
    for chart, bars in (("rank-times-chart", 9), ("sites-chart", None)):
        svg = profile.find("svg", chart)
        values = [] if svg is None else [float(r.attributes["data-value"]) for r in svg.find_all("rect")
                                         if "data-value" in r.attributes]
        if not values or (bars is not None and len(values) != bars) or max(values) <= 0:
            failures.append(f"ring.html: the profile's {chart} has bars {values}")


def timeline_calls(root):
    """{rank: [(op, start us, duration us)] in time order} from the timeline's call rects; None
    without a timeline chart."""
    chart = section(root, "timeline").find("svg", "timeline-chart")
    if chart is None:
        return None
    calls = {}
    for rect in chart.find_all("rect"):
        call = rect.attributes
        if "data-op" in call:
            calls.setdefault(int(call["data-rank"]), []).append(
                (call["data-op"], float(call["data-start-us"]), float(call["data-dur-us"])))
    return {rank: sorted(mine, key=lambda call: call[1]) for rank, mine in calls.items()}


def check_ring_timeline(root, name, ranks, failures):
    """Each of `ranks` draws the ring's calls, as many of each as the program makes, one after another;
    returns the calls drawn."""
    calls = timeline_calls(root)
    if calls is None:
        failures.append(f"{name}: no timeline (svg.timeline-chart) in the timeline section")
        return {}
    if sorted(calls) != ranks:
        failures.append(f"{name}: the timeline draws ranks {sorted(calls)}, expected {ranks}")
    expected = {"MPI_Send": RING_LAPS, "MPI_Recv": RING_LAPS, "MPI_Allreduce": 1}
    for rank, mine in sorted(calls.items()):
        counts = {}
        for op, _, _ in mine:
            counts[op] = counts.get(op, 0) + 1
        if counts != expected:
            failures.append(f"{name}: the timeline draws rank {rank}'s calls {counts}, the ring makes {expected}")
        for (op, start, duration), (next_op, next_start, _) in zip(mine, mine[1:]):
            if start + duration > next_start + OVERLAP_TOLERANCE_US:
                failures.append(f"{name}: rank {rank}'s {op} at {start} us lasting {duration} us overlaps its "
                                f"{next_op} at {next_start} us")
                break
    return calls


def check_rank_split(root, calls, failures):
    """One bar per rank, its parts computation, MPI and I/O; no I/O in a ring, and its MPI time the
    time of its calls the timeline draws."""
    chart = section(root, "timeline").find("svg", "rank-split-chart")
    bars = {}
    for rect in ([] if chart is None else chart.find_all("rect")):
        segment = rect.attributes
        if "data-part" in segment:
            bars.setdefault(int(segment["data-rank"]), {})[segment["data-part"]] = float(segment["data-value"])
    if sorted(bars) != list(range(RANKS)):
        failures.append(f"ring.html: the time per rank (svg.rank-split-chart) has bars for ranks {sorted(bars)}, "
                        f"expected 0-{RANKS - 1}")
    for rank, parts in sorted(bars.items()):
        if set(parts) != {"computation", "mpi", "io"} or min(parts.values()) < 0 or parts["io"] != 0:
            failures.append(f"ring.html: rank {rank}'s bar has parts {parts}, expected computation, mpi and io, "
                            "none below 0, and no I/O")
            continue
        in_calls = sum(duration for _, _, duration in calls.get(rank, [])) / 1e6
        if in_calls <= 0 or abs(parts["mpi"] - in_calls) > SPLIT_TOLERANCE * in_calls:
            failures.append(f"ring.html: rank {rank}'s bar has {parts['mpi']} s in MPI, its calls in the timeline "
                            f"{in_calls} s")


def check_timeline_ranks(args, chromium, directory, trace_path, failures):
    """--timeline-ranks 1,3 draws those two ranks, and h-report removes the timeline file it read."""
    page = directory / "ring-ranks.html"
    scratch = directory / "h-report-tmp"
    scratch.mkdir()
    report(args, trace_path, page, ["--timeline-ranks", ",".join(map(str, TIMELINE_RANKS))],
           env=dict(os.environ, TMPDIR=str(scratch)))
    root = load_page(chromium, page, failures)
    check_ring_timeline(root, page.name, TIMELINE_RANKS, failures)
    left = sorted(path.name for path in scratch.iterdir())
    if left:
        failures.append(f"h-report left {left} in its temporary directory")


def check_bad_timeline_ranks(args, directory, trace_path, failures):
    for serial, ranks in enumerate(BAD_TIMELINE_RANKS):
        page = directory / f"bad-ranks-{serial}.html"
        result = run([sys.executable, args.h_report, "--h-dump", args.h_dump, trace_path, "-o", page,
                      "--timeline-ranks", ranks])
        lines = result.stderr.strip().splitlines()
        if (result.returncode == 0 or len(lines) != 1 or not lines[0].startswith("h-report:")
                or "--timeline-ranks" not in lines[0] or page.exists()):
            failures.append(f"h-report --timeline-ranks {ranks}: exit status {result.returncode}, stderr "
                            f"{result.stderr!r}, report written: {page.exists()}; expected an error in one line "
                            "naming --timeline-ranks, and no report")


def check_timeline_refused(args, directory, trace_path, failures):
    """An h-dump that refuses --chrome-trace (as it refuses a trace of more than --max-calls calls):
    the page is written, without the timeline's pictures, saying why."""
    reason = "the timeline has more than --max-calls 10 calls"
    h_dump = directory / "refusing-h-dump"
    h_dump.write_text(f"""#!{sys.executable}
import os, sys
if "--chrome-trace" in sys.argv:
    sys.stderr.write("h-dump: {reason}\\n")
    sys.exit(1)
os.execv({os.path.abspath(args.h_dump)!r}, [{os.path.abspath(args.h_dump)!r}] + sys.argv[1:])
""")
    h_dump.chmod(0o755)
    page = directory / "ring-refused.html"
    report(args, trace_path, page, h_dump=h_dump)
    text = page.read_text(encoding="utf-8")
    if reason not in text or "timeline-chart" in text or "rank-split-chart" in text or 'id="timeline"' not in text:
        failures.append(f"{page.name}: an h-dump that refuses the timeline should leave its pictures out, saying "
                        f"'{reason}'")


def histograms_in(body):
    """How many values of an h-dump --json body are histograms (loop counts included)."""
    count = 0
    for node in body:
        if "loop" in node:
            count += isinstance(node["loop"], dict) and "histogram" in node["loop"]
            count += histograms_in(node["body"])
        else:
            count += sum(isinstance(v, dict) and "histogram" in v for v in node["params"].values())
    return count


def check_convergence(args, chromium, directory, failures):
    trace_path = directory / "convergence.h"
    output = trace(args, args.convergence, [str(CONVERGENCE_TIMESTEPS)], 0, trace_path)
    found = re.search(r"inner iterations \(all ranks\) (\d+)", output)
    if not found:
        raise TestFailure(f"convergence did not print its inner iterations: {output}")
    messages = int(found.group(1))
    page = directory / "convergence.html"
    report(args, trace_path, page)
    root = load_page(chromium, page, failures)

    dumped = run([args.h_dump, "--json", trace_path])
    expected_charts = histograms_in(json.loads(dumped.stdout)["body"])
    figures = list(section(root, "histograms").find_all("figure", "histogram"))
    if expected_charts == 0 or len(figures) != expected_charts:
        failures.append(f"convergence.html: {len(figures)} histogram charts, the trace has {expected_charts} "
                        "histograms (at least one expected at precision 0)")
    for figure in figures:
        name = figure.attributes.get("id")
        chart = figure.find("svg", "bar-chart")
        if chart is None:
            failures.append(f"convergence.html: histogram {name} has no bar chart")
            continue
        bars = sum(float(rect.attributes["data-value"]) for rect in chart.find_all("rect")
                   if "data-value" in rect.attributes)
        if bars != float(figure.attributes["data-count"]):
            failures.append(f"convergence.html: histogram {name}: bars add up to {bars}, its count is "
                            f"{figure.attributes['data-count']}")
        for end in ("min-rank", "max-rank"):
            if not 0 <= int(figure.attributes[f"data-{end}"]) < RANKS:
                failures.append(f"convergence.html: histogram {name}: {end} {figure.attributes[f'data-{end}']}")
    loop_counts = [f for f in figures if f.attributes.get("data-role") == "iterations"]
    low, high = CONVERGENCE_ITERATIONS
    if not loop_counts:
        failures.append("convergence.html: no chart of the inner loop's count")
    for figure in loop_counts:
        if not low <= int(figure.attributes["data-min"]) <= int(figure.attributes["data-max"]) <= high:
            failures.append(f"convergence.html: loop count from {figure.attributes['data-min']} to "
                            f"{figure.attributes['data-max']}, the program iterates {low}..{high} times")

    cells, pairs = matrix_cells(root)
    if cells is None:
        failures.append("convergence.html: no heat map (svg.heat-map) in the matrix section")
        return
    sent = sum(m for m, _ in pairs.values())
    sent_bytes = sum(b for _, b in pairs.values())
    if abs(sent - messages) > MESSAGES_TOLERANCE * messages:
        failures.append(f"convergence.html: the matrix has {sent} messages, the program sent {messages}")
    if abs(sent_bytes - CONVERGENCE_MESSAGE_BYTES * sent) > 1e-6 * sent_bytes:
        failures.append(f"convergence.html: the matrix has {sent_bytes} bytes for {sent} messages of "
                        f"{CONVERGENCE_MESSAGE_BYTES} bytes")
    if abs(sum(cells.values()) - sent_bytes) > 1e-6 * sent_bytes:
        failures.append(f"convergence.html: the heat map has {sum(cells.values())} bytes, the pair table {sent_bytes}")


# ---- who waited for whom ----

def replay_report(args, trace_path, report_path):
    """Replays the trace with --report-json: on SimGrid where it is given, else by mpirun; returns
    whether the replay was simulated."""
    simulated = bool(args.smpirun and args.h_replay_smpi and args.platform)
    if simulated:
        command = [args.smpirun, "-platform", os.path.abspath(args.platform), "-np", str(RANKS), *SMPI_QUIET,
                   args.h_replay_smpi, "--report-json", report_path, trace_path]
    else:
        command = mpirun_command(args.mpirun, RANKS, [args.h_replay, "--report-json", report_path, trace_path])
    result = run(command)
    if result.returncode != 0 or not report_path.is_file():
        raise TestFailure(f"replaying {trace_path.name} failed (exit status {result.returncode}):\n"
                          f"{result.stdout}{result.stderr}")
    return simulated


def same_seconds(shown, given):
    return abs(shown - given) <= WAIT_DIGITS * max(abs(shown), abs(given))


def wait_bars(waits):
    """{rank: {kind: seconds}} from the wait-state chart's segments; None without the chart."""
    chart = waits.find("svg", "waits-chart")
    if chart is None:
        return None
    bars = {}
    for rect in chart.find_all("rect"):
        segment = rect.attributes
        if "data-part" in segment:
            bars.setdefault(int(segment["data-rank"]), {})[segment["data-part"]] = float(segment["data-value"])
    return bars


def check_wait_bars(bars, replay, simulated, failures):
    """The bars against the report's per_rank, and against the program: no messages, so no late
    sender or receiver; simulated, rank 0 is the one the others wait for."""
    expected = {entry["rank"]: {kind: entry[kind] for kind in WAIT_KINDS}
                for entry in replay["wait_states"]["per_rank"]}
    if sorted(bars) != list(range(RANKS)):
        failures.append(f"load_imbalance.html: the wait-state bars are for ranks {sorted(bars)}, "
                        f"expected 0-{RANKS - 1}")
    for rank, parts in sorted(bars.items()):
        given = expected.get(rank, {})
        if set(parts) != set(WAIT_KINDS) or not all(same_seconds(parts[kind], given.get(kind, -1))
                                                    for kind in WAIT_KINDS):
            failures.append(f"load_imbalance.html: rank {rank}'s wait-state bar is {parts}, the replay report "
                            f"says {given}")
        if parts.get("late_sender") != 0 or parts.get("late_receiver") != 0:
            failures.append(f"load_imbalance.html: rank {rank} waits as a late sender or receiver ({parts}), in a "
                            "program that sends no message")
    if simulated and bars:
        longest = max(parts.get("wait_at_collective", 0) for parts in bars.values())
        rank_0 = bars.get(0, {}).get("wait_at_collective")
        if longest <= 0 or rank_0 is None or rank_0 >= RANK_0_WAIT_SHARE * longest:
            failures.append(f"load_imbalance.html: rank 0 waits {rank_0} s at collectives, the rank that waits "
                            f"most {longest} s; rank 0 is the slow one, so it should wait less than "
                            f"{RANK_0_WAIT_SHARE:.0%} of that")


def check_wait_sites(args, waits, replay, trace_path, failures):
    """The site table against the report's sites, in order, and its first row against the program:
    its one MPI_Allreduce, waiting at a collective, in load_imbalance.c where the profile has a file."""
    rows = list(waits.find_all("tr", "wait-site"))
    shown = [(row.attributes["data-op"], row.attributes["data-kind"], float(row.attributes["data-seconds"]),
              int(row.attributes["data-most-rank"])) for row in rows]
    given = [(site["op"], site["kind"], site["seconds"], site["most_rank"]) for site in replay["wait_states"]["sites"]]
    if len(shown) != len(given) or any(a[:2] != b[:2] or a[3] != b[3] or not same_seconds(a[2], b[2])
                                       for a, b in zip(shown, given)):
        failures.append(f"load_imbalance.html: the waiting sites are {shown}, the replay report's {given}")
    if not shown or shown[0][:2] != ("MPI_Allreduce", "wait_at_collective"):
        failures.append(f"load_imbalance.html: the first waiting site is {shown[:1]}, expected the program's "
                        "MPI_Allreduce waiting at a collective")
        return
    profile = json.loads(run([args.h_dump, "--profile", "--json", trace_path]).stdout)
    location = next((site.get("location") or {} for site in profile["sites"]
                     if site["site"] == rows[0].attributes["data-site"]), {})
    where = list(rows[0].find_all("td"))[-1].text().strip()
    if location.get("file") and not where.startswith("load_imbalance.c:"):
        failures.append(f"load_imbalance.html: the MPI_Allreduce's site is at '{where}', expected load_imbalance.c")


def check_waits(args, chromium, directory, failures):
    trace_path = directory / "load_imbalance.h"
    trace(args, args.load_imbalance, LOAD_IMBALANCE_ARGS, 100, trace_path)
    report_path = directory / "load_imbalance-replay.json"
    simulated = replay_report(args, trace_path, report_path)
    replay = json.loads(report_path.read_text())
    if not isinstance(replay.get("wait_states"), dict):
        raise TestFailure(f"{report_path.name} has no wait states: {replay.get('wait_states')!r}")
    page = directory / "load_imbalance.html"
    report(args, trace_path, page, ["--replay-report", report_path])
    root = load_page(chromium, page, failures)
    waits = section(root, "waits")
    heading = waits.find("h2")
    if heading is None or heading.text().strip() != "Who waited for whom":
        failures.append("load_imbalance.html: no section 'waits' headed 'Who waited for whom'")
        return
    bars = wait_bars(waits)
    if bars is None:
        failures.append("load_imbalance.html: no wait-state chart (svg.waits-chart) in the waits section")
    else:
        check_wait_bars(bars, replay, simulated, failures)
    check_wait_sites(args, waits, replay, trace_path, failures)
    check_other_replay_reports(args, directory, trace_path, replay, failures)


def check_other_replay_reports(args, directory, trace_path, replay, failures):
    """A report of a replay of other ranks is refused in one line; one without wait states is shown
    as such."""
    wrong = directory / "wrong-ranks.json"
    wrong.write_text(json.dumps(dict(replay, ranks=RANKS + 1)))
    page = directory / "wrong-ranks.html"
    result = run([sys.executable, args.h_report, "--h-dump", args.h_dump, trace_path, "-o", page,
                  "--replay-report", wrong])
    lines = result.stderr.strip().splitlines()
    if (result.returncode != 1 or len(lines) != 1 or not lines[0].startswith(f"h-report: {wrong}: ")
            or page.exists()):
        failures.append(f"h-report --replay-report {wrong.name}: exit status {result.returncode}, stderr "
                        f"{result.stderr!r}, report written: {page.exists()}; expected status 1, one line naming "
                        "the file, and no report")
    none = directory / "no-waits.json"
    none.write_text(json.dumps(dict(replay, wait_states=None)))
    page = directory / "no-waits.html"
    report(args, trace_path, page, ["--replay-report", none])
    text = page.read_text(encoding="utf-8")
    if 'id="waits"' not in text or "waits-missing" not in text or "waits-chart" in text:
        failures.append(f"{page.name}: a replay report whose wait_states is null should give a waits section that "
                        "says so, without a chart")


def check_damaged_traces(args, directory, failures):
    whole = (directory / "ring.h").read_bytes()
    cut = directory / "ring-cut.h"
    cut.write_bytes(whole[: len(whole) // 2])
    for trace_path, problem in ((cut, "truncated"), (directory / "no-such-trace.h", "No such file")):
        page = directory / f"{trace_path.stem}.html"
        result = run([sys.executable, args.h_report, "--h-dump", args.h_dump, trace_path, "-o", page])
        lines = result.stderr.strip().splitlines()
        if (result.returncode != 1 or len(lines) != 1 or str(trace_path) not in lines[0]
                or problem not in lines[0] or page.exists()):
            failures.append(f"h-report {trace_path.name}: exit status {result.returncode}, stderr {result.stderr!r}, "
                            f"report written: {page.exists()}; expected status 1 and one line naming the file "
                            f"and '{problem}', and no report")


def parse_arguments(argv):
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    parser.add_argument("--h-trace", required=True)
    parser.add_argument("--h-dump", required=True)
    parser.add_argument("--h-report", required=True)
    parser.add_argument("--h-replay", required=True, help="the real MPI h-replay")
    parser.add_argument("--ring", required=True, help="tests/mpi's ring program")
    parser.add_argument("--convergence", required=True, help="tests/mpi's convergence program")
    parser.add_argument("--load-imbalance", required=True, help="tests/mpi's load_imbalance program")
    parser.add_argument("--smpirun", help="SimGrid's smpirun: replays load_imbalance simulated")
    parser.add_argument("--h-replay-smpi", help="h-replay for SimGrid, with --smpirun")
    parser.add_argument("--platform", help="the SimGrid platform, with --smpirun")
    parser.add_argument("--mpirun", default=shutil.which("mpirun"))
    parser.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser"))
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    return parser.parse_args(argv)


def main(argv):
    args = parse_arguments(argv)
    if not args.chromium:
        print("check_report.py: no chromium or chromium-browser here: skipped")
        return SKIP
    if not args.mpirun:
        print("check_report.py: no mpirun here: skipped")
        return SKIP
    directory = pathlib.Path(tempfile.mkdtemp(prefix="check-report."))
    chromium = Chromium(args.chromium, directory / "chromium-profiles")
    failures = []
    try:
        check_chromium_sees_errors(chromium, directory)
        check_ring(args, chromium, directory, failures)
        check_convergence(args, chromium, directory, failures)
        check_damaged_traces(args, directory, failures)
        check_waits(args, chromium, directory, failures)
    except TestFailure as failure:
        failures.append(str(failure))
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        print(f"scratch directory kept: {directory}")
        return 1
    print("PASS: the reports load without errors in Chromium and show what ring, convergence and load_imbalance "
          "did")
    if args.keep:
        print(f"scratch directory kept: {directory}")
    else:
        shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
