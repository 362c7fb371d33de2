#!/usr/bin/env bash
# Same output from two rdblens builds: `report --format json` (every section,
# 1 and 2 threads), `report --summary-only` and `keys --format csv` on every
# fixture dump and on any dump given, compared byte for byte. For changes
# that must not move a figure (performance work).
#
#   benches/same_output.sh OLD_BIN NEW_BIN [DUMP...]
set -u
old=$1 new=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$(cd "$(dirname "$0")/.." && pwd)
fail=0 n=0
compare() { # label, then the arguments after the binary
    local label=$1
    shift
    "$old" "$@" >"$tmp/a" 2>"$tmp/ae"
    local ra=$?
    "$new" "$@" >"$tmp/b" 2>"$tmp/be"
    local rb=$?
    n=$((n + 1))
    if [ $ra != $rb ] || ! cmp -s "$tmp/a" "$tmp/b" || ! cmp -s "$tmp/ae" "$tmp/be"; then
        echo "DIFFERENT: $label (exit $ra vs $rb)"
        fail=1
    fi
}
for f in $(find "$root/fixtures/rdb" -name '*.rdb' | sort) "$@"; do
    for t in 1 2; do
        compare "report $f --threads $t" report "$f" --threads $t --format json -q
    done
    compare "summary $f" report "$f" --summary-only -q
    compare "keys $f" keys "$f" --format csv -q
done
echo "$n comparisons, $([ $fail = 0 ] && echo all identical || echo SOME DIFFER)"
exit $fail
