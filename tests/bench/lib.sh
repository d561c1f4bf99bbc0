# lib.sh — what the benchmark scripts that mount (bench_mount.sh, bench_write.sh) share. Sourced (bash);
# expects die(), and for the mounts and the report the variables named there.

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

# Unmounts all the mounts above and the floors' (FMNT, NMNT, UMNT: pids FPID, NPID, UPID), and forgets
# their pids.
unmount_all() {
	unmount "$cmnt" "$cpid"
	unmount "$bmnt" "$bpid"
	unmount "$fmnt" "$fpid"
	unmount "$nmnt" "$npid"
	unmount "$umnt" "$upid"
	cpid="" bpid="" fpid="" npid="" upid=""
}

# report_table MODE UNIT W RW QW — the table of MODE's results both scripts print: per workload of
# $workloads the times result[MODE,WL,FS] of tmpfs, bindfs and cellfs, the ratios against wl_target WL's
# target ("-": only <bindfs), the requests per UNIT (entry, file) and their kinds reqs[MODE,WL]
# ("TOTAL|KIND N ..."), and the daemon's CPU time cpu[MODE,WL]. W, RW, QW: the widths of the workload,
# requests and kinds columns.
report_table() {
	local mode=$1 unit=$2 w=$3 rw=$4 qw=$5 wl t b c rt rb tgt met all_met=yes
	echo
	if [ "$mode" = pinned ]; then
		echo "== pinned: daemons and clients on CPU 0 (taskset -c 0); cellfs on $(transport_name); $stat of $repeats runs, seconds"
	else
		echo "== unpinned: any of $(nproc) CPUs; cellfs on $(transport_name); $stat of $repeats runs, seconds"
	fi
	printf "%-${w}s %8s %8s %8s %8s %8s %${rw}s  %-16s %s\n" workload tmpfs bindfs cellfs c/tmpfs c/bindfs \
		"req/$unit" "target (pinned)" met
	for wl in $workloads; do
		t=${result[$mode,$wl,tmpfs]} b=${result[$mode,$wl,bindfs]} c=${result[$mode,$wl,cellfs]}
		tgt=$(wl_target "$wl")
		read -r rt rb met < <(awk -v t="$t" -v b="$b" -v c="$c" -v g="$tgt" 'BEGIN {
			rt = t > 0 ? c / t : 0; rb = b > 0 ? c / b : 0
			printf "%.2f %.2f %s\n", rt, rb, ((g == "-" || rt <= g) && c < b) ? "yes" : "NO" }')
		[ "$met" = NO ] && all_met=no
		printf "%-${w}s %8.4f %8.4f %8.4f %8s %8s %${rw}s  %-16s %s\n" "$wl" "$t" "$b" "$c" "$rt" "$rb" \
			"${reqs[$mode,$wl]%%|*}" "$([ "$tgt" = - ] && echo "<bindfs" || echo "<=${tgt}x, <bindfs")" \
			"$([ "$mode" = pinned ] && echo "$met" || echo "($met)")"
	done
	echo "cellfs, one more run: requests per $unit by kind; the daemon's CPU time (all threads)"
	for wl in $workloads; do
		printf "  %-${w}s %-${qw}s %s\n" "$wl" "${reqs[$mode,$wl]#*|}" "${cpu[$mode,$wl]}"
	done
	[ "$mode" = pinned ] && echo "pinned targets: $([ $all_met = yes ] && echo "all met" || echo "NOT all met")"
	return 0
}
