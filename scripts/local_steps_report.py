#!/usr/bin/env python3
"""Tables and plots of the local-steps study (scripts/local-steps-study.sh), from every run's metrics.csv.

  python3 scripts/local_steps_report.py tune  [--dir runs/local-steps]          validation accuracy of every setting
  python3 scripts/local_steps_report.py best  [--dir runs/local-steps]          the chosen settings, for DLION_STUDY_CHOSEN
  python3 scripts/local_steps_report.py final [--dir runs/local-steps] [--svg docs/img/local-steps.svg]

Run names: METHOD-nN-hH-lrLR-sSCALE[-bBETA1-BETA2]-PARTITION-seedS (the outer lr scale, and the outer betas when not
the defaults 0.9, 0.99; dense: dense-nN-lrLR-PARTITION-seedS). Accuracy is the last epoch's
(validation accuracy in the tuning runs, test accuracy in the final ones); mean and sample standard deviation over seeds.
Bits per parameter per step on the links: (bytes up + bytes down) * 8 / (parameters * steps * N), i.e. what one worker's
link carries per step, counted by the exchanges (in-process: the encoded frames; dense over Aeron IPC: the frames).
Plots are written as SVG by hand (no plotting library needed).
"""
import argparse
import csv
import math
import os
import re
import statistics
import sys

NAME = re.compile(r"^(mavo|avg)-n(\d+)-h(\d+)-lr([0-9.e-]+)-s([0-9.]+(?:-b[0-9.]+-[0-9.]+)?)-(.+)-seed(\d+)$")
DENSE = re.compile(r"^(dense)-n(\d+)-lr([0-9.e-]+)-(.+)-seed(\d+)$")
LABEL = {"mavo": "D-Lion MaVo", "avg": "D-Lion Avg", "dense": "dense G-Lion"}
PARTS = ["iid", "dirichlet_1.0", "dirichlet_0.1", "classes_2"]
PART_LABEL = {"iid": "i.i.d.", "dirichlet_1.0": "Dirichlet 1.0", "dirichlet_0.1": "Dirichlet 0.1", "classes_2": "2 classes/worker"}
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#7f7f7f"]


def runs(root):
    out = []
    if not os.path.isdir(root):
        return out
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name, "metrics.csv")
        if not os.path.exists(path):
            continue
        m = NAME.match(name)
        if m:
            method, n, h, lr, scale, part, seed = m.groups()
        else:
            m = DENSE.match(name)
            if not m:
                continue
            method, n, lr, part, seed = m.groups()
            h, scale = "1", "1"
        with open(path) as f:
            rows = list(csv.DictReader(f))
        if not rows:
            continue
        epochs = []
        for r in rows:
            steps = int(r["rounds"])
            params = int(r["params"])
            workers = int(r["workers"])
            bits = (int(r["bytes_up"]) + int(r["bytes_down"])) * 8.0 / (params * steps * workers) if steps else float("nan")
            epochs.append({"steps": steps, "acc": float(r["test_accuracy"]), "bits": bits, "wall": float(r["wall_s"])})
        out.append({"method": method, "n": int(n), "h": int(h), "lr": lr, "scale": scale, "part": part, "seed": int(seed),
                    "epochs": epochs})
    return out


def outer(scale):
    """The outer step of a run's name: "0.5" (default outer betas) or "0.5-b0-0.99" -> "0.5, β1 0, β2 0.99"."""
    if "-b" not in scale:
        return scale
    s, b = scale.split("-b", 1)
    b1, b2 = b.split("-", 1)
    return "%s, β1 %s, β2 %s" % (s, b1, b2)


def outer_arg(scale):
    """The outer step as local-steps-study.sh takes it: "0.5" or "0.5:0:0.99"."""
    return scale.replace("-b", ":", 1).replace("-", ":", 1) if "-b" in scale else scale


def mean_std(values):
    if not values:
        return float("nan"), float("nan")
    if len(values) == 1:
        return values[0], 0.0
    return statistics.mean(values), statistics.stdev(values)


def fmt(values):
    if not values:
        return "not run"
    m, s = mean_std(values)
    return "%.2f ± %.2f%%" % (100 * m, 100 * s) + ("" if len(values) == 3 else (" (%d seed%s)" % (len(values), "" if len(values) == 1 else "s")))


def tune(root):
    """One table per N: the validation accuracy of every setting at every learning rate tried; returns the best of N = 8
    (the study's tuning), else of the first N."""
    rs = [r for r in runs(os.path.join(root, "tune"))]
    ns = sorted({r["n"] for r in rs})
    chosen_n = 8 if 8 in ns else (ns[0] if ns else None)
    best = {}
    for n in ns:
        at_n = [r for r in rs if r["n"] == n]
        lrs = sorted({r["lr"] for r in at_n}, key=float)
        print("\nN = %d, validation accuracy (seed 42, i.i.d.):\n" % n)
        print("| method | H | outer lr scale (and betas) | bits/param/step | " + " | ".join("lr " + lr for lr in lrs) + " |")
        print("|---|---|---|---|" + "---|" * len(lrs))
        keys = sorted({(r["method"], r["h"], r["scale"]) for r in at_n}, key=lambda k: (["mavo", "avg", "dense"].index(k[0]), k[1], k[2]))
        for k in keys:
            cells = []
            for lr in lrs:
                acc = [r["epochs"][-1]["acc"] for r in at_n if (r["method"], r["h"], r["scale"]) == k and r["lr"] == lr]
                cells.append("%.2f%%" % (100 * acc[0]) if acc else "—")
                if acc and n == chosen_n:
                    cur = best.get((k[0], k[1]))
                    if cur is None or acc[0] > cur[0]:
                        best[(k[0], k[1])] = (acc[0], lr, k[2])
            bits = statistics.mean(r["epochs"][-1]["bits"] for r in at_n if (r["method"], r["h"], r["scale"]) == k)
            print("| %s | %d | %s | %.3f | %s |" % (LABEL[k[0]], k[1], outer(k[2]) if k[1] > 1 else "—", bits, " | ".join(cells)))
    return best


def chosen(root):
    best = tune_quiet(root)
    return ";".join("%s %d %s %s" % (m, h, lr, outer_arg(scale)) for (m, h), (_, lr, scale) in sorted(best.items(), key=lambda i: (["mavo", "avg", "dense"].index(i[0][0]), i[0][1])))


def tune_quiet(root):
    stdout = sys.stdout
    sys.stdout = open(os.devnull, "w")
    try:
        return tune(root)
    finally:
        sys.stdout.close()
        sys.stdout = stdout


def final(root, svg):
    rs = runs(os.path.join(root, "final"))
    for n in sorted({r["n"] for r in rs}, reverse=True):
        sel = [r for r in rs if r["n"] == n]
        parts = [p for p in PARTS if any(r["part"] == p for r in sel)]
        steps = sorted({r["epochs"][-1]["steps"] for r in sel})
        print("\nN = %d, %s steps, test accuracy after the last epoch (mean ± std over seeds):\n" % (n, "/".join(map(str, steps))))
        print("| method | H | lr | bits/param/step | " + " | ".join(PART_LABEL[p] for p in parts) + " |")
        print("|---|---|---|---|" + "---|" * len(parts))
        keys = sorted({(r["method"], r["h"], r["lr"], r["scale"]) for r in sel}, key=lambda k: (["mavo", "avg", "dense"].index(k[0]), k[1]))
        for k in keys:
            group = [r for r in sel if (r["method"], r["h"], r["lr"], r["scale"]) == k]
            bits = statistics.mean(r["epochs"][-1]["bits"] for r in group)
            cells = [fmt([r["epochs"][-1]["acc"] for r in group if r["part"] == p]) for p in parts]
            lr = k[2] + (" (outer ×%s)" % outer(k[3]) if k[1] > 1 else "")
            print("| %s | %d | %s | %.3f | %s |" % (LABEL[k[0]], k[1], lr, bits, " | ".join(cells)))
    if svg:
        plot(rs, svg)


def plot(rs, path):
    """Accuracy against bits per parameter per step (log axis), one panel per partition, N = 8; error bars = std."""
    n = max(r["n"] for r in rs)
    sel = [r for r in rs if r["n"] == n]
    parts = [p for p in PARTS if any(r["part"] == p for r in sel)]
    width, height, pw, ph, ml, mt = 1000, 330, 210, 220, 60, 40
    accs = [r["epochs"][-1]["acc"] for r in sel]
    lo, hi = math.floor(min(accs) * 20) / 20, math.ceil(max(accs) * 20) / 20
    bits = [r["epochs"][-1]["bits"] for r in sel]
    blo, bhi = math.floor(math.log10(min(bits))), math.ceil(math.log10(max(bits)))
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (width, height + 60),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="18" font-size="13">MLP, Fashion-MNIST, N = %d, per-worker batch 32: test accuracy against bits per parameter per step'
           ' on a link (mean ± std of 3 seeds; H = 16, 4, 1 from left)</text>' % (ml, n)]
    series = sorted({(r["method"]) for r in sel}, key=lambda m: ["mavo", "avg", "dense"].index(m))
    for i, part in enumerate(parts):
        x0 = ml + i * (pw + 35)
        y0 = mt
        svg.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>' % (x0, y0, pw, ph))
        svg.append('<text x="%d" y="%d">%s</text>' % (x0 + 5, y0 + 14, PART_LABEL[part]))

        def px(b):
            return x0 + (math.log10(b) - blo) / (bhi - blo) * pw

        def py(a):
            return y0 + ph - (a - lo) / (hi - lo) * ph
        for e in range(blo, bhi + 1):
            svg.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>' % (px(10 ** e), y0 + ph + 14, 10 ** e))
        if i == 0:
            a = lo
            while a <= hi + 1e-9:
                svg.append('<text x="%d" y="%.1f" text-anchor="end">%d%%</text>' % (x0 - 4, py(a) + 4, round(a * 100)))
                svg.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>' % (x0, x0 + pw, py(a), py(a)))
                a += 0.05
        for j, method in enumerate(series):
            pts = []
            for h in sorted({r["h"] for r in sel if r["method"] == method}, reverse=True):
                g = [r for r in sel if r["method"] == method and r["h"] == h and r["part"] == part]
                if not g:
                    continue
                m, s = mean_std([r["epochs"][-1]["acc"] for r in g])
                b = statistics.mean(r["epochs"][-1]["bits"] for r in g)
                pts.append((px(b), py(m), py(m - s), py(m + s)))
            colour = COLOURS[j]
            if len(pts) > 1:
                svg.append('<polyline fill="none" stroke="%s" points="%s"/>' % (colour, " ".join("%.1f,%.1f" % (x, y) for x, y, _, _ in pts)))
            for x, y, ylo, yhi in pts:
                svg.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>' % (x, x, ylo, yhi, colour))
                svg.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (x, y, colour))
    ly = mt + ph + 34
    for j, method in enumerate(series):
        svg.append('<circle cx="%d" cy="%d" r="4" fill="%s"/><text x="%d" y="%d">%s</text>' % (ml + 150 * j, ly, COLOURS[j], ml + 150 * j + 8, ly + 4,
                                                                                          LABEL[method]))
    svg.append('<text x="%d" y="%d">bits per parameter per step on a link (log)</text>' % (ml + 600, ly + 4))
    svg.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(svg) + "\n")
    print("\nwrote " + path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["tune", "best", "final"])
    p.add_argument("--dir", default="runs/local-steps")
    p.add_argument("--svg")
    a = p.parse_args()
    if a.what == "tune":
        tune(a.dir)
    elif a.what == "best":
        print(chosen(a.dir))
    else:
        final(a.dir, a.svg)


if __name__ == "__main__":
    main()
