# lib.sh — what every mount test script shares (sourced; bash). A fresh mktemp directory TMP with the
# mountpoint MNT; mount_store runs the daemon in the foreground as a child of this shell (so its pid and
# exit status are known); the EXIT trap unmounts (fusermount3 -u, then lazily), kills a daemon left
# behind and removes TMP. Skips (77) only when /dev/fuse is absent, or when CELLFS_TRANSPORT=uring asks
# for FUSE over io_uring where it cannot be had.
# CELLFS_TRANSPORT: uring (mount_store passes -o uring), fuse (-o nouring), unset (the daemon's default).
set -u
if [ ! -c /dev/fuse ]; then
	echo "SKIP: no /dev/fuse"
	exit 77
fi
case "${CELLFS_TRANSPORT:-}" in
uring)
	# The kernel's switch for FUSE over io_uring: turned on as root (and left on: a mount running
	# beside this one may be using it), else this suite runs on /dev/fuse only, as the plain one does.
	uring_switch=/sys/module/fuse/parameters/enable_uring
	if [ "$(cat "$uring_switch" 2>/dev/null)" != Y ]; then
		if [ "$(id -u)" = 0 ] && [ -e "$uring_switch" ] && echo 1 2>/dev/null >"$uring_switch"; then
			echo "lib.sh: FUSE over io_uring enabled: wrote 1 to $uring_switch"
		else
			echo "SKIP: FUSE over io_uring cannot be enabled here (root writes 1 to $uring_switch; kernel CONFIG_FUSE_IO_URING): /dev/fuse only"
			exit 77
		fi
	fi
	transport_opts=(-o uring) ;;
fuse) transport_opts=(-o nouring) ;;
'') transport_opts=() ;;
*) echo "FAIL: CELLFS_TRANSPORT=$CELLFS_TRANSPORT: uring, fuse or unset" >&2; exit 1 ;;
esac
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
	"$CELLFS" "$store" "$MNT" -f "${transport_opts[@]}" "$@" 2>"$TMP/daemon.err" &
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
	strip_transport
	[ ! -s "$TMP/daemon.err" ] || fail "the daemon wrote to stderr: $(head -c 2000 "$TMP/daemon.err")"
}

# strip_transport [wait]: the daemon's one line saying which transport serves the mount (fs/README.md),
# checked against CELLFS_TRANSPORT, is taken out of $TMP/daemon.err, so that what else is there can be
# checked exactly. The daemon says it once INIT is answered: with `wait`, it is waited for (60 s).
strip_transport() {
	local line
	if [ "${1:-}" = wait ]; then
		for _ in $(seq 6000); do
			grep -q '^cellfs: transport: ' "$TMP/daemon.err" && break
			sleep 0.01
		done
	fi
	line=$(grep -m1 '^cellfs: transport: ' "$TMP/daemon.err") || return 0 # (unmounted before INIT)
	case "${CELLFS_TRANSPORT:-}" in
	uring) [[ $line == "cellfs: transport: io_uring ("* ]] || fail "not on io_uring: $line" ;;
	fuse) [ "$line" = "cellfs: transport: /dev/fuse (-o nouring)" ] || fail "not on /dev/fuse: $line" ;;
	esac
	sed -i '0,/^cellfs: transport: /{/^cellfs: transport: /d}' "$TMP/daemon.err"
}

# expect_fail STDERR CMD...: CMD exits 1, prints STDERR (exactly) and nothing on stdout, mounts nothing.
expect_fail() {
	local want=$1 rc
	shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc -eq 1 ] || fail "$*: exit status $rc, want 1"
	[ ! -s "$TMP/out" ] || fail "$*: printed on stdout: $(cat "$TMP/out")"
	printf '%s\n' "$want" | cmp -s - "$TMP/err" || fail "$*: stderr
$(cat "$TMP/err")
want
$want"
	if mountpoint -q "$MNT"; then
		fail "$*: mounted anyway"
		fusermount3 -u "$MNT"
	fi
}

check() { # check WHAT COMMAND...: run a mountcheck.py subcommand, note a failure
	python3 "$MOUNTCHECK" "$@" || fail "mountcheck.py $1"
}
