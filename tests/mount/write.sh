#!/bin/bash
# Writing through the mount (fs/README.md): writecheck.py does each operation through the mount and checks the
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

# A write-back that fails (its table deleted by cellctl while the file is open): close() returns the error,
# once; the release after it does not report it again (unmount_store fails on anything on the daemon's stderr).
mount_store "$db"
"$CELLCTL" --db "$db" createtable gone families=cf >/dev/null || fail "createtable gone"
mkdir -p "$MNT/gone/r/cf" || fail "mkdir gone/r/cf"
mkfifo "$TMP/go"
( read -r _ <"$TMP/go"; "$CELLCTL" --db "$db" deletetable gone; : >"$TMP/deleted" ) &
deleter=$!
python3 -c '
import errno, os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644); os.write(fd, b"x")
open(sys.argv[2], "w").write("go\n")
while not os.path.exists(sys.argv[3]): time.sleep(0.01)
try:
    os.close(fd)
    sys.exit("close() of a file whose table was deleted meanwhile succeeded")
except OSError as e:
    if e.errno != errno.ENOENT:
        sys.exit("close() of a file whose table was deleted meanwhile: %s, want ENOENT" % e)' \
	"$MNT/gone/r/cf/q" "$TMP/go" "$TMP/deleted" || fail "a failed write-back"
wait "$deleter"
sleep 0.3 # (the RELEASE is asynchronous)
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
for _ in $(seq 6000); do [ -e "$TMP/ready" ] && break; sleep 0.01; done
[ -e "$TMP/ready" ] || fail "the handle holder did not get ready"
{ kill -KILL "$DAEMON_PID" && wait "$DAEMON_PID"; } 2>/dev/null # (no "Killed" from bash)
DAEMON_PID=
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT"
wcheck crash-check "$db"

# A write that would make family k while row keys of the table have a segment k: making it would move
# those paths to %6B (a key segment equal to a family's name is escaped), so a path just written would be
# gone. Refused (EPERM at open, one log line naming it), and alike by rename, mkdir of the escaped name
# and setxattr; nothing written, the path still there. A table without such segments makes it.
"$CELLCTL" --db "$TMP/fam" createtable pm families=cf >/dev/null || fail "createtable pm"
mount_store "$TMP/fam"
{ mkdir -p "$MNT/pm/x/k/sub" && echo 1 >"$MNT/pm/x/k/sub/f1" && mkdir -p "$MNT/pm/x/cf" &&
	echo c >"$MNT/pm/x/cf/c"; } || fail "writing pm/x/k/sub/f1"
mkdir "$TMP/fam.before" "$TMP/fam.after"
"$DUMP_STORE" "$TMP/fam" "$TMP/fam.before" >/dev/null || fail "dump_store"
err=$( { echo 2 >"$MNT/pm/x/k/f2"; } 2>&1) && fail "echo > pm/x/k/f2 (would make family k) succeeded"
case $err in *"Operation not permitted"*) ;; *) fail "echo > pm/x/k/f2: $err, want EPERM" ;; esac
mv "$MNT/pm/x/cf/c" "$MNT/pm/x/k/c" 2>/dev/null && fail "mv into pm/x/k (would make family k) succeeded"
setfattr -n user.cellfs.family.k -v never "$MNT/pm" 2>/dev/null && fail "setfattr family k succeeded"
mkdir "$MNT/pm/y" && mkdir "$MNT/pm/y/%6B" 2>/dev/null && fail "mkdir pm/y/%6B (makes family k) succeeded"
[ "$(cat "$MNT/pm/x/k/sub/f1" 2>&1)" = 1 ] || fail "pm/x/k/sub/f1 is not there as written: $(ls -R "$MNT/pm")"
"$DUMP_STORE" "$TMP/fam" "$TMP/fam.after" >/dev/null || fail "dump_store"
cmp -s "$TMP/fam.before/dump.txt" "$TMP/fam.after/dump.txt" || fail "a refused family changed the store"
{ mkdir -p "$MNT/pm/y/z" && echo 3 >"$MNT/pm/y/z/f3"; } || fail "a family no key segment is named after"
fusermount3 -u "$MNT" || fail "fusermount3 -u"
wait "$DAEMON_PID" || fail "the daemon exited with status $?"
DAEMON_PID=
strip_transport
want="cellfs: family k of table pm not made: row keys of the table have a segment k, whose paths would change (cellctl createfamily makes it anyway)"
[ "$(sort -u "$TMP/daemon.err")" = "$want" ] || fail "the daemon's log: $(head -c 2000 "$TMP/daemon.err"), want 4 x: $want"
[ "$(wc -l <"$TMP/daemon.err")" = 4 ] || fail "the daemon's log has $(wc -l <"$TMP/daemon.err") lines, want 4"

# 100,000 cells in one key directory: exactly the cap moves; one more is EXDEV (mv copies).
"$GEN_AWKWARD" "$TMP/big" big || exit 1
mount_store "$TMP/big"
wcheck big "$MNT" "$TMP/big"
unmount_store

echo "write.sh: $((SECONDS - start))s"
exit $status
