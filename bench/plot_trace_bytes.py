#!/usr/bin/env python3
"""Issue 28: trace bytes against simulated ranks, log-log, one line per program and precision
(solid p = 100, dashed p = 0), from smpi_scale.py's CSV. Standard library only.

    plot_trace_bytes.py SCALE.csv OUT.svg
"""
import csv
import math
import sys

COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 720, 440, 70, 190, 30, 50


def main():
    source, out = sys.argv[1:3]
    sizes = {}  # (program, precision) -> {ranks: bytes}
    with open(source) as f:
        for row in csv.DictReader(f):
            sizes.setdefault((row["program"], int(row["precision"])), {})[int(row["ranks"])] = int(row["trace_bytes"])
    ranks = sorted({r for series in sizes.values() for r in series})
    values = [b for series in sizes.values() for b in series.values()]
    low = 10 ** math.floor(math.log10(min(values)))
    high = 10 ** math.ceil(math.log10(max(values)))
    x = lambda r: LEFT + (math.log2(r) - math.log2(ranks[0])) / max(math.log2(ranks[-1] / ranks[0]), 1) * (
        WIDTH - LEFT - RIGHT)
    y = lambda b: TOP + (math.log10(high) - math.log10(b)) / (math.log10(high) - math.log10(low)) * (HEIGHT - TOP - BOTTOM)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" '
             f'font-size="12">', f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
             f'<text x="{LEFT}" y="18">trace bytes by simulated ranks (SimGrid, platforms/cluster.xml)</text>']
    power = low
    while power <= high:
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(power):.1f}" y2="{y(power):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{LEFT - 8}" y="{y(power) + 4:.1f}" text-anchor="end">{power:g}</text>')
        power *= 10
    for r in ranks:
        parts.append(f'<text x="{x(r):.1f}" y="{HEIGHT - BOTTOM + 18}" text-anchor="middle">{r}</text>')
    parts.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 12}" text-anchor="middle">ranks</text>')
    programs = sorted({program for program, _ in sizes})
    legend = TOP + 10
    for index, program in enumerate(programs):
        colour = COLOURS[index % len(COLOURS)]
        for precision, dash in ((100, ""), (0, "6,4")):
            series = sizes.get((program, precision))
            if not series:
                continue
            path = " ".join(f"{x(r):.1f},{y(b):.1f}" for r, b in sorted(series.items()))
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2" '
                         f'stroke-dasharray="{dash}"/>')
            parts.append(f'<line x1="{WIDTH - RIGHT + 10}" x2="{WIDTH - RIGHT + 40}" y1="{legend}" y2="{legend}" '
                         f'stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/>')
            parts.append(f'<text x="{WIDTH - RIGHT + 45}" y="{legend + 4}">{program} p = {precision}</text>')
            legend += 16
    parts.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
