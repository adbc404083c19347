#!/bin/sh
# Search this thread's notifications: a case-insensitive substring of summary, kind or
# source, across every status (dismissed and archived included).
#   search.sh QUERY [--peek]
set -eu
. "$(dirname "$0")/common.sh"
[ "$#" -ge 1 ] || sg_die "usage: search.sh QUERY [--peek]"
sg_q=$1
shift
sg_seen=true
[ "${1:-}" = "--peek" ] && sg_seen=false
sg_call GET /notifications "" -G --data-urlencode "q=$sg_q" --data-urlencode status=all --data-urlencode "markSeen=$sg_seen"
