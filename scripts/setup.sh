#!/usr/bin/env bash
# Idempotent setup of a fresh Debian/Ubuntu machine for building and testing mailgate, run as root:
# installs the system packages the tests start real servers from (Dovecot IMAP, PostgreSQL, Chromium),
# only where missing, then the npm dependencies from the lockfile.
#
#   bash scripts/setup.sh            # apt packages + npm ci
#   MAILGATE_SETUP_NPM=0 bash scripts/setup.sh   # apt packages only
set -euo pipefail

cd "$(dirname "$0")/.."

missing=()
# dovecot-imapd: the IMAP adapter's tests run a real Dovecot.
if ! command -v dovecot >/dev/null 2>&1 && ! dpkg -s dovecot-imapd >/dev/null 2>&1; then
  missing+=(dovecot-imapd)
fi
# postgresql: the store's tests start a throw-away server from /usr/lib/postgresql/*/bin.
if ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null && ! dpkg -s postgresql >/dev/null 2>&1; then
  missing+=(postgresql)
fi

# chromium: the preview page's browser test drives Debian's Chromium (never a downloaded browser).
if ! [[ -x /usr/bin/chromium ]] && ! dpkg -s chromium >/dev/null 2>&1; then
  missing+=(chromium)
fi

if ((${#missing[@]} > 0)); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing system packages: ${missing[*]} (run this script as root, or install them)" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Another process may be installing at the same time: serialize on one lock.
  flock /tmp/mailgate-apt.lock apt-get update
  flock /tmp/mailgate-apt.lock apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "setup: system packages present (dovecot-imapd, postgresql, chromium)"
fi

if [[ "${MAILGATE_SETUP_NPM:-1}" != "0" ]]; then
  npm ci
fi
