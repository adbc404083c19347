#!/bin/sh
# List this thread's notifications, newest first (JSON: notifications, nextCursor).
#   list.sh [--status pending,delivered|all] [--limit N] [--cursor C]
# By default lists pending and delivered ones. Listing changes nothing: read.sh marks
# notifications seen. (--peek, from when listing marked them, is accepted and ignored.)
set -eu
. "$(dirname "$0")/common.sh"
sg_args=
while [ "$#" -gt 0 ]; do
  case $1 in
    --status) sg_args="$sg_args --data-urlencode status=$2"; shift 2 ;;
    --limit) sg_args="$sg_args --data-urlencode limit=$2"; shift 2 ;;
    --cursor) sg_args="$sg_args --data-urlencode cursor=$2"; shift 2 ;;
    --peek) shift ;;
    *) sg_die "unknown argument $1 (see the header of list.sh)" ;;
  esac
done
# shellcheck disable=SC2086
sg_call GET /notifications "" -G $sg_args
