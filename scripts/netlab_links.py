#!/usr/bin/env python3
"""What the lab's links carried (scripts/netlab.sh runs this at the end of every run).

Reads OUT/links-before.txt and OUT/links-after.txt (per host: interface bytes and packets sent and received, shaper
drops on the host's egress and on the bridge's egress towards the host, datagrams the host's UDP sockets dropped for
a full receive buffer) and, for the exchange alone or gloo, the
payload the processes counted (a vote-worker's "bytesUp U bytesDown D", the gloo script's "payload sent S received R")
and their round times ("round R ... micros T"). Writes OUT/links.tsv and prints a table: per host, bytes sent and
received on the link against the payload, drops as a share of the packets, and the median and p90 round time against
the link-rate floor (the busiest link's payload per round at the link rate).
"""
import argparse
import glob
import os
import re
import statistics


def rate_bits(rate):
    m = re.fullmatch(r"([0-9.]+)([kmg]?)bit", rate.lower())
    if not m:
        raise SystemExit(f"netlab_links: cannot read --rate {rate}")
    return float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]


def counters(path):
    rows = {}
    with open(path) as f:
        for line in f:
            name, tx, txp, rx, rxp, drop_out, drop_in, rcvbuf = line.split()
            rows[name] = [int(tx), int(txp), int(rx), int(rxp), int(drop_out), int(drop_in), int(rcvbuf)]
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    before = counters(os.path.join(args.out, "links-before.txt"))
    after = counters(os.path.join(args.out, "links-after.txt"))
    link = {h: [a - b for a, b in zip(after[h], before[h])] for h in after}

    payload = {}
    rounds = {}
    resent = {}
    for log in sorted(glob.glob(os.path.join(args.out, "worker-*.log"))):
        m = re.search(r"worker-(\d+)\.log$", log)
        if not m:
            continue   # a rejoined worker's log (--kill): its host's link counts it with the first start's
        name = "w" + m.group(1)
        times = []
        with open(log) as f:
            for line in f:
                m = re.match(r"bytesUp (\d+) bytesDown (\d+)", line) or re.match(r"payload sent (\d+) received (\d+)", line)
                if m:
                    payload[name] = (int(m.group(1)), int(m.group(2)))
                m = re.search(r"retransmittedBytes=(\d+)", line)
                if m:
                    resent[name] = int(m.group(1))
                m = re.match(r"round (\d+)\b.*?\smicros (\d+)", line)
                if m:
                    times.append(int(m.group(2)) / 1e6)
        rounds[name] = times
        metrics = os.path.join(args.out, "worker-" + name[1:], "metrics.csv")
        if name not in payload and os.path.exists(metrics) and os.path.exists(os.path.join(args.out, "server.log")):
            # a training worker of the star: its exchange's bytes up and down, cumulative, in the last row
            with open(metrics) as f:
                rows_csv = [line.strip().split(",") for line in f if line.strip()]
            header, last = rows_csv[0], rows_csv[-1]
            if len(rows_csv) > 1:
                payload[name] = (int(last[header.index("bytes_up")]), int(last[header.index("bytes_down")]))
    server_log = os.path.join(args.out, "server.log")
    if payload and os.path.exists(server_log):
        payload["server"] = (sum(d for _, d in payload.values()), sum(u for u, _ in payload.values()))
        with open(server_log) as f:
            for line in f:   # the last status line holds the totals
                m = re.search(r"retransmittedBytes=(\d+)", line)
                if m:
                    resent["server"] = int(m.group(1))

    rows = []
    for h in sorted(link, key=lambda n: (n != "server", int(n[1:]) if n != "server" else 0)):
        tx, txp, rx, rxp, drop_out, drop_in, rcvbuf = link[h]
        sent, received = payload.get(h, (0, 0))
        rows.append((h, tx, rx, sent, received, txp, rxp, drop_out, drop_in, resent.get(h, ""), rcvbuf))
    with open(os.path.join(args.out, "links.tsv"), "w") as f:
        f.write("host\tlink_sent_bytes\tlink_received_bytes\tpayload_sent_bytes\tpayload_received_bytes\t"
                "packets_sent\tpackets_received\tdrops_out\tdrops_in\tdriver_retransmitted_bytes\tudp_rcvbuf_errors\n")
        for r in rows:
            f.write("\t".join(str(x) for x in r) + "\n")

    ratio = lambda link_bytes, pay: f"{link_bytes / pay:.2f}" if pay else "-"
    print(f"{'host':<7} {'link sent':>14} {'/payload':>8} {'link received':>14} {'/payload':>8} {'drops out':>10} {'drops in':>9}"
          f" {'% of pkts':>9} {'resent (Aeron)':>14} {'socket drops':>12}")
    for h, tx, rx, sent, received, txp, rxp, drop_out, drop_in, resent_bytes, rcvbuf in rows:
        share = 100.0 * (drop_out + drop_in) / max(1, txp + rxp + drop_out + drop_in)
        print(f"{h:<7} {tx:>14,} {ratio(tx, sent):>8} {rx:>14,} {ratio(rx, received):>8} {drop_out:>10,} {drop_in:>9,} {share:>8.3f}% {resent_bytes:>14} {rcvbuf:>12,}")
    total_pkts = sum(r[5] + r[6] for r in rows)
    total_drops = sum(r[7] + r[8] for r in rows)
    worst = max((max(r[1] / r[3] if r[3] else 0, r[2] / r[4] if r[4] else 0) for r in rows), default=0)
    print((f"worst link/payload {worst:.2f}; " if payload else "no payload counted per host; ")
          + f"drops {total_drops:,} of {total_pkts:,} packets ({100.0 * total_drops / max(1, total_pkts):.3f}%)")
    times = rounds.get("w0", [])[1:]
    n_rounds = len(rounds.get("w0", []))
    if times and n_rounds:
        busiest = max(max(s, r) for s, r in payload.values()) / n_rounds if payload else 0
        floor = busiest * 8 / rate_bits(args.rate)
        med = statistics.median(times)
        p90 = sorted(times)[min(len(times) - 1, int(round(0.9 * (len(times) - 1))))]
        print(f"round (worker 0, rounds 1..{n_rounds - 1}): median {med:.3f} s, p90 {p90:.3f} s; link-rate floor {floor:.3f} s"
              f" (busiest link {busiest:,.0f} B a round) -> median/floor {med / floor if floor else 0:.2f}")


if __name__ == "__main__":
    main()
