#!/usr/bin/env bash
# Starts a throwaway Dovecot IMAP server for the email connector's integration test and prints
# the variables the test reads (one VAR=value per line, for `set -a; eval "$(…)"; set +a`).
#
#   .ci/dovecot.sh [DIR]        start (or reuse) a server whose files live under DIR
#   .ci/dovecot.sh stop [DIR]   stop it
#
# DIR defaults to /tmp/signalgate-dovecot; IMAP_PORT_TEST (default 10143) picks the loopback port.
# Plain-text login is allowed because the server listens on 127.0.0.1 only and holds test mail.
# Installs the Debian package dovecot-imapd first when it is missing (needs root).
set -euo pipefail

mode=start
if [ "${1:-}" = stop ]; then
  mode=stop
  shift
fi
dir=${1:-/tmp/signalgate-dovecot}
port=${IMAP_PORT_TEST:-10143}
user=${IMAP_USER_TEST:-signalgate}
password=${IMAP_PASSWORD_TEST:-signalgate-test-password}
conf="$dir/dovecot.conf"

running() {
  [ -f "$dir/run/master.pid" ] && kill -0 "$(cat "$dir/run/master.pid")" 2>/dev/null
}

print_env() {
  echo "SIGNALGATE_TEST_IMAP_ADDR=127.0.0.1:$port"
  echo "SIGNALGATE_TEST_IMAP_USER=$user"
  echo "SIGNALGATE_TEST_IMAP_PASSWORD=$password"
}

if [ "$mode" = stop ]; then
  if running; then
    pid=$(cat "$dir/run/master.pid")
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  exit 0
fi

if ! command -v dovecot >/dev/null && [ ! -x /usr/sbin/dovecot ]; then
  apt-get update -qq >&2
  # policy-rc.d in CI images keeps the packaged system service from starting; if it does
  # start, it listens on the standard ports, not on ours.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dovecot-imapd >&2
fi
PATH="$PATH:/usr/sbin:/sbin"

if running; then
  print_env
  exit 0
fi

# Dovecot refuses mail access as root, so mail processes run as an unprivileged account:
# a dedicated system user when we are root, ourselves otherwise.
if [ "$(id -u)" = 0 ]; then
  mail_user=signalgate-imap
  if ! id "$mail_user" >/dev/null 2>&1; then
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$mail_user" >&2
  fi
  internal_user=dovecot
  login_user=dovenull
  id "$internal_user" >/dev/null 2>&1 || internal_user=$mail_user
  id "$login_user" >/dev/null 2>&1 || login_user=$mail_user
else
  mail_user=$(id -un)
  internal_user=$mail_user
  login_user=$mail_user
fi
mail_uid=$(id -u "$mail_user")
mail_gid=$(id -g "$mail_user")

rm -rf "$dir"
mkdir -p "$dir/run" "$dir/state" "$dir/home/$user"
printf '%s:{PLAIN}%s::::::\n' "$user" "$password" >"$dir/passwd"
chmod 644 "$dir/passwd"
chmod 755 "$dir"
chown -R "$mail_uid:$mail_gid" "$dir/home"

cat >"$conf" <<EOF
base_dir = $dir/run
state_dir = $dir/state
log_path = $dir/dovecot.log
instance_name = signalgate-test-$port
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = $internal_user
default_login_user = $login_user
first_valid_uid = $mail_uid
last_valid_uid = $mail_uid
mail_uid = $mail_uid
mail_gid = $mail_gid
mail_location = maildir:~/Maildir
namespace inbox {
  inbox = yes
  separator = /
  mailbox Archive {
    auto = create
  }
}
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u $dir/passwd
}
userdb {
  driver = static
  args = uid=$mail_uid gid=$mail_gid home=$dir/home/%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = $port
  }
  inet_listener imaps {
    port = 0
  }
}
service pop3-login {
  inet_listener pop3 {
    port = 0
  }
  inet_listener pop3s {
    port = 0
  }
}
EOF

dovecot -c "$conf"
# Ready when the port answers with a greeting.
for _ in $(seq 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port" && head -c 4 <&3 | grep -q '\* OK') 2>/dev/null; then
    print_env
    exit 0
  fi
  sleep 0.1
done
echo "dovecot did not come up on 127.0.0.1:$port; log follows" >&2
cat "$dir/dovecot.log" >&2 || true
exit 1
