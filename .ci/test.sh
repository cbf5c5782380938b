#!/usr/bin/env bash
# Runs the whole suite against the real served model: starts the local vLLM server if none
# answers (and stops it afterwards), and makes real-model tests fail rather than skip.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
export EVIDENTIA_REQUIRE_REAL_MODEL=1
URL=$($BIN/python -c "from assistant.settings import Settings; print(Settings().effective_base_url)")
srv_pid=""
cleanup() {
  if [ -n "$srv_pid" ]; then kill -TERM "$srv_pid" 2>/dev/null || true; wait "$srv_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT
if ! curl -sf "$URL/models" >/dev/null 2>&1; then
  log=$(mktemp -t evidentia-serve.XXXX.log)
  echo "== starting the local model server at $URL (its output: $log; vLLM log: ~/.cache/evidentia/logs/vllm.log)"
  $BIN/evidentia model serve > "$log" 2>&1 &
  srv_pid=$!
  for _ in $(seq 1 1200); do
    curl -sf "$URL/models" >/dev/null 2>&1 && break
    if ! kill -0 "$srv_pid" 2>/dev/null; then echo "model server exited:"; tail -n 40 "$log"; exit 1; fi
    sleep 1
  done
  curl -sf "$URL/models" >/dev/null || { echo "model server not ready in time"; tail -n 40 "$log"; exit 1; }
  echo "== model server ready"
fi
$BIN/python -m pytest -q --timeout=1800 "$@"
