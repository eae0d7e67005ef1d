#!/usr/bin/env bash
# Runs `envbench run` in a QEMU guest and copies its result file to OUT.
#
#   qemu.sh ENVBENCH OUT CACHE -- RUN-ARGS...
#
# The guest is Debian's kernel (linux-image-amd64, fetched with
# `apt-get download` and extracted into CACHE, keyed by the package's
# version; nothing is installed) with an initramfs built here from
# busybox-static and the modules that mount the rest: virtio_pci,
# virtio_blk, 9pnet_virtio, 9p, ext4 (crc32c is its soft dependency) and
# their dependencies from modules.dep (busybox depmod). Its root is the
# host's / over virtio-9p, read-only, so the host's dynamically linked
# ENVBENCH runs unchanged; it measures in two directories,
# `--dir disk=/mnt/disk` (an ext4 image on virtio-blk) and
# `--dir share=/mnt/share` (a writable 9p share of a host directory, like
# WSL 2's /mnt/c), and writes its result file to the share. No network
# device: loopback only. The guest powers off when envbench ends.
#
# KVM is tried first where /dev/kvm opens, but a guest under nested KVM
# can hang at kernel start: without the init's marker on the serial
# console within KVM_WAIT_S seconds it is killed and TCG boots instead.
# ENVBENCH_QEMU_ACCEL=tcg|kvm picks one. A hard timeout (TIMEOUT_S) kills
# QEMU by its PID. The serial console goes to OUT/serial.log.
#
# With QEMU_GUEST_RUN=FILE the guest runs that bash script instead of
# `envbench run` (RUN-ARGS are then not used): it finds the binary at
# /mnt/share/envbench and its two directories as above, and what it writes
# to /mnt/share/guest-out.txt is copied to OUT/guest-out.txt, and a
# directory /mnt/share/kept to OUT/kept; QEMU_GUEST_BIN=FILE is copied to
# /mnt/share/bench for it (how `cargo bench --bench commands` runs the
# real tools over the guest's 9p share).
#
# Exit codes: 0 envbench ran (its own exit code is in OUT/exit-code),
# 1 failure, 3 a tool is missing (the last stderr line names it).
set -euo pipefail

KVM_WAIT_S=${KVM_WAIT_S:-6}
TIMEOUT_S=${TIMEOUT_S:-240}
MODULES="virtio_pci virtio_blk 9pnet_virtio 9p crc32c_generic ext4"
# The kernel cache's recipe: bump it when MODULES changes.
KERNEL_RECIPE=1

if [ $# -lt 4 ] || [ "$4" != -- ]; then
  echo "usage: $0 ENVBENCH OUT CACHE -- RUN-ARGS..." >&2
  exit 1
fi
envbench=$(realpath "$1") out=$(realpath "$2") cache=$3
shift 4

missing() { echo "qemu.sh: $1" >&2; exit 3; }
command -v qemu-system-x86_64 >/dev/null || missing "no qemu-system-x86_64 (qemu-system-x86)"
[ -x /bin/busybox ] && /bin/busybox depmod --help >/dev/null 2>&1 \
  || missing "no /bin/busybox with depmod (busybox-static)"
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null \
  || missing "no apt-get and dpkg-deb to fetch linux-image-amd64"
command -v mkfs.ext4 >/dev/null || missing "no mkfs.ext4 (e2fsprogs)"

work= qemu_pid= kdir_tmp=
cleanup() {
  trap '' INT TERM # a second Ctrl-C does not cut the cleanup short
  if [ -n "$qemu_pid" ]; then
    kill -KILL "$qemu_pid" 2>/dev/null || true
    wait "$qemu_pid" 2>/dev/null || true
  fi
  [ -z "$work" ] || rm -rf "$work"
  [ -z "$kdir_tmp" ] || rm -rf "$kdir_tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
work=$(mktemp -d "${TMPDIR:-/tmp}/envbench-qemu.XXXXXX")
mkdir -p "$cache"
cache=$(realpath "$cache")

# --- the kernel: one extraction per package version, kept in CACHE -------
kernel_pkg=$(apt-cache depends linux-image-amd64 2>/dev/null \
  | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n 1)
[ -n "$kernel_pkg" ] || missing "apt-cache knows no linux-image-amd64"
kernel_ver=$(apt-cache show --no-all-versions "$kernel_pkg" | sed -n 's/^Version: //p' | head -n 1)
kdir=$cache/$kernel_pkg-$kernel_ver-r$KERNEL_RECIPE
if ! [ -e "$kdir/done" ]; then
  echo "qemu.sh: fetching $kernel_pkg $kernel_ver into $kdir" >&2
  kdir_tmp=$kdir.tmp # removed on every path until it is complete
  rm -rf "$kdir" "$kdir_tmp"
  mkdir -p "$work/deb"
  (cd "$work/deb" && apt-get download -q "$kernel_pkg=$kernel_ver" >/dev/null 2>&1) \
    || { echo "qemu.sh: apt-get download $kernel_pkg=$kernel_ver failed" >&2; exit 1; }
  dpkg-deb -x "$work"/deb/*.deb "$work/x"
  release=$(ls "$work/x/lib/modules")
  /bin/busybox depmod -b "$work/x" "$release"
  mkdir -p "$kdir.tmp/lib/modules/$release"
  cp "$work/x/boot/vmlinuz-$release" "$kdir.tmp/vmlinuz"
  # the modules asked for and everything modules.dep says they need
  mods=$work/x/lib/modules/$release
  for m in $MODULES; do
    line=$(grep -E "/$m\.ko(\.[gx]z|\.zst)?:" "$mods/modules.dep") \
      || { echo "qemu.sh: $m not in $kernel_pkg's modules.dep" >&2; exit 1; }
    echo "$line" | tr -d ':' | tr ' ' '\n'
  done | sort -u | while read -r f; do
    [ -n "$f" ] || continue
    mkdir -p "$kdir.tmp/lib/modules/$release/$(dirname "$f")"
    cp "$mods/$f" "$kdir.tmp/lib/modules/$release/$f"
  done
  cp "$mods/modules.builtin" "$mods/modules.order" "$kdir.tmp/lib/modules/$release/"
  /bin/busybox depmod -b "$kdir.tmp" "$release"
  echo "$release" >"$kdir.tmp/release"
  rm -rf "$work/deb" "$work/x"
  touch "$kdir.tmp/done"
  mv "$kdir.tmp" "$kdir"
  kdir_tmp=
fi
release=$(cat "$kdir/release")

# --- the initramfs: busybox, the modules, an init that mounts and runs ---
ird=$work/initramfs
mkdir -p "$ird"/bin "$ird"/dev "$ird"/proc "$ird"/sys "$ird"/host "$ird"/lib
cp /bin/busybox "$ird/bin/busybox"
cp -a "$kdir/lib/modules" "$ird/lib/"
cat >"$ird/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "envbench-guest: init started"
fail() { echo "envbench-guest: failed: \$*"; poweroff -f; }
for m in $MODULES; do modprobe "\$m" || fail "modprobe \$m"; done
p9="trans=virtio,version=9p2000.L,msize=262144"
mount -t 9p -o "\$p9,ro,cache=loose" root /host || fail "mounting the host's / over 9p"
mount -t tmpfs tmp /host/tmp && mount -t tmpfs mnt /host/mnt || fail "tmpfs"
mkdir /host/mnt/disk /host/mnt/share
mount -t ext4 /dev/vda /host/mnt/disk || fail "mounting /dev/vda (ext4)"
mount -t 9p -o "\$p9" share /host/mnt/share || fail "mounting the share over 9p"
mount -t proc proc /host/proc && mount -t sysfs sys /host/sys \
  && mount -t devtmpfs dev /host/dev || fail "proc, sys, dev"
ip link set lo up || fail "loopback"
echo "envbench-guest: running envbench"
chroot /host /bin/bash /mnt/share/run.sh
echo "\$?" >/host/mnt/share/guest-status
echo "envbench-guest: envbench exited with \$(cat /host/mnt/share/guest-status)"
sync
umount /host/mnt/share /host/mnt/disk
poweroff -f
EOF
chmod +x "$ird/init"
(cd "$ird" && find . | /bin/busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$work/initrd.gz"

# --- the guest's two directories and its command -------------------------
truncate -s 512M "$work/disk.img"
mkfs.ext4 -q -F "$work/disk.img"
share=$work/share
mkdir "$share"
# the guest mounts tmpfs over /tmp and /mnt, which can hide the host's
# binary (a clone under /tmp): it runs a copy from the share instead
cp "$envbench" "$share/envbench"
[ -z "${QEMU_GUEST_BIN:-}" ] || cp "$QEMU_GUEST_BIN" "$share/bench"
{
  echo 'export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp XDG_DATA_HOME=/tmp'
  if [ -n "${QEMU_GUEST_RUN:-}" ]; then
    echo 'cd /tmp'
    cat "$QEMU_GUEST_RUN"
  else
    printf 'cd /tmp && exec'
    printf ' %q' /mnt/share/envbench run "$@" --dir disk=/mnt/disk --dir share=/mnt/share \
      -o /mnt/share/result.json
    echo
  fi
} >"$share/run.sh"

log=$out/serial.log
# boot ACCEL: starts QEMU in the background, its PID in qemu_pid
boot() {
  local accel=$1
  echo "qemu.sh: booting with $accel" >&2
  echo "=== qemu -accel $accel ===" >>"$log"
  qemu-system-x86_64 -accel "$accel" -m 1024 -smp 2 -nographic -no-reboot \
    -kernel "$kdir/vmlinuz" -initrd "$work/initrd.gz" \
    -append "console=ttyS0 panic=-1 quiet" -nic none \
    -virtfs "local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap" \
    -virtfs "local,path=$share,mount_tag=share,security_model=none" \
    -drive "file=$work/disk.img,format=raw,if=virtio" \
    </dev/null >>"$log" 2>&1 &
  qemu_pid=$!
}
# wait_guest SECONDS MARKER: 0 when QEMU ended, 1 when the time ran out
# (with MARKER, as soon as the log lacks it after SECONDS)
wait_guest() {
  local deadline=$((SECONDS + $1))
  while kill -0 "$qemu_pid" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then
      [ -z "${2:-}" ] || ! grep -q "$2" "$log" || return 2
      return 1
    fi
    sleep 0.2
  done
  wait "$qemu_pid" || true
  qemu_pid=
  return 0
}
stop_guest() {
  kill -KILL "$qemu_pid" 2>/dev/null || true
  wait "$qemu_pid" 2>/dev/null || true
  qemu_pid=
}

: >"$log"
accel=${ENVBENCH_QEMU_ACCEL:-}
if [ -z "$accel" ] && [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
  boot kvm
  rc=0; wait_guest "$KVM_WAIT_S" "envbench-guest: init started" || rc=$?
  case $rc in
    2) accel=kvm ;; # init started and the guest runs on
    1)
      echo "qemu.sh: no init after ${KVM_WAIT_S}s under KVM (nested KVM can hang); TCG instead" >&2
      stop_guest ;;
    0) # QEMU ended already: it refused KVM, or the guest was that quick
      grep -q "envbench-guest: running envbench" "$log" && accel=kvm ;;
  esac
fi
if [ -z "$accel" ]; then
  accel=tcg
  boot tcg
elif [ -z "$qemu_pid" ] && ! grep -q "envbench-guest: running envbench" "$log"; then
  boot "$accel"
fi
if [ -n "$qemu_pid" ] && ! wait_guest "$TIMEOUT_S"; then
  stop_guest
  echo "qemu.sh: guest still running after ${TIMEOUT_S}s; killed (log: $log)" >&2
  exit 1
fi
echo "$accel" >"$out/accel"
[ -e "$share/guest-status" ] || { echo "qemu.sh: envbench never ran in the guest (log: $log)" >&2; exit 1; }
cp "$share/guest-status" "$out/exit-code"
[ -e "$share/result.json" ] && cp "$share/result.json" "$out/result.json"
[ -e "$share/guest-out.txt" ] && cp "$share/guest-out.txt" "$out/guest-out.txt"
[ -d "$share/kept" ] && cp -r "$share/kept" "$out/kept"
exit 0
