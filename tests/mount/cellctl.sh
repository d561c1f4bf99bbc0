#!/bin/bash
# A plain table written with cellctl, read back with `cellctl read`/`lookup`/`count`/`ls` and through the
# mount with cat, stat, ls, find and getfattr: the same rows, cells, values and timestamps.
. "$(dirname "$0")/lib.sh"
db=$TMP/store
cc() { "$CELLCTL" --db "$db" "$@" || exit 1; }
cc createtable plain "families=cf:maxversions=2,meta:never,MD"
cc set plain com.example#www cf:title="Example Domain@1426535612156000" cf:title=Example@1426535612157000 \
	meta:lang=en@1426535612158000
cc set plain com.example#www cf:title=third@1426535612159000 # maxversions=2: the oldest goes
cc set plain com.example#mail cf:mx=10@1426535612160000 MD:BID=1.5@1426535612161000
cc set plain "org#a#b#c" "cf:with space=a value with spaces@1426535612162000"
cc set plain r1 cf:=empty-qualifier@1426535612163000 cf:q=@1426535612164000
cc set plain r1#child cf:q=child@1426535612165000
cc set plain "MD#x" cf:q=family-named-segment@1426535612166000
cc set plain now cf:q=now
mount_store "$db"
check cellctl "$MNT" "$db" plain
unmount_store
exit $status
