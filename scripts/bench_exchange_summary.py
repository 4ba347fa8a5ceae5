#!/usr/bin/env python3
"""One line per case of scripts/bench-exchange.sh, from its vote-workers' logs.

Reads OUT/CASE/worker-*.log ("round R voters V digest D micros T cpuMicros C" per round, "payload sent S received R"
at the end) and prints, per case: the round's median and p90 wall time over the rounds after the first tenth (worker 0,
whose clock starts at its submit), the CPU per round per process (median over a process's rounds; the busiest process),
whether every worker's digest of every round agrees, and with --rate the link-rate floor (the busiest host's payload
per round at the link rate) and the ratio to it.
"""
import argparse
import glob
import os
import re
import statistics

from netlab_links import rate_bits   # the lab's own reading of a tc rate, beside this script

ROUND = re.compile(r"round (\d+) voters (\d+) digest ([0-9a-f]+) micros (\d+) cpuMicros (\d+)")
PAYLOAD = re.compile(r"payload sent (\d+) received (\d+)")


def percentile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(round(q * (len(sorted_values) - 1))))]


def case(out, name, rate):
    logs = sorted(glob.glob(os.path.join(out, name, "worker-[0-9]*.log")), key=lambda p: int(re.search(r"(\d+)\.log$", p).group(1)))
    if not logs:
        raise SystemExit(f"bench_exchange_summary: no worker logs in {os.path.join(out, name)}")
    walls, cpus, digests, busiest = {}, {}, {}, 0
    for i, log in enumerate(logs):
        walls[i], cpus[i] = [], []
        with open(log) as f:
            for line in f:
                m = ROUND.match(line)
                if m:
                    r = int(m.group(1))
                    walls[i].append((r, int(m.group(4)) / 1e3))
                    cpus[i].append((r, int(m.group(5)) / 1e3))
                    digests.setdefault(r, set()).add(m.group(3))
                m = PAYLOAD.match(line)
                if m:
                    busiest = max(busiest, int(m.group(1)), int(m.group(2)))
    rounds = len(walls[0])
    if rounds == 0:
        raise SystemExit(f"bench_exchange_summary: {logs[0]} has no round")
    skip = max(1, rounds // 10)
    wall = sorted(t for r, t in walls[0] if r >= skip)
    cpu = max(statistics.median(t for r, t in cpus[i] if r >= skip) for i in cpus)
    agree = all(len(d) == 1 for d in digests.values()) and all(len(walls[i]) == rounds for i in walls)
    med, p90 = statistics.median(wall), percentile(wall, 0.9)
    line = f"{name:<14} {len(logs):>3} {rounds:>6} {med:>10.1f} {p90:>9.1f} {cpu:>12.1f}"
    if rate:
        floor = busiest / rounds * 8 / rate_bits(rate) * 1e3
        line += f" {floor:>10.1f} {med / floor:>8.2f}"
    return line + f"  {'yes' if agree else 'NO'}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--params", required=True, type=int)
    parser.add_argument("--rate")
    parser.add_argument("cases", nargs="+")
    args = parser.parse_args()
    print(f"P = {args.params:,} parameters, {'links ' + args.rate if args.rate else 'UDP loopback (no link floor)'}")
    header = f"{'case':<14} {'N':>3} {'rounds':>6} {'median ms':>10} {'p90 ms':>9} {'CPU ms/round':>12}"
    if args.rate:
        header += f" {'floor ms':>10} {'/floor':>8}"
    print(header + "  digests agree")
    for name in args.cases:
        print(case(args.out, name, args.rate))


if __name__ == "__main__":
    main()
