#!/usr/bin/env bash
# Installs the A2A interop harness (interop/a2a: @a2a-js/sdk's server with two agents that
# need no model) from its committed lockfile. The Go tests of targets/a2a and the gateway's
# a2a end-to-end tests run it.
exec bash "$(dirname "$0")/npm-harness.sh" a2a @a2a-js/sdk
