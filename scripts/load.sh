#!/usr/bin/env bash
# Standard load scenario: builds the gateway and loadgen, starts the gateway with the
# loadgen connectors and routes, runs loadgen with the given flags, prints the results
# and stops everything. Loopback only; loadgen bounds counts and durations itself.
#
#   scripts/load.sh                                   # 20k events over 100 threads, with the verify-only ceiling
#   scripts/load.sh --rate 1000 --events 30000         # end-to-end latency at a fixed rate
#   scripts/load.sh --threads 10000 --subscribers 1000 --events 20000
#   scripts/load.sh --scenario threads10k --json        # a named row of the load table: max, rate1000, rate50, threads10k
#   scripts/load.sh table                              # every row, each on a fresh gateway: one JSON report per line
#   STORAGE=postgres REPLICAS=3 scripts/load.sh        # 3 replicas on $SIGNALGATE_TEST_POSTGRES_DSN (a fresh schema)
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

CGO_ENABLED=0 go build -o "$WORK/gateway" ./cmd/gateway
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

# start_gateways starts REPLICAS gateways on STORE_DSN and sets URLS.
start_gateways() {
  URLS=""
  for i in $(seq 1 "$REPLICAS"); do
    port="$(free_port)"
    {
      echo "server: { listen: \"127.0.0.1:$port\", body_limit: 1MB }"
      echo "storage: { driver: $STORAGE, dsn: \"$STORE_DSN\" }"
      echo "log: { level: warn, format: json }"
      "$WORK/loadgen" config
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
  for sc in max rate1000 rate50 threads10k; do
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

start_gateways
if [ $# -eq 0 ]; then
  set -- --scenario max
fi
status=0
"$WORK/loadgen" --url "$URLS" --pid "${PIDS[0]}" "$@" || status=$?
if [ $status -ne 0 ]; then
  for i in $(seq 1 "$REPLICAS"); do echo "--- gateway $i log (tail)" >&2; tail -20 "$WORK/gateway-$i.log" >&2; done
fi
exit $status
