#!/bin/bash
# The daemon killed (SIGKILL) while a loop writes files through the mount (contract.md, "Durability": a
# closed file is committed, it survives a crash of the daemon). Five rounds, each killing at another
# moment: mount, start the loader (`mountcheck.py crashload`: mkdir -p T/rR_I/cf, write T/rR_I/cf/q, some
# second versions and 1 MiB values, logging each path and value once close() has returned), kill -9 the
# daemon after CRASH_DELAYS[round] seconds, clear the dead mount (fusermount3 -uz), remount, and check
# with dump_store and through the mount that every logged write of every round so far is there, each
# column's newest cell is its last logged write, and nothing else was written; cellctl count and read
# still read the whole table.
. "$(dirname "$0")/lib.sh"
: "${DUMP_STORE:?}"
read -r -a delays <<<"${CRASH_DELAYS:-0.15 0.6 1.1 1.7 2.4}"
db=$TMP/store
log=$TMP/writes.log
"$CELLCTL" --db "$db" createtable t families=cf || exit 1
: >"$log"

round=0
for delay in "${delays[@]}"; do
	round=$((round + 1))
	mount_store "$db"
	python3 "$MOUNTCHECK" crashload "$MNT/t" "$round" "$log" 2>"$TMP/load.err" &
	loader=$!
	# wait for the first write to be done, then let the loop run DELAY seconds
	for _ in $(seq 500); do
		grep -q '^done' "$log" 2>/dev/null && break
		sleep 0.01
	done
	sleep "$delay"
	kill -9 "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
	if wait "$loader"; then
		fail "round $round: the loader finished before the daemon was killed after ${delay}s (make it longer)"
	fi
	fusermount3 -uz "$MNT" || fail "round $round: fusermount3 -uz $MNT"
	echo "round $round: killed after ${delay}s: $(grep -c '^done' "$log") writes done so far; loader: $(cat "$TMP/load.err")"

	mount_store "$db"
	mkdir "$TMP/dump.$round"
	"$DUMP_STORE" "$db" "$TMP/dump.$round" || fail "round $round: dump_store"
	check crash "$TMP/dump.$round" "$MNT" t "$log"
	cells=$(grep -c '^cell t ' "$TMP/dump.$round/dump.txt")
	nrows=$(awk '$1 == "cell" && $2 == "t" { r[$3] = 1 } END { print length(r) }' "$TMP/dump.$round/dump.txt")
	count=$("$CELLCTL" --db "$db" count t) || fail "round $round: cellctl count t failed"
	[ "$count" = "$nrows" ] || fail "round $round: cellctl count t says $count, the store has $nrows rows"
	"$CELLCTL" --db "$db" read t >"$TMP/read.out" || fail "round $round: cellctl read t failed"
	read_rows=$(grep -c '^----------------------------------------$' "$TMP/read.out")
	[ "$read_rows" = "$nrows" ] || fail "round $round: cellctl read t shows $read_rows rows, the store has $nrows"
	echo "round $round: $nrows rows, $cells cells after the remount"
	unmount_store
done
exit $status
