#!/bin/bash
# The bad-input table (cases.tsv) through the mount, the read-only mount, cellctl and cellfs's command
# line, against a fixture store and (as root) a full one on a 4 MiB tmpfs: badinput.py runs each case
# and requires its documented error and an unchanged store. See README.md.
. "$(dirname "$0")/../mount/lib.sh"
here=$(dirname "$0")
db=$TMP/db
ro=$TMP/ro
mkdir "$ro" "$TMP/spare"
cc() { "$CELLCTL" --db "$1" "${@:2}" >/dev/null || fail "cellctl $*"; }
cc "$db" createtable t "families=cf,MD:maxversions=2"
cc "$db" set t r1 cf:q=v@1426535612156000 cf:n=12345678@1426535612156000 MD:BID=1.5@1426535612156000
cc "$db" set t r1 MD:BID=1.6@1426535612157000
cc "$db" set t a#b cf:q=deep@1426535612156000
cc "$db" createtable agg "families=views:never:intsum,plain"
cc "$db" addtocell agg page views:day=3@1426464000000000
cc "$db" set agg page plain:eight=12345678@1426464000000000 plain:text=abc@1426464000000000
cc "$db" createtable empty families=cf

full=-
small=$TMP/small
mkdir "$small"
if mount -t tmpfs -o size=4m cellfs-badinput "$small" 2>/dev/null; then
	trap 'st=$?; umount -l "$small" 2>/dev/null; (exit $st); cleanup' EXIT
	full=$small/store
	cc "$full" createtable f families=cf
	cc "$full" set f r cf:q=before@1426535612156000
	# Fill it: 64 KiB of incompressible text a cell until a set fails for want of room.
	for i in $(seq 200); do
		"$CELLCTL" --db "$full" set f "fill$i" "cf:q=$(head -c 49152 /dev/urandom | base64 -w0)@1426535612156000" \
			>/dev/null 2>"$TMP/fill.err" || break
	done
	grep -q 'No space left on device' "$TMP/fill.err" || fail "filling the small store: $(cat "$TMP/fill.err")"
fi
trap 'st=$?; fusermount3 -uz "$ro" 2>/dev/null; umount -l "$small" 2>/dev/null; (exit $st); cleanup' EXIT
python3 "$here/badinput.py" "$here/cases.tsv" "$db" "$full" "$MNT" "$ro" "$TMP" || fail "badinput.py"
exit $status
