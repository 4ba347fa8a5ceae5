#!/usr/bin/env bash
# The slow-link lab: wall-clock time to a test accuracy where the links are slow, per-step D-Lion against local steps
# and against dense G-Lion. Each run is a sharded job of 8 worker processes (every worker serves a slice) in the
# network lab (scripts/netlab.sh: one namespace per host, every link shaped by tbf), the MLP on Fashion-MNIST,
# per-worker batch 32 (global 256), lr 1e-3, seed 42, the first 2,000 test examples evaluated every few steps
# (--eval-every, left out of the training time), then a table (scripts/slowlink_report.py): time to the target accuracy,
# and bits per parameter per step on the links, from every worker's interface counters (netlab's links.tsv).
#
#   sudo scripts/slowlink-lab.sh [--rate 2mbit] [--out runs/slowlink] [--target 0.74] [--only exchange,h1,h4,h16,dense]
#
# Runs (each in a lab of its own, one after the other; a run whose links.tsv exists is not run again):
#   exchange  the exchange alone (./dlion vote-worker, 30 rounds of the MLP's 203,530 parameters): its round time is
#             the exchange term of a per-step D-Lion step at this rate
#   h1        D-Lion MaVo, per step (H = 1)                     192 steps, evaluated every 4
#   h4        D-Lion MaVo, --local-steps 4                      192 steps, every 4
#   h16       D-Lion MaVo, --local-steps 16                     192 steps, every 16 (parameters are shared every 16)
#   dense     dense G-Lion (fp32 gradients, reduce-scatter and all-gather over the slices), bounded to --dense-steps
#             (default 32: at 2 Mbit/s a dense step takes several seconds), every 4
# The outer settings of H > 1 are --outer-lr-scale, --outer-beta1 and --outer-beta2 (default 0.35, 0 and 0.99: the best
# of the in-process tuning for H = 16 at lr 1e-3).
# Links: --rate (default 2mbit), tbf --burst 18kb (two jumbo frames: a larger bucket, refilled while the hosts
# compute, would let a small exchange out faster than the rate) and --queue 200ms; the dense run's links --dense-queue 2s
# (the job's 512 KiB link window at 2 Mbit/s: with 200 ms the shapers dropped more packets than they passed and a dense
# step took about a minute). DLION_JAVA_OPTS defaults to -Xmx1g.
# Needs root (network namespaces).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RATE=2mbit
OUT=runs/slowlink
TARGET=0.74
ONLY="exchange,h1,h4,h16,dense"
DENSE_STEPS=32
OUTER_LR_SCALE=0.35
OUTER_BETA1=0
OUTER_BETA2=0.99
BURST=18kb
QUEUE=200ms
DENSE_QUEUE=2s
usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --rate) RATE="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --target) TARGET="$2"; shift 2 ;;
        --only) ONLY="$2"; shift 2 ;;
        --dense-steps) DENSE_STEPS="$2"; shift 2 ;;
        --outer-lr-scale) OUTER_LR_SCALE="$2"; shift 2 ;;
        --outer-beta1) OUTER_BETA1="$2"; shift 2 ;;
        --outer-beta2) OUTER_BETA2="$2"; shift 2 ;;
        --burst) BURST="$2"; shift 2 ;;
        --queue) QUEUE="$2"; shift 2 ;;
        --dense-queue) DENSE_QUEUE="$2"; shift 2 ;;
        -h|--help) usage ;;
        *) echo "slowlink-lab: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$DENSE_STEPS" in ''|*[!0-9]*|0) echo "slowlink-lab: --dense-steps must be a positive number, got '$DENSE_STEPS'" >&2; exit 2 ;; esac
export DLION_JAVA_OPTS="${DLION_JAVA_OPTS:--Xmx1g}"
WORKERS=8
BATCH=256
STEPS=192
PARAMS=203530
COMMON=(--model mlp --batch "$BATCH" --lr 1e-3 --seed 42 --test-limit 2000 --epochs 1)
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

lab() { # name, queue, netlab options..., -- worker options...
    local name="$1" queue="$2"; shift 2
    if [ -f "$OUT/$name/links.tsv" ]; then
        echo "slowlink-lab: $name done already ($OUT/$name/links.tsv)" >&2
        return 0
    fi
    echo "slowlink-lab: $name at $RATE per link (queue $queue), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    cut -d' ' -f1-3 /proc/loadavg > "$OUT/$name.load-before"
    bash "$ROOT/scripts/netlab.sh" --workers "$WORKERS" --topology sharded --rate "$RATE" --delay 0 --burst "$BURST" --queue "$queue" \
        --out "$OUT/$name" "$@" > "$OUT/$name.log" 2>&1 || echo "slowlink-lab: $name failed (exit $?): see $OUT/$name.log" >&2
    cut -d' ' -f1-3 /proc/loadavg > "$OUT/$name.load-after"
}

for run in ${ONLY//,/ }; do
    case "$run" in
        exchange) lab exchange "$QUEUE" --exchange 30 --params "$PARAMS" ;;
        h1) lab h1 "$QUEUE" -- "${COMMON[@]}" --train-limit $((BATCH * STEPS)) --sharing dlion-mavo --eval-every 4 ;;
        h4|h16)
            H="${run#h}"
            lab "$run" "$QUEUE" -- "${COMMON[@]}" --train-limit $((BATCH * STEPS)) --sharing dlion-mavo --local-steps "$H" \
                --outer-lr-scale "$OUTER_LR_SCALE" --outer-beta1 "$OUTER_BETA1" --outer-beta2 "$OUTER_BETA2" --eval-every $((H > 4 ? H : 4)) ;;
        dense) lab dense "$DENSE_QUEUE" -- "${COMMON[@]}" --train-limit $((BATCH * DENSE_STEPS)) --sharing dense-lion --eval-every 4 ;;
        *) echo "slowlink-lab: unknown run '$run' (exchange, h1, h4, h16, dense)" >&2; exit 2 ;;
    esac
done
python3 "$ROOT/scripts/slowlink_report.py" --out "$OUT" --rate "$RATE" --target "$TARGET" --params "$PARAMS" --workers "$WORKERS"
