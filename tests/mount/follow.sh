#!/bin/bash
# cellctl changes the store while it is mounted (set, a cell rewritten in place, deletecolumn, deleterow,
# createtable, createfamily, setgcpolicy, deletefamily, deletetable, deleteallrows) after the mount's
# caches hold the old state; the mount must show each change within FOLLOW_DEADLINE seconds (default
# 30, for a loaded machine), polled, not slept. A handle opened before a change
# reads its own value, never passed on.
. "$(dirname "$0")/lib.sh"
db=$TMP/store
"$CELLCTL" --db "$db" createtable live families=cf,meta || exit 1
"$CELLCTL" --db "$db" set live r1 cf:a=one@1426535612156000 || exit 1
"$CELLCTL" --db "$db" set live r2#x cf:b=two || exit 1
mount_store "$db"
check follow "$MNT" "$db"

# An idle daemon holds no snapshot: not a worker's read transaction after its request was answered
# (flush and release included), nor the pin of its last sync point once it has nothing unsynced
# (store/README.md, "Durability"), so other writers reuse the pages they free. Deterministic: after a
# write and a read through the mount, the daemon's readers in LMDB's reader table (`mdb_stat -r`) must
# all be released (polled; it lets go within its sync period), and stay so while cellctl rewrites a
# cell in place 60 times (100 KB of random bytes each). Then only cellctl's own pin (the snapshot before
# its one commit) keeps pages, so the store grows by a few values at most, not the 6 MB a snapshot
# pinned at the first rewrite would cost.
held() { # the daemon's readers holding a snapshot (a txnid, not "-")
	mdb_stat -r "$db" | awk -v p="$DAEMON_PID" '$1 == p && $3 != "-"'
}
ls -lR "$MNT" >/dev/null
mkdir -p "$MNT/live/r8/cf" && echo written >"$MNT/live/r8/cf/w" || fail "writing through the mount failed"
[ "$(cat "$MNT/live/r8/cf/w")" = written ] || fail "reading back what was written through the mount"
"$CELLCTL" --db "$db" set live r7 cf:a=seven || fail "set r7"
idle=
for _ in $(seq 600); do # (the daemon's sync period is 5 s; 60 s for a loaded machine)
	[ -z "$(held)" ] && { idle=1; break; }
	sleep 0.1
done
[ -n "$idle" ] || fail "the idle daemon still holds a snapshot after 60 s: $(held)"
before=$(stat -c %s "$db/data.mdb")
for i in $(seq 60); do
	"$CELLCTL" --db "$db" set live r9 "cf:v=$(head -c 75000 /dev/urandom | base64 -w0)@1426535612156000" || fail "set $i"
done
after=$(stat -c %s "$db/data.mdb")
[ -z "$(held)" ] || fail "the idle daemon took a snapshot while cellctl wrote: $(held)"
[ $((after - before)) -lt 2000000 ] || fail "the store grew from $before to $after bytes while the mount was idle"
unmount_store
exit $status
