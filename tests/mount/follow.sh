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

# An idle daemon holds no old snapshot: a cell rewritten in place 60 times (100 KB of random bytes each)
# while the mount sits idle after serving requests must reuse the freed pages, not grow the store by the
# 6 MB a reader pinned at the first rewrite would cost.
ls -lR "$MNT" >/dev/null
before=$(stat -c %s "$db/data.mdb")
for i in $(seq 60); do
	"$CELLCTL" --db "$db" set live r9 "cf:v=$(head -c 75000 /dev/urandom | base64 -w0)@1426535612156000" || fail "set $i"
done
after=$(stat -c %s "$db/data.mdb")
[ $((after - before)) -lt 2000000 ] || fail "the store grew from $before to $after bytes while the mount was idle"
unmount_store
exit $status
