#!/bin/bash
# cellctl changes the store while it is mounted (set, a cell rewritten in place, deletecolumn, deleterow,
# createtable, createfamily, setgcpolicy, deletefamily, deletetable, deleteallrows) after the mount's
# caches hold the old state; the mount must show each change within FOLLOW_DEADLINE seconds (default
# 1.5), polled, not slept. A handle opened before a change reads its own value, never passed on.
. "$(dirname "$0")/lib.sh"
db=$TMP/store
"$CELLCTL" --db "$db" createtable live families=cf,meta || exit 1
"$CELLCTL" --db "$db" set live r1 cf:a=one@1426535612156000 || exit 1
"$CELLCTL" --db "$db" set live r2#x cf:b=two || exit 1
mount_store "$db"
check follow "$MNT" "$db"
unmount_store
exit $status
