#!/usr/bin/env python3
"""Round time against the number of workers, from lab runs: one series per method, one run directory per N.

Each run directory is a scripts/netlab.sh --exchange (or --gloo) output; the round times are worker 0's
("round R ... micros T" lines in worker-0.log), rounds 1 to the last (round 0 includes connecting). A series may also
give its medians literally, N:SECONDS pairs (a run measured earlier, whose directory is gone; say so where it is shown).
Prints a Markdown table (median and p90 per N) and writes an SVG plot with a logarithmic time axis (no plotting library
needed).

  python3 scripts/plot_scaling.py --workers 4,8,16 --out docs/img/scaling-round-vs-n.svg \
      --series "gloo ring all-reduce, fp32=runs/gloo-ar-{n}" --series "sharded D-Lion=runs/dlion-sh-{n}"
"""
import argparse
import math
import os
import re
import statistics
import sys

COLOURS = ["#d62728", "#ff7f0e", "#7f7f7f", "#9467bd", "#1f77b4", "#2ca02c", "#8c564b"]


def round_seconds(run_dir):
    """Worker 0's round times in seconds, rounds 1 to the last; None when the run has none."""
    path = os.path.join(run_dir, "worker-0.log")
    if not os.path.exists(path):
        return None
    times = []
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"round (\d+)\b.*?\smicros (\d+)", line)
            if m:
                times.append(int(m.group(2)) / 1e6)
    return times[1:] if len(times) > 1 else None


def p90(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def svg(series, workers, out):
    width, height, left, right, top, bottom = 820, 440, 70, 330, 30, 50
    values = [v for _, points in series for v in points.values()]
    low = 10 ** math.floor(math.log10(min(values)))
    high = 10 ** math.ceil(math.log10(max(values)))
    def x(n):
        return left + (workers.index(n) + 0.5) * (width - left - right) / len(workers)
    def y(v):
        return top + (math.log10(high) - math.log10(v)) / (math.log10(high) - math.log10(low)) * (height - top - bottom)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>']
    decade = low
    while decade <= high * 1.0001:
        for k in range(1, 10):
            v = decade * k
            if v > high * 1.0001:
                break
            parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#eee"/>')
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y(decade):.1f}" y2="{y(decade):.1f}" stroke="#bbb"/>')
        parts.append(f'<text x="{left - 6}" y="{y(decade) + 4:.1f}" text-anchor="end">{decade:g} s</text>')
        decade *= 10
    for n in workers:
        parts.append(f'<text x="{x(n):.1f}" y="{height - bottom + 18}" text-anchor="middle">{n}</text>')
    parts.append(f'<text x="{(left + width - right) / 2:.1f}" y="{height - 10}" text-anchor="middle">workers N</text>')
    parts.append(f'<text x="{left}" y="{top - 12}">one round\'s exchange, median of worker 0\'s rounds (log scale)</text>')
    for i, (name, points) in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        coords = [(x(n), y(points[n])) for n in workers if n in points]
        parts.append('<polyline fill="none" stroke-width="2" stroke="{}" points="{}"/>'.format(
            colour, " ".join(f"{a:.1f},{b:.1f}" for a, b in coords)))
        for a, b in coords:
            parts.append(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3.5" fill="{colour}"/>')
        ly = top + 20 * i + 10
        parts.append(f'<line x1="{width - right + 15}" x2="{width - right + 35}" y1="{ly}" y2="{ly}" stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<text x="{width - right + 40}" y="{ly + 4}">{name}</text>')
    parts.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", required=True, help="comma-separated N, e.g. 4,8,16")
    ap.add_argument("--series", action="append", required=True,
                    help="NAME=DIR with {n} for the number of workers, or NAME=N:SECONDS,N:SECONDS,...")
    ap.add_argument("--out", required=True, help="the SVG to write")
    args = ap.parse_args()
    workers = [int(n) for n in args.workers.split(",")]
    series = []
    print("| one round's exchange | " + " | ".join(f"N = {n}" for n in workers) + " |")
    print("|---" * (len(workers) + 1) + "|")
    for spec in args.series:
        name, _, template = spec.partition("=")
        points = {}
        cells = []
        if "{n}" not in template:
            try:
                given = {int(k): float(v) for k, v in (pair.split(":") for pair in template.split(","))}
            except ValueError:
                sys.exit(f"plot_scaling: --series {spec!r} needs NAME=DIR with {{n}}, or NAME=N:SECONDS,...")
            for n in workers:
                if n in given:
                    points[n] = given[n]
                cells.append(f"{given[n]:.3f} s" if n in given else "-")
        for n in workers if "{n}" in template else []:
            times = round_seconds(template.format(n=n))
            if times:
                points[n] = statistics.median(times)
                cells.append(f"{points[n]:.3f} s (p90 {p90(times):.3f})")
            else:
                cells.append("-")
        print(f"| {name} | " + " | ".join(cells) + " |")
        if points:
            series.append((name, points))
    if not series:
        sys.exit("plot_scaling: no run has round times")
    svg(series, workers, args.out)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
