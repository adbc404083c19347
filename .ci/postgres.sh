#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster under $1 (default /tmp/signalgate-pg) on a loopback
# port and prints its DSN. Installs the Debian package first when it is missing.
set -euo pipefail
dir=${1:-/tmp/signalgate-pg}
port=${PGPORT_TEST:-54329}
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
fi
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
run() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
if [ -f "$dir/data/postmaster.pid" ] && run "$bin/pg_ctl -D $dir/data status" >/dev/null 2>&1; then
  echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
  exit 0
fi
rm -rf "$dir" && mkdir -p "$dir"
[ "$(id -u)" = 0 ] && chown postgres "$dir"
run "$bin/initdb -D $dir/data -A trust -U postgres" >/dev/null
run "$bin/pg_ctl -D $dir/data -l $dir/log -w -o \"-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off\" start" >/dev/null
echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
