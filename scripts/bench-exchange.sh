#!/usr/bin/env bash
# The exchange alone, measured as a user's job runs it: N './dlion vote-worker --topology sharded' processes (seeded
# votes, the job's secret, every process serves one slice), R rounds of P parameters, for sharded MaVo at an even and
# an odd N and for Avg. Prints, per case, the round's median and p90 wall time (rounds after the first tenth), the CPU
# per round per process (user + system of every thread of a vote-worker, median over its rounds, the largest process
# shown), and where links are shaped the link-rate floor and the ratio to it.
#
#   scripts/bench-exchange.sh                                  # UDP loopback, N = 2 and 3 (MaVo), N = 2 (Avg)
#   scripts/bench-exchange.sh --netlab 10gbit --workers 2,4,8  # the network lab (root): one namespace per host
#   scripts/bench-exchange.sh --rounds 100 --params 18978314 --out runs/bench-exchange
#
# Loopback has no link rate, so no floor: every process shares this machine's cores and its kernel's loopback.
# With --netlab RATE each case is a scripts/netlab.sh --exchange run (links shaped to RATE both ways, MTU 9000), whose
# table (OUT/CASE/links.tsv) also gives what the links carried; --gloo adds PyTorch's gloo fp32 ring all-reduce on the
# same links, the baseline data-parallel users run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
ROUNDS=100
PARAMS=18978314
OUT=runs/bench-exchange
NETLAB=""
WORKERS=""
GLOO=0
usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) ROUNDS="$2"; shift 2 ;;
        --params) PARAMS="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --netlab) NETLAB="$2"; shift 2 ;;
        --workers) WORKERS="$2"; shift 2 ;;
        --gloo) GLOO=1; shift ;;
        -h|--help) usage ;;
        *) echo "bench-exchange: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$ROUNDS" in ''|*[!0-9]*|0) echo "bench-exchange: --rounds must be a positive number, got '$ROUNDS'" >&2; exit 2 ;; esac
case "$PARAMS" in ''|*[!0-9]*|0) echo "bench-exchange: --params must be a positive number, got '$PARAMS'" >&2; exit 2 ;; esac
mkdir -p "$OUT"

# CASES: "N rule" pairs
if [ -n "$WORKERS" ]; then
    CASES=()
    for n in ${WORKERS//,/ }; do
        case "$n" in ''|*[!0-9]*) echo "bench-exchange: --workers must be numbers separated by commas, got '$WORKERS'" >&2; exit 2 ;; esac
        CASES+=("$n majority")
    done
else
    CASES=("2 majority" "3 majority" "2 average")
fi

run_loopback() { # N rule dir
    local n="$1" rule="$2" dir="$3" hosts i pids=()
    head -c 32 /dev/urandom > "$dir/job.secret" && chmod 600 "$dir/job.secret"
    hosts=$(for i in $(seq 0 $((n - 1))); do printf '%s127.0.0.1' "$([ "$i" -gt 0 ] && echo ,)"; done)
    for i in $(seq 0 $((n - 1))); do
        DLION_JAVA_OPTS="${DLION_JAVA_OPTS:--Xmx2g}" ./dlion vote-worker --topology sharded --hosts "$hosts" --vote-port 41123 \
            --local-host 127.0.0.1 --job 1 --worker-id "$i" --workers "$n" --params "$PARAMS" --rounds "$ROUNDS" --rule "$rule" \
            --secret-file "$dir/job.secret" > "$dir/worker-$i.log" 2>&1 &
        pids+=($!)
    done
    local failed=0
    for p in "${pids[@]}"; do wait "$p" || failed=1; done
    [ "$failed" = 0 ] || { echo "bench-exchange: a vote-worker failed, see $dir/worker-*.log" >&2; exit 1; }
}

./dlion help > /dev/null 2>&1 || true   # builds the launcher's classpath once, before any clock
for c in "${CASES[@]}"; do
    set -- $c
    n="$1"; rule="$2"; dir="$OUT/n$n-$rule"
    rm -rf "$dir"; mkdir -p "$dir"
    if [ -z "$NETLAB" ]; then
        run_loopback "$n" "$rule" "$dir"
    else
        sudo=(); [ "$(id -u)" = 0 ] || sudo=(sudo)
        "${sudo[@]}" scripts/netlab.sh --workers "$n" --topology sharded --exchange "$ROUNDS" --params "$PARAMS" --rate "$NETLAB" \
            --out "$dir" -- --rule "$rule" > "$dir/netlab.txt" 2>&1 || { echo "bench-exchange: the lab failed, see $dir/netlab.txt" >&2; exit 1; }
        if [ "$GLOO" = 1 ]; then
            "${sudo[@]}" scripts/netlab.sh --workers "$n" --gloo allreduce --exchange "$ROUNDS" --params "$PARAMS" --rate "$NETLAB" \
                --out "$dir-gloo" > "$dir-gloo.txt" 2>&1 || { echo "bench-exchange: the gloo lab failed, see $dir-gloo.txt" >&2; exit 1; }
        fi
    fi
done
/usr/bin/env python3 scripts/bench_exchange_summary.py --out "$OUT" --params "$PARAMS" ${NETLAB:+--rate "$NETLAB"} \
    $(for c in "${CASES[@]}"; do set -- $c; printf 'n%s-%s ' "$1" "$2"; done)
