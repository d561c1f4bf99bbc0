#!/bin/bash
# syslog.sh — where the daemon's log lines go: in the foreground (-f) on stderr; in the background
# (daemonised, stderr /dev/null) to syslog, as "cellfs[PID]: ...". The line looked for is the one every
# mount logs once INIT is answered, the transport's.
# Where nothing listens at /dev/log (a container: no journald, no syslog daemon), the test, as root,
# listens there itself (a unix datagram socket, removed at the end); where the journal owns it, the line
# is read back with journalctl. Otherwise (not root, or a syslog daemon whose files it cannot know) it
# skips.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

listener=
made_devlog=
stop_listener() {
	if [ -n "$listener" ]; then
		kill "$listener" 2>/dev/null
		wait "$listener" 2>/dev/null
	fi
	[ -z "$made_devlog" ] || rm -f /dev/log
}
trap 'rc=$?; stop_listener; (exit $rc); cleanup' EXIT

if [ ! -e /dev/log ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: nothing listens at /dev/log, and only root may listen there"
		exit 77
	fi
	python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
os.chmod("/dev/log", 0o666)
out = open(sys.argv[1], "ab", 0)
open(sys.argv[2], "w").close()
while True:
    out.write(s.recv(65536) + b"\n")
' "$TMP/syslog.txt" "$TMP/listening" &
	listener=$!
	made_devlog=1
	for _ in $(seq 600); do [ -e "$TMP/listening" ] && break; sleep 0.1; done
	[ -e "$TMP/listening" ] || { echo "FAIL: could not listen at /dev/log"; exit 1; }
	read_log() { cat "$TMP/syslog.txt"; }
elif command -v journalctl >/dev/null && journalctl -n 0 >/dev/null 2>&1; then
	since=$(date +%s)
	read_log() { journalctl -t cellfs --since "@$since" -o short 2>/dev/null; }
else
	echo "SKIP: /dev/log belongs to a syslog daemon whose files this test cannot know (no journal)"
	exit 77
fi

for s in fg bg; do
	"$CELLCTL" --db "$TMP/$s" createtable t || fail "createtable in $s"
done

# ---- in the foreground: stderr (lib.sh's mount_store runs -f)
mount_store "$TMP/fg"
strip_transport wait
unmount_store

# ---- in the background: syslog, as cellfs[PID]
"$CELLFS" "$TMP/bg" "$MNT" ${transport_opts[@]+"${transport_opts[@]}"} 2>"$TMP/bg.err" || fail "the background mount failed: $(cat "$TMP/bg.err")"
pid=$(daemon_pids | head -1)
[ -n "$pid" ] || fail "no daemon serves $MNT"
want="cellfs\[$pid\]: transport: "
for _ in $(seq 600); do
	read_log | grep -q "$want" && break
	sleep 0.1
done
read_log | grep -q "$want" || fail "the background daemon's transport line is not in syslog; it holds: $(read_log | tail -5)"
grep -q "transport" "$TMP/bg.err" && fail "the background daemon printed its log line on stderr too"
read_log | grep -q "cellfs\[[0-9]*\]: cellfs: " && fail "a syslog line repeats the name: $(read_log | grep "cellfs: cellfs: " | head -1)"
fusermount3 -u "$MNT" || fail "fusermount3 -u failed"
for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$pid" 2>/dev/null || fail "the background daemon did not end at unmount"
exit $status
