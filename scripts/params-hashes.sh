#!/usr/bin/env bash
# Behaviour check for refactors: runs a fixed set of training commands and compares every worker's
# params-sha256 with the hashes recorded in scripts/params-hashes.txt.
#   scripts/params-hashes.sh            check (exit 1 on any difference)
#   scripts/params-hashes.sh --record   write the current hashes to scripts/params-hashes.txt
# Runs: ./dlion train in process, over Aeron IPC and over Aeron UDP (MaVo and Avg), and a server with three
# worker processes over UDP loopback with a secret (the fault run's job, undisturbed). About 3 minutes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
MODE="${1:-check}"
EXPECTED="$ROOT/scripts/params-hashes.txt"
OUT="$(mktemp -d)"
VOTE_PORT="${DLION_HASH_PORT:-40923}"   # and VOTE_PORT + 1
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$OUT"' EXIT
COMMON=(--model mlp --epochs 1 --batch 60 --seed 7 --train-limit 2400 --test-limit 200)
ACTUAL="$OUT/actual.txt"
: > "$ACTUAL"

hashes() { # name, log: one line "name worker=I HEX" per worker
    grep '^params-sha256 ' "$2" | sed "s/^params-sha256 /$1 /" | sort >> "$ACTUAL"
}

for run in "inproc dlion-mavo" "aeron-ipc dlion-mavo" "aeron-udp dlion-mavo" "inproc dlion-avg" "aeron-udp dlion-avg"; do
    set -- $run
    ./dlion train "${COMMON[@]}" --sharing "$2" --workers 3 --transport "$1" --out "$OUT/$1-$2" > "$OUT/$1-$2.log"
    hashes "train-$1-$2" "$OUT/$1-$2.log"
done

# server + 3 worker processes over UDP loopback, with a secret
head -c 32 /dev/urandom > "$OUT/job.secret" && chmod 600 "$OUT/job.secret"
P=$(grep -o '[0-9]* parameters' "$OUT/inproc-dlion-mavo.log" | head -1 | cut -d' ' -f1)
./dlion server --job 9 --workers 3 --params "$P" --udp 127.0.0.1:${VOTE_PORT}:$((VOTE_PORT + 1)) --secret-file "$OUT/job.secret" \
    --status-interval 0 > "$OUT/server.log" 2>&1 &
SERVER=$!
PIDS=()
for i in 0 1 2; do
    ./dlion worker --server 127.0.0.1 --vote-port "$VOTE_PORT" --control-port $((VOTE_PORT + 1)) --local-host 127.0.0.1 --job 9 \
        --worker-id "$i" --workers 3 --secret-file "$OUT/job.secret" "${COMMON[@]}" --out "$OUT/worker-$i" \
        > "$OUT/worker-$i.log" 2>&1 &
    PIDS+=($!)
done
for p in "${PIDS[@]}"; do wait "$p"; done
kill "$SERVER" 2>/dev/null || true
cat "$OUT"/worker-*.log > "$OUT/workers.log"
hashes "processes-udp-mavo" "$OUT/workers.log"

if [ "$MODE" = "--record" ]; then
    cp "$ACTUAL" "$EXPECTED"
    echo "recorded $(wc -l < "$EXPECTED") hashes in $EXPECTED"
    exit 0
fi
if diff -u "$EXPECTED" "$ACTUAL"; then
    echo "params-sha256: all $(wc -l < "$ACTUAL") hashes as recorded"
else
    echo "params-sha256 differ from $EXPECTED" >&2
    exit 1
fi
