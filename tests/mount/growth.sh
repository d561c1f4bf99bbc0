#!/bin/bash
# The store stays small under a shell loop's many small commits: 5,000 files made with `echo >` through
# the mount (two commits each, bash's dup'd descriptor and the close), then all overwritten, leave a
# data.mdb under 32 MiB, whatever the timing. Every window between two sync points writes its pages
# afresh (the synced snapshot is pinned, store/README.md "Durability"), and the pages freed in at most
# two windows wait at once (the old pin is let go when the next sync point has anchored), so the file
# is the live data plus about two windows' worth. The bound follows from the daemon's rule, not from
# the machine's speed: its watch thread makes a sync point after 256 commits, and if it falls behind (a
# loaded machine, a slow disk) the committing thread makes it itself after 384 (kv_env.c, SYNC_BG_MAX);
# this workload's commits are small, so two windows at the cap, the live data and LMDB's own pages stay
# well under the bound, while windows that grew with the time each sync took would pass it on a quiet
# disk as on a loaded one. Meant for a store on a disk (TMPDIR as given; in tmpfs a sync point takes
# microseconds).
. "$(dirname "$0")/lib.sh"
db=$TMP/store
"$CELLCTL" --db "$db" createtable t families=cf || exit 1
mount_store "$db"
fs=$(stat -f -c %T "$TMP")
for word in one two; do
	(cd "$MNT/t" && for ((r = 0; r < 500; r++)); do
		mkdir -p "r$r/cf" || exit 1
		for ((q = 0; q < 10; q++)); do
			echo "$word" >"r$r/cf/q$q" || exit 1
		done
	done) || fail "writing 5,000 files ($word) through the mount failed"
done
size=$(stat -c %s "$db/data.mdb")
unmount_store
[ "$size" -lt $((32 << 20)) ] || fail "data.mdb is $size bytes after 5,000 files made and overwritten (on $fs): over 32 MiB"
got=$("$CELLCTL" --db "$db" count t) || fail "cellctl count failed"
[ "$got" = 500 ] || fail "the table has $got rows, want 500"
got=$("$CELLCTL" --db "$db" read t | grep -c '"two\\n"')
[ "$got" = 5000 ] || fail "$got cells read \"two\", want 5000"
echo "data.mdb: $size bytes on $fs"
exit $status
