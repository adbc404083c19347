#!/bin/sh
# Stop watches of this thread (no notification follows). Prints each ended watch;
# unwatching an ended one again prints it as it is.
#   unwatch.sh ID [ID…]
set -eu
. "$(dirname "$0")/common.sh"
[ "$#" -ge 1 ] || sg_die "usage: unwatch.sh ID [ID…]"
for sg_id in "$@"; do
  sg_call DELETE "/watches/$(sg_escape "$sg_id")"
done
