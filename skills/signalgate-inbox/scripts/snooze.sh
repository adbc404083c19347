#!/bin/sh
# Hide pending notifications until a time (RFC 3339, at most 30 days ahead): they are
# decided again then, as if they had just arrived. Prints each snoozed notification.
#   snooze.sh UNTIL ID [ID…]
set -eu
. "$(dirname "$0")/common.sh"
[ "$#" -ge 2 ] || sg_die "usage: snooze.sh UNTIL ID [ID…]   (UNTIL e.g. 2026-01-02T09:00:00Z)"
sg_until=$1
shift
for sg_id in "$@"; do
  sg_call POST "/notifications/$(sg_escape "$sg_id")/snooze" "{\"until\":$(sg_json_string "$sg_until")}"
done
