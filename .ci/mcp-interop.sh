#!/usr/bin/env bash
# Installs the TypeScript MCP SDK client harness (interop/mcp) from its committed lockfile
# (98 packages, seconds). The Go test inboxmcp TestTypeScriptClient runs it.
exec bash "$(dirname "$0")/npm-harness.sh" mcp @modelcontextprotocol/sdk
