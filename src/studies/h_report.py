#!/usr/bin/env python3
"""h-report: one trace as one HTML page, to look at a job's communication in a browser, or to hand
on, without the tools: a single self-contained file (inline SVG and CSS, no scripts, nothing fetched).

    h-report TRACE [-o REPORT.html] [--timeline-ranks LIST] [--replay-report REPLAY.json] [--h-dump PATH]

The page shows, from `h-dump --json`, `h-dump --matrix --json`, `h-dump --calls --json`,
`h-dump --profile --json` and `h-dump --chrome-trace`:

1. the header: ranks, merge precision, histogram settings, seed, MPI library, command line, start
   time, the run's id and host, traced time, the file names the job used, and the trace's size; for a
   trace h-merge made of partial files, that it is incomplete and where each rank stopped;
2. the loop structure: the trace's events and loops, nested as `h-dump TRACE` shows them (the first
   MAX_STRUCTURE_NODES of them; the page says how many it left out);
3. every value that is a histogram (a parameter merged below precision 100, or a loop count) as a
   bar chart of its bins, with its count, mean and the ranks its minimum and maximum were seen on;
4. the point-to-point traffic between ranks as a heat map of bytes, sender rows and receiver columns
   (blocks of ranks above MAX_MATRIX_SIDE ranks), and the pairs with the most bytes as a table;
   collectives are not pairwise and are not in it;
5. per rank, the calls of each MPI function the trace stands for (ranks with the same counts share
   a row), and the calls per function for the whole job as a chart;
6. where the time went: the least, mean and most over the ranks of each rank's time computing, in
   MPI and in I/O (trace format 19) as a chart, and the call sites by their time inside calls as a
   chart (the first MAX_SITE_BARS) and a table (the first MAX_SITE_ROWS);
7. the timeline the trace expects (its order, its traced mean times; no rank waits for another): each
   rank's time in computation, MPI and I/O as stacked bars (the first MAX_SPLIT_RANKS ranks), and the
   calls of the ranks --timeline-ranks chooses (0-3,8; the first DEFAULT_TIMELINE_RANKS) as a Gantt
   chart that scrolls sideways (the first MAX_TIMELINE_SPANS calls in time). A trace of more than
   MAX_TIMELINE_CALLS calls, which h-dump refuses to lay out for h-report, has the page say so instead;
8. with --replay-report, who waited for whom in the replay whose `h-replay --report-json` file it
   names: each rank's seconds as a late sender, a late receiver and waiting at collectives as stacked
   bars (the first MAX_WAIT_RANKS ranks), and the call sites that waited longest as a table, with
   their place in the code where the profile knows it.

Numbers a program may want to read are in data- attributes: each heat-map cell has data-row (sender),
data-column (receiver) and data-value (bytes); each pair row data-from, data-to, data-messages and
data-bytes; each histogram figure its count, mean, min, max and their ranks; each call-site row
data-op, data-calls and data-seconds; each segment of the stacked bars data-rank, data-part
(computation, mpi, io) and data-value (seconds); each call of the timeline data-rank, data-op,
data-start-us and data-dur-us; each segment of the wait-state bars data-rank, data-part (late_sender,
late_receiver, wait_at_collective) and data-value (seconds); each waiting site's row data-site,
data-op, data-kind, data-seconds, data-ranks, data-most-rank and data-most-seconds.

The trace's JSON is read as h-dump writes it, its body one top-level event or loop at a time (the
timeline one call at a time), keeping only what the page shows: a lossless trace of millions of
events is hundreds of megabytes of JSON.

h-dump is the one given with --h-dump, else the one next to h-report (as it was called: in bin/),
else the one on PATH.

Exit status: 0 when the report is written; 1 when the trace cannot be read (missing, truncated,
corrupt: h-dump's message is passed on), when the --replay-report file cannot be read, is not JSON,
is of a replay of another number of ranks or has wait states of another shape (one line naming the
file), or when the report cannot be written; 2 for wrong arguments (a --timeline-ranks that is no
list of ranks, or names a rank the trace does not have) or no h-dump.
"""

import argparse
import codecs
import datetime
import heapq
import html
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import tempfile

# Installed, h-report is a link in bin/ to this script, beside its chart module.
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import svg_charts  # noqa: E402
from tool_paths import find_tool  # noqa: E402

# Caps that keep the page quick to open for traces of millions of calls or thousands of ranks; the
# page says whenever it leaves something out.
MAX_STRUCTURE_NODES = 500
MAX_HISTOGRAMS = 200
MAX_MATRIX_SIDE = 64
MAX_PAIRS_LISTED = 100
MAX_RANK_ROWS = 200
MAX_SITE_BARS = 15
MAX_SITE_ROWS = 100
# The timeline: h-dump writes it for at most MAX_TIMELINE_CALLS calls (read here, a Chrome trace of 10^8
# calls would take minutes and gigabytes); the bars show the first MAX_SPLIT_RANKS ranks, the Gantt
# chart the first MAX_TIMELINE_SPANS calls in time of the ranks chosen (the first
# DEFAULT_TIMELINE_RANKS, at most MAX_TIMELINE_ROWS), at most MAX_TIMELINE_WIDTH pixels wide.
MAX_TIMELINE_CALLS = 1_000_000
MAX_SPLIT_RANKS = 64
DEFAULT_TIMELINE_RANKS = 16
MAX_TIMELINE_ROWS = 256
MAX_TIMELINE_SPANS = 20_000
MAX_TIMELINE_WIDTH = 20_000
# The wait-state bars, one per rank, as many as the timeline's.
MAX_WAIT_RANKS = MAX_SPLIT_RANKS

# Symbolic values keep their MPI names (the trace stores them as these negative numbers).
PEER_ROLES = {"peer", "source", "root", "matched_peer", "cancelled_peer"}
TAG_ROLES = {"tag", "recv_tag", "matched_tag", "cancelled_tag"}
PEER_SYMBOLS = {-1: "ANY_SOURCE", -2: "PROC_NULL", -3: "ROOT"}
TAG_SYMBOLS = {-1: "ANY_TAG"}
RELATIVE_ROLES = {"peer", "source", "matched_peer", "cancelled_peer"}

STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 75em; }
h1 { font-size: 1.6em; }
h2 { font-size: 1.3em; border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; vertical-align: top; }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; }
code, .structure { font-family: monospace; }
.structure, .wide { overflow-x: auto; }
.structure ul { list-style: none; padding-left: 1.5em; margin: 0; border-left: 1px dotted #aaa; }
.structure > ul { border-left: none; padding-left: 0; }
.structure li { margin: 0.1em 0; white-space: nowrap; }
.structure .op { font-weight: bold; }
.structure .ranks { color: #555; }
.structure summary { cursor: pointer; color: #1f4f8f; }
.note { color: #555; font-size: 0.95em; }
figure { display: inline-block; margin: 0.5em 1em 1em 0; vertical-align: top; }
figcaption { font-size: 0.9em; max-width: 460px; }
"""


class ReportError(Exception):
    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


def find_h_dump(given):
    """The h-dump named on the command line, else the one next to h-report, else the one on PATH."""
    found = find_tool("h-dump", given, __file__)
    if found is None:
        raise ReportError("h-report: cannot find h-dump (next to h-report, or on PATH; --h-dump names it)", 2)
    return found


def h_dump_json(h_dump, options, trace):
    """What `h-dump OPTIONS --json TRACE` prints, parsed; h-dump's own one-line message if it fails."""
    try:
        run = subprocess.run([h_dump, *options, "--json", trace], capture_output=True)
    except OSError as error:
        raise ReportError(f"h-report: cannot run {h_dump}: {error.strerror}", 2)
    if run.returncode != 0:
        failed(run.returncode, run.stderr)
    try:
        return json.loads(run.stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        reason = "too deeply nested" if isinstance(error, RecursionError) else error
        raise ReportError(f"h-report: {trace}: {' '.join([h_dump, *options, '--json'])} wrote no valid JSON ({reason})")


class TraceSummary:
    """What the page shows of `h-dump --json TRACE`: the header; the body's first top-level events and
    loops (enough for MAX_STRUCTURE_NODES); how many events and loops there are; the first
    MAX_HISTOGRAMS histograms and how many there are."""

    def __init__(self, header):
        self.header = header
        self.kept = []
        self.kept_nodes = 0
        self.nodes = 0
        self.histograms = []
        self.histogram_count = 0

    def add(self, node):
        count = node_count([node])
        self.nodes += count
        found = collect_histograms([node])
        for node_of, role, path in found[:max(0, MAX_HISTOGRAMS - len(self.histograms))]:
            value = node_of["loop"] if role == "iterations" else node_of["params"][role]
            self.histograms.append(Histogram(len(self.histograms) + 1, role, (node_of, path), value["histogram"]))
        self.histogram_count += len(found)
        # Histograms keep their nodes (and the loops around them) anyway; the structure shows the first ones.
        if self.kept_nodes < MAX_STRUCTURE_NODES:
            self.kept.append(node)
            self.kept_nodes += count


BODY_START = '"body": ['
READ_SIZE = 1 << 20


def h_dump_trace(h_dump, trace):
    """`h-dump --json TRACE` read as it comes, its body one top-level event or loop at a time: a
    lossless trace of millions of events is hundreds of megabytes of JSON, more again as Python
    objects, of which the page shows a few hundred. h-dump writes the body last."""
    command = [h_dump, "--json", trace]
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as error:
        raise ReportError(f"h-report: cannot run {h_dump}: {error.strerror}", 2)
    try:
        summary, problem = read_body(process.stdout, trace, " ".join(command[:-1])), None
    except ReportError as error:
        summary, problem = None, error
    if problem is not None and process.poll() is None:
        process.kill()  # it would wait for a reader that has stopped reading
    process.stdout.close()
    if process.wait() > 0:
        failed(process.returncode, process.stderr.read())  # h-dump's own message says more
    process.stderr.close()
    if problem is not None:
        raise problem
    return summary


class StreamedList:
    """h-dump's JSON read as `stream` gives it: an object whose last member is a list (whose text
    starts with `start`), as the text before that list and then its items one at a time, so that only
    one item is held at once. `name` names the list in messages; `invalid(reason)` is the error for JSON
    that is not valid."""

    def __init__(self, stream, start, name, invalid):
        self.stream = stream
        self.start = start
        self.name = name
        self.invalid = invalid
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.text = ""
        self.ended = False
        self.at = 0

    def read(self, at_least):
        wanted = len(self.text) + at_least
        try:
            while not self.ended and len(self.text) < wanted:
                chunk = self.stream.read(READ_SIZE)
                self.ended = not chunk
                self.text += self.decoder.decode(chunk, final=self.ended)
        except UnicodeDecodeError as error:
            raise self.invalid(error)

    def head(self):
        """The text before the list, None if there is no list."""
        while self.start not in self.text and not self.ended:
            self.read(READ_SIZE)
        begin = self.text.find(self.start)
        if begin < 0:
            return None
        self.at = begin + len(self.start)
        return self.text[:begin]

    def items(self):
        decoding = json.JSONDecoder()
        while True:
            if self.at > READ_SIZE:  # what is parsed is let go
                self.text, self.at = self.text[self.at:], 0
            while self.at < len(self.text) and self.text[self.at] in " \n\t\r,":
                self.at += 1
            if self.at == len(self.text):
                if self.ended:
                    raise self.invalid(f"the {self.name} ends early")
                self.read(READ_SIZE)
                continue
            if self.text[self.at] == "]":
                break
            try:
                item, self.at = decoding.raw_decode(self.text, self.at)
            except json.JSONDecodeError as error:
                if self.ended:
                    raise self.invalid(error)
                # An item longer than what is read: twice as much.
                self.read(max(READ_SIZE, len(self.text) - self.at))
                continue
            except RecursionError:
                raise self.invalid("too deeply nested")
            yield item
        while not self.ended:
            self.read(READ_SIZE)
        if self.text[self.at:].strip() != "]}":
            raise self.invalid(f"more after the {self.name}")


def read_body(stream, trace, command):
    """The TraceSummary of h-dump's JSON as `stream` gives it (see h_dump_trace)."""
    def invalid(reason):
        return ReportError(f"h-report: {trace}: {command} wrote no valid JSON ({reason})")

    def not_read(what):
        return ReportError(f"h-report: {trace}: h-dump's JSON is not what h-report reads ({what})")

    listed = StreamedList(stream, BODY_START, "body", invalid)
    head = listed.head()
    if head is None:
        raise not_read("no body list")
    try:
        summary = TraceSummary(json.loads(head + BODY_START + "]}"))
    except json.JSONDecodeError as error:
        raise invalid(error)
    for node in listed.items():
        if not isinstance(node, dict):
            raise not_read("a body entry that is not an object")
        try:
            summary.add(node)
        except RecursionError:
            raise not_read("too deeply nested")
    return summary


def failed(status, stderr):
    """h-dump's first line of complaint, as h-report's own: it names the trace and the problem
    ("h-dump: trace.h: truncated at byte 300 ..."). A trace is input from elsewhere: whatever bytes
    h-dump passes on from it are shown, not decoded strictly."""
    lines = stderr.decode("utf-8", "replace").strip().splitlines() or [f"h-dump exited with status {status}"]
    raise ReportError("h-report: " + lines[0].removeprefix("h-dump: "))


# ---- numbers and values as text ----

def number(value):
    """Whole numbers as such (a lossless trace stands for whole calls), others with two decimals."""
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}"


def symbolic(value, role):
    if role in PEER_ROLES and value in PEER_SYMBOLS:
        return PEER_SYMBOLS[value]
    if role in TAG_ROLES and value in TAG_SYMBOLS:
        return TAG_SYMBOLS[value]
    return str(value)


def rank_ranges(ranks):
    """Ascending ranks as '0-3,5,8-9'."""
    parts = []
    ranks = sorted(ranks)
    start = previous = None
    for rank in ranks + [None]:
        if start is not None and rank == previous + 1:
            previous = rank
            continue
        if start is not None:
            parts.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = rank
    return ",".join(parts)


def value_text(value, role, file_names):
    """A parameter's value as h-dump prints it; histograms are shown by the caller as charts."""
    if isinstance(value, str):
        return value  # a symbolic peer, already named by h-dump
    if isinstance(value, int):
        if role == "file_name" and str(value) in file_names:
            return json.dumps(file_names[str(value)])
        return symbolic(value, role)
    entries = []
    for entry in value["per_rank"]:
        text = symbolic(entry["value"], role)
        if entry["step"]:
            sign = "+" if entry["step"] > 0 else "-"
            text = f"{entry['value']}{sign}{abs(entry['step'])}*i"
        entries.append(f"{text}@{entry['ranks']}")
    return "{" + ",".join(entries) + "}"


# ---- the trace's body: structure and histograms ----

class Histogram:
    """A histogram value of the trace, with where it stands, for its chart and its anchor."""

    def __init__(self, serial, role, where, data):
        self.anchor = f"histogram-{serial}"
        self.role = role
        self.where = where
        self.data = data


def node_count(body):
    return sum(1 + (node_count(node["body"]) if "loop" in node else 0) for node in body)


def collect_histograms(body):
    """Every histogram of the body in trace order: (event or loop, role, path of loops around it)."""
    found = []

    def visit(nodes, path):
        for node in nodes:
            if "loop" in node:
                if isinstance(node["loop"], dict) and "histogram" in node["loop"]:
                    found.append((node, "iterations", path))
                visit(node["body"], path + (node,))
                continue
            for role, value in node["params"].items():
                if isinstance(value, dict) and "histogram" in value:
                    found.append((node, role, path))
    visit(body, ())
    return found


def describe_loop(loop):
    count = loop["loop"]
    if isinstance(count, dict) and "histogram" in count:
        h = count["histogram"]
        return f"loop ×{h['mean']:.4g} on average ({h['min']}..{h['max']})"
    if isinstance(count, dict):
        return f"loop ×{value_text(count, 'requests', {})}"
    return f"loop ×{number(count)}"


def first_event(body):
    """The first event of a loop body, inside nested loops too; None for an empty body."""
    for node in body:
        found = first_event(node["body"]) if "loop" in node else node
        if found:
            return found
    return None


def describe_event(event):
    return f"{event['op']} @{event['signature']} on ranks {event['ranks']}"


class Structure:
    """The nested list of the body, up to MAX_STRUCTURE_NODES events and loops."""

    def __init__(self, file_names, histogram_anchors):
        self.file_names = file_names
        self.anchors = histogram_anchors  # (id of the node, role) -> anchor of its chart
        self.shown = 0

    def value_html(self, node, role, value):
        if isinstance(value, dict) and "histogram" in value:
            h = value["histogram"]
            text = f"hist(n={h['count']} mean={h['mean']} {symbolic(h['min'], role)}..{symbolic(h['max'], role)})"
            anchor = self.anchors.get((id(node), role))
            if anchor:
                return f'<a href="#{anchor}">{html.escape(text)}</a>'
            return html.escape(text)
        return html.escape(value_text(value, role, self.file_names))

    def render(self, nodes):
        items = []
        for node in nodes:
            if self.shown >= MAX_STRUCTURE_NODES:
                break
            self.shown += 1
            if "loop" in node:
                count = node["loop"]
                label = (self.value_html(node, "iterations", count) if isinstance(count, dict)
                         else html.escape(number(count)))
                if node.get("last_leaves_out"):
                    label += f", the last leaves out {node['last_leaves_out']}"
                inner = self.render(node["body"])
                items.append(f'<li class="loop"><details open=""><summary>loop ×{label}</summary>{inner}'
                             f'</details></li>')
                continue
            params = " ".join(f"{html.escape(role)}={self.value_html(node, role, value)}"
                              for role, value in node["params"].items())
            compute = node["compute"]
            time = f" compute={compute['mean']:.3g}s(n={compute['count']})" if compute["count"] else ""
            groups = node.get("compute_by_rank", [])
            if groups:  # a load imbalance: each group of ranks' own time
                time += " by_rank={" + ",".join(f"{g['compute']['mean']:.3g}s@{g['ranks']}" for g in groups) + "}"
            items.append(f'<li class="event"><span class="op">{html.escape(node["op"])}</span> '
                         f'<span class="ranks">ranks={html.escape(node["ranks"])}</span> {params}'
                         f'{html.escape(time)}</li>')
        return "<ul>" + "".join(items) + "</ul>"


def histogram_figure(histogram, serial):
    h = histogram.data
    role = histogram.role
    labels = [symbolic(b["min"], role) if b["min"] == b["max"]
              else f"{symbolic(b['min'], role)}..{symbolic(b['max'], role)}" for b in h["bins"]]
    counts = [b["count"] for b in h["bins"]]
    node, path = histogram.where
    if "loop" in node:
        first = first_event(node["body"])
        subject = "Iterations of the loop" + (f" whose body starts with {describe_event(first)}" if first else "")
        title = f"{serial}. loop iterations"
    else:
        relative = " (relative: (peer - me) mod the communicator's size)" if role in RELATIVE_ROLES else ""
        subject = f"{role}{relative} of {describe_event(node)}"
        title = f"{serial}. {node['op']} {role}"
    loops = " › ".join(describe_loop(loop) for loop in path)
    chart = svg_charts.bar_chart(title, labels, counts, unit="values", width=460, height=260,
                                 css_class="bar-chart histogram-chart")
    attributes = (f'class="histogram" id="{histogram.anchor}" data-role="{html.escape(role)}" '
                  f'data-count="{h["count"]}" data-mean="{h["mean"]}" data-min="{h["min"]}" '
                  f'data-min-rank="{h["min_rank"]}" data-max="{h["max"]}" data-max-rank="{h["max_rank"]}"')
    caption = (html.escape(subject)
               + (f", inside {html.escape(loops)}" if loops else "")
               + f": {h['count']} values, mean {h['mean']}, "
               f"min {html.escape(symbolic(h['min'], role))} (first seen on rank {h['min_rank']}), "
               f"max {html.escape(symbolic(h['max'], role))} (first seen on rank {h['max_rank']})")
    return f'<figure {attributes}>{chart}<figcaption>{caption}</figcaption></figure>'


# ---- sections ----

def start_text(start_time):
    """A start time as a UTC date, or the number itself where no date has it (a damaged trace's)."""
    try:
        started = datetime.datetime.fromtimestamp(start_time, datetime.timezone.utc)
    except (OverflowError, OSError, ValueError, TypeError):
        return f"{start_time} s since 1970 (not a date)"
    return started.strftime("%Y-%m-%d %H:%M:%S UTC")


def run_facts(header):
    """The run's identity (format 16) and, for a trace h-merge made of partial files, where each rank
    stopped: a reader must not take an incomplete trace for a whole run."""
    facts = []
    if header.get("run_id", "0") not in ("0", "", None):
        facts.append(("Run", f"{header['run_id']} on {header.get('host', '?')}"))
    stops = header.get("stops") or []
    if header.get("incomplete"):
        shown = "; ".join(f"rank {stop['rank']} stopped after {number(stop['calls'])} calls ({stop['reason']})"
                          for stop in stops[:16])
        more = f"; {number(len(stops) - 16)} more" if len(stops) > 16 else ""
        facts.append(("Incomplete (the job ended before MPI_Finalize)", shown + more))
    return facts


def header_section(header, trace_path, summary, totals):
    facts = [
        ("Trace file", f"{trace_path} ({number(os.path.getsize(trace_path))} bytes)"),
        ("Ranks", number(header["ranks"])),
        ("Merge precision", f"{header['precision']} (100: lossless)"),
        ("Histogram bins, rebalance interval", f"{header['bins']}, {header['rebalance']} values"),
        ("Seed", str(header["seed"])),
        ("MPI library", header["mpi"]),
        ("Command line", header["command"]),
        ("Started", start_text(header["start_time"])),
        *run_facts(header),
        ("Traced time (MPI_Init to MPI_Finalize, slowest rank)", f"{header['traced_seconds']:.6g} s"),
        ("Events and loops in the trace", number(summary.nodes)),
        ("Values merged into histograms", number(summary.histogram_count)),
        ("MPI calls the trace stands for (all ranks)", number(totals["calls"])),
        ("Point-to-point messages, bytes", f"{number(totals['messages'])}, {number(totals['bytes'])}"),
    ]
    rows = "".join(f'<tr><th>{html.escape(name)}</th><td>{html.escape(value)}</td></tr>' for name, value in facts)
    files = header["file_names"]
    if files:
        names = "".join(f"<li><code>{html.escape(name)}</code> (key {html.escape(key)})</li>"
                        for key, name in sorted(files.items(), key=lambda item: item[1]))
        rows += f"<tr><th>Files opened or deleted</th><td><ul>{names}</ul></td></tr>"
    return f'<section id="header"><h2>Trace</h2><table class="facts">{rows}</table></section>'


def structure_section(summary, file_names):
    anchors = {(id(h.where[0]), h.role): h.anchor for h in summary.histograms}
    structure = Structure(file_names, anchors)
    listing = structure.render(summary.kept)
    total = summary.nodes
    note = ("Each event is one call site with its participants; loops repeat their bodies. "
            "Peers are relative to the caller, (peer - me) mod the communicator's size.")
    if structure.shown < total:
        note += (f" Only the first {number(structure.shown)} of {number(total)} events and loops are shown; "
                 f"h-dump shows them all.")
    return (f'<section id="structure"><h2>Loop structure</h2><p class="note">{html.escape(note)}</p>'
            f'<div class="structure">{listing}</div></section>')


def histograms_section(summary):
    if not summary.histograms:
        return ('<section id="histograms"><h2>Histograms</h2><p class="note">No value of this trace is a '
                'histogram: every value is exact or kept per rank.</p></section>')
    shown = summary.histograms
    note = ("Values that differed between ranks or iterations and were merged within the merge precision, "
            "as the bins of their histograms (a bin of a range shows it as low..high).")
    if len(shown) < summary.histogram_count:
        note += (f" Only the first {len(shown)} of {summary.histogram_count} histograms are shown; h-dump shows "
                 f"them all.")
    figures = "".join(histogram_figure(h, i + 1) for i, h in enumerate(shown))
    return (f'<section id="histograms"><h2>Histograms</h2><p class="note">{html.escape(note)}</p>'
            f'{figures}</section>')


def matrix_section(matrix, precision):
    ranks = matrix["ranks"]
    block = max(1, math.ceil(ranks / MAX_MATRIX_SIDE))
    sides = math.ceil(ranks / block) if ranks else 0
    labels = [rank_ranges(range(i * block, min(ranks, (i + 1) * block))) for i in range(sides)]
    grid = [[0] * sides for _ in range(sides)]
    for pair in matrix["pairs"]:
        grid[pair["from"] // block][pair["to"] // block] += pair["bytes"]
    title = "Bytes sent: sender rows, receiver columns" + (f" (blocks of {block} ranks)" if block > 1 else "")
    cell = max(4, min(48, 480 // max(sides, 1)))
    chart = svg_charts.heat_map(title, labels, labels, grid, unit="bytes", cell=cell, css_class="heat-map matrix")
    notes = ["Point-to-point messages only: sends of every kind, the send side of MPI_Sendrecv and "
             "MPI_Sendrecv_replace, and started persistent sends, loops expanded. Collectives are not "
             "pairwise and are left out."]
    if block > 1:
        notes.append(f"With {ranks} ranks each cell adds up a block of {block} senders and {block} receivers.")
    if precision < 100:
        notes.append("Below precision 100, sizes and loop counts merged into histograms count by their means "
                     "and peers merged into histograms spread over their bins: the matrix gives the expected "
                     "traffic, which can put bytes on pairs that did not talk when values of different ranks "
                     "merged.")
    unresolved = matrix["unresolved"]
    if unresolved["messages"]:
        notes.append(f"{number(unresolved['messages'])} messages ({number(unresolved['bytes'])} bytes) went on "
                     "communicators the trace does not show being made, so their receivers are unknown.")
    pairs = sorted(matrix["pairs"], key=lambda p: (-p["bytes"], p["from"], p["to"]))
    listed = pairs[:MAX_PAIRS_LISTED]
    rows = "".join(f'<tr class="pair" data-from="{p["from"]}" data-to="{p["to"]}" data-messages="{p["messages"]}" '
                   f'data-bytes="{p["bytes"]}"><td class="number">{p["from"]}</td><td class="number">{p["to"]}</td>'
                   f'<td class="number">{number(p["messages"])}</td><td class="number">{number(p["bytes"])}</td></tr>'
                   for p in listed)
    heading = (f"The {len(listed)} pairs with the most bytes, of {len(pairs)}" if len(listed) < len(pairs)
               else f"All {len(pairs)} pairs that communicated")
    table = (f'<table class="pairs"><caption>{heading}</caption><tr><th class="number">sender</th>'
             f'<th class="number">receiver</th><th class="number">messages</th><th class="number">bytes</th></tr>'
             f'{rows}</table>') if pairs else '<p class="note">No point-to-point messages.</p>'
    paragraphs = "".join(f'<p class="note">{html.escape(note)}</p>' for note in notes)
    return (f'<section id="matrix"><h2>Communication matrix</h2>{paragraphs}<figure>{chart}</figure>'
            f'{table}</section>')


def calls_section(calls):
    by_rank = {int(rank): ops for rank, ops in calls["by_rank"].items()}
    operations = sorted(calls["operations"])
    chart = svg_charts.bar_chart("Calls per MPI function, all ranks", operations,
                                 [calls["operations"][op] for op in operations], unit="calls",
                                 css_class="bar-chart calls-chart")
    # Ranks that made the same calls share a row, as ranks that behave alike share events.
    groups = {}
    for rank in sorted(by_rank):
        key = tuple(by_rank[rank].get(op, {}).get("calls", 0) for op in operations)
        groups.setdefault(key, []).append(rank)
    rows = sorted(groups.items(), key=lambda item: item[1][0])
    note = "Calls of each MPI function per rank, as the trace stands for them (loops expanded)."
    if len(rows) < len(by_rank):
        note += " Ranks with the same counts share a row."
    if len(rows) > MAX_RANK_ROWS:
        note += f" Only the first {MAX_RANK_ROWS} of {len(rows)} rows are shown; h-dump --calls --json has them all."
        rows = rows[:MAX_RANK_ROWS]
    head = "".join(f'<th class="number">{html.escape(op)}</th>' for op in operations)
    body = ""
    for counts, ranks in rows:
        cells = "".join(f'<td class="number" data-op="{html.escape(op)}" data-calls="{count}">{number(count)}</td>'
                        for op, count in zip(operations, counts))
        body += f'<tr class="rank-calls" data-ranks="{rank_ranges(ranks)}"><th>{rank_ranges(ranks)}</th>{cells}</tr>'
    return (f'<section id="calls"><h2>Calls per rank</h2><p class="note">{html.escape(note)}</p>'
            f'<figure>{chart}</figure><div class="wide"><table class="calls"><tr><th>ranks</th>{head}</tr>{body}'
            f'</table></div></section>')


def site_place(site):
    """Where a call site is in the code: file:line where h-dump resolved it, else module+address."""
    location = site.get("location")
    if not location:
        return "-"
    if location.get("file"):
        return f"{pathlib.PurePath(location['file']).name}:{location['line']}"
    return f"{pathlib.PurePath(location['module']).name}+{location['address']}"


def site_label(site):
    """A chart's label: short, as it is drawn turned; the table beside it has the signatures."""
    place = site_place(site)
    return f"{site['op']} @{site['site']}" if place == "-" else f"{site['op']} {place}"


def profile_section(profile):
    parts = ['<section id="profile"><h2>Where the time went</h2>']
    times = profile["rank_times"]
    if times is None:
        parts.append('<p class="note">This trace has no time per rank (older than format 19, extrapolated, '
                     'or not measured).</p>')
    else:
        labels, values = [], []
        for name, title in (("computation", "computing"), ("mpi", "in MPI"), ("io", "in I/O")):
            spread = times[name]
            labels += [f"{title}: least (rank {spread['min_rank']})", f"{title}: mean",
                       f"{title}: most (rank {spread['max_rank']})"]
            values += [spread["min"], spread["mean"], spread["max"]]
        parts.append('<p class="note">Each rank\'s time from MPI_Init to MPI_Finalize: the least, the mean and '
                     'the most over the ranks, with the rank that had it. The share in MPI of the rank\'s own '
                     f'time: least {times["mpi_share"]["min"]:.1%} (rank {times["mpi_share"]["min_rank"]}), mean '
                     f'{times["mpi_share"]["mean"]:.1%}, most {times["mpi_share"]["max"]:.1%} '
                     f'(rank {times["mpi_share"]["max_rank"]}).</p>')
        tracer = times.get("tracer")
        if tracer is not None:  # format 21
            parts.append(f'<p class="note">The tracer itself, recording the calls, took the least '
                         f'{tracer["min"]:.3g} s (rank {tracer["min_rank"]}), a mean of {tracer["mean"]:.3g} s and '
                         f'the most {tracer["max"]:.3g} s (rank {tracer["max_rank"]}): none of the times above '
                         f'include it.</p>')
        parts.append("<figure>" + svg_charts.bar_chart("Time per rank", labels, values, unit="seconds",
                                                       css_class="bar-chart rank-times-chart") + "</figure>")
    timed = [site for site in profile["sites"] if site["seconds"] is not None]
    if timed:
        shown = timed[:MAX_SITE_BARS]
        parts.append("<figure>" + svg_charts.bar_chart(
            "Call sites by time in calls, all ranks", [site_label(site) for site in shown],
            [site["seconds"] for site in shown], unit="seconds", colour=svg_charts.COLOURS[1],
            css_class="bar-chart sites-chart") + "</figure>")
    rows = "".join(
        f'<tr class="site" data-op="{html.escape(site["op"])}" data-calls="{site["calls"]}" '
        f'data-seconds="{site["seconds"] if site["seconds"] is not None else ""}">'
        f'<td>{html.escape(site["site"])}</td><td>{html.escape(site["op"])}</td>'
        f'<td class="number">{number(site["calls"])}</td>'
        f'<td class="number">{"-" if site["seconds"] is None else number(site["seconds"])}</td>'
        f'<td class="number">{number(site["bytes"])}</td><td class="number">{site["ranks"]}</td>'
        f'<td>{html.escape(site_place(site))}</td></tr>'
        for site in profile["sites"][:MAX_SITE_ROWS])
    note = (f"The first {MAX_SITE_ROWS} of {len(profile['sites'])} call sites; h-dump --profile --json has them all."
            if len(profile["sites"]) > MAX_SITE_ROWS else "Every call site, by its total time inside calls.")
    parts.append(f'<p class="note">{html.escape(note)}</p><div class="wide"><table class="sites"><tr><th>site</th>'
                 f'<th>operation</th><th class="number">calls</th><th class="number">seconds in calls</th>'
                 f'<th class="number">bytes</th><th class="number">ranks</th><th>where</th></tr>{rows}</table></div>'
                 '</section>')
    return "".join(parts)


# ---- the timeline the trace expects ----

TRACE_EVENTS_START = '"traceEvents": ['
SPLIT_PARTS = (("computation", "computation", svg_charts.COLOURS[2]), ("mpi", "MPI", svg_charts.COLOURS[0]),
               ("io", "I/O", svg_charts.COLOURS[3]))


def rank_list(text):
    """'0-3,8' as its ranges [(0, 3), (8, 8)]; None for text that is no such list."""
    ranges = []
    for part in text.split(","):
        found = re.fullmatch(r"(\d+)(?:-(\d+))?", part.strip(), re.ASCII)
        if not found:
            return None
        first, last = int(found.group(1)), int(found.group(2) or found.group(1))
        if last < first:
            return None
        ranges.append((first, last))
    return ranges


def timeline_ranks(ranges, ranks, given):
    """The ranks the timeline shows: those of --timeline-ranks (`given`, as `ranges`), else the first
    DEFAULT_TIMELINE_RANKS. Naming a rank the trace does not have is a mistake, not a blank row."""
    if ranges is None:
        return list(range(min(ranks, DEFAULT_TIMELINE_RANKS)))
    beyond = [last for _, last in ranges if last >= ranks]
    if beyond:
        raise ReportError(f"h-report: --timeline-ranks {given}: the trace has {ranks} ranks "
                          f"({rank_ranges(range(ranks)) or 'none'}), not {max(beyond)}", 2)
    return sorted({rank for first, last in ranges for rank in range(first, last + 1)})


class Timeline:
    """What the page draws of `h-dump --chrome-trace`: each of the first `split_ranks` ranks' time in
    computation (the gaps before and between its calls), MPI and I/O, in microseconds; and of the
    ranks `chosen` (the first MAX_TIMELINE_ROWS of them), the first MAX_TIMELINE_SPANS calls in time
    order. A rank's calls come in time order and do not overlap."""

    def __init__(self, ranks, split_ranks, chosen):
        self.ranks = ranks
        self.chosen = chosen
        self.split = {rank: {"computation": 0.0, "mpi": 0.0, "io": 0.0} for rank in range(split_ranks)}
        self.ends = {}
        self.shown = set(chosen[:MAX_TIMELINE_ROWS])
        self.kept = []  # a heap whose top is the latest call kept, the first to give way
        self.chosen_calls = 0
        self.refusal = None

    def add(self, event):
        if event["ph"] != "X":
            return  # names of the process and its threads
        rank, start, duration = event["tid"], float(event["ts"]), float(event["dur"])
        split = self.split.get(rank)
        if split is not None:
            split["computation"] += max(0.0, start - self.ends.get(rank, 0.0))
            split["io" if event["cat"] == "I/O" else "mpi"] += duration
            self.ends[rank] = start + duration
        if rank in self.shown:
            self.chosen_calls += 1
            call = (-start, -self.chosen_calls, (rank, str(event["name"]), start, duration, event.get("args", {})))
            if len(self.kept) < MAX_TIMELINE_SPANS:
                heapq.heappush(self.kept, call)
            elif call > self.kept[0]:
                heapq.heapreplace(self.kept, call)

    def calls(self):
        """The calls kept, in time order: (rank, op, start, duration, args)."""
        return [call for _, _, call in sorted(self.kept, reverse=True)]


def h_dump_timeline(h_dump, trace, timeline):
    """Fills `timeline` from `h-dump --chrome-trace` (a file, removed afterwards). An h-dump that will
    not draw it (too many calls, or one without --chrome-trace) leaves the pictures out with its reason
    in `timeline.refusal`: the rest of the page stands without them."""
    with tempfile.TemporaryDirectory(prefix="h-report.") as directory:
        path = os.path.join(directory, "timeline.json")
        command = [h_dump, "--chrome-trace", path, "--max-calls", str(MAX_TIMELINE_CALLS), trace]
        try:
            run = subprocess.run(command, capture_output=True)
        except OSError as error:
            raise ReportError(f"h-report: cannot run {h_dump}: {error.strerror}", 2)
        if run.returncode != 0:
            lines = run.stderr.decode("utf-8", "replace").strip().splitlines()
            timeline.refusal = lines[0].removeprefix("h-dump: ") if lines else f"exit status {run.returncode}"
            return
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            timeline.refusal = "it wrote nothing"
            return
        with open(path, "rb") as stream:
            read_timeline(stream, trace, " ".join(command[:-1]), timeline)


def read_timeline(stream, trace, command, timeline):
    """The events of h-dump's Chrome trace into `timeline`, one at a time: the file of a million calls
    is a few hundred megabytes."""
    def invalid(reason):
        return ReportError(f"h-report: {trace}: {command} wrote no valid JSON ({reason})")

    listed = StreamedList(stream, TRACE_EVENTS_START, "traceEvents", invalid)
    if listed.head() is None:
        raise ReportError(f"h-report: {trace}: h-dump's Chrome trace is not what h-report reads (no traceEvents)")
    for event in listed.items():
        if not isinstance(event, dict):
            raise ReportError(f"h-report: {trace}: h-dump's Chrome trace is not what h-report reads "
                              "(an event that is not an object)")
        timeline.add(event)


def duration_text(microseconds):
    for unit, size in (("s", 1e6), ("ms", 1e3)):
        if microseconds >= size:
            return f"{microseconds / size:.4g} {unit}"
    return f"{microseconds:.4g} us"


def receives(op):
    """Whether an operation's peer is where data comes from (receives and probes) or goes to."""
    name = op.lower()
    return ("recv" in name or "probe" in name) and "sendrecv" not in name


def call_text(op, duration, args):
    """A call as its tooltip says it: 'MPI_Send 12.3 us, 64 bytes to 1'."""
    text = f"{op} {duration_text(duration)}, {number(args.get('bytes', 0))} bytes"
    if "peer" in args:
        text += f" {'from' if receives(op) else 'to'} {args['peer']}"
    if "source" in args:  # MPI_Sendrecv: its receive
        text += f", {number(args.get('recv_bytes', args.get('bytes', 0)))} bytes from {args['source']}"
    if "root" in args:
        text += f", root {args['root']}"
    return text


def rank_split_figure(timeline):
    ranks = sorted(timeline.split)
    # To the nanosecond h-dump writes: sums of microseconds carry float noise below it.
    values = [[round(timeline.split[rank][key], 3) / 1e6 for key, _, _ in SPLIT_PARTS] for rank in ranks]
    chart = svg_charts.stacked_bar_chart("Time per rank in the expected timeline", ranks, SPLIT_PARTS, values,
                                         unit="seconds", x_label="rank", label_attribute="rank",
                                         css_class="stacked-bars rank-split-chart")
    note = ("Each rank's time up to the end of its last call: computing (the gaps before and between its "
            "calls), in MPI calls and in I/O calls.")
    if len(ranks) < timeline.ranks:
        note += f" Only the first {len(ranks)} of {number(timeline.ranks)} ranks are shown."
    return f'<figure>{chart}<figcaption>{html.escape(note)}</figcaption></figure>'


def timeline_figure(timeline):
    rows = sorted(timeline.shown)
    calls = timeline.calls()
    if not calls:
        return f'<p class="note">Ranks {rank_ranges(rows)} make no calls.</p>'
    row_of = {rank: row for row, rank in enumerate(rows)}
    time_in = {}
    for _, op, _, duration, _ in calls:
        time_in[op] = time_in.get(op, 0) + duration
    # The operations that take the most time get the first colours, should there be more than colours.
    operations = sorted(time_in, key=lambda op: (-time_in[op], op))
    spans = [(row_of[rank], start, duration, op, call_text(op, duration, args),
              {"rank": rank, "op": op, "start-us": start, "dur-us": duration})
             for rank, op, start, duration, args in calls]
    chart = svg_charts.timeline_chart(f"Calls of ranks {rank_ranges(rows)} in time", [f"rank {r}" for r in rows],
                                      spans, operations, "ms", time_factor=1e-3, max_width=MAX_TIMELINE_WIDTH)
    notes = [f"Ranks {rank_ranges(rows)} of {number(timeline.ranks)}, one row each (--timeline-ranks chooses "
             "them): each call at its start, as long as its traced mean time, coloured by its operation; its "
             "tooltip says what it sent or received. The chart scrolls sideways."]
    if len(rows) < len(timeline.chosen):
        notes.append(f"Only the first {len(rows)} of the {len(timeline.chosen)} ranks chosen are drawn.")
    if len(calls) < timeline.chosen_calls:
        notes.append(f"Only the first {number(len(calls))} of these ranks' {number(timeline.chosen_calls)} calls "
                     "in time are drawn.")
    paragraphs = "".join(f'<p class="note">{html.escape(note)}</p>' for note in notes)
    return f'{paragraphs}<div class="wide timeline">{chart}</div>'


def timeline_section(timeline):
    parts = ['<section id="timeline"><h2>Timeline the trace expects</h2>',
             "<p class=\"note\">The calls the trace expects, in its order, as <code>h-dump --chrome-trace</code> "
             "lays them out without running anything: each call lasts its traced mean time, each gap is the "
             "computation a replay would spend. No rank waits for another here: waiting is inside the calls' "
             "traced times, so the ranks do not line up as they did in the run. <code>h-replay --chrome-trace "
             "FILE TRACE</code> writes a replay's real timeline, who waited for whom, to open in Perfetto.</p>"]
    if timeline.refusal is not None:
        parts.append(f'<p class="note timeline-refused">h-dump laid out no timeline for this page '
                     f'({html.escape(timeline.refusal)}), so its pictures are left out: h-report asks for at most '
                     f'{number(MAX_TIMELINE_CALLS)} calls. <code>h-dump --chrome-trace FILE --max-calls N TRACE'
                     f'</code> writes a larger one for Perfetto.</p>')
    else:
        parts.append(rank_split_figure(timeline))
        parts.append(timeline_figure(timeline))
    parts.append("</section>")
    return "".join(parts)


# ---- who waited for whom: a replay's wait states ----

WAIT_KINDS = (("late_sender", "late sender", svg_charts.COLOURS[1]),
              ("late_receiver", "late receiver", svg_charts.COLOURS[3]),
              ("wait_at_collective", "waiting at a collective", svg_charts.COLOURS[4]))


def is_seconds(value):
    """A time the replay report gives: a number from 0 to the largest float, which the page can print
    (JSON's true is no number; NaN compares false; an integer of 400 digits is no float)."""
    return type(value) in (int, float) and 0 <= value <= sys.float_info.max


def is_rank(value, ranks):
    return type(value) is int and 0 <= value < ranks


def wait_times_problem(entry, what):
    """What is wrong with `entry`'s seconds of each kind of wait, None if nothing."""
    if not isinstance(entry, dict):
        return f"{what} is not an object"
    for key, _, _ in WAIT_KINDS:
        if not is_seconds(entry.get(key)):
            return f"{what} has no time in seconds for {key}"
    return None


def site_problem(site, ranks):
    """What is wrong with one waiting site of the report, None if nothing."""
    if not isinstance(site, dict):
        return "a site is not an object"
    if not isinstance(site.get("site"), str) or not isinstance(site.get("op"), str):
        return "a site has no signature or operation"
    # A tuple, not a set: a kind that is a list or an object is no key either.
    if site.get("kind") not in tuple(key for key, _, _ in WAIT_KINDS):
        return f"site {site['site']!r} is of kind {site.get('kind')!r}"
    if not is_seconds(site.get("seconds")) or not is_seconds(site.get("most_seconds")):
        return f"site {site['site']!r} has no time in seconds for seconds or most_seconds"
    if type(site.get("ranks")) is not int or not 0 <= site["ranks"] <= ranks:
        return f"site {site['site']!r} waited on {site.get('ranks')!r} ranks"
    if not is_rank(site.get("most_rank"), ranks):
        return f"the rank that waited most at site {site['site']!r} is {site.get('most_rank')!r}"
    return None


def wait_states_problem(waits, ranks):
    """What is wrong with the report's wait_states for a trace of `ranks` ranks, None if nothing:
    the page draws every rank's bar and every site's row from it, and must not guess."""
    if not isinstance(waits, dict):
        return "wait_states is not an object"
    problem = wait_times_problem(waits.get("total"), "wait_states.total")
    if problem:
        return problem
    per_rank = waits.get("per_rank")
    if not isinstance(per_rank, list):
        return "wait_states.per_rank is not a list"
    seen = set()
    for entry in per_rank:
        problem = wait_times_problem(entry, "a wait_states.per_rank entry")
        if problem:
            return problem
        if not is_rank(entry.get("rank"), ranks) or entry["rank"] in seen:
            return f"wait_states.per_rank has rank {entry.get('rank')!r} of {ranks} ranks, or has it twice"
        seen.add(entry["rank"])
    if len(seen) != ranks:
        return f"wait_states.per_rank has {len(seen)} of the {ranks} ranks"
    sites = waits.get("sites")
    if not isinstance(sites, list):
        return "wait_states.sites is not a list"
    for site in sites:
        problem = site_problem(site, ranks)
        if problem:
            return f"in wait_states.sites, {problem}"
    return None


def read_replay_report(path, ranks):
    """The report `h-replay --report-json` wrote of a replay of this trace (of `ranks` ranks), its wait
    states checked: a report of another job, or one this h-report does not read, is named in one line
    rather than drawn wrong. wait_states null or absent (an older h-replay) is not an error."""
    def refused(why):
        return ReportError(f"h-report: {path}: {why}")

    try:
        data = pathlib.Path(path).read_bytes()
    except OSError as error:
        raise refused(f"cannot read it ({error.strerror})")
    try:
        report = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise refused(f"not JSON ({'too deeply nested' if isinstance(error, RecursionError) else error})")
    if not isinstance(report, dict):
        raise refused("not a replay report (h-replay --report-json writes an object)")
    if type(report.get("ranks")) is not int:
        raise refused(f"no number of ranks (ranks is {report.get('ranks')!r})")
    if report["ranks"] != ranks:
        raise refused(f"a replay of {report['ranks']} ranks, the trace has {ranks}: not a replay of this trace")
    if "mode" in report and not isinstance(report["mode"], str):
        raise refused("its mode is not text")
    for key in ("replay_seconds", "traced_seconds"):
        if key in report and not is_seconds(report[key]):
            raise refused(f"its {key} are not seconds")
    if report.get("wait_states") is not None:
        problem = wait_states_problem(report["wait_states"], ranks)
        if problem:
            raise refused(f"not the wait states h-report reads ({problem})")
    return report


def replay_text(report):
    """What the report says of its replay: its mode, and its time against the traced time."""
    facts = []
    if report.get("mode"):
        facts.append(f"a {report['mode']} replay")
    if "replay_seconds" in report and "traced_seconds" in report:
        facts.append(f"it took {report['replay_seconds']:.6g} s where the traced run took "
                     f"{report['traced_seconds']:.6g} s")
    return "; ".join(facts)


def waits_figure(waits, ranks):
    per_rank = {entry["rank"]: entry for entry in waits["per_rank"]}
    shown = list(range(min(ranks, MAX_WAIT_RANKS)))
    note = "Each rank's seconds in calls that waited for a late partner, by kind."
    if len(shown) < ranks:
        note += f" Only the first {len(shown)} of {number(ranks)} ranks are shown; the replay report has them all."
    # Exact, as the report gives them: a reader of data-value compares them with the file.
    values = [[per_rank[rank][key] for key, _, _ in WAIT_KINDS] for rank in shown]
    chart = svg_charts.stacked_bar_chart("Seconds waited per rank in the replay", shown, WAIT_KINDS, values,
                                         unit="seconds", x_label="rank", label_attribute="rank",
                                         css_class="stacked-bars waits-chart")
    return f'<p class="note">{html.escape(note)}</p><figure>{chart}</figure>'


def waits_table(waits, profile):
    sites = waits["sites"]
    if not sites:
        return '<p class="note">No call of the replay waited.</p>'
    # The replay names a site by its signature, as the profile does; the profile knows where it is.
    places = {site["site"]: site for site in profile["sites"]}
    names = {key: name for key, name, _ in WAIT_KINDS}
    rows = "".join(
        f'<tr class="wait-site" data-site="{html.escape(site["site"])}" data-op="{html.escape(site["op"])}" '
        f'data-kind="{site["kind"]}" data-seconds="{site["seconds"]}" data-ranks="{site["ranks"]}" '
        f'data-most-rank="{site["most_rank"]}" data-most-seconds="{site["most_seconds"]}">'
        f'<td>{html.escape(site["site"])}</td><td>{html.escape(site["op"])}</td><td>{names[site["kind"]]}</td>'
        f'<td class="number">{site["seconds"]:.6g}</td><td class="number">{site["ranks"]}</td>'
        f'<td class="number">{site["most_rank"]}</td><td class="number">{site["most_seconds"]:.6g}</td>'
        f'<td>{html.escape(site_place(places.get(site["site"], {})))}</td></tr>'
        for site in sites)
    which = "The call site that waited" if len(sites) == 1 else f"The {len(sites)} call sites that waited longest"
    return (f'<p class="note">{which} (the replay report lists at most 20), all ranks together, with the rank '
            'that waited most there.</p><div class="wide">'
            '<table class="wait-sites"><tr><th>site</th><th>operation</th><th>waiting as</th>'
            '<th class="number">seconds waited</th><th class="number">ranks that waited</th>'
            '<th class="number">rank that waited most</th><th class="number">its seconds</th><th>where</th></tr>'
            f'{rows}</table></div>')


def waits_section(replay_path, report, profile, ranks):
    facts = replay_text(report)
    parts = ['<section id="waits"><h2>Who waited for whom</h2>',
             f'<p class="note">The wait states of the replay in <code>{html.escape(replay_path)}</code>'
             f'{html.escape(f" ({facts})" if facts else "")}, as Scalasca names them: a late sender is a '
             'blocking receive entered before its message was sent, a late receiver an MPI_Ssend entered '
             'before its receive, and waiting at a collective a blocking collective entered before the last '
             'of the partners it needs. A wait is at most the call\'s own time. They are the replay\'s, not '
             'the traced run\'s: the replay re-enacts the trace\'s computation and calls, and the ranks wait '
             'for each other as they come.</p>']
    waits = report.get("wait_states")
    if waits is None:
        parts.append('<p class="note waits-missing">The replay did not report wait states (its wait_states is '
                     'null or absent, as an h-replay older than them writes it).</p>')
    else:
        total = waits["total"]
        parts.append('<p class="note">In all: ' + ", ".join(
            f"{html.escape(name)} {total[key]:.6g} s" for key, name, _ in WAIT_KINDS) + ".</p>")
        parts.append(waits_figure(waits, ranks))
        parts.append(waits_table(waits, profile))
    parts.append("</section>")
    return "".join(parts)


def report_html(trace_path, summary, matrix, calls, profile, timeline, replay=None):
    """The page; `replay` is (path, report) of --replay-report, None without it."""
    trace = summary.header
    totals = {"calls": sum(calls["operations"].values()),
              "messages": sum(p["messages"] for p in matrix["pairs"]),
              "bytes": sum(p["bytes"] for p in matrix["pairs"])}
    title = f"h-trace report: {os.path.basename(trace_path)}"
    # Well-formed XML as well as HTML (empty elements closed, attributes quoted, only XML's
    # entities), so that the page also opens as XHTML, where a browser reports any markup error.
    return "\n".join([
        "<!DOCTYPE html>",
        '<html xmlns="http://www.w3.org/1999/xhtml" lang="en">',
        f'<head><meta charset="utf-8"/><title>{html.escape(title)}</title><style>{STYLE}</style></head>',
        f"<body><h1>{html.escape(title)}</h1>",
        header_section(trace, trace_path, summary, totals),
        structure_section(summary, trace["file_names"]),
        histograms_section(summary),
        matrix_section(matrix, trace["precision"]),
        calls_section(calls),
        profile_section(profile),
        timeline_section(timeline),
        "" if replay is None else waits_section(*replay, profile, trace["ranks"]),
        "</body></html>",
        "",
    ])


def parse_arguments(argv):
    parser = argparse.ArgumentParser(prog="h-report", usage=__doc__.split("\n\n")[1])
    parser.add_argument("trace", help="the trace file (trace.h)")
    parser.add_argument("-o", "--output", default="report.html", help="the HTML file to write (report.html)")
    parser.add_argument("--h-dump", help="the h-dump to read the trace with")
    parser.add_argument("--timeline-ranks", metavar="LIST",
                        help=f"the ranks the timeline shows, as 0-3,8 (the first {DEFAULT_TIMELINE_RANKS})")
    parser.add_argument("--replay-report", metavar="REPLAY.json",
                        help="h-replay --report-json of a replay of the trace: the page shows who waited for whom")
    return parser.parse_args(argv)


def main(argv):
    args = parse_arguments(argv)
    try:
        ranges = None if args.timeline_ranks is None else rank_list(args.timeline_ranks)
        if args.timeline_ranks is not None and ranges is None:
            raise ReportError(f"h-report: --timeline-ranks wants ranks as 0-3,8 (ranks and ascending ranges, "
                              f"commas between), not '{args.timeline_ranks}'", 2)
        h_dump = find_h_dump(args.h_dump)
        try:
            summary = h_dump_trace(h_dump, args.trace)
            ranks = summary.header["ranks"]
            timeline = Timeline(ranks, min(ranks, MAX_SPLIT_RANKS), timeline_ranks(ranges, ranks, args.timeline_ranks))
            replay = None
            if args.replay_report is not None:
                replay = (args.replay_report, read_replay_report(args.replay_report, ranks))
            matrix = h_dump_json(h_dump, ["--matrix"], args.trace)
            calls = h_dump_json(h_dump, ["--calls"], args.trace)
            profile = h_dump_json(h_dump, ["--profile"], args.trace)
            h_dump_timeline(h_dump, args.trace, timeline)
            page = report_html(args.trace, summary, matrix, calls, profile, timeline, replay)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, RecursionError) as error:
            # h-dump's JSON is h-report's input too: one from another h-dump, or one that does not
            # hold what this h-report reads, is named, not a traceback.
            what = ("too deeply nested" if isinstance(error, RecursionError)
                    else " ".join(f"{type(error).__name__}: {error}".split()))
            raise ReportError(f"h-report: {args.trace}: h-dump's JSON is not what h-report reads ({what})")
        try:
            # A trace's path need not be UTF-8 (surrogates from the command line).
            pathlib.Path(args.output).write_text(page, encoding="utf-8", errors="replace")
        except OSError as error:
            raise ReportError(f"h-report: cannot write {args.output}: {error.strerror}")
    except ReportError as error:
        print(error, file=sys.stderr)
        return error.status
    print(f"h-report: wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
