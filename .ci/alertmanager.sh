#!/usr/bin/env bash
# Installs Debian's prometheus-alertmanager for the end-to-end Alertmanager test, which runs
# the binary itself (its own config, storage and port); the package's service plays no part.
set -euo pipefail
if [ ! -x /usr/bin/prometheus-alertmanager ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus-alertmanager >/dev/null
fi
# The package starts its service where an init system runs; the test does not need it.
if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus-alertmanager 2>/dev/null; then
  systemctl disable --now prometheus-alertmanager >/dev/null 2>&1 || true
fi
/usr/bin/prometheus-alertmanager --version 2>&1 | head -1
