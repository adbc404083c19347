#!/bin/sh
# Answer where this thread's notification came from (the Slack DM or thread, the GitHub
# issue, PR or review thread, the email), exactly once. Prints the reply (status queued,
# or pending while a person approves it).
#   reply.sh [--watch] [--approval] [--reply-to JSON] ID TEXT   (TEXT "-": read it from stdin)
#   reply.sh --status ID                                         (queued, pending, sent, failed, declined)
set -eu
. "$(dirname "$0")/common.sh"
usage="usage: reply.sh [--watch] [--approval] [--reply-to JSON] ID TEXT|- ; reply.sh --status ID"
sg_extra=
while [ "$#" -gt 0 ]; do
  case $1 in
    --status)
      [ "$#" -eq 2 ] || sg_die "$usage"
      sg_call GET "/replies/$(sg_escape "$2")"
      exit 0 ;;
    --watch) sg_extra="$sg_extra,\"watch\":true"; shift ;;
    --approval) sg_extra="$sg_extra,\"approval\":true"; shift ;;
    --reply-to)
      [ "$#" -ge 2 ] || sg_die "$usage"
      sg_extra="$sg_extra,\"replyTo\":$2"; shift 2 ;;
    --) shift; break ;;
    -*) [ "$1" = - ] && break; sg_die "$usage" ;;
    *) break ;;
  esac
done
[ "$#" -eq 2 ] || sg_die "$usage"
sg_id=$1 sg_text=$2
if [ "$sg_text" = - ]; then
  sg_text=$(cat)
fi
# The text as a JSON string: backslashes, quotes, tabs, carriage returns and line breaks escaped.
sg_tab=$(printf '\t') sg_cr=$(printf '\r')
sg_text_json=$(printf '%s' "$sg_text" | sed "s/\\\\/\\\\\\\\/g; s/\"/\\\\\"/g; s/$sg_tab/\\\\t/g; s/$sg_cr/\\\\r/g" |
  awk 'NR > 1 { printf "%s", "\\n" } { printf "%s", $0 }')
sg_call POST /replies "{\"id\":$(sg_json_string "$sg_id"),\"text\":\"$sg_text_json\"$sg_extra}"
