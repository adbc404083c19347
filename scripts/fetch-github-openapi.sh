#!/usr/bin/env bash
# Fetches GitHub's official REST API description (@octokit/openapi, MIT) into the
# git-ignored testdata folder the github reply tests validate requests against. Only
# api.github.com.json is kept (the package holds 385 MB of variants). Idempotent.
set -euo pipefail

PKG="@octokit/openapi@23.0.2"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/connectors/github/testdata/openapi"
FILE="api.github.com.json"

if [[ -f "$DEST/$FILE" ]]; then
  exit 0
fi

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

(cd "$TMP" && npm pack --silent "$PKG" >/dev/null)
TARBALL="$(ls "$TMP"/*.tgz)"
mkdir -p "$TMP/x/openapi"
tar -xzf "$TARBALL" -C "$TMP/x" "package/generated/$FILE" package/LICENSE
mv "$TMP/x/package/generated/$FILE" "$TMP/x/package/LICENSE" "$TMP/x/openapi/"
echo "$PKG" > "$TMP/x/openapi/VERSION"

# Replace atomically so an interrupted (or concurrent) run never leaves a half-filled folder.
mkdir -p "$(dirname "$DEST")"
rm -rf "$DEST"
mv -T "$TMP/x/openapi" "$DEST" 2>/dev/null || [[ -f "$DEST/$FILE" ]]
echo "fetched $PKG ($FILE) into ${DEST#"$ROOT"/}"
