#!/bin/sh
# A real ENOSPC for `mailgate serve`: mounts a small tmpfs (as root), runs bench/enospc.ts with
# the store on it, grows the tmpfs half-way through, and unmounts. Prints the figures the bench
# prints. Usage: sudo scripts/enospc.sh [size=20M] [grown=200M]   (after `npm run build`)
set -eu
SIZE="${1:-20M}"
GROWN="${2:-200M}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="$(mktemp -d /tmp/mailgate-enospc-XXXXXX)"
mount -t tmpfs -o "size=$SIZE" mailgate-enospc "$DIR"
trap 'umount "$DIR" 2>/dev/null || umount -l "$DIR"; rmdir "$DIR"' EXIT
node "$ROOT/dist/bench/enospc.js" "$DIR" mount -o "remount,size=$GROWN" "$DIR"
