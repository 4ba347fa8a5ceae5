#!/usr/bin/env python3
"""The scale model of docs/scaling.md: bits per parameter per round on the busiest link, each way, for each topology,
and the round times they project for large N, from the link rate alone (no latency, no compute).

  python3 scripts/scale_model.py                       # the tables of docs/scaling.md
  python3 scripts/scale_model.py --check P N BYTES     # a lab run: formula against the busiest link's bytes per round
  python3 scripts/scale_model.py --cpu-ms 10           # fast networks: the link time plus a measured CPU term

Bits on the wire per parameter, as the exchange sends them (docs/benchmarks.md, AeronRoundBenchmark): a vote is 1.008
bits (1 bit and 0.8% of chunk headers); a result is 1.008 bits at odd N (MaVo), 1.681 bits at even N (MaVo's ternary
result, 3 parameters in 5 bits, a 1,000-word chunk's last word in 2 bits, and headers), ceil(log2(N+1)) * 1.008 bits
for Avg.

The CPU term (--cpu-ms, the CPU per round of one process at the paper's 18,978,314 parameters, as
'./dlion bench-exchange' measures it) grows with the parameters and not with N: a sharded process sends and receives
about (vote + result) bits per parameter of the whole vector whatever N is, and its slice server counts N votes of a
1/N slice. The fast-network table adds it to the link time, as if nothing overlapped (an upper bound: the exchange
overlaps sending, counting and receiving across slices); the fp32 ring all-reduce is given its link time alone
(NCCL reduces on the GPU).
"""
import argparse
import math

VOTE = 1.008
TERNARY = (5 * 333 + 2) / 1000 * VOTE   # 1,000-word chunks: 333 groups of 3 words in 5 words, the last word in 2
VIT = 18_978_314


def result_bits(n, rule="mavo"):
    if rule == "avg":
        return math.ceil(math.log2(n + 1)) * VOTE
    return VOTE if n % 2 == 1 else TERNARY


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
    parser.add_argument("--cpu-ms", type=float, help="CPU per round of one process at 18,978,314 parameters")
    args = parser.parse_args()
    if args.cpu_ms is not None:
        fast_networks(args.cpu_ms)
        return
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


def fmt(seconds):
    return f"{seconds * 1e3:,.1f} ms" if seconds < 1 else f"{seconds:,.2f} s"


def fast_networks(cpu_ms):
    print(f"round on fast networks, sharded D-Lion (MaVo, even N) with a CPU term of {cpu_ms:g} ms per 18,978,314 parameters,"
          " against the fp32 ring all-reduce's link time")
    for name, params in [("the paper's ViT, 18,978,314 parameters", VIT), ("a 1B-parameter model", 1_000_000_000)]:
        cpu = cpu_ms / 1e3 * params / VIT
        print(f"\n{name}: CPU term {fmt(cpu)}")
        print("| N | Gbit/s | D-Lion links | D-Lion links + CPU | ring-fp32 links | ring / D-Lion |")
        print("|---|---|---|---|---|---|")
        for n in [8, 64, 256, 1024]:
            for gbit in [10, 25, 100]:
                link = params * busiest_link_bits("sharded", n) / (gbit * 1e9)
                ring = params * busiest_link_bits("ring-fp32", n) / (gbit * 1e9)
                print(f"| {n} | {gbit} | {fmt(link)} | {fmt(link + cpu)} | {fmt(ring)} | {ring / (link + cpu):.1f}x |")
    crossing = 2 * 32 * VIT / (cpu_ms / 1e3) / 1e9
    print(f"\nThe ring all-reduce's link time equals the CPU term alone at about {crossing:,.0f} Gbit/s (large N): above"
          " it the fp32 ring wins unless the exchange's CPU comes down.")


if __name__ == "__main__":
    main()
