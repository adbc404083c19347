#!/bin/sh
# Dismiss notifications you have handled or that need no action: they leave the default
# listing and are never delivered. Prints each updated notification.
#   dismiss.sh ID [ID…]
set -eu
. "$(dirname "$0")/common.sh"
[ "$#" -ge 1 ] || sg_die "usage: dismiss.sh ID [ID…]"
for sg_id in "$@"; do
  sg_call POST "/notifications/$(sg_escape "$sg_id")/dismiss"
done
