#!/usr/bin/env python3
"""The slow-link lab's table (scripts/slowlink-lab.sh runs this at the end; it can be rerun on its directory).

Per run (h1, h4, h16, dense under --out): the time to --target test accuracy (worker 0's evals.csv: training seconds
without the evaluations, from the start of training, start-up and JIT warm-up included), the same from step 16 on (every
run evaluates at step 16: the first steps' warm-up left out), the steps taken to it, the
seconds per step after the first evaluation, the last accuracy, and the bits per parameter per step that every worker's
link carried (interface counters, netlab's links.tsv: sent + received, summed over the workers' hosts, divided by
parameters x steps x workers) over the whole lab (start-up and end included) and while the job trained (from worker 0's
first evaluation to its metrics.csv: netlab's links-first-eval.txt and links-trained.txt), beside what the workers'
exchanges counted (bytes up + down, metrics.csv; a worker's link also carries its slice's votes and results). Then the
two terms of a per-step D-Lion step: the exchange alone at this rate (the exchange run's median round) and the compute of
a step (H = 1, worker 0: the mean compute phase in metrics.csv, on cores shared by all eight workers).
"""
import argparse
import csv
import os
import re
import statistics

RUNS = [("h1", "D-Lion MaVo, H = 1", 1), ("h4", "D-Lion MaVo, H = 4", 4), ("h16", "D-Lion MaVo, H = 16", 16),
        ("dense", "dense G-Lion", 1)]


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def links(path, workers):
    """(bytes every worker's link carried, sent + received; shaper drops; packets) or None."""
    if not os.path.exists(path):
        return None
    carried = drops = packets = 0
    with open(path) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            if r["host"].startswith("w"):
                carried += int(r["link_sent_bytes"]) + int(r["link_received_bytes"])
                drops += int(r["drops_out"]) + int(r["drops_in"])
                packets += int(r["packets_sent"]) + int(r["packets_received"])
    return carried, drops, packets


def window(d, workers):
    """bytes every worker's link carried (sent + received) between netlab's two training snapshots, or None."""
    snaps = []
    for name in ("links-first-eval.txt", "links-trained.txt"):
        path = os.path.join(d, name)
        if not os.path.exists(path):
            return None
        total = 0
        with open(path) as f:
            for line in f:
                host, tx, _txp, rx = line.split()[:4]
                if host.startswith("w"):
                    total += int(tx) + int(rx)
        snaps.append(total)
    return snaps[1] - snaps[0]


def load(out, name):
    got = []
    for when in ("before", "after"):
        p = os.path.join(out, f"{name}.load-{when}")
        if os.path.exists(p):
            got.append(open(p).read().split()[0])
    return " → ".join(got) if got else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--rate", required=True)
    ap.add_argument("--target", type=float, required=True)
    ap.add_argument("--params", type=int, required=True)
    ap.add_argument("--workers", type=int, required=True)
    args = ap.parse_args()
    n, p = args.workers, args.params

    print(f"| run ({args.rate} per link, sharded, N = {n}) | steps run | s to {100 * args.target:.0f}% | from step 16 | steps to it | s/step |"
          f" last accuracy | bits/param/step on the links: whole lab | while training | counted by the exchanges | shaper drops |"
          f" load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    times = {}
    warm = {}
    for key, label, h in RUNS:
        d = os.path.join(args.out, key)
        evals = rows(os.path.join(d, "worker-0", "evals.csv"))
        if not evals:
            if os.path.isdir(d):
                print(f"| {label} | no evaluation (see {key}.log) | | | | | | | | | | |")
            continue
        steps = int(evals[-1]["step"])
        hit = next((r for r in evals if float(r["test_accuracy"]) >= args.target), None)
        first, last = evals[0], evals[-1]
        per_step = (float(last["train_s"]) - float(first["train_s"])) / max(1, int(last["step"]) - int(first["step"]))
        at16 = next((r for r in evals if int(r["step"]) == 16), None)
        if hit:
            times[key] = float(hit["train_s"])
            to_target, steps_to = f"{float(hit['train_s']):.1f}", hit["step"]
            if at16 and int(hit["step"]) >= 16:
                warm[key] = float(hit["train_s"]) - float(at16["train_s"])
        else:
            to_target, steps_to = f"not reached in {float(last['train_s']):.0f} s", "—"
        from16 = f"{warm[key]:.1f}" if key in warm else "—"
        counted = 0
        for w in range(n):
            m = rows(os.path.join(d, f"worker-{w}", "metrics.csv"))
            if m:
                counted += int(m[-1]["bytes_up"]) + int(m[-1]["bytes_down"])
        lk = links(os.path.join(d, "links.tsv"), n)
        on_links = f"{lk[0] * 8 / (p * steps * n):.3f}" if lk else "—"
        drops = f"{lk[1]:,} of {lk[2]:,} packets" if lk else "—"
        trained = window(d, n)
        while_training = f"{trained * 8 / (p * (steps - int(first['step'])) * n):.3f}" if trained is not None and steps > int(first["step"]) else "—"
        print(f"| {label} | {steps} | {to_target} | {from16} | {steps_to} | {per_step:.3f} | {100 * float(last['test_accuracy']):.2f}% |"
              f" {on_links} | {while_training} | {counted * 8 / (p * steps * n):.3f} | {drops} | {load(args.out, key)} |")
    best = min((k for k in ("h4", "h16") if k in times), key=lambda k: times[k], default=None)
    if best and "h1" in times:
        print(f"\nbest H ({best[1:]}) reaches {100 * args.target:.0f}% {times['h1'] / times[best]:.2f}x sooner than H = 1"
              f" ({times[best]:.1f} s against {times['h1']:.1f} s)" + (f"; from step 16, {warm['h1'] / warm[best]:.2f}x" if best in warm
                                                                     and "h1" in warm else ""))
    if "dense" in times and best:
        print(f"dense G-Lion reaches it in {times['dense']:.1f} s: {times['dense'] / times[best]:.2f}x the best H's time")

    # the two terms of a per-step D-Lion step
    exchange_log = os.path.join(args.out, "exchange", "worker-0.log")
    if os.path.exists(exchange_log):
        rounds = []
        with open(exchange_log) as f:
            for line in f:
                m = re.match(r"round (\d+)\b.*?\smicros (\d+)", line)
                if m and int(m.group(1)) > 0:   # round 0 holds the connections
                    rounds.append(int(m.group(2)) / 1e6)
        if rounds:
            print(f"\nexchange alone ({args.rate}, {p:,} parameters, {len(rounds)} rounds after the first): median"
                  f" {statistics.median(rounds):.3f} s, p90 {sorted(rounds)[int(0.9 * (len(rounds) - 1))]:.3f} s")
    m = rows(os.path.join(args.out, "h1", "worker-0", "metrics.csv"))
    if m and m[-1].get("compute_ms"):
        r = m[-1]
        print(f"H = 1, worker 0, per step: compute {float(r['compute_ms']):.1f} ms (p99 {float(r['compute_p99_ms']):.1f}), wait"
              f" {float(r['wait_ms']):.1f} ms (p99 {float(r['wait_p99_ms']):.1f}), pack {float(r['pack_ms']):.1f} ms, apply"
              f" {float(r['apply_ms']):.1f} ms")


if __name__ == "__main__":
    main()
