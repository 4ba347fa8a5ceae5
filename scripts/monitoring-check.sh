#!/usr/bin/env bash
# A real Prometheus scraping a real job, as an operator would run it: an aggregation server and 3 worker processes over
# UDP on 127.0.0.1, each with --metrics-port, and a Prometheus server (Debian's) scraping them every second. Checks, with
# PromQL through Prometheus's HTTP API (the queries of docs/monitoring.md):
#   1. every endpoint passes 'promtool check metrics' (the official parser and its naming lint);
#   2. the rounds of every worker rise, and the server's series carry its slice label (slice="0");
#   3. './dlion garbage' at the server shows up as rejected frames;
#   4. a worker killed with SIGKILL shows up within the round deadline: 'up == 0' for it, and the server drops it.
# Stops everything it started (trap). Ports: DLION_MON_PORT (default 43100) and the 10 after it.
# Usage: scripts/monitoring-check.sh [--keep DIR]   (--keep: leave the logs and Prometheus's data in DIR)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BASE=${DLION_MON_PORT:-43100}
VOTE=$BASE; CONTROL=$((BASE + 1)); PROM=$((BASE + 2)); SERVER_METRICS=$((BASE + 3)); WORKER_METRICS=$((BASE + 4))
DEADLINE_MS=5000
KEEP=""
if [ "${1:-}" = "--keep" ]; then KEEP="$2"; mkdir -p "$KEEP"; fi
WORK=${KEEP:-$(mktemp -d /tmp/dlion-monitoring.XXXXXX)}
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$pid" 2>/dev/null || true
    done
    [ -n "$KEEP" ] || rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "monitoring check FAILED: $*" >&2; tail -n 5 "$WORK"/*.log >&2 || true; exit 1; }

bash scripts/install-monitoring.sh
export DLION_JAVA_OPTS="-Xmx1g"
./dlion secret "$WORK/job.secret" >/dev/null

# --- the job: a server and 3 workers, each with its /metrics
./dlion server --job 1 --workers 3 --params 203530 --udp 127.0.0.1:$VOTE:$CONTROL --secret-file "$WORK/job.secret" \
    --round-timeout-ms $DEADLINE_MS --status-interval 0 --metrics-port $SERVER_METRICS > "$WORK/server.log" 2>&1 &
PIDS+=($!)
WORKER_PIDS=()
for i in 0 1 2; do
    ./dlion worker --server 127.0.0.1 --vote-port $VOTE --local-host 127.0.0.1 --job 1 --worker-id $i --workers 3 \
        --secret-file "$WORK/job.secret" --batch 120 --epochs 50 --train-limit 6000 --test-limit 500 --out "$WORK/worker-$i" \
        --metrics-port $((WORKER_METRICS + i)) > "$WORK/worker-$i.log" 2>&1 &
    PIDS+=($!); WORKER_PIDS+=($!)
done

# --- Prometheus, scraping them every second (the static configuration of docs/monitoring.md)
cat > "$WORK/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: dlion
    static_configs:
      - targets: ['127.0.0.1:$SERVER_METRICS']
        labels: {role: server}
      - targets: ['127.0.0.1:$WORKER_METRICS', '127.0.0.1:$((WORKER_METRICS + 1))', '127.0.0.1:$((WORKER_METRICS + 2))']
        labels: {role: worker}
YML
promtool check config "$WORK/prometheus.yml" >/dev/null
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/prometheus-data" \
    --web.listen-address=127.0.0.1:$PROM --log.level=warn > "$WORK/prometheus.log" 2>&1 &
PIDS+=($!)

# query EXPR: the result vector as lines "labels value"
query() {
    curl -sf --get "http://127.0.0.1:$PROM/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["status"] == "success", r
for s in r["data"]["result"]:
    labels = ",".join(k + "=" + v for k, v in sorted(s["metric"].items()) if k not in ("job",))
    print(labels, s["value"][1])'
}
# wait_for SECONDS EXPR: until the query returns at least one sample
wait_for() {
    local until=$((SECONDS + $1))
    while [ $SECONDS -lt $until ]; do
        [ -n "$(query "$2" 2>/dev/null)" ] && return 0
        sleep 1
    done
    return 1
}

wait_for 240 'count(dlion_worker_rounds_total > 0) == 3' || fail "3 workers with rounds > 0 within 240 s"
echo "== every endpoint through promtool check metrics (the official text parser and its lint)"
for port in $SERVER_METRICS $WORKER_METRICS $((WORKER_METRICS + 1)) $((WORKER_METRICS + 2)); do
    curl -sf "http://127.0.0.1:$port/metrics" > "$WORK/metrics-$port.txt"
    if ! promtool check metrics < "$WORK/metrics-$port.txt" > "$WORK/promtool-$port.txt" 2>&1; then
        cat "$WORK/promtool-$port.txt" >&2
        fail "promtool check metrics on :$port"
    fi
done
echo "all 4 endpoints pass"

echo "== rounds rise on every worker: rate(dlion_worker_rounds_total[10s])"
sleep 10
rates=$(query 'rate(dlion_worker_rounds_total[10s])')
echo "$rates"
[ "$(echo "$rates" | awk '$2 > 0' | wc -l)" = 3 ] || fail "3 workers with a rising round count"
query 'histogram_quantile(0.99, sum by (le) (rate(dlion_worker_round_phase_seconds_bucket{phase="wait"}[30s])))' | sed 's/^/p99 wait (s): /'

echo "== the server's series carry its slice label: dlion_server_rounds_total{slice=\"0\"}"
query 'dlion_server_rounds_total{slice="0"}' | grep -q . || fail "no dlion_server_rounds_total{slice=\"0\"}"
query 'dlion_server_rounds_total{slice="0"}'

echo "== every query of docs/monitoring.md runs as written"
# the code blocks of its PromQL section; a line that starts with a space continues the query above it
python3 - "$ROOT/docs/monitoring.md" > "$WORK/queries.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
section = text[text.index("## PromQL"):text.index("### Checked with a real Prometheus")]
for block in re.findall(r"```\n(.*?)```", section, re.S):
    queries = []
    for line in block.rstrip("\n").split("\n"):
        if line.startswith(" ") and queries:
            queries[-1] += " " + line.strip()
        else:
            queries.append(line)
    for q in queries:
        print(q)
PY
[ "$(wc -l < "$WORK/queries.txt")" -ge 10 ] || fail "the PromQL of docs/monitoring.md: $(cat "$WORK/queries.txt")"
while IFS= read -r q; do
    status=$(curl -s --get "http://127.0.0.1:$PROM/api/v1/query" --data-urlencode "query=$q" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')
    [ "$status" = success ] || fail "docs/monitoring.md query did not run: $q"
done < "$WORK/queries.txt"
echo "$(wc -l < "$WORK/queries.txt") queries run"

echo "== ./dlion garbage at the server: sum by (reason) (increase(dlion_server_frames_rejected_total[1m])) > 0"
./dlion garbage --udp 127.0.0.1:$VOTE:$CONTROL --job 1 --workers 3 --params 203530 --server-has-secret --duration-s 5 \
    --status-interval 0 > "$WORK/garbage.log" 2>&1 || fail "./dlion garbage"
wait_for 20 'sum(increase(dlion_server_frames_rejected_total[1m])) > 0' || fail "rejected frames after ./dlion garbage"
query 'sum by (reason) (increase(dlion_server_frames_rejected_total[1m])) > 0'

echo "== worker 2 killed with SIGKILL: visible within the round deadline ($DEADLINE_MS ms)"
kill -9 "${WORKER_PIDS[2]}"
killed=$(date +%s%N)
wait_for 30 "up{role=\"worker\",instance=\"127.0.0.1:$((WORKER_METRICS + 2))\"} == 0" || fail "up == 0 for the killed worker"
seen_up=$((($(date +%s%N) - killed) / 1000000))
wait_for 30 'dlion_server_active_workers < 3' || fail "the server dropped the killed worker"
seen_dropped=$((($(date +%s%N) - killed) / 1000000))
query "up{role=\"worker\"} == 0" | sed 's/^/down: /'
query 'dlion_server_active_workers' | sed 's/^/active workers: /'
echo "up == 0 after ${seen_up} ms; the server's active workers < 3 after ${seen_dropped} ms (deadline $DEADLINE_MS ms, scrape every 1 s)"
[ "$seen_up" -le "$DEADLINE_MS" ] || fail "up == 0 only after ${seen_up} ms"
wait_for 30 'rate(dlion_worker_rounds_total[10s]) > 0' || fail "the 2 live workers go on after the drop"
echo "monitoring check passed"
