#!/usr/bin/env bash
# The local-steps study (docs/results.md, "Local steps and workers whose data differ"): Fashion-MNIST MLP, per-worker
# batch 32, D-Lion MaVo and Avg with H local steps per vote against dense G-Lion, on i.i.d. and label-skewed shards.
#   scripts/local-steps-study.sh tune    learning rates on a validation split: the last 10,000 training examples held
#                                        out (--validation 10000), N = 8, i.i.d., seed 42; with DLION_STUDY_CHOSEN
#                                        ("method H lr outer;..."), those settings instead of the grid
#   scripts/local-steps-study.sh final   the chosen rates, trained on the first 50,000 training examples (the same ones
#                                        the tuning runs trained on), evaluated on the test set, seeds 42, 43, 44
# DLION_STUDY_MODEL picks the model (mlp, the default, or vit-tiny); a model other than the MLP writes to
# runs/local-steps-MODEL unless DLION_STUDY_DIR says otherwise (read it with local_steps_report.py --dir).
# Every run takes the shared CPU lock on its own (flock /tmp/dlion-cpu.lock, or the file in DLION_CPU_LOCK) and is skipped when its metrics.csv exists,
# so the script resumes. Runs go to runs/local-steps/{tune,final}/NAME; tables and the plot come from
# scripts/local_steps_report.py.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PHASE="${1:?tune or final}"
MODEL="${DLION_STUDY_MODEL:-mlp}"
case "$MODEL" in
    mlp) OUT="${DLION_STUDY_DIR:-$ROOT/runs/local-steps}" ;;
    vit-tiny) OUT="${DLION_STUDY_DIR:-$ROOT/runs/local-steps-$MODEL}" ;;
    *) echo "DLION_STUDY_MODEL must be mlp or vit-tiny, got '$MODEL'" >&2; exit 2 ;;
esac
EPOCHS=2
WB=32

run() { # name, then ./dlion train options
    local name="$1"; shift
    local dir="$OUT/$PHASE/$name"
    if [ -f "$dir/metrics.csv" ]; then
        return
    fi
    mkdir -p "$dir"
    echo "$(date -u +%H:%M:%S) $PHASE/$name" >&2
    if ! flock "${DLION_CPU_LOCK:-/tmp/dlion-cpu.lock}" ./dlion train --model "$MODEL" --epochs "$EPOCHS" --out "$dir" "$@" > "$dir/train.log" 2>&1; then
        echo "  failed: see $dir/train.log" >&2
    fi
}

# method (mavo, avg, dense), N, H, lr, outer step, partition, seed, data options...
# The outer step is SCALE (the outer lr scale, default outer betas) or SCALE:BETA1:BETA2; a run's name holds it as
# sSCALE or sSCALE-bBETA1-BETA2.
one() {
    local method="$1" n="$2" h="$3" lr="$4" outer="$5" part="$6" seed="$7"; shift 7
    local scale="${outer%%:*}" betas=()
    local tag="s$scale"
    if [ "$outer" != "$scale" ]; then
        local b="${outer#*:}"
        betas=(--outer-beta1 "${b%%:*}" --outer-beta2 "${b#*:}")
        tag="s$scale-b${b%%:*}-${b#*:}"
    fi
    local name="$method-n$n-h$h-lr$lr-$tag-${part//:/_}-seed$seed"
    local sharing=(--sharing "dlion-$method")
    if [ "$method" = dense ]; then
        sharing=(--sharing dense-lion --transport aeron-ipc)
        name="$method-n$n-lr$lr-${part//:/_}-seed$seed"
    fi
    local local_steps=()
    if [ "$h" -gt 1 ]; then
        local_steps=(--local-steps "$h" --outer-lr-scale "$scale" "${betas[@]}")
    fi
    run "$name" "${sharing[@]}" --workers "$n" --batch $((n * WB)) --lr "$lr" --seed "$seed" --partition "$part" \
        "${local_steps[@]}" "$@"
}

# settings ("method H lr outer;..."), N, partition, seed, then data options: one run per setting (on skewed splits
# H = 1 and 16 only)
chosen() {
    local settings s method h lr outer n="$2" part="$3" seed="$4"
    IFS=';' read -ra settings <<< "$1"
    shift 4
    for s in "${settings[@]}"; do
        read -r method h lr outer <<< "$s"
        if [ "$part" != iid ] && [ "$h" = 4 ]; then
            continue
        fi
        one "$method" "$n" "$h" "$lr" "$outer" "$part" "$seed" "$@"
    done
}

case "$PHASE" in
    tune)
        if [ -n "${DLION_STUDY_CHOSEN:-}" ]; then
            # settings of one's own, seed 42, i.i.d., N = DLION_STUDY_WORKERS (8)
            for n in ${DLION_STUDY_WORKERS:-8}; do
                chosen "$DLION_STUDY_CHOSEN" "$n" iid 42 --validation 10000
            done
            exit 0
        fi
        # the grid run for docs/results.md (2 cores shared by four engineers: a reduced grid, see there)
        for lr in 1e-3 3e-3; do
            for method in mavo avg; do
                one "$method" 8 1 "$lr" 1 iid 42 --validation 10000
                for h in 4 16; do
                    one "$method" 8 "$h" "$lr" 1 iid 42 --validation 10000
                done
                if [ "$lr" = 1e-3 ]; then
                    one "$method" 8 16 "$lr" 0.5 iid 42 --validation 10000
                fi
            done
            one dense 8 1 "$lr" 1 iid 42 --validation 10000
        done
        # the outer step of MaVo H = 16 at lr 1e-3: its scale and its momentum (outer beta1 0: the vote of the signs of
        # the workers' pseudo-gradients, no outer momentum)
        for outer in 0.25 0.35 0.65 0.5:0.9:0.9 0.5:0.9:0.999 0.5:0.5:0.99 0.5:0.25:0.99 0.5:0:0.99 0.35:0:0.99 0.75:0:0.99; do
            one mavo 8 16 1e-3 "$outer" iid 42 --validation 10000
        done
        ;;
    final)
        # the chosen settings: "method H lr outer", from the tuning table (scripts/local_steps_report.py best)
        CHOSEN="${DLION_STUDY_CHOSEN:?set DLION_STUDY_CHOSEN to the tuned settings, e.g. 'mavo 1 1e-3 1;mavo 16 1e-3 0.5:0:0.99;dense 1 1e-3 1'}"
        PARTS="${DLION_STUDY_PARTITIONS:-iid dirichlet:0.1 classes:2 dirichlet:1.0}"
        WORKERS="${DLION_STUDY_WORKERS:-8}"
        SEEDS="${DLION_STUDY_SEEDS:-42 43 44}"
        for n in $WORKERS; do
            for part in $PARTS; do
                for seed in $SEEDS; do
                    chosen "$CHOSEN" "$n" "$part" "$seed" --train-limit 50000
                done
            done
        done
        ;;
    *)
        echo "usage: $0 tune|final" >&2
        exit 2
        ;;
esac
