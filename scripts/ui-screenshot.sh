#!/usr/bin/env bash
# The picture of DL4J's training UI in docs/monitoring.md: starts './dlion ui', trains a D-Lion job of 3 workers that
# report to it (--ui), and shoots the UI's overview with a headless Chromium (Debian's chromium, installed by
# scripts/install-monitoring.sh --screenshot). Stops what it started.
# Usage: scripts/ui-screenshot.sh [OUT.png]   (default docs/img/dl4j-ui-dlion.png); UI port: DLION_UI_PORT (default 43180)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT=$(realpath -m "${1:-docs/img/dl4j-ui-dlion.png}")
PORT=${DLION_UI_PORT:-43180}
WORK=$(mktemp -d /tmp/dlion-ui-shot.XXXXXX)
UI=""
cleanup() {
    [ -z "$UI" ] || { kill "$UI" 2>/dev/null || true; wait "$UI" 2>/dev/null || true; }
    rm -rf "$WORK"
}
trap cleanup EXIT
bash scripts/install-monitoring.sh --screenshot
export DLION_JAVA_OPTS=-Xmx1g
./dlion ui "$PORT" > "$WORK/ui.log" 2>&1 &
UI=$!
for _ in $(seq 300); do
    kill -0 "$UI" 2>/dev/null || { cat "$WORK/ui.log" >&2; echo "ui-screenshot: ./dlion ui stopped" >&2; exit 1; }
    curl -sf -o /dev/null "http://127.0.0.1:$PORT/train/overview" && break
    sleep 1
done
./dlion train --sharing dlion-mavo --workers 3 --transport aeron-ipc --epochs 2 --batch 120 --train-limit 12000 --test-limit 500 \
    --ui "http://127.0.0.1:$PORT" --ui-every 2 --out "$WORK/train" > "$WORK/train.log" 2>&1 \
    || { tail -20 "$WORK/train.log" >&2; exit 1; }
timeout 120 chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,1000 \
    --virtual-time-budget=20000 --screenshot="$OUT" "http://127.0.0.1:$PORT/train/overview" > "$WORK/chromium.log" 2>&1
echo "ui-screenshot: $OUT"
