#!/usr/bin/env python3
"""Issue 27: ns added per call against stack depth, one line per language, before (dashed) and after
(solid), from capture_cost.py's CSV files: a log scale where the two differ tenfold or more, else a
linear one from 0. Standard library only.

    plot_capture_cost.py BEFORE.csv AFTER.csv OUT.svg
"""
import csv
import math
import re
import statistics
import sys

LANGUAGES = {"c": "#1f77b4", "cxx": "#2ca02c", "fortran": "#d62728"}
ROW = re.compile(r"^deep-stacks (\w+) depth (\d+)$")
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 640, 400, 70, 150, 30, 50


def medians(path):
    pairs = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if match := ROW.match(row["program"]):
                pairs.setdefault((match[1], int(match[2])), []).append(float(row["added_ns_per_call"]))
    return {key: statistics.median(values) for key, values in pairs.items()}


def main():
    before, after, out = sys.argv[1:4]
    series = [(medians(before), "8,5", "before"), (medians(after), "", "after")]
    depths = sorted({depth for data, _, _ in series for _, depth in data})
    values = [ns for data, _, _ in series for ns in data.values()]
    x = lambda depth: LEFT + (depth - depths[0]) / (depths[-1] - depths[0]) * (WIDTH - LEFT - RIGHT)
    if max(values) / max(min(values), 1.0) >= 10:  # fifty-fold apart: a log scale, 10 ns to 100 us
        low, high = 10.0, 100000.0
        y = lambda ns: TOP + (math.log10(high) - math.log10(max(ns, low))) / (math.log10(high) - math.log10(low)) * (
            HEIGHT - TOP - BOTTOM)
        ticks = [10 ** power for power in range(1, 6)]
    else:  # close together: linear from 0, with a gridline every 20 ns (100 is the goal)
        high = 20 * math.ceil(max(values) / 20)
        y = lambda ns: TOP + (high - ns) / high * (HEIGHT - TOP - BOTTOM)
        ticks = list(range(0, int(high) + 1, 20))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" '
             f'font-size="12">', f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
             f'<text x="{LEFT}" y="18">ns added per MPI call (median of paired runs) by stack depth, 256 call paths</text>']
    for ns in ticks:
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(ns):.1f}" y2="{y(ns):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{LEFT - 8}" y="{y(ns) + 4:.1f}" text-anchor="end">{ns}</text>')
    for depth in depths:
        parts.append(f'<text x="{x(depth):.1f}" y="{HEIGHT - BOTTOM + 18}" text-anchor="middle">{depth}</text>')
    parts.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 12}" text-anchor="middle">frames from main '
                 f'to the MPI call</text>')
    legend = TOP + 10
    for data, dash, label in series:
        for language, colour in LANGUAGES.items():
            points = [(x(d), y(data[(language, d)])) for d in depths if (language, d) in data]
            if not points:
                continue
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2" '
                         f'stroke-dasharray="{dash}"/>')
            parts.append(f'<line x1="{WIDTH - RIGHT + 10}" x2="{WIDTH - RIGHT + 40}" y1="{legend}" y2="{legend}" '
                         f'stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/>')
            parts.append(f'<text x="{WIDTH - RIGHT + 45}" y="{legend + 4}">{language} {label}</text>')
            legend += 18
    parts.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
