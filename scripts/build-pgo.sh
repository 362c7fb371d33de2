#!/usr/bin/env bash
# Builds the release binary with profile-guided optimisation (PGO).
#
#     scripts/build-pgo.sh [--target TRIPLE] [DUMP...]
#
# Three steps, each a plain cargo/LLVM command:
#   1. an instrumented release build (`-Cprofile-generate`) in target/pgo-gen;
#   2. training runs of it: `report` (JSON at one and two threads, tables),
#      `keys --format csv` and `check` on every dump in fixtures/rdb/ (real
#      servers, Redis 3.2 to 8.4 and Valkey, every type and encoding) and on
#      each DUMP given; the counts are merged with `llvm-profdata`;
#   3. the release build again with `-Cprofile-use` in target/pgo; the binary
#      is target/pgo/[TRIPLE/]release/rdblens.
#
# Why: the per-key path (decode, estimate, fold into the statistics) is
# branchy code the compiler lays out blind; with the branch counts of real
# runs a one-thread report took about 0.9x the time of the plain release
# build on both benchmark corpora (docs/performance.md). Every
# output is the same: PGO changes code layout and inlining, not what the code
# computes.
#
# Needs rustup's `llvm-tools` component (added here when missing) for an
# `llvm-profdata` that reads the profile format of this rustc's LLVM.
# A DUMP argument adds training on that file; a dump of the shape you analyse
# helps most, and the fixtures alone are what the figures in the docs use
# unless they say otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

target=()
triple_dir=""
dumps=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target)
      [ $# -ge 2 ] || { echo "build-pgo: --target needs a target triple" >&2; exit 2; }
      target=(--target "$2")
      triple_dir="$2/"
      shift 2
      ;;
    -h|--help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *)
      [ -f "$1" ] || { echo "build-pgo: $1: no such file" >&2; exit 2; }
      dumps+=("$1")
      shift
      ;;
  esac
done

# The C parts (libzstd, ring, aws-lc) of a musl build compile with
# musl-gcc (Debian's musl-tools), unless a compiler for it is given.
if [ "${triple_dir%/}" = x86_64-unknown-linux-musl ] && [ -z "${CC_x86_64_unknown_linux_musl:-}" ]; then
  command -v musl-gcc >/dev/null 2>&1 ||
    { echo "build-pgo: musl-gcc not found (apt-get install musl-tools), or set CC_x86_64_unknown_linux_musl" >&2; exit 1; }
  export CC_x86_64_unknown_linux_musl=musl-gcc
fi

sysroot="$(rustc --print sysroot)"
host="$(rustc -vV | sed -n 's/^host: //p')"
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
  # Its failure is told by the check below, naming what is missing.
  rustup component add llvm-tools >/dev/null || true
fi
[ -x "$profdata" ] || { echo "build-pgo: $profdata not found (rustup component add llvm-tools)" >&2; exit 1; }

profiles="$PWD/target/pgo-profiles"
rm -rf "$profiles"
mkdir -p "$profiles"

echo "build-pgo: 1/3 instrumented build" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$profiles" CARGO_TARGET_DIR=target/pgo-gen \
  cargo build --release --locked -p rdblens "${target[@]}"
gen="target/pgo-gen/${triple_dir}release/rdblens"

echo "build-pgo: 2/3 training runs" >&2
train=(fixtures/rdb/*/*.rdb "${dumps[@]}")
reports=0
for dump in "${train[@]}"; do
  # A fixture may hold what some commands refuse (they exit 1 with a
  # message): the counts of the runs that get that far are kept all the same.
  if "$gen" report --format json --threads 1 "$dump" >/dev/null 2>&1; then
    reports=$((reports + 1))
  fi
  "$gen" report --format json --threads 2 "$dump" >/dev/null 2>&1 || true
  "$gen" report "$dump" >/dev/null 2>&1 || true
  "$gen" keys --format csv "$dump" >/dev/null 2>&1 || true
  "$gen" check "$dump" >/dev/null 2>&1 || true
done
# Not one report: the profile would be empty and the build a plain one.
[ "$reports" -gt 0 ] || { echo "build-pgo: no training report ran; no profile" >&2; exit 1; }
"$profdata" merge -o "$profiles/merged.profdata" "$profiles"

echo "build-pgo: 3/3 optimised build" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$profiles/merged.profdata" CARGO_TARGET_DIR=target/pgo \
  cargo build --release --locked -p rdblens "${target[@]}"
echo "target/pgo/${triple_dir}release/rdblens"
