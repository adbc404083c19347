#!/usr/bin/env bash
# Standard load scenario: builds the gateway and loadgen, starts the gateway with the
# loadgen connectors and routes, runs loadgen with the given flags, prints the results
# and stops everything. Loopback only; loadgen bounds counts and durations itself.
#
#   scripts/load.sh                                   # 20k events over 100 threads, with the verify-only ceiling
#   scripts/load.sh --rate 1000 --events 30000         # end-to-end latency at a fixed rate
#   scripts/load.sh --threads 10000 --subscribers 1000 --events 20000
#   scripts/load.sh --scenario threads10k --json        # a named row of the load table: max, rate1000, rate50, threads10k
#   scripts/load.sh table                              # every row (max rate1000 rate50 threads10k watches100k watched), each on a fresh gateway: one JSON report per line
#   scripts/load.sh storm [--json]                     # the recorded storm (issue 16) on a fresh gateway, tuned config
#   scripts/load.sh storm --defaults [--json]          # the same storm on today's defaults (reports, never fails)
#   scripts/load.sh storm --replies [--json]           # the storm, then again with agents replying to every wake:
#                                                      # frames per event must not rise
#   STORAGE=postgres REPLICAS=3 scripts/load.sh        # 3 replicas on $SIGNALGATE_TEST_POSTGRES_DSN (a fresh schema)
#   GATEWAY=/tmp/old/gateway scripts/load.sh storm --defaults   # another build of the gateway (before/after)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
WORK="$(mktemp -d /tmp/signalgate-load.XXXXXX)"
STORAGE="${STORAGE:-sqlite}"
REPLICAS="${REPLICAS:-1}"
PIDS=()
SCHEMA=""
BASE_DSN="${DSN:-${SIGNALGATE_TEST_POSTGRES_DSN:-}}"
cleanup() {
  for pid in "${PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ -n "$SCHEMA" ]; then psql -q "$BASE_DSN" -c "DROP SCHEMA $SCHEMA CASCADE" >/dev/null 2>&1 || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# GATEWAY=/path/to/gateway measures another build (an older one, for a before/after).
if [ -n "${GATEWAY:-}" ]; then cp "$GATEWAY" "$WORK/gateway"; else CGO_ENABLED=0 go build -o "$WORK/gateway" ./cmd/gateway; fi
go build -o "$WORK/loadgen" ./cmd/loadgen

case "$STORAGE" in
  sqlite)
    [ "$REPLICAS" = 1 ] || { echo "REPLICAS > 1 needs STORAGE=postgres" >&2; exit 2; }
    STORE_DSN="$WORK/data/gw.db" ;;
  postgres)
    [ -n "$BASE_DSN" ] || { echo "set DSN or SIGNALGATE_TEST_POSTGRES_DSN" >&2; exit 2; }
    SCHEMA="load_$(date +%s)_$$"
    psql -q "$BASE_DSN" -c "CREATE SCHEMA $SCHEMA" >/dev/null
    sep='?'; [[ "$BASE_DSN" == *\?* ]] && sep='&'
    STORE_DSN="${BASE_DSN}${sep}search_path=$SCHEMA" ;;
  *) echo "STORAGE: sqlite or postgres" >&2; exit 2 ;;
esac

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_gateways starts REPLICAS gateways on STORE_DSN, configured by `loadgen $SCENARIO_CONFIG`,
# and sets URLS.
SCENARIO_CONFIG="config"
start_gateways() {
  URLS=""
  for i in $(seq 1 "$REPLICAS"); do
    port="$(free_port)"
    {
      echo "server: { listen: \"127.0.0.1:$port\", body_limit: 1MB }"
      echo "storage: { driver: $STORAGE, dsn: \"$STORE_DSN\" }"
      echo "log: { level: warn, format: json }"
      "$WORK/loadgen" $SCENARIO_CONFIG
    } >"$WORK/config-$i.yaml"
    "$WORK/gateway" serve --config "$WORK/config-$i.yaml" >"$WORK/gateway-$i.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 1 100); do
      if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then break; fi
      sleep 0.1
    done
    curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || { cat "$WORK/gateway-$i.log"; exit 1; }
    URLS="${URLS:+$URLS,}http://127.0.0.1:$port"
  done
}

# stop_gateways stops them (a table row's data must not slow the next row).
stop_gateways() {
  for pid in "${PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  PIDS=()
}

if [ "${1:-}" = table ]; then
  shift
  status=0
  base_dsn="$STORE_DSN"
  for sc in max rate1000 rate50 threads10k watches100k watched; do
    case "$STORAGE" in
      sqlite) STORE_DSN="$WORK/data-$sc/gw.db" ;;
      postgres) psql -q "$BASE_DSN" -c "DROP SCHEMA $SCHEMA CASCADE; CREATE SCHEMA $SCHEMA" >/dev/null ;;
    esac
    start_gateways
    # One line per row: compact the loadgen's indented JSON.
    "$WORK/loadgen" --url "$URLS" --pid "${PIDS[0]}" --scenario "$sc" --json "$@" >"$WORK/$sc.json" || status=1
    python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$WORK/$sc.json" || status=1
    stop_gateways
  done
  STORE_DSN="$base_dsn"
  exit $status
fi

show_logs() {
  for i in $(seq 1 "$REPLICAS"); do echo "--- gateway $i log (tail)" >&2; tail -20 "$WORK/gateway-$i.log" >&2; done
}

# run_storm [--defaults] [--json] [--replies --platform ADDR ...]: the recorded storm
# against one fresh gateway.
run_storm() {
  local defaults="" replies=""
  for a in "$@"; do
    [ "$a" = --defaults ] && defaults="--defaults"
    [ "$a" = --replies ] && replies="--replies --platform $PLATFORM"
  done
  [ "$REPLICAS" = 1 ] || { echo "the storm runs on one gateway" >&2; exit 2; }
  SCENARIO_CONFIG="storm-config $defaults $replies"
  case "$STORAGE" in
    # A fresh database each run: the same storm again would be taken as replays.
    sqlite) STORM_RUNS=$((${STORM_RUNS:-0} + 1)); STORE_DSN="$WORK/data-storm-$STORM_RUNS/gw.db" ;;
    postgres) psql -q "$BASE_DSN" -c "DROP SCHEMA $SCHEMA CASCADE; CREATE SCHEMA $SCHEMA" >/dev/null ;;
  esac
  start_gateways
  local st=0
  "$WORK/loadgen" storm --url "$URLS" "$@" || st=$?
  [ $st -eq 0 ] || show_logs
  stop_gateways
  return $st
}

if [ "${1:-}" = storm ] || { [ "${1:-}" = --scenario ] && [ "${2:-}" = storm ]; }; then
  [ "$1" = storm ] && shift || shift 2
  status=0
  if [[ " $* " == *" --replies "* ]]; then
    # Without replies first (its JSON is the baseline), then with them on a fresh gateway.
    PLATFORM="127.0.0.1:$(free_port)"
    plain=()
    for a in "$@"; do [ "$a" = --replies ] || [ "$a" = --json ] || plain+=("$a"); done
    run_storm "${plain[@]}" --json >"$WORK/storm-plain.json" || status=$?
    [[ " $* " == *" --json "* ]] || python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("without replies: %.3f model-visible frames per event" % r["model_visible_per_event"])' "$WORK/storm-plain.json"
    [[ " $* " != *" --json "* ]] || cat "$WORK/storm-plain.json"
    run_storm "$@" --platform "$PLATFORM" --baseline "$WORK/storm-plain.json" || status=$?
    exit $status
  fi
  run_storm "$@" || status=$?
  exit $status
fi

start_gateways
status=0
if [ $# -eq 0 ]; then
  # `make load`: the standard scenario, then the recorded storm on a fresh gateway.
  "$WORK/loadgen" --url "$URLS" --pid "${PIDS[0]}" --scenario max || { status=$?; show_logs; }
  stop_gateways
  run_storm || status=1
  exit $status
fi
"$WORK/loadgen" --url "$URLS" --pid "${PIDS[0]}" "$@" || { status=$?; show_logs; }
exit $status
