#!/bin/sh
# Read notifications in full (every field, the payload, and the XML the model would see)
# and mark them seen, so they are not delivered to you again.
#   read.sh            the unread (pending) ones, oldest first, up to 100
#   read.sh ID [ID…]   those notifications, whatever their status
set -eu
. "$(dirname "$0")/common.sh"
sg_ids=
for sg_id in "$@"; do
  sg_ids="${sg_ids:+$sg_ids,}$(sg_json_string "$sg_id")"
done
sg_call POST /notifications/read "{\"ids\":[$sg_ids]}"
