#!/bin/bash
# Writing through the mount (fs/wops.c): writecheck.py does each operation through the mount and checks the
# store with dump_store (the exact cells added, removed, changed; a refused operation changes nothing).
# Mounts, in turn: read-write (the bulk, then a remount: the store as left, directories only the daemon
# held gone, and mountcheck.py's whole-tree comparison of what was written), -o ro, -o strict_schema,
# -o delimiter=., a daemon killed with SIGKILL (what was closed or fsync'd is there, an unflushed handle
# is not), and a store of 100,000 cells in one directory (the rename cap).
. "$(dirname "$0")/lib.sh"
: "${DUMP_STORE:?}" "${GEN_AWKWARD:?}"
WRITECHECK=${WRITECHECK:-$(dirname "$MOUNTCHECK")/writecheck.py}
export DUMP_STORE CELLCTL
db=$TMP/store
wcheck() { # wcheck SUBCOMMAND ARG...: run a writecheck.py subcommand, note a failure
	python3 "$WRITECHECK" "$@" || fail "writecheck.py $1"
}
start=$SECONDS

python3 "$WRITECHECK" seed "$db" || exit 1
mount_store "$db"
wcheck main "$MNT" "$db" "$TMP/state"
unmount_store

mount_store "$db"
wcheck after "$MNT" "$db" "$TMP/state"
mkdir "$TMP/dump"
"$DUMP_STORE" "$db" "$TMP/dump" || exit 1
check tree "$TMP/dump" "$MNT" "$TMP/tree-state"
unmount_store

mount_store "$db" -o ro
wcheck ro "$MNT" "$db"
unmount_store

mount_store "$db" -o strict_schema
wcheck strict "$MNT" "$db"
unmount_store

mount_store "$db" -o delimiter=.
wcheck delim "$MNT" "$db"
unmount_store

# A daemon killed: a closed file and an fsync'd one survive; a handle never flushed leaves nothing.
mount_store "$db"
if ! { mkdir -p "$MNT/w/dur/r/cf" && echo committed >"$MNT/w/dur/r/cf/closed"; }; then
	fail "writing before the kill"
fi
python3 -c '
import os, sys, time
d = sys.argv[1]
s = os.open(d + "/synced", os.O_WRONLY | os.O_CREAT, 0o644); os.write(s, b"synced"); os.fsync(s)
o = os.open(d + "/open", os.O_WRONLY | os.O_CREAT, 0o644); os.write(o, b"never flushed")
open(sys.argv[2], "w").close()
time.sleep(60)' "$MNT/w/dur/r/cf" "$TMP/ready" &
holder=$!
for _ in $(seq 500); do [ -e "$TMP/ready" ] && break; sleep 0.01; done
[ -e "$TMP/ready" ] || fail "the handle holder did not get ready"
{ kill -KILL "$DAEMON_PID" && wait "$DAEMON_PID"; } 2>/dev/null # (no "Killed" from bash)
DAEMON_PID=
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT"
wcheck crash-check "$db"

# 100,000 cells in one key directory: exactly the cap moves; one more is EXDEV (mv copies).
"$GEN_AWKWARD" "$TMP/big" big || exit 1
mount_store "$TMP/big"
wcheck big "$MNT" "$TMP/big"
unmount_store

echo "write.sh: $((SECONDS - start))s"
exit $status
