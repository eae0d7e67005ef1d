#!/usr/bin/env bash
# Builds the portable envbench: the release binary linked against glibc
# 2.17's symbols, so that one file starts on every x86-64 Linux from
# RHEL 7, Ubuntu 18.04 and Debian 9 up to today's (docs/portable.md).
#
#   deploy/build-portable.sh --install   fetch the tools (zig and
#                                        cargo-zigbuild, both from PyPI)
#   deploy/build-portable.sh             build target/portable/envbench
#
# The tools: zig's C toolchain carries the headers and link stubs of every
# glibc version, and cargo-zigbuild has cargo link through it for the
# target x86_64-unknown-linux-gnu.2.17 (the host's Rust target: nothing
# else is fetched by rustup). zig lives in a venv at ENVBENCH_ZIG_VENV
# (default ~/.cache/envbench-ci/zig), and cargo-zigbuild beside it: PyPI
# carries its released binary, which installs in seconds where `cargo
# install` compiled it for 80 s. One found in ~/.cargo/bin is used too.
# The build goes into target/portable/ (CARGO_TARGET_DIR) and its binary
# is copied to target/portable/envbench, which deploy/ansible ships by
# default. The script then prints the highest GLIBC version the binary
# requires, read by readelf; tests/portable_glibc.rs runs it and fails
# above 2.17.
#
# ENVBENCH_PORTABLE_PROFILE=portable-check (the tests set it) builds
# with that cargo profile instead of release, unoptimised, and copies the
# binary to target/portable/envbench-portable-check: the tests check its
# glibc needs and ship it to their hosts without the cost of a second
# optimised build, and never replace the release binary a person ships.
set -euo pipefail
cd "$(dirname "$0")/.."
zig_venv=${ENVBENCH_ZIG_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/envbench-ci/zig}
# Versions this build was checked with: newer ones may change flags.
zig_version=${ENVBENCH_ZIG_VERSION:-0.17.1}
zigbuild_version=${ENVBENCH_ZIGBUILD_VERSION:-0.24.1}
target=x86_64-unknown-linux-gnu.2.17
cargo_bin=${CARGO_HOME:-$HOME/.cargo}/bin

have_zig() { [ -x "$zig_venv/bin/python" ] && "$zig_venv/bin/python" -m ziglang version >/dev/null 2>&1; }
have_zigbuild() { PATH=$zig_venv/bin:$cargo_bin:$PATH command -v cargo-zigbuild >/dev/null 2>&1; }

if [ "${1:-}" = --install ]; then
  if ! have_zig; then
    rm -rf -- "$zig_venv"
    python3 -m venv "$zig_venv"
    "$zig_venv/bin/pip" install -q --disable-pip-version-check "ziglang==$zig_version"
  fi
  have_zigbuild || "$zig_venv/bin/pip" install -q --disable-pip-version-check \
    "cargo-zigbuild==$zigbuild_version"
  echo "zig $("$zig_venv/bin/python" -m ziglang version) in $zig_venv; $(PATH=$zig_venv/bin:$cargo_bin:$PATH cargo-zigbuild --version)"
  exit 0
elif [ $# -gt 0 ]; then
  echo "usage: deploy/build-portable.sh [--install]" >&2
  exit 2
fi

if ! have_zig || ! have_zigbuild; then
  echo "build-portable: zig (in $zig_venv) or cargo-zigbuild is missing; run deploy/build-portable.sh --install" >&2
  exit 3
fi
command -v readelf >/dev/null || { echo "build-portable: readelf (binutils) is missing" >&2; exit 3; }

# cargo-zigbuild finds zig as `python3 -m ziglang` through PATH.
profile=${ENVBENCH_PORTABLE_PROFILE:-release}
case $profile in
  release) out=target/portable/envbench ;;
  portable-check) out=target/portable/envbench-portable-check ;;
  *) echo "build-portable: ENVBENCH_PORTABLE_PROFILE is release or portable-check, not '$profile'" >&2; exit 2 ;;
esac
PATH=$zig_venv/bin:$cargo_bin:$PATH CARGO_TARGET_DIR=target/portable \
  cargo zigbuild --profile "$profile" --locked --target "$target" --bin envbench
built=target/portable/x86_64-unknown-linux-gnu/$profile/envbench
# copied beside, then renamed over: a concurrent reader sees the old
# binary or the new one, never half of one
trap 'rm -f "target/portable/.envbench.$$"' EXIT
cp "$built" "target/portable/.envbench.$$"
mv -f "target/portable/.envbench.$$" "$out"
highest=$(readelf -V --wide "$out" | grep -oE 'Name: GLIBC_[0-9.]+' \
  | sed 's/Name: GLIBC_//' | sort -uV | tail -1)
echo "$out: requires GLIBC_$highest at most"
