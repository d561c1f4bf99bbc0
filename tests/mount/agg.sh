#!/bin/bash
# Aggregate families through the mount: a cell addtocell merged reads as Bigtable encodes it (8 bytes, a
# big-endian int64, mtime its timestamp); writing it (or a new column of the family) is refused with
# EINVAL and changes nothing; plain families of the same table stay writable. The table directory's
# attribute user.cellfs.family.F reads POLICY:TYPE for an aggregate family, and setting it makes one, so a
# backup's restore (cp -a, tar, rsync copy the attributes) recreates the type or reports that it cannot.
. "$(dirname "$0")/lib.sh"
db=$TMP/store
cc() { "$CELLCTL" --db "$db" "$@" || exit 1; }
cc createtable agg "families=views:never:intsum,low:never:intmin,cf"
cc addtocell agg page#1 views:day=5@1426535612156000 views:day=7@1426535612156000 low:t=9@1000 low:t=-2@1000
cc set agg page#1 cf:title=home@1000
mount_store "$db"
got=$(od -An -tx1 "$MNT/agg/page/1/views/day" | tr -d ' \n')
[ "$got" = 000000000000000c ] || fail "views:day reads as $got, want 000000000000000c"
got=$(od -An -tx1 "$MNT/agg/page/1/low/t" | tr -d ' \n')
[ "$got" = fffffffffffffffe ] || fail "low:t reads as $got, want fffffffffffffffe"
[ "$(stat -c %s "$MNT/agg/page/1/views/day")" = 8 ] || fail "an aggregate cell is not 8 bytes long"
[ "$(stat -c %Y "$MNT/agg/page/1/views/day")" = 1426535612 ] || fail "an aggregate cell's mtime is not its timestamp"
before=$("$CELLCTL" --db "$db" read agg)
# write_errno PATH DATA: write and close through the mount (an error may come at close); print the errno
# name, or "ok".
write_errno() {
	python3 - "$1" "$2" <<'PY'
import errno, os, sys
try:
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, sys.argv[2].encode())
    finally:
        os.close(fd)
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])
PY
}
got=$(write_errno "$MNT/agg/page/1/views/day" xxxxxxxx)
[ "$got" = EINVAL ] || fail "writing an aggregate cell through the mount: $got, want EINVAL"
got=$(write_errno "$MNT/agg/page/1/views/new" 1)
[ "$got" = EINVAL ] || fail "creating a column in an aggregate family through the mount: $got, want EINVAL"
[ "$("$CELLCTL" --db "$db" read agg)" = "$before" ] || fail "a refused write through the mount changed the store"
echo new >"$MNT/agg/page/1/cf/title" || fail "writing a plain family of the same table failed"

# the schema's attributes
xa() { getfattr --absolute-names --only-values -n "user.cellfs.family.$2" "$MNT/$1" 2>&1; }
[ "$(xa agg views)" = never:intsum ] || fail "user.cellfs.family.views reads $(xa agg views), want never:intsum"
[ "$(xa agg low)" = never:intmin ] || fail "user.cellfs.family.low reads $(xa agg low), want never:intmin"
[ "$(xa agg cf)" = never ] || fail "user.cellfs.family.cf reads $(xa agg cf), want never"
mkdir "$MNT/copy" || fail "mkdir copy"
setfattr -n user.cellfs.family.hits -v "maxversions=2:intmax" "$MNT/copy" || fail "setfattr POLICY:TYPE"
[ "$(xa copy hits)" = maxversions=2:intmax ] || fail "family hits reads $(xa copy hits) after setfattr"
setfattr -n user.cellfs.family.hits -v "maxversions=3:intmax" "$MNT/copy" || fail "a new policy, same type"
[ "$(xa copy hits)" = maxversions=3:intmax ] || fail "family hits reads $(xa copy hits) after a new policy"
# setfattr_errno DIR NAME VALUE: the errno name of setting the attribute, or ok
setfattr_errno() {
	python3 -c 'import errno, os, sys
try:
    os.setxattr(sys.argv[1], sys.argv[2], sys.argv[3].encode()); print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])' "$@"
}
for bad in "never:intsum" "never:inthll" "never:nosuch" "never:" "bad policy:intsum"; do
	got=$(setfattr_errno "$MNT/copy" user.cellfs.family.hits "$bad")
	[ "$got" = EINVAL ] || fail "setfattr family.hits=\"$bad\" on an intmax family: $got, want EINVAL"
done
mkdir -p "$MNT/copy/r/cf" && echo v >"$MNT/copy/r/cf/q" || fail "a plain family by writing a file"
got=$(setfattr_errno "$MNT/copy" user.cellfs.family.cf "never:intsum")
[ "$got" = EINVAL ] || fail "making plain family cf an aggregate: $got, want EINVAL"
want='{"family":"cf","gc_policy":"never"}
{"family":"hits","gc_policy":"maxversions=3","value_type":"intmax"}'
got=$("$CELLCTL" --db "$db" --format=json ls copy)
[ "$got" = "$want" ] || fail "table copy's schema after the refused changes: $got"
unmount_store
[ "$("$CELLCTL" --db "$db" lookup agg page#1 columns=cf:title cells-per-column=1 | sed -n 4p)" = '    "new\n"' ] ||
	fail "the plain write through the mount is not in the store"
exit $status
