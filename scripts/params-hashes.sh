#!/usr/bin/env bash
# Behaviour check for refactors: runs a fixed set of training commands and compares every worker's
# params-sha256 with the hashes recorded in scripts/params-hashes.txt.
#   scripts/params-hashes.sh            check (exit 1 on any difference)
#   scripts/params-hashes.sh --record   write the current hashes to scripts/params-hashes.txt, and beside them, in
#                                       scripts/params-hashes.cpu, the CPU model and the commit they were recorded on
#                                       (record from a clean tree: the commit must be the code that made the hashes)
# Runs: ./dlion train in process, over Aeron IPC and over Aeron UDP (MaVo and Avg), and a server with three
# worker processes over UDP loopback with a secret (the fault run's job, undisturbed). About 3 minutes.
#
# Bit-identical across machines is not promised for every run (docs/architecture.md, "What is bit-identical"): on a
# CPU other than the recorded one, the reference is recomputed here from the recorded commit (a git worktree of it,
# built and run with the same commands), and the current hashes are compared with that; the script says so.
# Both trees are built with `mvn package` (never install: the local repository is not touched).
# Environment:
#   DLION_HASH_PORT   vote port of the server run (default 40923; it and the next port must be free)
#   DLION_CPU_MODEL   the CPU model this machine is taken to be, compared with the recorded one and written by --record
#                     (default: /proc/cpuinfo's model name); another name takes the other-CPU path here, to check it
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
MODE="${1:-check}"
EXPECTED="$ROOT/scripts/params-hashes.txt"
RECORDED_ON="$ROOT/scripts/params-hashes.cpu"
OUT="$(mktemp -d)"
VOTE_PORT="${DLION_HASH_PORT:-40923}"   # and VOTE_PORT + 1
REF_TREE=""
cleanup() {
    kill $(jobs -p) 2>/dev/null || true
    if [ -n "$REF_TREE" ]; then
        git -C "$ROOT" worktree remove --force "$REF_TREE" 2>/dev/null || true
    fi
    rm -rf "$OUT"
}
trap cleanup EXIT
COMMON=(--model mlp --epochs 1 --batch 60 --seed 7 --train-limit 2400 --test-limit 200)

cpu_model() {
    if [ -n "${DLION_CPU_MODEL:-}" ]; then
        echo "$DLION_CPU_MODEL"
    else
        grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'
    fi
}

build() { # tree: package every module (the recorded commit's CLI may live in another one), and mark each module's
          # classpath file fresh, so that the tree's ./dlion runs what was packaged here and does not build (install) again
    local tree="$1"
    (cd "$tree" && mvn -B -ntp -q package -DskipTests)
    find "$tree" -path '*/target/classpath.txt' -exec touch {} +
}

hashes() { # name, log, file: one line "name worker=I HEX" per worker
    grep '^params-sha256 ' "$2" | sed "s/^params-sha256 /$1 /" | sort >> "$3"
}

run_all() { # tree (whose ./dlion builds and runs), output directory, hashes file
    local tree="$1" out="$2" file="$3"
    mkdir -p "$out"
    : > "$file"
    for run in "inproc dlion-mavo" "aeron-ipc dlion-mavo" "aeron-udp dlion-mavo" "inproc dlion-avg" "aeron-udp dlion-avg"; do
        set -- $run
        "$tree/dlion" train "${COMMON[@]}" --sharing "$2" --workers 3 --transport "$1" --out "$out/$1-$2" > "$out/$1-$2.log"
        hashes "train-$1-$2" "$out/$1-$2.log" "$file"
    done

    # server + 3 worker processes over UDP loopback, with a secret
    head -c 32 /dev/urandom > "$out/job.secret" && chmod 600 "$out/job.secret"
    local params
    params=$(grep -o '[0-9]* parameters' "$out/inproc-dlion-mavo.log" | head -1 | cut -d' ' -f1)
    "$tree/dlion" server --job 9 --workers 3 --params "$params" --udp 127.0.0.1:${VOTE_PORT}:$((VOTE_PORT + 1)) \
        --secret-file "$out/job.secret" --status-interval 0 > "$out/server.log" 2>&1 &
    local server=$!
    local pids=()
    for i in 0 1 2; do
        "$tree/dlion" worker --server 127.0.0.1 --vote-port "$VOTE_PORT" --control-port $((VOTE_PORT + 1)) --local-host 127.0.0.1 \
            --job 9 --worker-id "$i" --workers 3 --secret-file "$out/job.secret" "${COMMON[@]}" --out "$out/worker-$i" \
            > "$out/worker-$i.log" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    cat "$out"/worker-*.log > "$out/workers.log"
    hashes "processes-udp-mavo" "$out/workers.log" "$file"
}

ACTUAL="$OUT/actual.txt"
build "$ROOT"
run_all "$ROOT" "$OUT/current" "$ACTUAL"

if [ "$MODE" = "--record" ]; then
    cp "$ACTUAL" "$EXPECTED"
    printf 'cpu=%s\ncommit=%s\n' "$(cpu_model)" "$(git -C "$ROOT" rev-parse HEAD)" > "$RECORDED_ON"
    echo "recorded $(wc -l < "$EXPECTED") hashes in $EXPECTED, on $(cpu_model) at commit $(git -C "$ROOT" rev-parse --short HEAD)"
    exit 0
fi

REFERENCE="$EXPECTED"
RECORDED_CPU="$(sed -n 's/^cpu=//p' "$RECORDED_ON" 2>/dev/null || true)"
RECORDED_COMMIT="$(sed -n 's/^commit=//p' "$RECORDED_ON" 2>/dev/null || true)"
if [ -n "$RECORDED_CPU" ] && [ "$RECORDED_CPU" != "$(cpu_model)" ]; then
    echo "params-sha256: recorded on '$RECORDED_CPU', this CPU is '$(cpu_model)': the Avg runs may round differently here;"
    echo "params-sha256: recomputing the reference from the recorded commit $RECORDED_COMMIT on this CPU ..."
    REF_TREE="$OUT/reference-tree"
    git -C "$ROOT" worktree add --detach "$REF_TREE" "$RECORDED_COMMIT" > /dev/null
    build "$REF_TREE"
    REFERENCE="$OUT/reference.txt"
    run_all "$REF_TREE" "$OUT/reference" "$REFERENCE"
fi
if diff -u "$REFERENCE" "$ACTUAL"; then
    if [ "$REFERENCE" = "$EXPECTED" ]; then
        echo "params-sha256: all $(wc -l < "$ACTUAL") hashes as recorded"
    else
        echo "params-sha256: all $(wc -l < "$ACTUAL") hashes as the recorded commit's on this CPU (recorded hashes: $(
            diff -q "$EXPECTED" "$ACTUAL" > /dev/null && echo "the same" || echo "differ, as the CPU does"))"
    fi
else
    echo "params-sha256 differ from $([ "$REFERENCE" = "$EXPECTED" ] && echo "$EXPECTED" || echo "the recorded commit's on this CPU")" >&2
    exit 1
fi
