#!/bin/sh
# List this thread's watches, newest first (JSON: watches, nextCursor).
#   watches.sh [--status live|ended|all] [--limit N] [--cursor C]
# By default lists the live ones; an ended one has endedAt and endReason (expired,
# merged, closed, deleted, operator).
set -eu
. "$(dirname "$0")/common.sh"
sg_args=
while [ "$#" -gt 0 ]; do
  case $1 in
    --status|--limit|--cursor)
      [ "$#" -ge 2 ] || sg_die "usage: watches.sh [--status live|ended|all] [--limit N] [--cursor C]"
      sg_args="$sg_args --data-urlencode ${1#--}=$2"; shift 2 ;;
    *) sg_die "unknown argument $1 (see the header of watches.sh)" ;;
  esac
done
# shellcheck disable=SC2086
sg_call GET /watches "" -G $sg_args
