#!/usr/bin/env bash
# Installs the real-Mastra interop harness (interop/mastra) with `npm ci` from its
# committed lockfile, from the machine's configured npm registry. Idempotent: skipped when node_modules
# already matches the lockfile. The Go test agent/mastra TestRealMastraInterop runs it.
set -euo pipefail
cd "$(dirname "$0")/../interop/mastra"
stamp=node_modules/.signalgate-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d node_modules/@mastra/core ]; then
  echo "interop/mastra: node_modules up to date"
  exit 0
fi
npm ci --no-audit --no-fund --engine-strict=false
echo "$want" > "$stamp"
