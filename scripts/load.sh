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
#   scripts/load.sh storm --shipped [--config PATH] [--json]  # the same storm on the shipped config.yaml as committed
#                                                      # (the storm's connectors put in; fails on a missed target)
#   scripts/load.sh storm --replies [--json]           # the storm, then again with agents replying to every wake:
#                                                      # frames per event must not rise
#   scripts/load.sh --otel [--json]                    # the max row untraced, then traced into `loadgen collect`:
#                                                      # otel_loss_pct and spans per event
#   STORAGE=postgres REPLICAS=3 scripts/load.sh        # 3 replicas on $SIGNALGATE_TEST_POSTGRES_DSN (a fresh schema)
#   PROFILE=/tmp/cpu.pprof scripts/load.sh --scenario max --json   # also a CPU profile of the (first) gateway
#                                                      # over PROFILE_SECONDS (30, at most the request timeout) from its start
#
# Every row reports the gateways' CPU per acked event (all replicas, from /proc/<pid>/stat;
# on PostgreSQL the server's too). Before any gateway starts, the storage floor
# (BenchmarkSQLiteFloor, full) is measured once and each row reports cost_ratio = gateway
# CPU / floor; FLOOR=0 skips it (the storm and --otel never run it).
#   GATEWAY=/tmp/old/gateway scripts/load.sh storm --defaults   # another build of the gateway (before/after)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
WORK="$(mktemp -d /tmp/signalgate-load.XXXXXX)"
STORAGE="${STORAGE:-sqlite}"
REPLICAS="${REPLICAS:-1}"
PIDS=()
COLLECTOR=""
SCHEMA=""
BASE_DSN="${DSN:-${SIGNALGATE_TEST_POSTGRES_DSN:-}}"
cleanup() {
  for pid in "${PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ -n "$COLLECTOR" ]; then kill -TERM "$COLLECTOR" 2>/dev/null || true; fi
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

# /proc/<pid>/stat counts CPU in clock ticks (USER_HZ): 100 on Linux unless getconf says otherwise.
CLK_TCK="$(getconf CLK_TCK 2>/dev/null || echo 100)"

# DB_PID: the PostgreSQL server's postmaster (first line of postmaster.pid in the data
# directory the DSN's server reports); loadgen adds its children's CPU. Empty when the
# data directory is not readable here (a remote server): no database figure then.
DB_PID=""
if [ "$STORAGE" = postgres ]; then
  data_dir="$(psql -Atq "$BASE_DSN" -c 'SHOW data_directory' 2>/dev/null || true)"
  if [ -n "$data_dir" ] && [ -r "$data_dir/postmaster.pid" ]; then
    DB_PID="$(head -1 "$data_dir/postmaster.pid")"
    [ -d "/proc/$DB_PID" ] || DB_PID=""
  fi
  [ -n "$DB_PID" ] || echo "load.sh: the database server's pid is not readable here; no db_cpu_us_per_event" >&2
fi

# run_floor sets FLOOR_CPU: the storage floor's CPU-µs per event (BenchmarkSQLiteFloor,
# full, batches of 64, 4 KiB pages), measured once per invocation before any gateway runs.
FLOOR_CPU=""
run_floor() {
  [ "${FLOOR:-1}" != 0 ] || return 0
  local out
  out="$(go test -run '^$' -bench 'BenchmarkSQLiteFloor/^full$/^batch=64$/^page=4096$' -benchtime "${FLOOR_BENCHTIME:-150x}" -count 1 ./store 2>&1)" ||
    { echo "$out" >&2; echo "load.sh: the floor benchmark failed; no cost_ratio" >&2; return 0; }
  FLOOR_CPU="$(awk '/^BenchmarkSQLiteFloor/ { for (i = 2; i <= NF; i++) if ($i == "cpu-µs/event") print $(i-1) }' <<<"$out" | tail -1)"
  [ -n "$FLOOR_CPU" ] || echo "load.sh: no cpu-µs/event in the floor benchmark's output; no cost_ratio" >&2
}

# measure_args are loadgen's flags for the cost of a row on the running gateways.
measure_args() {
  local IFS=,
  echo "--pid ${PIDS[*]} --clk-tck $CLK_TCK${DB_PID:+ --db-pid $DB_PID}${FLOOR_CPU:+ --floor-cpu-us $FLOOR_CPU}"
}

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
      if [ -n "${PROFILE:-}" ]; then echo "admin: { pprof: true, tokens: [ { name: load, token: \"$PROFILE_TOKEN\", scopes: [write] } ] }"; fi
    } >"$WORK/config-$i.yaml"
    env "${GATEWAY_ENV[@]}" "$WORK/gateway" serve --config "$WORK/config-$i.yaml" >"$WORK/gateway-$i.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 1 100); do
      if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then break; fi
      sleep 0.1
    done
    curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || { cat "$WORK/gateway-$i.log"; exit 1; }
    URLS="${URLS:+$URLS,}http://127.0.0.1:$port"
  done
  if [ -n "${PROFILE:-}" ]; then
    # The first gateway's CPU profile from now on (idle time takes no samples).
    curl -fsS -H "Authorization: Bearer $PROFILE_TOKEN" -o "$PROFILE" \
      "${URLS%%,*}/admin/v1/debug/pprof/profile?seconds=${PROFILE_SECONDS:-30}" &
    PROFILE_CURL=$!
  fi
}
GATEWAY_ENV=()
PROFILE_TOKEN="load-profile-$RANDOM$RANDOM$RANDOM"
PROFILE_CURL=

# stop_gateways stops them (a table row's data must not slow the next row), once a
# profile being taken is written.
stop_gateways() {
  if [ -n "$PROFILE_CURL" ]; then
    wait "$PROFILE_CURL" || echo "load.sh: the CPU profile failed" >&2
    PROFILE_CURL=""
    echo "load.sh: CPU profile in $PROFILE (go tool pprof -top -cum $PROFILE)" >&2
  fi
  for pid in "${PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  PIDS=()
}

if [ "${1:-}" = table ]; then
  shift
  run_floor
  status=0
  base_dsn="$STORE_DSN"
  for sc in max rate1000 rate50 threads10k watches100k watched; do
    case "$STORAGE" in
      sqlite) STORE_DSN="$WORK/data-$sc/gw.db" ;;
      postgres) psql -q "$BASE_DSN" -c "DROP SCHEMA $SCHEMA CASCADE; CREATE SCHEMA $SCHEMA" >/dev/null ;;
    esac
    start_gateways
    # One line per row: compact the loadgen's indented JSON.
    "$WORK/loadgen" --url "$URLS" $(measure_args) --scenario "$sc" --json "$@" >"$WORK/$sc.json" || status=1
    python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$WORK/$sc.json" || status=1
    stop_gateways
  done
  STORE_DSN="$base_dsn"
  exit $status
fi

show_logs() {
  for i in $(seq 1 "$REPLICAS"); do echo "--- gateway $i log (tail)" >&2; tail -20 "$WORK/gateway-$i.log" >&2; done
}

# run_storm [--defaults | --shipped [--config PATH]] [--json] [--replies --platform ADDR ...]:
# the recorded storm against one fresh gateway.
run_storm() {
  local defaults="" replies="" shipped="" prev=""
  for a in "$@"; do
    [ "$a" = --defaults ] && defaults="--defaults"
    [ "$a" = --replies ] && replies="--replies --platform $PLATFORM"
    [ "$a" = --shipped ] && shipped="--shipped $shipped"
    [ "$prev" = --config ] && shipped="$shipped --config $a"
    prev="$a"
  done
  [ "$REPLICAS" = 1 ] || { echo "the storm runs on one gateway" >&2; exit 2; }
  # The shipped config brings its own admin section: no second one for a profile.
  [ -z "$shipped" ] || [ -z "${PROFILE:-}" ] || { echo "PROFILE: not with storm --shipped (its admin section is the shipped config's)" >&2; exit 2; }
  SCENARIO_CONFIG="storm-config $defaults $shipped $replies"
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

# run_otel [--json] [loadgen flags]: the max row on a fresh gateway without tracing,
# then on another with every span sampled and exported over OTLP/HTTP to `loadgen
# collect` (a separate process of the load tool, counting only). Reports both rows,
# otel_loss_pct = (1 - traced/untraced events/s) x 100 and the spans received per acked
# event (counted after the traced gateway stopped, so its last batch is in).
run_otel() {
  local json="" st=0 a
  local rest=()
  for a in "$@"; do if [ "$a" = --json ]; then json=1; else rest+=("$a"); fi; done
  fresh_store() {
    case "$STORAGE" in
      sqlite) STORE_DSN="$WORK/data-$1/gw.db" ;;
      postgres) psql -q "$BASE_DSN" -c "DROP SCHEMA $SCHEMA CASCADE; CREATE SCHEMA $SCHEMA" >/dev/null ;;
    esac
  }
  fresh_store untraced
  start_gateways
  "$WORK/loadgen" --url "$URLS" $(measure_args) --scenario max --ceiling=false --json "${rest[@]}" >"$WORK/untraced.json" || { st=1; show_logs; }
  stop_gateways

  local cport
  cport="$(free_port)"
  "$WORK/loadgen" collect --listen "127.0.0.1:$cport" >"$WORK/collect.json" 2>"$WORK/collect.log" &
  COLLECTOR=$!
  for _ in $(seq 1 50); do curl -fsS "http://127.0.0.1:$cport/count" >/dev/null 2>&1 && break; sleep 0.1; done
  fresh_store traced
  GATEWAY_ENV=(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$cport" OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf OTEL_TRACES_SAMPLER=always_on)
  start_gateways
  GATEWAY_ENV=()
  "$WORK/loadgen" --url "$URLS" $(measure_args) --scenario max --ceiling=false --json "${rest[@]}" >"$WORK/traced.json" || { st=1; show_logs; }
  stop_gateways
  curl -fsS "http://127.0.0.1:$cport/count" >"$WORK/spans.json" || echo '{"spans": 0}' >"$WORK/spans.json"
  kill -TERM "$COLLECTOR" 2>/dev/null || true
  wait "$COLLECTOR" 2>/dev/null || true
  COLLECTOR=""
  python3 - "$WORK/untraced.json" "$WORK/traced.json" "$WORK/spans.json" "$json" <<'PY' || st=1
import json, sys
u, t, c = (json.load(open(p)) for p in sys.argv[1:4])
ur, tr = u["gateway"]["req_per_s"], t["gateway"]["req_per_s"]
acked = t["gateway"]["acked"]
summary = {
    "otel_loss_pct": round((1 - tr / ur) * 100, 2) if ur else None,
    "untraced_events_per_s": round(ur, 1), "traced_events_per_s": round(tr, 1),
    "spans": c["spans"], "spans_per_event": round(c["spans"] / acked, 2) if acked else None,
    "untraced_cpu_us_per_event": u["gateway"].get("gateway_cpu_us_per_event"),
    "traced_cpu_us_per_event": t["gateway"].get("gateway_cpu_us_per_event"),
}
if sys.argv[4]:
    for name, row in (("untraced", u), ("traced", t)):
        row["otel"] = name
        print(json.dumps(row))
    print(json.dumps(summary))
else:
    for name, row in (("untraced", u), ("traced", t)):
        g = row["gateway"]
        print("%-9s %8.0f events/s  ingest p99 %7.2f ms  e2e p99 %7.2f ms  CPU %6.0f µs/event  lost %d  duplicated %d" % (
            name, g["req_per_s"], g["ingest"]["p99_ms"], g["end_to_end"]["p99_ms"], g.get("gateway_cpu_us_per_event", 0),
            g["lost"], g["duplicated"] + g["duplicate_frames"] + g["conflicting_contents"]))
    print("otel_loss_pct %s  spans %d  spans per event %s" % (summary["otel_loss_pct"], summary["spans"], summary["spans_per_event"]))
PY
  if [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["spans"])' "$WORK/spans.json")" = 0 ]; then
    echo "load.sh: the traced gateway exported no spans to the collector (is tracing built in? see $WORK/gateway-1.log)" >&2
  fi
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

if [ "${1:-}" = --otel ]; then
  shift
  run_otel "$@"
  exit $?
fi

status=0
if [ $# -eq 0 ]; then
  # `make load`: the standard scenario, then the recorded storm on a fresh gateway.
  run_floor
  start_gateways
  "$WORK/loadgen" --url "$URLS" $(measure_args) --scenario max || { status=$?; show_logs; }
  stop_gateways
  run_storm || status=1
  exit $status
fi
run_floor
start_gateways
"$WORK/loadgen" --url "$URLS" $(measure_args) "$@" || { status=$?; show_logs; }
stop_gateways
exit $status
