#!/usr/bin/env bash
# Installs the providers' official webhook libraries (interop/senders) from the committed
# lockfile (14 packages, seconds). The Go tests *OfficialLibrary and TestCustomSchemeOctokitSender
# in connectors/generic, and TestSDK* in connectors/linear (@linear/sdk's verifier and documents),
# run them.
exec bash "$(dirname "$0")/npm-harness.sh" senders discord-interactions
