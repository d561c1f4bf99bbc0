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
# STORE at CMNT (daemon pid CPID) on TRANSPORT (-t: uring, fuse), bindfs of SRC at BMNT (pid BPID). Each
# remounts if mounted. The floor daemons stay on /dev/fuse.
: "${transport:=fuse}" # (-t, parsed before this is sourced)
transport_opt() { # the cellfs option for $transport
	case $transport in
	uring) echo uring ;;
	fuse) echo nouring ;;
	*) die "-t $transport: uring or fuse" ;;
	esac
}
transport_name() { # as the tables say it
	[ "$transport" = uring ] && echo io_uring || echo /dev/fuse
}
# Checks that the kernel offers io_uring for -t uring (else there is nothing to measure).
check_transport() {
	transport_opt >/dev/null
	if [ "$transport" = uring ] && [ "$(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null)" != Y ]; then
		die "-t uring: FUSE over io_uring is off (as root: echo 1 > /sys/module/fuse/parameters/enable_uring)"
	fi
}
mount_cellfs() {
	unmount "$cmnt" "$cpid"
	"${pin[@]}" "$cellfs" "$store" "$cmnt" -f -o "$(transport_opt)" 2>"$work/cellfs.err" >/dev/null &
	cpid=$!
	wait_mounted "$cmnt" cellfs
}
mount_bindfs() { # SRC
	unmount "$bmnt" "$bpid"
	"${pin[@]}" bindfs -f "$1" "$bmnt" >/dev/null &
	bpid=$!
	wait_mounted "$bmnt" bindfs
}
