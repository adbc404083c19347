#!/usr/bin/env bash
# Installs the hosted sessions interop harness (interop/hosted): the official openai and
# @anthropic-ai/sdk clients, from its committed lockfile. targets/session's
# TestUnwrapTakesWhatTheGatewayTakes runs their webhooks.unwrap.
exec bash "$(dirname "$0")/npm-harness.sh" hosted openai
