#!/bin/bash
# The daemon killed (SIGKILL) while a loop writes files through the mount (fs/CONTRACT.md, "Durability and sharing":
# a closed file is committed, it survives a crash of the daemon). CRASH_ROUNDS rounds (default 30; 10 under
# a sanitizer, when ASAN_OPTIONS is set), each killing at a random moment: mount, start the loader
# (`mountcheck.py crashload`: mkdir -p T/rR_I/cf, write T/rR_I/cf/q, some second versions and 1 MiB
# values, logging each path and value once close() has returned), kill -9 the daemon a random 0 to
# CRASH_MAX_MS milliseconds (default 250) after the first write is done, clear the dead mount
# (fusermount3 -uz), `cellctl verify` the store as the daemon left it, remount, and check with dump_store
# that every logged write of every round so far is there, each column's newest cell is its last logged
# write, and nothing else was written; the round's files read the same through the mount; cellctl count
# and read (keys-only) still read the whole table. CRASH_DELAYS="0.1 0.5 ..." gives the delays (seconds) instead,
# one round each; CRASH_SEED=N repeats the random ones.
. "$(dirname "$0")/lib.sh"
: "${DUMP_STORE:?}"
# the interpreter itself (lib.sh's check calls python3): a version manager's shim costs a quarter second
py=$(python3 -c 'import sys; print(sys.executable)') || exit 1
python3() { "$py" "$@"; }
seed=${CRASH_SEED:-$RANDOM}
RANDOM=$seed
if [ -n "${CRASH_DELAYS:-}" ]; then
	read -r -a delays <<<"$CRASH_DELAYS"
else
	rounds=${CRASH_ROUNDS:-30}
	[ -z "${CRASH_ROUNDS:-}" ] && [ -n "${ASAN_OPTIONS:-}" ] && rounds=10
	delays=()
	for _ in $(seq "$rounds"); do
		ms=$((RANDOM % (${CRASH_MAX_MS:-250} + 1)))
		delays+=("$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))")
	done
fi
echo "seed $seed, ${#delays[@]} rounds"
db=$TMP/store
log=$TMP/writes.log
"$CELLCTL" --db "$db" createtable t families=cf || exit 1
: >"$log"

round=0 inflight_stored=0
for delay in "${delays[@]}"; do
	round=$((round + 1))
	mount_store "$db"
	python3 "$MOUNTCHECK" crashload "$MNT/t" "$round" "$log" 2>"$TMP/load.err" &
	loader=$!
	# wait for the round's first write to be done, then let the loop run DELAY seconds
	for _ in $(seq 6000); do
		grep -q "^done r${round}_" "$log" 2>/dev/null && break
		sleep 0.01
	done
	sleep "$delay"
	kill -9 "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
	if wait "$loader"; then
		fail "round $round: the loader finished before the daemon was killed after ${delay}s (make it shorter)"
	fi
	fusermount3 -uz "$MNT" || fail "round $round: fusermount3 -uz $MNT"
	"$CELLCTL" --db "$db" verify >"$TMP/verify.out" 2>&1 ||
		fail "round $round: cellctl verify after the kill: $(cat "$TMP/verify.out")"
	echo "round $round: killed after ${delay}s: $(grep -c '^done' "$log") writes done so far; $(cat "$TMP/verify.out"); loader: $(cat "$TMP/load.err")"

	mount_store "$db"
	mkdir "$TMP/dump.$round"
	"$DUMP_STORE" "$db" "$TMP/dump.$round" || fail "round $round: dump_store"
	check crash "$TMP/dump.$round" "$MNT" t "$log" "$round"
	cells=$(grep -c '^cell t ' "$TMP/dump.$round/dump.txt")
	nrows=$(awk '$1 == "cell" && $2 == "t" { r[$3] = 1 } END { print length(r) }' "$TMP/dump.$round/dump.txt")
	count=$("$CELLCTL" --db "$db" count t) || fail "round $round: cellctl count t failed"
	[ "$count" = "$nrows" ] || fail "round $round: cellctl count t says $count, the store has $nrows rows"
	# (keys-only: dump_store and the check above read every value already)
	"$CELLCTL" --db "$db" read t keys-only=true >"$TMP/read.out" || fail "round $round: cellctl read t failed"
	read_rows=$(grep -c '^----------------------------------------$' "$TMP/read.out")
	[ "$read_rows" = "$nrows" ] || fail "round $round: cellctl read t shows $read_rows rows, the store has $nrows"
	echo "round $round: $nrows rows, $cells cells after the remount"
	unmount_store
	rm -rf "$TMP/dump.$round"
done
echo "crash: the daemon killed $round times, $(grep -c '^done' "$log") logged writes checked after each"
exit $status
