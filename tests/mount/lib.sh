# lib.sh — what every mount test script shares (sourced; bash). A fresh mktemp directory TMP with the
# mountpoint MNT; mount_store runs the daemon in the foreground as a child of this shell (so its pid and
# exit status are known); the EXIT trap unmounts (fusermount3 -u, then lazily), kills a daemon left
# behind and removes TMP. Skips (77) only when /dev/fuse is absent.
set -u
if [ ! -c /dev/fuse ]; then
	echo "SKIP: no /dev/fuse"
	exit 77
fi
: "${CELLFS:?}" "${CELLCTL:?}" "${MOUNTCHECK:?}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cellfs-mount.XXXXXX")
MNT=$TMP/mnt
mkdir "$MNT"
DAEMON_PID=
# shellcheck disable=SC2034 # status: set by fail, read by the scripts that source this
status=0

# is_mounted, daemon_pids
. "$(dirname "${BASH_SOURCE[0]}")/procs.sh"

cleanup() {
	local rc=$?
	if is_mounted; then
		fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT"
	fi
	if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
		kill "$DAEMON_PID"
		wait "$DAEMON_PID" 2>/dev/null
	fi
	for pid in $(daemon_pids); do # daemons that went to the background (cli.sh)
		kill "$pid" 2>/dev/null
	done
	is_mounted || rm -rf "$TMP"
	exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP


# shellcheck disable=SC2034 # status: read by the scripts that source this
fail() {
	echo "FAIL: $*" >&2
	status=1
}

# mount_store STORE [OPTION...]: mount STORE at MNT, wait until the mount is there.
mount_store() {
	local store=$1
	shift
	"$CELLFS" "$store" "$MNT" -f "$@" 2>"$TMP/daemon.err" &
	DAEMON_PID=$!
	for _ in $(seq 6000); do # (60 s: the ASan daemon on a loaded machine)
		mountpoint -q "$MNT" && return 0
		if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
			wait "$DAEMON_PID"
			echo "FAIL: cellfs $store $MNT -f $* exited ($?) without mounting: $(cat "$TMP/daemon.err")" >&2
			DAEMON_PID=
			exit 1
		fi
		sleep 0.01
	done
	echo "FAIL: cellfs $store $MNT did not mount in 60s" >&2
	exit 1
}

# unmount_store: unmount; the daemon must exit 0 having printed nothing (a crash is never a pass).
unmount_store() {
	local rc
	if ! fusermount3 -u "$MNT"; then
		fail "fusermount3 -u $MNT failed"
		return
	fi
	wait "$DAEMON_PID"
	rc=$?
	DAEMON_PID=
	[ $rc -eq 0 ] || fail "the daemon exited with status $rc after fusermount3 -u"
	[ ! -s "$TMP/daemon.err" ] || fail "the daemon wrote to stderr: $(head -c 2000 "$TMP/daemon.err")"
}

check() { # check WHAT COMMAND...: run a mountcheck.py subcommand, note a failure
	python3 "$MOUNTCHECK" "$@" || fail "mountcheck.py $1"
}
