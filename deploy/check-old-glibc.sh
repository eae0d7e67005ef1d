#!/usr/bin/env bash
# Runs a binary on an older glibc than the machine's: fetches Debian 11's
# libc6 (glibc 2.31) and libgcc-s1 from deb.debian.org into a temporary
# directory, makes a root of them alone, and runs the binary there with
# chroot (in a private mount namespace, /proc, /dev and /sys bound in).
# Needs root, curl, xz and dpkg-deb. Everything goes with the directory.
#
#   deploy/check-old-glibc.sh [BINARY] [envbench arguments...]
#
# BINARY defaults to target/portable/envbench, the arguments to a short
# run of cpu.int and os.syscall. Try target/release/envbench to see the
# host build refused ("version `GLIBC_2.34' not found").
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$(realpath "${1:-target/portable/envbench}")
shift || true
[ $# -gt 0 ] || set -- run --only cpu.int,os.syscall --suite quick --label glibc-2.31 -o /tmp/r.json
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

[ "$(id -u)" = 0 ] || { echo "check-old-glibc: needs root (chroot)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/envbench-oldglibc.XXXXXX")
trap 'rm -rf --one-file-system -- "$work"' EXIT
trap 'exit 130' INT TERM HUP

curl -sf --max-time 120 "$mirror/dists/bullseye/main/binary-amd64/Packages.xz" | xz -d \
  | awk '/^Package: (libc6|libgcc-s1)$/ {p = 1} p && /^Filename:/ {print $2; p = 0}' >"$work/files"
[ "$(wc -l <"$work/files")" = 2 ] || { echo "check-old-glibc: Debian 11's index lacks libc6 or libgcc-s1" >&2; exit 1; }
while read -r f; do
  curl -sf --max-time 300 -o "$work/$(basename "$f")" "$mirror/$f"
  dpkg-deb -x "$work/$(basename "$f")" "$work/root"
done <"$work/files"
mkdir -p "$work/root/"{lib64,proc,dev,sys,tmp,bin}
ln -sf /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$work/root/lib64/ld-linux-x86-64.so.2"
cp "$binary" "$work/root/bin/envbench"
echo "glibc $(ls "$work/root/lib/x86_64-linux-gnu/" | sed -n 's/^libc-\(.*\)\.so$/\1/p') in $work/root; running $(basename "$binary") $*" >&2
cd "$work"
unshare -m sh -c 'mount --bind /proc root/proc && mount --bind /dev root/dev &&
  mount --bind /sys root/sys && exec chroot root /bin/envbench "$@"' sh "$@"
