# lib.sh — what the benchmark scripts that mount (bench_mount.sh, bench_write.sh) share. Sourced (bash);
# expects die(), and for the mounts the variables named there.

unmount() { # MOUNTPOINT PID: unmount and wait for the daemon to end
	if mountpoint -q "$1"; then
		fusermount3 -u "$1" 2>/dev/null || { sleep 0.2; fusermount3 -uz "$1" 2>/dev/null; }
	fi
	if [ -n "$2" ]; then
		wait "$2" 2>/dev/null
	fi
}

wait_mounted() { # MOUNTPOINT WHAT: up to 10 s for the mount to be there
	for _ in $(seq 200); do mountpoint -q "$1" && return 0; sleep 0.05; done
	die "$2 did not mount"
}

# The mounts both scripts make, run under the command prefix PIN ("taskset -c 0" or nothing): cellfs of
# STORE at CMNT (daemon pid CPID), bindfs of SRC at BMNT (pid BPID). Each remounts if mounted.
mount_cellfs() {
	unmount "$cmnt" "$cpid"
	"${pin[@]}" "$cellfs" "$store" "$cmnt" -f >/dev/null &
	cpid=$!
	wait_mounted "$cmnt" cellfs
}
mount_bindfs() { # SRC
	unmount "$bmnt" "$bpid"
	"${pin[@]}" bindfs -f "$1" "$bmnt" >/dev/null &
	bpid=$!
	wait_mounted "$bmnt" bindfs
}
