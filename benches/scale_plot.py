#!/usr/bin/env python3
"""Draws `cargo bench --bench scale`'s figures as an SVG (standard library only).

    python3 benches/scale_plot.py <target>/bench-scale-dev-composed.csv docs/scale.svg

Three panels over the number of notes (log scales): each search shape's p99
on SQLite and on PostgreSQL (the slowest of the shape alone, by pad and by
tag), with the 30 ms target (issue 71; it was 60); and memory and disk per note on each store.
"""

import csv
import math
import sys
from collections import defaultdict

SHAPES = ["words: a question", "words: two words", "words: a ticket number", "meaning", "hybrid"]
COLOURS = ["#1b6ca8", "#d1495b", "#66a182", "#edae49", "#8e5ea2"]
STORES = ["SQLite", "PostgreSQL"]
W, H, PAD_L, PAD_R, PAD_T, PAD_B = 330, 260, 52, 12, 30, 42


def read(path):
    p99 = defaultdict(dict)  # (store, shape) -> size -> worst p99
    per_note = defaultdict(dict)  # (store, what) -> size -> bytes
    for row in csv.DictReader(open(path)):
        size = int(row["size"])
        if row["what"] in ("memory bytes/note", "disk bytes/note"):
            per_note[(row["store"], row["what"].split()[0])][size] = float(row["a"])
            continue
        for shape in SHAPES:
            if row["what"] == shape or row["what"].startswith(shape + ","):
                cell = p99[(row["store"], shape)]
                cell[size] = max(cell.get(size, 0.0), float(row["b"]))
    return p99, per_note


def panel(x0, title, ylabel, series, sizes, ymin, ymax, target=None, legend_top=False):
    """An SVG group: `series` is [(label, colour, dashed, {size: value})]."""
    lx = lambda s: x0 + PAD_L + (math.log10(s) - math.log10(sizes[0])) / (
        math.log10(sizes[-1]) - math.log10(sizes[0]) or 1) * (W - PAD_L - PAD_R)
    ly = lambda v: PAD_T + (math.log10(ymax) - math.log10(max(v, ymin))) / (
        math.log10(ymax) - math.log10(ymin)) * (H - PAD_T - PAD_B)
    out = [f'<text x="{x0 + W / 2}" y="18" text-anchor="middle" font-weight="bold">{title}</text>',
           f'<rect x="{x0 + PAD_L}" y="{PAD_T}" width="{W - PAD_L - PAD_R}" height="{H - PAD_T - PAD_B}" fill="none" stroke="#999"/>']
    tick = 10 ** math.floor(math.log10(ymin))
    while tick <= ymax:
        if tick >= ymin:
            y = ly(tick)
            out.append(f'<line x1="{x0 + PAD_L}" x2="{x0 + W - PAD_R}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
            out.append(f'<text x="{x0 + PAD_L - 4}" y="{y + 4:.1f}" text-anchor="end" font-size="10">{tick:g}</text>')
        tick *= 10
    for s in sizes:
        x = lx(s)
        label = f"{s // 1000}k" if s < 1_000_000 else f"{s // 1_000_000}M"
        out.append(f'<text x="{x:.1f}" y="{H - PAD_B + 14}" text-anchor="middle" font-size="10">{label}</text>')
    out.append(f'<text x="{x0 + W / 2}" y="{H - 8}" text-anchor="middle" font-size="10">notes</text>')
    out.append(f'<text x="{x0 + 12}" y="{PAD_T + (H - PAD_T - PAD_B) / 2}" font-size="10" '
               f'transform="rotate(-90 {x0 + 12} {PAD_T + (H - PAD_T - PAD_B) / 2})" text-anchor="middle">{ylabel}</text>')
    if target:
        y = ly(target)
        out.append(f'<line x1="{x0 + PAD_L}" x2="{x0 + W - PAD_R}" y1="{y:.1f}" y2="{y:.1f}" stroke="#000" stroke-dasharray="2 3"/>')
        out.append(f'<text x="{x0 + W - PAD_R - 2}" y="{y - 3:.1f}" text-anchor="end" font-size="9">target {target:g} ms</text>')
    for i, (label, colour, dashed, values) in enumerate(series):
        points = " ".join(f"{lx(s):.1f},{ly(v):.1f}" for s, v in sorted(values.items()))
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        out += [f'<circle cx="{lx(s):.1f}" cy="{ly(v):.1f}" r="2.5" fill="{colour}"/>' for s, v in values.items()]
        ytext = PAD_T + 12 + 12 * i if legend_top else H - PAD_B - 6 - 12 * (len(series) - 1 - i)
        out.append(f'<text x="{x0 + W - PAD_R - 4}" y="{ytext}" text-anchor="end" font-size="9" '
                   f'fill="{colour}">{label}</text>')
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    p99, per_note = read(sys.argv[1])
    sizes = sorted({s for cell in p99.values() for s in cell})
    parts = []
    for k, store in enumerate(STORES):
        series = [(shape, COLOURS[i], False, p99[(store, shape)])
                  for i, shape in enumerate(SHAPES) if p99[(store, shape)]]
        parts += panel(k * W, f"{store}: search p99", "ms", series, sizes, 0.1, 1000, target=30)
    series = [(f"{what}, {store}", COLOURS[i], what == "disk", per_note[(store, what)])
              for i, store in enumerate(STORES) for what in ("memory", "disk")
              if per_note[(store, what)]]
    parts += panel(2 * W, "bytes per note", "bytes", series, sizes, 100, 1_000_000, legend_top=True)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{3 * W}" height="{H}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{3 * W}" height="{H}" fill="#fff"/>'] + parts + ["</svg>"]
    open(sys.argv[2], "w").write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
