#!/bin/bash
# A slow request does not stop the others: while a write-back waits for the store's writer lock (held
# here by another process, as a cellctl import holds it for each batch), the mount keeps answering reads,
# listings and lookups; the write-back completes once the lock is free. With one thread only (cellfs -s)
# this would hang until the lock is released. Every request is made from CPU 0 (taskset, where it can): on
# the io_uring transport they all land in CPU 0's queue, where two write-backs wait and the reads after
# them must still be answered (the queue has several entries, and threads join it when one is slow). Then: the daemon ends cleanly on SIGTERM and SIGHUP, also
# with files open (their handles freed, an unflushed write not written).
. "$(dirname "$0")/lib.sh"
db=$TMP/store
"$CELLCTL" --db "$db" createtable t families=cf || exit 1
"$CELLCTL" --db "$db" set t r1 cf:a=one || exit 1
mount_store "$db"
mkdir -p "$MNT/t/r2/cf" || fail "mkdir -p r2/cf"

coproc HOLD { exec "$HOLD_WRITER" "$db"; }
hold_pid=$HOLD_PID # (bash unsets HOLD_PID once the coprocess has ended)
read -r -t 120 line <&"${HOLD[0]}"
[ "$line" = held ] || fail "hold_writer did not take the lock: '$line'"

pin=()
taskset -c 0 true 2>/dev/null && pin=(taskset -c 0)
"${pin[@]}" sh -c 'echo two >"$1"' sh "$MNT/t/r2/cf/b" &
writer=$!
"${pin[@]}" sh -c 'echo three >"$1"' sh "$MNT/t/r2/cf/c" &
writer2=$!
sleep 0.3 # (the write-backs are now waiting for the lock)
kill -0 "$writer" 2>/dev/null && kill -0 "$writer2" 2>/dev/null ||
	fail "the write-backs did not wait for the writer lock (test is void)"
got=$(timeout 120 "${pin[@]}" cat "$MNT/t/r1/cf/a") || fail "reading a file while a write-back waits: timed out or failed"
[ "$got" = one ] || fail "reading r1/cf/a while a write-back waits gave '$got'"
got=$(timeout 120 "${pin[@]}" ls "$MNT/t") || fail "listing the table while a write-back waits: timed out or failed"
[ "$got" = "$(printf 'r1\nr2')" ] || fail "listing the table while a write-back waits gave '$got'"
timeout 120 "${pin[@]}" stat "$MNT/t/r1/cf" >/dev/null || fail "a lookup while a write-back waits timed out or failed"
kill -0 "$writer" 2>/dev/null || fail "the write-back ended while the lock was still held"

exec {HOLD[1]}>&- # release the lock
wait "$hold_pid"
wait "$writer" || fail "echo two > r2/cf/b failed once the lock was free"
wait "$writer2" || fail "echo three > r2/cf/c failed once the lock was free"
got=$("$CELLCTL" --db "$db" read t columns=cf:b | grep -c '"two\\n"')
[ "$got" = 1 ] || fail "r2 cf:b is not 'two' in the store after the wait"
got=$("$CELLCTL" --db "$db" read t columns=cf:c | grep -c '"three\\n"')
[ "$got" = 1 ] || fail "r2 cf:c is not 'three' in the store after the wait"
unmount_store

# Signals end the daemon, which unmounts: libfuse's handlers, through the loop's supervisor.
# (INT only where not ignored: a script's background jobs ignore it, and HUP under nohup; libfuse leaves
# an ignored signal ignored) Files still open then get no RELEASE: the daemon frees their handles itself
# (a leak that LeakSanitizer reports on stderr in the ASan build), and a writable one writes nothing.
# A file closed just before the signal is the same case when its RELEASE, sent after close() returns,
# comes too late.
sigs=TERM
ign=$((16#$(awk '/^SigIgn:/ {print $2}' /proc/$$/status)))
((ign & 1)) || sigs+=" HUP"
for sig in $sigs; do
	mount_store "$db"
	cat "$MNT/t/r1/cf/a" >/dev/null
	exec 7<"$MNT/t/r1/cf/a"
	# (a write not yet flushed: Python, as bash's redirections dup and close, which flushes)
	coproc OPEN { exec python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
os.write(fd, b"more")
print("ready", flush=True)
sys.stdin.read()' "$MNT/t/r1/cf/a"; }
	open_pid=$OPEN_PID
	read -r -t 120 line <&"${OPEN[0]}"
	[ "$line" = ready ] || fail "the writer did not open r1/cf/a: '$line'"
	kill -"$sig" "$DAEMON_PID"
	if timeout 120 tail --pid="$DAEMON_PID" -f /dev/null; then
		wait "$DAEMON_PID" || fail "the daemon exited with status $? on SIG$sig"
	else
		fail "the daemon did not end within 10 s of SIG$sig"
	fi
	DAEMON_PID=
	exec 7<&- {OPEN[1]}>&-
	wait "$open_pid"
	mountpoint -q "$MNT" && fail "still mounted after SIG$sig"
	strip_transport
	[ ! -s "$TMP/daemon.err" ] || fail "the daemon wrote to stderr on SIG$sig: $(cat "$TMP/daemon.err")"
done
got=$("$CELLCTL" --db "$db" read t columns=cf:a)
[ "$(grep -c '"one"' <<<"$got")" = 1 ] && [ "$(grep -c '@' <<<"$got")" = 1 ] ||
	fail "r1 cf:a changed under a handle open, and written to but not flushed, at the signal: $got"
exit $status
