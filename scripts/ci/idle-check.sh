#!/usr/bin/env bash
# Starts four `openvat serve` processes (SQLite, each its own database) on the Node in PATH, leaves
# them idle for 30 s (OPENVAT_IDLE_SECONDS), and checks that each still answers /health and then
# stops cleanly on SIGTERM, with no native abort (better-sqlite3 on Node 24.19+ was seen to fail
# `Assertion failed: (env) != nullptr` when a garbage collection finalised a statement while idle).
#   PATH="$(dirname "$(ci_node_dir 24.22.3)/bin/node"):$PATH" bash scripts/ci/idle-check.sh
# (scripts/ci/node-tests.sh swaps in the addon for that Node; run this through it or after it.)
set -euo pipefail
cd "$(dirname "$0")/../.."
idle="${OPENVAT_IDLE_SECONDS:-30}"
work="$(mktemp -d)"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
for i in 1 2 3 4; do
  port=$((39100 + RANDOM % 500 + i * 500))
  echo "$port" >"$work/port$i"
  DATABASE_URL="sqlite:$work/db$i.sqlite" HOST=127.0.0.1 PORT="$port" LOG_LEVEL=warn OPENVAT_TEDB_URL=off \
    node dist/cli/index.js serve >"$work/out$i" 2>"$work/err$i" &
  pids+=("$!")
done
for i in 1 2 3 4; do
  port="$(cat "$work/port$i")"
  for _ in $(seq 1 600); do
    if curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1; then break; fi
    sleep 0.1
  done
done
echo "node $(node --version): four servers up, idle for ${idle} s"
sleep "$idle"
failed=0
for i in 1 2 3 4; do
  port="$(cat "$work/port$i")"
  pid="${pids[$((i - 1))]}"
  if ! curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
    echo "FAIL: server $i does not answer after ${idle} s idle"; tail -5 "$work/err$i"; failed=1; continue
  fi
  kill -TERM "$pid"
  status=0
  wait "$pid" || status=$?
  if [ "$status" -ne 0 ] || grep -q "Assertion failed" "$work/err$i"; then
    echo "FAIL: server $i exited with $status"; tail -5 "$work/err$i"; failed=1
  else
    echo "PASS: server $i idle ${idle} s, answered, stopped with 0"
  fi
done
exit "$failed"
