#!/usr/bin/env bash
# Installs an interop harness (interop/<name>) with `npm ci` from its committed lockfile,
# from the machine's configured npm registry. Idempotent: skipped when node_modules
# already matches the lockfile. Usage: npm-harness.sh <name> <a package it must hold>
set -euo pipefail
name=$1 marker=$2
cd "$(dirname "$0")/../interop/$name"
stamp=node_modules/.signalgate-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d "node_modules/$marker" ]; then
  echo "interop/$name: node_modules up to date"
  exit 0
fi
npm ci --no-audit --no-fund --engine-strict=false
echo "$want" > "$stamp"
