#!/bin/bash
# asof.sh CELLCTL CELLFS — as-of views of a Bigtable store (the emulator): `cellctl read/count asof=` print
# what they print for a local store holding the same cells, at several times; `cellfs -o asof=` of the
# instance shows the tree the same mount of the local store shows (diff -r), with newer versions ENOENT
# and writes EROFS.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ -n "$cellfs" ] || { echo "usage: asof.sh CELLCTL CELLFS"; exit 1; }
export CELLFS_BT_DEADLINE_MS=4000 TZ=UTC

for cc in ccb ccl; do
	check "$cc createtable" $cc createtable t "families=cf,v1:maxversions=1"
	check "$cc set" $cc set t "r1#x" cf:a=a1@1000000 cf:a=a2@2000000 cf:a=a3@3000000 cf:b=b@1500000
	check "$cc set r2" $cc set t r2 cf:a=r2@2500000 v1:v=old@500000 v1:v=new@4000000
done
for at in 999999 1000000 2000000 2000999 2023-11-14T22:13:20Z 1970-01-01T00:00:02.5Z 4000000; do
	checks=$((checks + 1))
	ccb read t "asof=$at" >"$tmp/b.out" 2>&1
	ccl read t "asof=$at" >"$tmp/l.out" 2>&1
	cmp -s "$tmp/b.out" "$tmp/l.out" || fail "read asof=$at: Bigtable $(cat "$tmp/b.out"), local $(cat "$tmp/l.out")"
	checks=$((checks + 1))
	[ "$(ccb count t "asof=$at" 2>&1)" = "$(ccl count t "asof=$at" 2>&1)" ] || fail "count asof=$at differs"
done
checks=$((checks + 1))
[ "$(ccb count t asof=2000000)" = 1 ] || fail "count asof=2000000 on Bigtable: $(ccb count t asof=2000000)"

check "mount the instance as of 2.0 s" mount_store "$bt" "$tmp/mb" -o asof=1970-01-01T00:00:02Z
check "mount the local store as of 2.0 s" mount_store "$tmp/local" "$tmp/ml" -o asof=2000000
check "the same tree (diff -r)" diff -r "$tmp/mb/t" "$tmp/ml/t"
check "the view's newest" bash -c '[ "$(cat "$0")" = a2 ]' "$tmp/mb/t/r1/x/cf/a"
check "older versions listed" bash -c '[ "$(LC_ALL=C ls "$0" | tr "\n" " ")" = "a a@0000000001000000 b " ]' "$tmp/mb/t/r1/x/cf"
check "a newer version is ENOENT" bash -c 'LC_ALL=C stat "$0" 2>&1 | grep -q "No such file or directory"' \
	"$tmp/mb/t/r1/x/cf/a@0000000003000000"
check "a row with only newer cells is not there" bash -c '[ ! -e "$0" ] && [ "$(ls "$1")" = r1 ]' "$tmp/mb/t/r2" "$tmp/mb/t"
check "mtime is the cell's" bash -c '[ "$(stat -c %Y "$0")" = 2 ]' "$tmp/mb/t/r1/x/cf/a"
check "a write is EROFS" bash -c '! (echo x >"$0") 2>"$1" && grep -q "Read-only file system" "$1"' \
	"$tmp/mb/t/r1/x/cf/a" "$tmp/w.err"
check "mkdir is EROFS" bash -c '! mkdir "$0" 2>"$1" && grep -q "Read-only file system" "$1"' "$tmp/mb/t/new" "$tmp/w.err"
check "the instance is unchanged" bash -c '[ "$("$0" --db "$1" read t | grep -c "@")" = 6 ]' "$cellctl" "$bt"
finish
