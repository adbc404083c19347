#!/bin/sh
# Search this thread's notifications: a case-insensitive substring of summary, kind or
# source, across every status (dismissed and archived included). Searching changes
# nothing. (--peek, from when it marked results seen, is accepted and ignored.)
#   search.sh QUERY
set -eu
. "$(dirname "$0")/common.sh"
[ "$#" -ge 1 ] || sg_die "usage: search.sh QUERY"
sg_q=$1
shift
case ${1:-} in
  ''|--peek) ;;
  *) sg_die "unknown argument $1 (usage: search.sh QUERY)" ;;
esac
sg_call GET /notifications "" -G --data-urlencode "q=$sg_q" --data-urlencode status=all
