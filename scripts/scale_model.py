#!/usr/bin/env python3
"""The scale model of docs/scaling.md: bits per parameter per round on the busiest link, each way, for each topology,
and the round times they project for large N, from the link rate alone (no latency, no compute).

  python3 scripts/scale_model.py                       # the tables of docs/scaling.md
  python3 scripts/scale_model.py --check P N BYTES     # a lab run: formula against the busiest link's bytes per round

Bits on the wire per parameter, as the exchange sends them (docs/benchmarks.md, AeronRoundBenchmark): a vote is 1.008
bits (1 bit and 0.8% of chunk headers); a result is 1.008 bits at odd N (MaVo), 1.616 bits at even N (MaVo's ternary
result packed 5 trits to a byte, and headers), ceil(log2(N+1)) * 1.008 bits for Avg.
"""
import argparse
import math

VOTE = 1.008


def result_bits(n, rule="mavo"):
    if rule == "avg":
        return math.ceil(math.log2(n + 1)) * VOTE
    return VOTE if n % 2 == 1 else 1.616


def busiest_link_bits(topology, n, rule="mavo"):
    """Bits per parameter per round on the busiest link, in its busier direction."""
    if topology == "star":            # the server's link: N votes in, N copies of the result out
        return n * max(VOTE, result_bits(n, rule))
    if topology == "sharded":         # every link: its share of the all-to-all of votes and of the all-gather of results
        return (n - 1) / n * (VOTE + result_bits(n, rule))
    if topology == "ring-fp32":       # reduce-scatter + all-gather of fp32 (NCCL, gloo)
        return 2 * (n - 1) / n * 32
    if topology == "allgather-signs":  # every rank receives every other rank's packed signs
        return (n - 1) * 1.0
    raise ValueError(topology)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", nargs=3, metavar=("P", "N", "BYTES"), type=float)
    args = parser.parse_args()
    if args.check:
        p, n, measured = args.check
        n = int(n)
        formula = busiest_link_bits("sharded", n) * p / 8
        print(f"sharded N={n}: formula {formula:,.0f} B a round on every link, measured {measured:,.0f} B ({measured / formula:.3f}x)")
        return
    topologies = ["sharded", "star", "ring-fp32", "allgather-signs"]
    print("bits per parameter per round on the busiest link (MaVo, even N)")
    print("| N | " + " | ".join(topologies) + " |")
    print("|---|" + "---|" * len(topologies))
    for n in [4, 8, 16, 64, 256, 1024]:
        print(f"| {n} | " + " | ".join(f"{busiest_link_bits(t, n):.2f}" for t in topologies) + " |")
    for name, params in [("the paper's ViT, 18,978,314 parameters", 18_978_314), ("a 1B-parameter model", 1_000_000_000)]:
        print(f"\nprojected round, {name} (link rate only)")
        print("| N | Gbit/s | " + " | ".join(topologies) + " |")
        print("|---|---|" + "---|" * len(topologies))
        for n in [64, 256, 1024]:
            for gbit in [10, 100]:
                cells = []
                for t in topologies:
                    seconds = params * busiest_link_bits(t, n) / (gbit * 1e9)
                    cells.append(f"{seconds * 1e3:,.1f} ms" if seconds < 1 else f"{seconds:,.2f} s")
                print(f"| {n} | {gbit} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
