#!/usr/bin/env bash
# A small cluster on one machine: one network namespace per host (a server and N workers) on a bridge, each host's
# link shaped by tc (rate and delay, both directions), addresses from the benchmarking range 198.18.0.0/15 with no
# route out. Runs './dlion server' in the server's namespace and './dlion worker' in each worker's, collects their
# logs and metrics.csv, prints each worker's last lines, and always tears everything down (EXIT, INT, TERM).
#
#   scripts/netlab.sh --workers 3 --rate 100mbit --delay 0.1ms --out runs/netlab -- [worker options...]
#
# Worker options are passed to every './dlion worker' (e.g. --model mlp --epochs 1 --batch 120 --train-limit 6000);
# --server, --local-host, --worker-id, --workers, --job, --out and --secret-file are set by the lab. --server-args passes
# options to the server (e.g. "--rule average", or "--sharing dense" with workers' --sharing dense-lion). The job's secret
# is --secret-file FILE, or a new one in OUT/job.secret (32 random bytes, owner-only). Every JVM gets DLION_JAVA_OPTS
# (default -Xmx2g and 2 MiB UDP socket buffers) and OMP_NUM_THREADS (default 1). Links have MTU 9000 (jumbo frames).
# Needs root (network namespaces); installs iproute2 if missing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORKERS=3
RATE=100mbit
DELAY=0.1ms
OUT=runs/netlab
SERVER_ARGS=""
PARAMS=203530
SECRET_FILE=""
usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --workers) WORKERS="$2"; shift 2 ;;
        --rate) RATE="$2"; shift 2 ;;
        --delay) DELAY="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --params) PARAMS="$2"; shift 2 ;;
        --server-args) SERVER_ARGS="$2"; shift 2 ;;
        --secret-file) SECRET_FILE="$2"; shift 2 ;;
        --) shift; break ;;
        -h|--help) usage ;;
        *) echo "netlab: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
WORKER_ARGS=("$@")
case "$WORKERS" in ''|*[!0-9]*) echo "netlab: --workers must be a number in [1, 64], got '$WORKERS'" >&2; exit 2 ;; esac
if [ "$WORKERS" -lt 1 ] || [ "$WORKERS" -gt 64 ]; then echo "netlab: --workers must be in [1, 64], got $WORKERS" >&2; exit 2; fi
if [ "$(id -u)" != "0" ]; then echo "netlab: network namespaces need root" >&2; exit 1; fi
bash "$ROOT/scripts/install-netlab.sh"
# 2 MiB UDP socket buffers: N worker JVMs share the host's cores, and a receiver thread that waits for a core must not
# lose datagrams (a lost result frame is retransmitted to every worker of the multi-destination-cast)
export DLION_JAVA_OPTS="${DLION_JAVA_OPTS:--Xmx2g -Daeron.socket.so_rcvbuf=2097152 -Daeron.socket.so_sndbuf=2097152}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"

LAB="dl$$"                      # every name this run makes starts with it
BRIDGE_NS="$LAB-br"
NETWORK=198.18.0
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
        ip netns exec "$1" tc qdisc add dev "$2" parent 1:1 handle 10: tbf rate "$RATE" burst 64kb latency 50ms
    else
        if [ "$NETEM" = 1 ] && [ "$DELAY" != "0" ]; then
            echo "netlab: this kernel has no netem qdisc: --delay $DELAY is not applied, links are rate-limited only" >&2
            NETEM=0
        fi
        ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$RATE" burst 64kb latency 50ms
    fi
}

ip netns add "$BRIDGE_NS"
ip netns exec "$BRIDGE_NS" ip link add br0 type bridge
ip netns exec "$BRIDGE_NS" ip link set br0 mtu "$MTU" up
ip netns exec "$BRIDGE_NS" ip link set lo up
host() { # name, last octet
    local ns="$LAB-$1" a="$LAB$2a" b="$LAB$2b"
    ip netns add "$ns"
    ip link add "$a" mtu "$MTU" type veth peer name "$b" mtu "$MTU"
    ip link set "$a" netns "$ns"
    ip link set "$b" netns "$BRIDGE_NS"
    ip netns exec "$ns" ip link set "$a" name eth0
    ip netns exec "$ns" ip addr add "$NETWORK.$2/24" dev eth0
    ip netns exec "$ns" ip link set eth0 up
    ip netns exec "$ns" ip link set lo up
    ip netns exec "$BRIDGE_NS" ip link set "$b" master br0
    ip netns exec "$BRIDGE_NS" ip link set "$b" up
    shape "$ns" eth0               # what the host sends
    shape "$BRIDGE_NS" "$b"        # what the host receives
}
host server 1
for i in $(seq 0 $((WORKERS - 1))); do host "w$i" $((10 + i)); done
echo "netlab: lab $LAB: $((WORKERS + 1)) hosts on $NETWORK.0/24 (MTU $MTU), every link $RATE each way$([ "$NETEM" = 1 ] && [ "$DELAY" != "0" ] && echo ", $DELAY delay")" >&2

# build once, outside the namespaces (./dlion builds on first use)
"$ROOT/dlion" --help >/dev/null 2>&1 || true
cd "$ROOT"
# shellcheck disable=SC2086
ip netns exec "$LAB-server" ./dlion server --job 1 --workers "$WORKERS" --params "$PARAMS" \
    --udp "$NETWORK.1:40123:40124" --status-interval 5 --secret-file "$SECRET_FILE" $SERVER_ARGS > "$OUT/server.log" 2>&1 &
PIDS+=($!)
WORKER_PIDS=()
for i in $(seq 0 $((WORKERS - 1))); do
    ip netns exec "$LAB-w$i" ./dlion worker --server "$NETWORK.1" --local-host "$NETWORK.$((10 + i))" --job 1 \
        --worker-id "$i" --workers "$WORKERS" --out "$OUT/worker-$i" --secret-file "$SECRET_FILE" "${WORKER_ARGS[@]}" \
        > "$OUT/worker-$i.log" 2>&1 &
    PIDS+=($!)
    WORKER_PIDS+=($!)
done
STATUS=0
for p in "${WORKER_PIDS[@]}"; do wait "$p" || STATUS=1; done
for i in $(seq 0 $((WORKERS - 1))); do
    echo "--- worker $i"
    grep -E "^epoch [0-9]+ +test accuracy|^params-sha256" "$OUT/worker-$i.log" || tail -5 "$OUT/worker-$i.log"
done
grep "^rounds=" "$OUT/server.log" | tail -1 || true
echo "netlab: logs and metrics.csv in $OUT" >&2
exit $STATUS
