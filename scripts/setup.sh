#!/usr/bin/env bash
# Idempotent setup of a fresh Debian/Ubuntu machine for running, building and testing mailgate:
#
#   bash scripts/setup.sh        # system packages (as root) + a supported Node + npm ci
#   bash scripts/setup.sh node   # a supported Node + npm ci only (no root): enough for `npm start`
#   MAILGATE_SETUP_NPM=0 bash scripts/setup.sh   # no npm ci
#
# System packages, only where missing: Dovecot IMAP, PostgreSQL and Chromium (the tests start
# real servers and a real browser from them), Prometheus' promtool (the shipped alert rules are
# checked with it).
#
# Node: mailgate needs package.json's engines.node (>=22). When the `node` on PATH is older, the
# release in .node-version is installed from the npm registry's Linux builds into .node/<version>
# (or $MAILGATE_NODE_DIR/<version>), beside the machine's node, which is never replaced. Either
# way .node/bin holds the `node` this checkout was set up with: run with
#
#   PATH="$PWD/.node/bin:$PATH" npm start        # or npm test, npx tsc, ...
set -euo pipefail

cd "$(dirname "$0")/.."
what=${1:-all}
case "$what" in
  all | node) ;;
  *) echo "usage: setup.sh [node]" >&2 && exit 2 ;;
esac

if [[ $what == all ]]; then
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
  # promtool (Debian's prometheus package): checks samples/prometheus/alerts.yml.
  if ! command -v promtool >/dev/null 2>&1 && ! dpkg -s prometheus >/dev/null 2>&1; then
    missing+=(prometheus)
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
    # The packages only provide binaries to the tests: their services are not started.
    flock /tmp/mailgate-apt.lock apt-get install -y --no-install-recommends "${missing[@]}"
  else
    echo "setup: system packages present (dovecot-imapd, postgresql, chromium, prometheus)"
  fi
fi

# A supported Node in .node/bin: the machine's when it is recent enough, else .node-version's.
required=$(sed -n 's/.*"node": *">=\([0-9]*\).*/\1/p' package.json)
current=$(command -v node || true)
major=0
if [[ -n $current ]]; then
  major=$("$current" -p 'process.versions.node.split(".")[0]')
fi
mkdir -p .node/bin
if ((major >= required)); then
  ln -sfn "$(readlink -f "$current")" .node/bin/node
  echo "setup: using the machine's Node $("$current" --version) ($current)"
else
  version=$(cat .node-version)
  had=$([[ -x ${MAILGATE_NODE_DIR:-$PWD/.node}/$version/bin/node ]] && echo "using Node $version (installed before) from" || echo "installed Node $version into")
  bin=$(bash scripts/install-node.sh "$version")
  ln -sfn "$bin/node" .node/bin/node
  # Native modules without a prebuilt binary build against this Node's headers (no download).
  export npm_config_nodedir=${bin%/bin}
  echo "setup: the machine's Node is ${current:-missing}${current:+ $("$current" --version)}; $had ${bin%/bin}"
fi
export PATH="$PWD/.node/bin:$PATH"

if [[ "${MAILGATE_SETUP_NPM:-1}" != "0" ]]; then
  npm ci
fi
echo "setup: done. Run with the Node it chose: PATH=\"\$PWD/.node/bin:\$PATH\" npm start (or npm test)"
