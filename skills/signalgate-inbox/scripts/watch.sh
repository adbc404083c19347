#!/bin/sh
# Make this thread hear about one thing until it is done: a GitHub PR or issue
# (owner/repo#7), a Slack thread (C0123ABC/1712345678.000100) or channel, an email
# conversation (a Message-ID), a generic object. Prints the watch (201 new, 200 the
# thread's existing watch of the same thing).
#   watch.sh [--connector NAME] [--kinds K1,K2] [--until RFC3339|forever | --ttl 36h|7d]
#            [--priority low|medium|high|urgent] SOURCE RESOURCE
set -eu
. "$(dirname "$0")/common.sh"
usage="usage: watch.sh [--connector NAME] [--kinds K1,K2] [--until TIME|forever] [--ttl DURATION] [--priority P] SOURCE RESOURCE"
sg_extra=
while [ "$#" -gt 0 ]; do
  case $1 in
    --connector|--until|--ttl|--priority)
      [ "$#" -ge 2 ] || sg_die "$usage"
      sg_extra="$sg_extra,\"${1#--}\":$(sg_json_string "$2")"; shift 2 ;;
    --kinds)
      [ "$#" -ge 2 ] || sg_die "$usage"
      sg_kinds= sg_rest=$2
      while [ -n "$sg_rest" ]; do
        sg_k=${sg_rest%%,*}
        case $sg_rest in *,*) sg_rest=${sg_rest#*,} ;; *) sg_rest= ;; esac
        sg_kinds="$sg_kinds${sg_kinds:+,}$(sg_json_string "$sg_k")"
      done
      sg_extra="$sg_extra,\"kinds\":[$sg_kinds]"; shift 2 ;;
    --) shift; break ;;
    -*) sg_die "$usage" ;;
    *) break ;;
  esac
done
[ "$#" -eq 2 ] || sg_die "$usage"
sg_call POST /watches "{\"source\":$(sg_json_string "$1"),\"resource\":$(sg_json_string "$2")$sg_extra}"
