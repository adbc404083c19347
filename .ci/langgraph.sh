#!/usr/bin/env bash
# Installs the real LangGraph Agent Server interop harness (interop/langgraph) from its
# committed lockfile. The Go tests targets/langgraph TestRealLangGraph and gateway
# TestLangGraphEndToEnd run it.
exec bash "$(dirname "$0")/npm-harness.sh" langgraph @langchain/langgraph-api
