#!/usr/bin/env bash
# Fetches real GitHub webhook payloads (@octokit/webhooks-examples, MIT) into the
# git-ignored testdata folder the github connector tests read. Idempotent: does
# nothing when the examples are already there.
set -euo pipefail

PKG="@octokit/webhooks-examples@7.6.1"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/connectors/github/testdata/octokit"

if [[ -f "$DEST/api.github.com/index.json" ]]; then
  exit 0
fi

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

(cd "$TMP" && npm pack --silent "$PKG" >/dev/null)
TARBALL="$(ls "$TMP"/*.tgz)"
mkdir -p "$TMP/x"
tar -xzf "$TARBALL" -C "$TMP/x"

# Replace atomically so an interrupted run never leaves a half-filled folder.
mkdir -p "$(dirname "$DEST")"
rm -rf "$DEST.tmp"
mv "$TMP/x/package" "$DEST.tmp"
rm -rf "$DEST"
mv "$DEST.tmp" "$DEST"
echo "fetched $PKG into ${DEST#"$ROOT"/}"
