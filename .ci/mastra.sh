#!/usr/bin/env bash
# Installs the real-Mastra interop harness (interop/mastra) from its committed lockfile.
# The Go test targets/mastra TestRealMastraInterop runs it.
exec bash "$(dirname "$0")/npm-harness.sh" mastra @mastra/core
