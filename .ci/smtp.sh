#!/usr/bin/env bash
# Starts a throwaway SMTP submission server (aiosmtpd) for the email connector's reply
# tests and prints the variables the tests read (one VAR=value per line, for
# `set -a; eval "$(…)"; set +a`).
#
#   .ci/smtp.sh [DIR]        start (or reuse) a server whose files live under DIR
#   .ci/smtp.sh stop [DIR]   stop it
#
# DIR defaults to /tmp/signalgate-smtp; SMTP_PORT_TEST (default 10025) is the plain port,
# STARTTLS listens on it +1 and implicit TLS on it +2, all on 127.0.0.1. Delivered mail
# lands in DIR/maildir. Installs the Debian package python3-aiosmtpd first when it is
# missing (needs root).
set -euo pipefail

mode=start
if [ "${1:-}" = stop ]; then
  mode=stop
  shift
fi
dir=${1:-/tmp/signalgate-smtp}
port=${SMTP_PORT_TEST:-10025}
user=${SMTP_USER_TEST:-signalgate}
password=${SMTP_PASSWORD_TEST:-signalgate-smtp-password}
here=$(cd "$(dirname "$0")" && pwd)

running() {
  [ -f "$dir/server.pid" ] && kill -0 "$(cat "$dir/server.pid")" 2>/dev/null
}

print_env() {
  echo "SIGNALGATE_TEST_SMTP_ADDR=127.0.0.1:$port"
  echo "SIGNALGATE_TEST_SMTP_STARTTLS_ADDR=127.0.0.1:$((port + 1))"
  echo "SIGNALGATE_TEST_SMTP_TLS_ADDR=127.0.0.1:$((port + 2))"
  echo "SIGNALGATE_TEST_SMTP_USER=$user"
  echo "SIGNALGATE_TEST_SMTP_PASSWORD=$password"
  echo "SIGNALGATE_TEST_SMTP_CA=$dir/cert.pem"
  echo "SIGNALGATE_TEST_SMTP_MAILDIR=$dir/maildir"
}

if [ "$mode" = stop ]; then
  if running; then
    pid=$(cat "$dir/server.pid")
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  exit 0
fi

# The Debian package installs for the system Python, which a pyenv shim may shadow.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if ! "$py" -c 'import aiosmtpd' 2>/dev/null; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-aiosmtpd >&2
fi

if running; then
  print_env
  exit 0
fi

rm -rf "$dir"
mkdir -p "$dir"
# A self-signed certificate for 127.0.0.1; the tests trust it as their root.
openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj /CN=127.0.0.1 \
  -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
  -keyout "$dir/key.pem" -out "$dir/cert.pem" >/dev/null 2>&1
nohup "$py" "$here/smtp_server.py" "$dir" "$port" "$((port + 1))" "$((port + 2))" "$user" "$password" \
  >"$dir/server.log" 2>&1 &
echo $! >"$dir/server.pid"
# Ready when every listener answers with a greeting (the implicit-TLS one: accepts).
for _ in $(seq 100); do
  if grep -q ready "$dir/server.log" 2>/dev/null &&
    (exec 3<>"/dev/tcp/127.0.0.1/$port" && head -c 3 <&3 | grep -q 220) 2>/dev/null; then
    print_env
    exit 0
  fi
  running || break
  sleep 0.1
done
echo "the SMTP server did not come up on 127.0.0.1:$port; log follows" >&2
cat "$dir/server.log" >&2 || true
exit 1
