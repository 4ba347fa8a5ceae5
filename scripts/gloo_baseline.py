#!/usr/bin/env python3
"""PyTorch's gloo on the lab's links, the baselines D-Lion is measured against (scripts/netlab.sh --gloo).

  allreduce  fp32 ring all-reduce of P parameters: what PyTorch DDP over gloo (or NCCL) runs, G-Lion / G-AdamW;
  allgather  all_gather of every rank's packed sign bits (P/8 bytes), then a local majority vote on every rank:
             how the unofficial PyTorch Distributed Lion exchanges its votes.

One process per rank; prints one line per round ("round R micros T [vote-micros V]") and the payload a rank sends and
receives per round by the algorithm's own count ("payload sent S received R", bytes over all rounds), which the lab
compares with its interface counters.
"""
import argparse
import datetime
import time

import numpy as np
import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op", choices=["allreduce", "allgather"], required=True)
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--master", required=True, help="HOST:PORT of rank 0's rendezvous")
    parser.add_argument("--params", type=int, required=True)
    parser.add_argument("--rounds", type=int, required=True)
    args = parser.parse_args()
    if args.params % 8 != 0 and args.op == "allgather":
        args.params += 8 - args.params % 8
    host, port = args.master.rsplit(":", 1)
    # a rank that fails must not leave the others spinning: every collective gives up after two minutes
    dist.init_process_group("gloo", init_method=f"tcp://{host}:{port}", rank=args.rank, world_size=args.world,
                            timeout=datetime.timedelta(minutes=2))
    n = args.world
    rng = np.random.default_rng(args.rank)
    if args.op == "allreduce":
        tensor = torch.from_numpy(rng.standard_normal(args.params, dtype=np.float32))
        per_round = 2 * (n - 1) * 4 * args.params // n
    else:
        mine = torch.from_numpy(np.packbits(rng.integers(0, 2, args.params, dtype=np.uint8)))
        gathered = [torch.empty_like(mine) for _ in range(n)]
        per_round = (n - 1) * mine.numel()
    for r in range(args.rounds):
        dist.barrier()   # every rank starts the round together: a round's time is the collective's, not a rank's head start
        start = time.perf_counter_ns()
        if args.op == "allreduce":
            dist.all_reduce(tensor)
            tensor.div_(n)
            print(f"round {r} micros {(time.perf_counter_ns() - start) // 1000}", flush=True)
        else:
            dist.all_gather(gathered, mine)
            gathered_ns = time.perf_counter_ns()
            ones = np.zeros(args.params, dtype=np.int32)
            for g in gathered:
                ones += np.unpackbits(g.numpy())
            vote = np.sign(2 * ones - n)
            print(f"round {r} micros {(time.perf_counter_ns() - start) // 1000} vote-micros "
                  f"{(time.perf_counter_ns() - gathered_ns) // 1000} nonzero {int(np.count_nonzero(vote))}", flush=True)
    print(f"payload sent {per_round * args.rounds} received {per_round * args.rounds}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
