#!/usr/bin/env python3
"""How slices spread over ranks after many single deaths, by failover rule.

A sharded job of N ranks, each serving its own slice at the start. Over a job's life, one rank at a time dies and is
restarted (it serves nothing after its restart, and is a candidate again by the next death). When a rank dies, each of
its slices moves by the rule:

  ring   (the rule in SliceOwners): the first candidate in ring order from the slice's own rank;
  serve  prefer candidates that served a slice when the round began (their servers are proven, so a dead one is found
         with the first), in ring order; else as ring;
  cap2   as serve, but only candidates that served exactly one slice when the round began; else as ring.

Prints the mean, over deaths, of the most slices one rank serves and of the number of ranks serving a slice.

  python3 scripts/slice_rule_sim.py [deaths] [seed]
"""
import random
import sys


def successor(slice_, owner, dead, rule, n):
    served = [0] * n
    for s in range(n):
        served[owner[s]] += 1
    ring = [(slice_ + i) % n for i in range(n)]
    if rule in ("serve", "cap2"):
        for r in ring:
            if r != dead and served[r] >= 1 and (rule == "serve" or served[r] == 1):
                return r
    for r in ring:
        if r != dead:
            return r
    raise RuntimeError("no rank left")


def run(n, rule, deaths, seed):
    rnd = random.Random(seed)
    owner = list(range(n))
    most, serving = 0, 0
    for _ in range(deaths):
        dead = rnd.randrange(n)
        at_start = owner[:]
        for s in range(n):
            if at_start[s] == dead:
                owner[s] = successor(s, at_start, dead, rule, n)
        served = [0] * n
        for s in range(n):
            served[owner[s]] += 1
        most += max(served)
        serving += sum(1 for c in served if c)
    return most / deaths, serving / deaths


def main():
    deaths = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    print("N\trule\tmost slices on one rank\tranks serving")
    for n in (4, 8, 16, 32):
        for rule in ("ring", "serve", "cap2"):
            most, serving = run(n, rule, deaths, seed)
            print(f"{n}\t{rule}\t{most:.2f}\t{serving:.2f}")


if __name__ == "__main__":
    main()
