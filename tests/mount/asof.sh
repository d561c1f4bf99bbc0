#!/bin/bash
# `cellfs -o asof=TIME` (fs/CONTRACT.md, "Mounting"): table h written with cellctl at explicit timestamps
# (versions written, a column deleted and written again at the same and at newer timestamps, a cell
# rewritten in place, a row deleted, one old version removed through a writable mount, a family whose
# policy collects an older version) is mounted as of several times (before everything, between versions,
# exactly at a version's timestamp, after everything; as µs and as RFC 3339 with Z, an offset and a
# fraction finer than a µs), and each view compared (mountcheck.py asof) with `cellctl read asof=TIME` and
# with the present cells at or before the time: find, cat, stat mtimes, every directory, newer names
# ENOENT. Then: cp -a of an as-of mount is that view, and restored into an empty mount gives a store that
# reads as `cellctl read asof=TIME` does; diff -rq between two as-of mounts names exactly the column that
# changed; writes, mkdir, rm, mv, setfattr and touch are EROFS with the store unchanged; a newer write
# elsewhere leaves the view as it was while a deleted old cell goes from it; a bad TIME is refused with
# one line, nothing mounted.
. "$(dirname "$0")/lib.sh"
db=$TMP/store
cc() { "$CELLCTL" --db "$db" "$@" || exit 1; }
B=1700000000000000 # 2023-11-14T22:13:20Z
t() { echo $((B + $1)); }  # t MICROS: B + MICROS
s=1000000

cc createtable h "families=cf,meta,v1:maxversions=1"
cc set h a#1 cf:x=x1@"$(t $s)" cf:x=x2@"$(t $((2 * s)))" cf:x=x3@"$(t $((3 * s)))" cf:y=y1@"$(t $((s + s / 2)))"
cc set h a#1 cf:p/q=slash@"$(t $((2 * s)))" "$(printf 'cf:\xc3\xa9=utf8')@$(t $((2 * s)))"
cc set h a#2 cf:x=late-row@"$(t $((2 * s + s / 2)))"
cc set h b meta:m=m1@"$(t $s)" cf:z=z4@"$(t $((4 * s)))"
cc set h c v1:v=old@"$(t $((s / 2)))" v1:v=new@"$(t $((3 * s + s / 2)))" # old: collected (maxversions=1)
cc set h a#1 cf:d=d1@"$(t $s)" cf:d=d2@"$(t $((2 * s)))"
cc deletecolumn h a#1 cf d
cc set h a#1 cf:d=d2-again@"$(t $((2 * s)))" cf:d=d5@"$(t $((5 * s)))" # again: the same ts, and newer
cc set h a#1 cf:x=x2-rewritten@"$(t $((2 * s)))"                       # replaced in place
cc set h e cf:q=gone@"$(t $s)"
cc deleterow h e
# One old version deleted through a writable mount: a#1's x at t1.
mount_store "$db"
rm "$MNT/h/a/1/cf/x@$(printf '%016d' "$(t $s)")" || fail "rm x@t1 through the mount"
unmount_store

# asof_check TIME US: mount as of TIME (US µs), compare, unmount.
asof_check() {
	mount_store "$db" -o "asof=$1"
	check asof "$MNT" "$db" h "$1" "$2"
	unmount_store
}
asof_check "$(t 0)" "$(t 0)"                                   # before everything (c's old @t0.5 is collected)
asof_check "$(t $s)" "$(t $s)"                                 # exactly at b's m1 (x@t1 removed, d1 deleted)
asof_check 2023-11-14T23:13:21.5+01:00 "$(t $((s + s / 2)))"   # exactly at y1, as RFC 3339 with an offset
asof_check "$(t $((2 * s)))" "$(t $((2 * s)))"                 # the rewritten x2, d2-again, slash, utf8
asof_check 2023-11-14T22:13:22.700000Z "$(t $((2 * s + 7 * s / 10)))" # between: a#2 there, x3 not
asof_check 2023-11-14t22:13:23.000000999z "$(t $((3 * s)))"    # a fraction finer than a µs: truncated
asof_check "$(t $((3 * s + s / 2)))" "$(t $((3 * s + s / 2)))" # c's new
asof_check "$(t $((10 * s)))" "$(t $((10 * s)))"               # after everything: all of it
asof_check 9223372036854775807 9223372036854775807

# cp -a of an as-of mount: that view, and (restored into an empty mount) a store reading as `read asof=`.
T=$(t $((2 * s + 7 * s / 10)))
mount_store "$db" -o "asof=$T"
cp -a "$MNT/h" "$TMP/bak" 2>"$TMP/cp.err" || fail "cp -a of the as-of mount: $(cat "$TMP/cp.err")"
[ ! -s "$TMP/cp.err" ] || fail "cp -a of the as-of mount said: $(cat "$TMP/cp.err")"
unmount_store
mkdir "$TMP/bakroot"
mv "$TMP/bak" "$TMP/bakroot/h"
check asof "$TMP/bakroot" "$db" h "$T" "$T" copy
{ "$CELLCTL" --db "$TMP/store2" createtable scratch && "$CELLCTL" --db "$TMP/store2" deletetable scratch; } || exit 1
mount_store "$TMP/store2"
cp -a "$TMP/bakroot/h" "$MNT/" 2>"$TMP/cp.err" || fail "cp -a into an empty mount: $(cat "$TMP/cp.err")"
unmount_store
TZ=UTC "$CELLCTL" --db "$TMP/store2" read h >"$TMP/restored.read" || fail "read of the restored table"
TZ=UTC "$CELLCTL" --db "$db" read h "asof=$T" >"$TMP/asof.read" || fail "read asof=$T"
cmp -s "$TMP/restored.read" "$TMP/asof.read" ||
	fail "the restored backup reads otherwise than read asof=$T: $(diff "$TMP/asof.read" "$TMP/restored.read" | head -20)"
[ -s "$TMP/asof.read" ] || fail "read asof=$T printed nothing"

# diff -rq between two as-of mounts: exactly the column written between them (a#1's x: x3 at t3).
MNT2=$TMP/mnt2
mkdir "$MNT2"
PID2=
# shellcheck disable=SC2317 # (called by the trap)
cleanup2() {
	local rc=$?
	if mountpoint -q "$MNT2"; then
		fusermount3 -u "$MNT2" 2>/dev/null || fusermount3 -uz "$MNT2"
	fi
	[ -z "$PID2" ] || kill "$PID2" 2>/dev/null
	(exit "$rc")
	cleanup
}
trap cleanup2 EXIT
mount_store "$db" -o "asof=$T"
"$CELLFS" "$db" "$MNT2" -f "${transport_opts[@]}" -o "asof=2023-11-14T22:13:23Z" 2>"$TMP/daemon2.err" &
PID2=$!
for _ in $(seq 6000); do
	mountpoint -q "$MNT2" && break
	kill -0 "$PID2" 2>/dev/null || break
	sleep 0.01
done
mountpoint -q "$MNT2" || { echo "FAIL: the second as-of mount: $(cat "$TMP/daemon2.err")" >&2; exit 1; }
xv=$(printf '%016d' "$(t $((2 * s)))")
LC_ALL=C diff -rq "$MNT/h" "$MNT2/h" >"$TMP/diff.out" 2>"$TMP/diff.err"
rc=$?
printf 'Files %s and %s differ\nOnly in %s: %s\n' "$MNT/h/a/1/cf/x" "$MNT2/h/a/1/cf/x" "$MNT2/h/a/1/cf" "x@$xv" |
	cmp -s - "$TMP/diff.out" || fail "diff -rq of two as-of mounts: $(cat "$TMP/diff.out" "$TMP/diff.err")"
[ $rc -eq 1 ] || fail "diff -rq of two as-of mounts: exit $rc"
LC_ALL=C diff -r "$MNT/h/a/1/cf/x" "$MNT2/h/a/1/cf/x" | grep -qx '> x3' || fail "diff -r: x3 not the newer value"
LC_ALL=C diff -rq "$MNT/h" "$MNT/h" >/dev/null || fail "diff -rq of an as-of mount with itself"
fusermount3 -u "$MNT2" || fail "fusermount3 -u $MNT2"
wait "$PID2" || fail "the second as-of daemon exited $?"
PID2=
sed -i '/^cellfs: transport: /d' "$TMP/daemon2.err"
[ ! -s "$TMP/daemon2.err" ] || fail "the second as-of daemon said: $(cat "$TMP/daemon2.err")"

# Writes are EROFS; the store is unchanged.
TZ=UTC "$CELLCTL" --db "$db" read h >"$TMP/before.read" || exit 1
python3 - "$MNT" "$xv" >"$TMP/erofs.out" <<'EOF'
import errno, os, sys
m, ts = sys.argv[1], sys.argv[2]
cf = os.path.join(m, 'h', 'a', '1', 'cf')
def erofs(what, f):
    try:
        f()
        print('%s succeeded' % what)
    except OSError as e:
        if e.errno != errno.EROFS:
            print('%s: %s, want EROFS' % (what, e))
erofs('open(x, O_WRONLY)', lambda: os.open(os.path.join(cf, 'x'), os.O_WRONLY))
erofs('open(x, O_WRONLY|O_TRUNC)', lambda: os.open(os.path.join(cf, 'x'), os.O_WRONLY | os.O_TRUNC))
erofs('create new', lambda: os.open(os.path.join(cf, 'new'), os.O_WRONLY | os.O_CREAT, 0o644))
erofs('create x@TS', lambda: os.open(os.path.join(cf, 'x@0000000000000001'), os.O_WRONLY | os.O_CREAT, 0o644))
erofs('mkdir', lambda: os.mkdir(os.path.join(m, 'h', 'newdir')))
erofs('mkdir table', lambda: os.mkdir(os.path.join(m, 'newtable')))
erofs('unlink x', lambda: os.unlink(os.path.join(cf, 'x')))
erofs('unlink x@TS', lambda: os.unlink(os.path.join(cf, 'x@' + ts)))
erofs('rmdir', lambda: os.rmdir(os.path.join(m, 'h', 'a', '2')))
erofs('rename', lambda: os.rename(os.path.join(cf, 'x'), os.path.join(cf, 'x2')))
erofs('truncate', lambda: os.truncate(os.path.join(cf, 'x'), 0))
erofs('utime', lambda: os.utime(os.path.join(cf, 'x'), (1, 1)))
erofs('setxattr', lambda: os.setxattr(os.path.join(m, 'h'), 'user.cellfs.family.new', b'never'))
EOF
[ ! -s "$TMP/erofs.out" ] || fail "writes to an as-of mount: $(cat "$TMP/erofs.out")"
TZ=UTC "$CELLCTL" --db "$db" read h >"$TMP/after.read" || exit 1
cmp -s "$TMP/before.read" "$TMP/after.read" || fail "the store changed under an as-of mount"

# Others' writes: a cell newer than the view stays out of it; a deleted old cell goes from it (polled).
cc set h a#1 cf:w=later@"$(t $((6 * s)))"
cc deletecolumn h b meta m
for _ in $(seq 3000); do
	[ -e "$MNT/h/b" ] || break
	sleep 0.01
done
[ ! -e "$MNT/h/b" ] || fail "b/meta/m deleted by cellctl: b still in the as-of mount after 30 s"
[ ! -e "$MNT/h/a/1/cf/w" ] || fail "a#1 cf:w, written later than the view, shows in it"
check asof "$MNT" "$db" h "$T" "$T"
unmount_store

# A bad TIME: one line naming it, nothing mounted.
how='(give RFC 3339, as 2026-11-26T05:34:38Z, or microseconds since the epoch)'
for bad in '2026-13-01T00:00:00Z|month out of range' 'yesterday|not RFC 3339 (YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM)) nor microseconds since the epoch' \
	'2026-11-26|a date alone: RFC 3339 needs a time and a zone too (as T00:00:00Z)' \
	'2026-11-26T05:34:38|no time zone: end it in Z or a numeric offset as +01:00' \
	'-5|before the epoch (1970-01-01T00:00:00Z): no cell is older' '|empty'; do
	v=${bad%%|*}
	"$CELLFS" "$db" "$MNT" -f -o "asof=$v" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	printf 'cellfs: -o asof=%s: %s %s\n' "$v" "${bad#*|}" "$how" | cmp -s - "$TMP/err" ||
		fail "-o asof=$v: stderr $(cat "$TMP/err")"
	[ $rc -eq 1 ] && [ ! -s "$TMP/out" ] || fail "-o asof=$v: exit $rc, stdout $(cat "$TMP/out")"
	if mountpoint -q "$MNT"; then
		fail "-o asof=$v: mounted anyway"
		fusermount3 -u "$MNT"
	fi
done
exit $status
