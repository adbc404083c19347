# Shared by the inbox scripts (sourced, not run). POSIX sh; needs curl.
#
# Environment:
#   SIGNALGATE_URL       gateway base URL, e.g. http://127.0.0.1:8080
#   SIGNALGATE_TOKEN     the agent's bearer token
#   SIGNALGATE_AGENT     the agent id
#   SIGNALGATE_RESOURCE  the thread's resourceId
#   SIGNALGATE_THREAD    the thread's threadId

sg_die() {
  printf 'signalgate-inbox: %s\n' "$*" >&2
  exit 2
}

for sg_var in SIGNALGATE_URL SIGNALGATE_TOKEN SIGNALGATE_AGENT SIGNALGATE_RESOURCE SIGNALGATE_THREAD; do
  eval "sg_val=\${$sg_var:-}"
  [ -n "$sg_val" ] || sg_die "$sg_var is not set"
done
command -v curl >/dev/null 2>&1 || sg_die "curl is required"

# sg_escape percent-encodes one path segment (ids may hold '/', ':', '#', spaces).
sg_escape() {
  printf '%s' "$1" | od -An -v -tx1 | tr -s ' \n' '\n\n' | while read -r sg_h; do
    [ -n "$sg_h" ] || continue
    case $sg_h in
      2d|2e|5f|7e|3[0-9]|4[1-9a-f]|5[0-9a]|6[1-9a-f]|7[0-9a])
        # shellcheck disable=SC2059
        printf "\\$(printf '%03o' "0x$sg_h")" ;;
      *) printf '%%%s' "$(printf '%s' "$sg_h" | tr 'a-f' 'A-F')" ;;
    esac
  done
}

# sg_json_string quotes $1 as a JSON string.
sg_json_string() {
  printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"
}

SG_THREAD_URL="${SIGNALGATE_URL%/}/v1/agents/$(sg_escape "$SIGNALGATE_AGENT")/threads/$(sg_escape "$SIGNALGATE_RESOURCE")/$(sg_escape "$SIGNALGATE_THREAD")"

# sg_call METHOD PATH [JSON-BODY] [curl args...]: prints the JSON answer; on an HTTP
# error prints it to stderr and exits 1.
sg_call() {
  sg_method=$1 sg_path=$2
  shift 2
  sg_body=
  if [ "$#" -gt 0 ]; then
    sg_body=$1
    shift
  fi
  sg_out=$(mktemp) || exit 2
  if [ -n "$sg_body" ]; then
    sg_code=$(curl -sS -o "$sg_out" -w '%{http_code}' -X "$sg_method" -H "Authorization: Bearer $SIGNALGATE_TOKEN" \
      -H 'Content-Type: application/json' --data-binary "$sg_body" "$@" "$SG_THREAD_URL$sg_path") || { rm -f "$sg_out"; exit 1; }
  else
    sg_code=$(curl -sS -o "$sg_out" -w '%{http_code}' -X "$sg_method" -H "Authorization: Bearer $SIGNALGATE_TOKEN" \
      "$@" "$SG_THREAD_URL$sg_path") || { rm -f "$sg_out"; exit 1; }
  fi
  case $sg_code in
    2*) cat "$sg_out"; echo; rm -f "$sg_out" ;;
    *) printf 'signalgate-inbox: HTTP %s: ' "$sg_code" >&2; cat "$sg_out" >&2; echo >&2; rm -f "$sg_out"; exit 1 ;;
  esac
}
