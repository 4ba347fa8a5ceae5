#!/usr/bin/env bash
# A small cluster on one machine: one network namespace per host (a server and N workers) on a bridge, each host's
# link shaped by tc (rate and delay, both directions), addresses from the benchmarking range 198.18.0.0/15 with no
# route out. Runs './dlion server' in the server's namespace and './dlion worker' in each worker's, collects their
# logs and metrics.csv, prints each worker's last lines, and always tears everything down (EXIT, INT, TERM).
#
#   scripts/netlab.sh --workers 3 --rate 100mbit --delay 0.1ms --out runs/netlab -- [worker options...]
#
#   scripts/netlab.sh --workers 8 --exchange 20 --params 18978314 --out runs/lab-x8          # the exchange alone
#   scripts/netlab.sh --workers 8 --gloo allreduce --exchange 10 --params 18978314 --out runs/lab-gloo
#
# Worker options are passed to every './dlion worker' (e.g. --model mlp --epochs 1 --batch 120 --train-limit 6000);
# --server, --local-host, --worker-id, --workers, --job, --out and --secret-file are set by the lab. --server-args passes
# options to the server (e.g. "--rule average", or "--sharing dense" with workers' --sharing dense-lion). The job's secret
# is --secret-file FILE, or a new one in OUT/job.secret (32 random bytes, owner-only). Every JVM gets DLION_JAVA_OPTS
# (default -Xmx2g) and OMP_NUM_THREADS (default 1). Links have MTU 9000 (jumbo frames).
# --exchange R runs the exchange alone: './dlion vote-worker' (seeded votes, --params P) for R rounds instead of training.
# --topology sharded: no server; every worker (or vote-worker) serves one slice of the parameters.
# --kill R (training, sharded): SIGKILL worker R after its first epoch; once a survivor has found its slice server dead
# and the slice moved, start it again with --rejoin (its log: OUT/worker-R-rejoined.log).
# --gloo allreduce|allgather runs, instead of our processes, PyTorch's gloo on the same links (scripts/gloo_baseline.py,
# Debian's python3-torch): the fp32 ring all-reduce data-parallel users run, or the all_gather of packed sign bits of the
# unofficial PyTorch Distributed Lion; the server's host stays idle. Every run ends with what the links carried
# (OUT/links.tsv): bytes and packets each host's interface sent and received, the shapers' drops on both ends of its
# link, UDP socket drops, the payload the processes counted and the ratio, the bytes their media drivers retransmitted,
# and for --exchange and --gloo the round times.
# --burst B and --queue T: the shapers' token bucket (tbf burst, default 64kb) and how long a packet may wait in their
# queue (tbf latency, default 50ms). On a slow link a 64 KiB bucket refilled while the hosts compute lets a whole small
# exchange out at the veth's speed; --burst 18kb (two jumbo frames, tbf's least) keeps the link close to its rate.
# Training runs also read the counters when worker 0 first writes OUT/worker-0/evals.csv (its first --eval-every
# evaluation) and when it writes its metrics.csv (training done): OUT/links-first-eval.txt and OUT/links-trained.txt, what
# the links carried while the job trained, without the start-up and the end.
# Needs root (network namespaces); installs iproute2 and python3 if missing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORKERS=3
RATE=100mbit
DELAY=0.1ms
OUT=runs/netlab
SERVER_ARGS=""
PARAMS=203530
SECRET_FILE=""
EXCHANGE_ROUNDS=0
GLOO=""
TOPOLOGY=star
KILL=""
BURST=64kb
QUEUE=50ms
usage() { sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --workers) WORKERS="$2"; shift 2 ;;
        --rate) RATE="$2"; shift 2 ;;
        --delay) DELAY="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --params) PARAMS="$2"; shift 2 ;;
        --server-args) SERVER_ARGS="$2"; shift 2 ;;
        --secret-file) SECRET_FILE="$2"; shift 2 ;;
        --exchange) EXCHANGE_ROUNDS="$2"; shift 2 ;;
        --gloo) GLOO="$2"; shift 2 ;;
        --topology) TOPOLOGY="$2"; shift 2 ;;
        --kill) KILL="$2"; shift 2 ;;
        --burst) BURST="$2"; shift 2 ;;
        --queue) QUEUE="$2"; shift 2 ;;
        --) shift; break ;;
        -h|--help) usage ;;
        *) echo "netlab: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
WORKER_ARGS=("$@")
# at most 1,023 workers: a Linux bridge takes 1,024 ports, one of them the server's (the wire takes 1,024 workers)
case "$WORKERS" in ''|*[!0-9]*) echo "netlab: --workers must be a number in [1, 1023], got '$WORKERS'" >&2; exit 2 ;; esac
if [ "$WORKERS" -lt 1 ] || [ "$WORKERS" -gt 1023 ]; then echo "netlab: --workers must be in [1, 1023], got $WORKERS" >&2; exit 2; fi
case "$EXCHANGE_ROUNDS" in ''|*[!0-9]*) echo "netlab: --exchange must be a number of rounds, got '$EXCHANGE_ROUNDS'" >&2; exit 2 ;; esac
case "$GLOO" in
    ""|allreduce|allgather) ;;
    *) echo "netlab: --gloo must be allreduce or allgather, got '$GLOO'" >&2; exit 2 ;;
esac
case "$TOPOLOGY" in
    star) ;;
    sharded) if [ -n "$GLOO" ] || [ -n "$SERVER_ARGS" ]; then echo "netlab: --topology sharded has no server: no --gloo, no --server-args" >&2; exit 2; fi ;;
    *) echo "netlab: --topology must be star or sharded, got '$TOPOLOGY'" >&2; exit 2 ;;
esac
if [ -n "$KILL" ]; then
    case "$KILL" in ''|*[!0-9]*) echo "netlab: --kill must be a worker id, got '$KILL'" >&2; exit 2 ;; esac
    if [ "$TOPOLOGY" != sharded ] || [ "$EXCHANGE_ROUNDS" -gt 0 ] || [ "$KILL" -ge "$WORKERS" ]; then
        echo "netlab: --kill R needs --topology sharded, training (no --exchange) and R < --workers" >&2; exit 2
    fi
fi
if [ -n "$GLOO" ] && [ "$EXCHANGE_ROUNDS" -lt 1 ]; then echo "netlab: --gloo needs --exchange ROUNDS" >&2; exit 2; fi
if [ "$(id -u)" != "0" ]; then echo "netlab: network namespaces need root" >&2; exit 1; fi
bash "$ROOT/scripts/install-netlab.sh"
# socket buffers, receiver windows and congestion control are in the channels the programs build (io.dlion.aeron.Channels)
export DLION_JAVA_OPTS="${DLION_JAVA_OPTS:--Xmx2g}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"

LAB="dl$$"                      # every name this run makes starts with it
BRIDGE_NS="$LAB-br"
NETWORK=198.18                  # a /16: host n (the server 1, worker i 10 + i) is 198.18.(n / 256).(n % 256)
addr() { echo "$NETWORK.$(($1 >> 8)).$(($1 & 255))"; }
MTU=9000                        # jumbo frames: an 8 KiB Aeron frame is one Ethernet frame, not six IP fragments
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
if [ -z "$SECRET_FILE" ]; then
    SECRET_FILE="$OUT/job.secret"
    (umask 077 && head -c 32 /dev/urandom > "$SECRET_FILE")
    chmod 600 "$SECRET_FILE"
fi
SECRET_FILE="$(cd "$(dirname "$SECRET_FILE")" && pwd)/$(basename "$SECRET_FILE")"
PIDS=()

teardown() {
    for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
    sleep 1
    for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true; done
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$LAB-" || true); do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
        ip netns delete "$ns" 2>/dev/null || true       # removes its veth ends and their qdiscs
    done
    for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep "^$LAB" || true); do
        ip link delete "$link" 2>/dev/null || true
    done
}
trap teardown EXIT
trap 'exit 130' INT TERM

NETEM=1
shape() { # namespace, device: rate (tbf) and delay (netem, when the kernel has it) on the device's egress
    if [ "$NETEM" = 1 ] && [ "$DELAY" != "0" ] && ip netns exec "$1" tc qdisc add dev "$2" root handle 1: netem delay "$DELAY" 2>/dev/null; then
        ip netns exec "$1" tc qdisc add dev "$2" parent 1:1 handle 10: tbf rate "$RATE" burst "$BURST" latency "$QUEUE"
    else
        if [ "$NETEM" = 1 ] && [ "$DELAY" != "0" ]; then
            echo "netlab: this kernel has no netem qdisc: --delay $DELAY is not applied, links are rate-limited only" >&2
            NETEM=0
        fi
        ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$RATE" burst "$BURST" latency "$QUEUE"
    fi
}

ip netns add "$BRIDGE_NS"
ip netns exec "$BRIDGE_NS" ip link add br0 type bridge
ip netns exec "$BRIDGE_NS" ip link set br0 mtu "$MTU" up
ip netns exec "$BRIDGE_NS" ip link set lo up
host() { # name, host number
    local ns="$LAB-$1" a="$LAB$2a" b="$LAB$2b"
    ip netns add "$ns"
    ip link add "$a" mtu "$MTU" type veth peer name "$b" mtu "$MTU"
    ip link set "$a" netns "$ns"
    ip link set "$b" netns "$BRIDGE_NS"
    ip netns exec "$ns" ip link set "$a" name eth0
    ip netns exec "$ns" ip addr add "$(addr "$2")/16" dev eth0
    ip netns exec "$ns" ip link set eth0 up
    ip netns exec "$ns" ip link set lo up
    ip netns exec "$BRIDGE_NS" ip link set "$b" master br0
    ip netns exec "$BRIDGE_NS" ip link set "$b" up
    shape "$ns" eth0               # what the host sends
    shape "$BRIDGE_NS" "$b"        # what the host receives
}
host server 1
for i in $(seq 0 $((WORKERS - 1))); do host "w$i" $((10 + i)); done
echo "netlab: lab $LAB: $((WORKERS + 1)) hosts on $NETWORK.0.0/16 (MTU $MTU), every link $RATE each way (tbf burst $BURST, queue $QUEUE)$([ "$NETEM" = 1 ] && [ "$DELAY" != "0" ] && echo ", $DELAY delay")" >&2

# what each host's link carried: interface counters inside the host's namespace (what it sent and received) and the
# drops of the shapers on both ends (the host's egress, and the bridge's egress towards the host)
HOSTS=(server:1)
for i in $(seq 0 $((WORKERS - 1))); do HOSTS+=("w$i:$((10 + i))"); done
link_counters() { # file: one line per host "name tx_bytes tx_packets rx_bytes rx_packets drops_out drops_in udp_rcvbuf_errors"
    : > "$1"
    for h in "${HOSTS[@]}"; do
        local name="${h%%:*}" octet="${h##*:}"
        local dev out in rcvbuf
        dev=$(ip netns exec "$LAB-$name" cat /proc/net/dev | awk -F'[: ]+' '$2 == "eth0" {print $11, $12, $3, $4}')
        out=$(ip netns exec "$LAB-$name" tc -s qdisc show dev eth0 | awk '/dropped/ {gsub(",", "", $7); d += $7} END {print d + 0}')
        in=$(ip netns exec "$BRIDGE_NS" tc -s qdisc show dev "$LAB${octet}b" | awk '/dropped/ {gsub(",", "", $7); d += $7} END {print d + 0}')
        rcvbuf=$(ip netns exec "$LAB-$name" awk '/^Udp:/ {if (!h) {for (i = 1; i <= NF; i++) c[$i] = i; h = 1} else print $c["RcvbufErrors"]}' /proc/net/snmp)
        echo "$name $dev $out $in ${rcvbuf:-0}" >> "$1"
    done
}

# build once, outside the namespaces (./dlion builds on first use)
if [ -z "$GLOO" ]; then
    "$ROOT/dlion" --help >/dev/null 2>&1 || true
else
    bash "$ROOT/scripts/install-netlab.sh" --gloo
fi
cd "$ROOT"
link_counters "$OUT/links-before.txt"
rm -f "$OUT/worker-0/evals.csv" "$OUT/worker-0/metrics.csv" "$OUT/links-first-eval.txt" "$OUT/links-trained.txt"   # an earlier run's
START_NS=$(date +%s%N)
WORKER_PIDS=()
if [ -n "$GLOO" ]; then
    for i in $(seq 0 $((WORKERS - 1))); do
        ip netns exec "$LAB-w$i" env GLOO_SOCKET_IFNAME=eth0 /usr/bin/python3 "$ROOT/scripts/gloo_baseline.py" --op "$GLOO" --rank "$i" --world "$WORKERS" \
            --master "$(addr 10):29500" --params "$PARAMS" --rounds "$EXCHANGE_ROUNDS" > "$OUT/worker-$i.log" 2>&1 &
        PIDS+=($!)
        WORKER_PIDS+=($!)
    done
elif [ "$TOPOLOGY" = sharded ]; then
    # worker I of the sharded job, with more options (--rejoin)
    sharded_worker() {
        local i="$1"; shift
        ip netns exec "$LAB-w$i" ./dlion worker --topology sharded --hosts "$ALL_HOSTS" --vote-port 40123 --job 1 \
            --worker-id "$i" --workers "$WORKERS" --out "$OUT/worker-$i$([ -n "$*" ] && echo -rejoined)" --secret-file "$SECRET_FILE" \
            "${WORKER_ARGS[@]}" "$@"
    }
    ALL_HOSTS=$(for i in $(seq 0 $((WORKERS - 1))); do printf '%s%s' "$([ "$i" -gt 0 ] && echo ,)" "$(addr $((10 + i)))"; done)
    for i in $(seq 0 $((WORKERS - 1))); do
        if [ "$EXCHANGE_ROUNDS" -gt 0 ]; then
            ip netns exec "$LAB-w$i" ./dlion vote-worker --topology sharded --hosts "$ALL_HOSTS" --vote-port 40123 \
                --local-host "$(addr $((10 + i)))" --job 1 --worker-id "$i" --workers "$WORKERS" --params "$PARAMS" \
                --rounds "$EXCHANGE_ROUNDS" --secret-file "$SECRET_FILE" "${WORKER_ARGS[@]}" > "$OUT/worker-$i.log" 2>&1 &
        else
            sharded_worker "$i" > "$OUT/worker-$i.log" 2>&1 &
        fi
        PIDS+=($!)
        WORKER_PIDS+=($!)
    done
    if [ -n "$KILL" ]; then
        until grep -q "^epoch 1 " "$OUT/worker-$KILL.log"; do
            kill -0 "${WORKER_PIDS[$KILL]}" 2>/dev/null || { echo "netlab: worker $KILL ended before its first epoch" >&2; exit 1; }
            sleep 0.2
        done
        # the worker's JVM is the only process in its namespace ('ip netns exec' may fork, so not necessarily its pid)
        ip netns pids "$LAB-w$KILL" | xargs -r kill -9; wait "${WORKER_PIDS[$KILL]}" 2>/dev/null || true
        echo "netlab: worker $KILL killed (SIGKILL) at $(date +%T.%N | cut -c1-12)" >&2
        for _ in $(seq 1 600); do grep -q "rank $KILL is dead" "$OUT"/worker-*.log && break; sleep 0.2; done
        grep -q "rank $KILL is dead" "$OUT"/worker-*.log || { echo "netlab: no survivor found rank $KILL dead within 120 s" >&2; exit 1; }
        echo "netlab: a survivor found rank $KILL dead at $(date +%T.%N | cut -c1-12); starting it again with --rejoin" >&2
        sharded_worker "$KILL" --rejoin > "$OUT/worker-$KILL-rejoined.log" 2>&1 &
        PIDS+=($!)
        WORKER_PIDS[$KILL]=$!
    fi
else
    # shellcheck disable=SC2086
    ip netns exec "$LAB-server" ./dlion server --job 1 --workers "$WORKERS" --params "$PARAMS" \
        --udp "$(addr 1):40123:40124" --status-interval 5 --secret-file "$SECRET_FILE" $SERVER_ARGS > "$OUT/server.log" 2>&1 &
    SERVER_PID=$!
    PIDS+=($!)
    for i in $(seq 0 $((WORKERS - 1))); do
        if [ "$EXCHANGE_ROUNDS" -gt 0 ]; then
            ip netns exec "$LAB-w$i" ./dlion vote-worker --udp "$(addr 1):40123:40124" --local-host "$(addr $((10 + i)))" --job 1 \
                --worker-id "$i" --workers "$WORKERS" --params "$PARAMS" --rounds "$EXCHANGE_ROUNDS" --secret-file "$SECRET_FILE" \
                "${WORKER_ARGS[@]}" > "$OUT/worker-$i.log" 2>&1 &
        else
            ip netns exec "$LAB-w$i" ./dlion worker --server "$(addr 1)" --local-host "$(addr $((10 + i)))" --job 1 \
                --worker-id "$i" --workers "$WORKERS" --out "$OUT/worker-$i" --secret-file "$SECRET_FILE" "${WORKER_ARGS[@]}" \
                > "$OUT/worker-$i.log" 2>&1 &
        fi
        PIDS+=($!)
        WORKER_PIDS+=($!)
    done
fi
if [ "$EXCHANGE_ROUNDS" -eq 0 ] && [ -z "$GLOO" ]; then
    # what the links carried while the job trained: from worker 0's first evaluation to its metrics.csv (polling files only)
    (
        until [ -f "$OUT/worker-0/evals.csv" ] || [ -f "$OUT/worker-0/metrics.csv" ]; do sleep 0.2; done
        [ -f "$OUT/worker-0/evals.csv" ] && link_counters "$OUT/links-first-eval.txt"
        until [ -f "$OUT/worker-0/metrics.csv" ]; do sleep 0.2; done
        link_counters "$OUT/links-trained.txt"
    ) &
    WATCHER=$!
    PIDS+=("$WATCHER")
fi
STATUS=0
for p in "${WORKER_PIDS[@]}"; do wait "$p" || STATUS=1; done
if [ -n "${WATCHER:-}" ]; then kill "$WATCHER" 2>/dev/null || true; wait "$WATCHER" 2>/dev/null || true; fi
link_counters "$OUT/links-after.txt"
if [ -n "${SERVER_PID:-}" ]; then   # stopped, the server prints its last status line: its totals
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
fi
echo "netlab: $(( ($(date +%s%N) - START_NS) / 1000000 )) ms from the first process started to the last worker's exit" >&2
for i in $(seq 0 $((WORKERS - 1))); do
    log="$OUT/worker-$i.log"
    if [ "$i" = "$KILL" ]; then
        echo "--- worker $i, killed"
        grep -E "^epoch [0-9]+ +test accuracy" "$log" || true
        echo "--- worker $i, rejoined"
        log="$OUT/worker-$i-rejoined.log"
    else
        echo "--- worker $i"
    fi
    grep -E "^epoch [0-9]+ +test accuracy|^params-sha256|^bytesUp|^payload|is dead|takes over|rejoins at|took worker" "$log" || tail -5 "$log"
done
[ -f "$OUT/server.log" ] && { grep "^rounds=" "$OUT/server.log" | tail -1 || true; }
python3 "$ROOT/scripts/netlab_links.py" --rate "$RATE" --out "$OUT" || STATUS=1
echo "netlab: logs, metrics.csv and links.tsv in $OUT" >&2
exit $STATUS
