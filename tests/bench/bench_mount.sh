#!/usr/bin/env bash
# bench_mount.sh — the mount against tmpfs and bindfs: ls -lR, find, cat of every file and tar c over a
# 20k-cell table, each on a fresh mount and repeated (warm), pinned to one CPU and unpinned. Prints the
# times, the ratios cellfs/tmpfs and cellfs/bindfs, the FUSE requests cellfs served per entry, and the
# targets. With -f FLOORFS, two more columns: the tmpfs tree served from memory by floorfs (floorfs.c, the
# cheapest FUSE daemon: what FUSE itself costs), with OPEN (floor) and with -o no_open (floor-noopen);
# with -t uring also floorfs on cellfs's io_uring transport (floor-uring: what FUSE over io_uring costs).
# A benchmark: it exits 0 whatever the figures (1 only if it could not run). See README.md.
#
# usage: bench_mount.sh CELLFS GEN_TABLE [-f FLOORFS] [-n CELLS] [-r REPEATS] [-s best|median]
#                       [-m "pinned unpinned"] [-t uring|fuse] [-w "WORKLOADS"]
set -u
export LC_ALL=C

die() { echo "bench_mount: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: bench_mount.sh CELLFS GEN_TABLE [-f FLOORFS] [-n CELLS] [-r REPEATS] [-s best|median] [-m MODES] [-w WORKLOADS] [-t uring|fuse]"
cellfs=$(realpath "$1") gen=$(realpath "$2")
shift 2
ncells=20000 repeats=5 stat=best modes="pinned unpinned" floorfs="" transport=fuse
workloads="lsR-fresh lsR-warm find-fresh find-warm cat-fresh cat-warm tar-fresh tar-warm"
while getopts f:n:r:s:m:w:t: o; do
	case $o in
	f) floorfs=$(realpath "$OPTARG") || die "no floorfs at $OPTARG" ;;
	n) ncells=$OPTARG ;;
	r) repeats=$OPTARG ;;
	s) stat=$OPTARG ;;
	m) modes=$OPTARG ;;
	t) transport=$OPTARG ;;
	w) workloads=$OPTARG ;;
	*) die "unknown option" ;;
	esac
done

[ -e /dev/fuse ] || { echo "bench_mount: no /dev/fuse: skipped"; exit 0; }
command -v bindfs >/dev/null || die "bindfs is missing (tools/install-deps installs it)"
command -v fusermount3 >/dev/null || die "fusermount3 is missing"
command -v getfattr >/dev/null || die "getfattr is missing (package attr)"

# Everything lives in tmpfs, the store too: a fresh mount then measures the daemon and FUSE, not the disk.
work=$(mktemp -d /dev/shm/cellfs-bench.XXXXXX) || die "mktemp under /dev/shm failed"
store=$work/store tree=$work/tree cmnt=$work/cellfs bmnt=$work/bindfs fmnt=$work/floor nmnt=$work/floor-noopen
umnt=$work/floor-uring
cpid="" bpid="" fpid="" npid="" upid=""
mkdir -p "$tree" "$cmnt" "$bmnt" "$fmnt" "$nmnt" "$umnt" "$work/empty" || die "mkdir in $work"
# The filesystems timed, in the order they take turns.
fss="tmpfs bindfs cellfs"
[ -n "$floorfs" ] && fss+=" floor floor-noopen"
[ -n "$floorfs" ] && [ "$transport" = uring ] && fss+=" floor-uring"
floors=${fss#tmpfs bindfs cellfs}

. "$(dirname "$0")/lib.sh"
check_transport
cleanup() {
	unmount_all
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# PIN is the command prefix of the current mode: "taskset -c 0" or nothing.
pin=()

# floorfs over the tmpfs tree: floor answers OPEN, floor-noopen (-o no_open) makes the kernel skip it.
# It reads the whole tree into memory before it mounts.
mount_floor() { # floor | floor-noopen | floor-uring
	local mnt=$fmnt opt=()
	if [ "$1" = floor-noopen ]; then
		mnt=$nmnt opt=(-o no_open)
		unmount "$nmnt" "$npid"
	elif [ "$1" = floor-uring ]; then
		mnt=$umnt opt=(-o uring)
		unmount "$umnt" "$upid"
	else
		unmount "$fmnt" "$fpid"
	fi
	"${pin[@]}" "$floorfs" "$tree" "$mnt" -f "${opt[@]}" >/dev/null 2>"$work/$1.err" &
	case $1 in
	floor-noopen) npid=$! ;;
	floor-uring) upid=$! ;;
	*) fpid=$! ;;
	esac
	wait_mounted "$mnt" "floorfs ($1)"
}
drop_caches() {
	sync
	[ -w /proc/sys/vm/drop_caches ] && echo 3 >/proc/sys/vm/drop_caches
}

# ---- the data: the table in a store, and the same tree as plain files in tmpfs ----
"$gen" -n "$ncells" "$store" || die "gen_table failed"
mount_cellfs
cp -a "$cmnt/quotes" "$tree/" || die "copying the mounted table into tmpfs failed"
diff -r "$cmnt/quotes" "$tree/quotes" >/dev/null || die "the tmpfs copy differs from the mount"
listing() { (cd "$1" && find . \( -type d -printf 'd %P %T@\n' \) -o -printf 'f %P %s %T@\n' | sort | md5sum); }
[ "$(listing "$cmnt/quotes")" = "$(listing "$tree/quotes")" ] || die "the tmpfs copy's names, sizes or times differ"
# floorfs must serve that same tree: same contents, names, sizes and times.
if [ -n "$floorfs" ]; then
	for f in $floors; do
		mount_floor "$f"
		m=$fmnt
		[ "$f" = floor-noopen ] && m=$nmnt
		[ "$f" = floor-uring ] && m=$umnt
		diff -r "$m/quotes" "$tree/quotes" >/dev/null || die "$f differs from the tmpfs tree"
		[ "$(listing "$m/quotes")" = "$(listing "$tree/quotes")" ] || die "$f's names, sizes or times differ"
	done
	unmount "$fmnt" "$fpid"
	unmount "$nmnt" "$npid"
	unmount "$umnt" "$upid"
	fpid="" npid="" upid=""
fi
nfiles=$(find "$tree/quotes" -type f | wc -l)
ndirs=$(find "$tree/quotes" -type d | wc -l)
nentries=$((nfiles + ndirs))
unmount "$cmnt" "$cpid"
cpid=""
[ -w /proc/sys/vm/drop_caches ] && dropping="dropped (echo 3 > drop_caches)" || dropping="NOT dropped (not root)"

# ---- workloads ----
wl_cmd() {
	case ${1%-*} in
	lsR) echo 'ls -lR . >/dev/null' ;;
	find) echo 'find . >/dev/null' ;;
	cat) echo 'find . -type f -print0 | xargs -0 cat >/dev/null' ;;
	tar) echo 'tar cf - . | cat >/dev/null' ;; # through cat: GNU tar does not read files for /dev/null
	esac
}
wl_target() { # the pinned target as a ratio to tmpfs
	case ${1%-*} in
	cat) echo 2.0 ;;
	*) echo 1.5 ;;
	esac
}

# The request counters of the mounted cellfs, as "name count" lines.
stats() { getfattr --only-values -n user.cellfs.stats "$cmnt" 2>/dev/null; }
declare -A req_before req_over
stats_into() { # ARRAY: fill the associative array named ARRAY from the counters
	local -n a=$1
	local k v
	a=()
	while read -r k v; do a[$k]=$v; done < <(stats)
}

# Time one run of workload WL on filesystem FS (tmpfs, bindfs, cellfs) into $elapsed (seconds). A fresh
# run remounts (cellfs, bindfs) and drops the kernel's caches first, then runs the same command once in
# an empty directory so that the tools themselves (sh, ls, find, tar, their libraries) are not what is
# fresh; none of that is timed.
elapsed=0
run_once() {
	local wl=$1 fs=$2 dir t0 t1
	case $fs in
	tmpfs) dir=$tree/quotes ;;
	bindfs) dir=$bmnt/quotes ;;
	cellfs) dir=$cmnt/quotes ;;
	floor) dir=$fmnt/quotes ;;
	floor-noopen) dir=$nmnt/quotes ;;
	floor-uring) dir=$umnt/quotes ;;
	esac
	if [ "${wl#*-}" = fresh ]; then
		case $fs in
		bindfs) mount_bindfs "$tree" ;;
		cellfs) mount_cellfs ;;
		floor*) mount_floor "$fs" ;;
		esac
		drop_caches
		(cd "$work/empty" && "${pin[@]}" sh -c "$(wl_cmd "$wl")")
	fi
	t0=$EPOCHREALTIME
	(cd "$dir" && "${pin[@]}" sh -c "$(wl_cmd "$wl")")
	t1=$EPOCHREALTIME
	elapsed=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
}

# The best (least) or the median of the numbers on stdin.
pick() {
	sort -g | awk -v s="$stat" '{ v[NR] = $1 }
		END { print s == "best" ? v[1] : (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# CPU time the cellfs daemon has used, all its threads, in ns.
daemon_cpu() { cat /proc/"$cpid"/task/*/schedstat 2>/dev/null | awk '{ n += $1 } END { print n + 0 }'; }

declare -A result reqs cpu
run_mode() {
	local mode=$1 wl fs r
	if [ "$mode" = pinned ]; then pin=(taskset -c 0); else pin=(); fi
	mount_cellfs
	mount_bindfs "$tree"
	for fs in $floors; do mount_floor "$fs"; done
	# What reading the counters costs in requests, subtracted from every workload's figures.
	local -A s1 s2
	stats_into s1
	stats_into s2
	req_over=()
	for k in "${!s2[@]}"; do req_over[$k]=$((s2[$k] - ${s1[$k]:-0})); done
	for wl in $workloads; do
		# The filesystems take turns, so that whatever else the machine does falls on all of them alike.
		local -A times=()
		if [ "${wl#*-}" = warm ]; then
			for fs in $fss; do run_once "$wl" "$fs"; done # warm-up, not counted
		fi
		for ((r = 0; r < repeats; r++)); do
			for fs in $fss; do
				run_once "$wl" "$fs"
				times[$fs]+="$elapsed "
			done
		done
		for fs in $fss; do
			result[$mode,$wl,$fs]=$(printf '%s\n' ${times[$fs]} | pick)
		done
		# The requests per entry and the daemon's CPU time: one more run, between two readings.
		if [ "${wl#*-}" = fresh ]; then
			mount_cellfs
			drop_caches
			(cd "$work/empty" && "${pin[@]}" sh -c "$(wl_cmd "$wl")")
		fi
		stats_into req_before
		local c0 c1
		c0=$(daemon_cpu)
		(cd "$cmnt/quotes" && "${pin[@]}" sh -c "$(wl_cmd "$wl")")
		c1=$(daemon_cpu)
		local -A after
		stats_into after
		local line="" total=0 n
		for k in lookup getattr opendir readdir readdirplus releasedir open read release getxattr listxattr forget statfs; do
			n=$((${after[$k]:-0} - ${req_before[$k]:-0} - ${req_over[$k]:-0}))
			total=$((total + n))
			[ "$n" -gt 0 ] && line+=" $k $(awk -v n="$n" -v e="$nentries" 'BEGIN { printf "%.2f", n / e }')"
		done
		reqs[$mode,$wl]="$(awk -v n="$total" -v e="$nentries" 'BEGIN { printf "%.2f", n / e }')|${line# }"
		cpu[$mode,$wl]=$(awk -v a="$c0" -v b="$c1" -v n="$total" 'BEGIN {
			printf "%.3f s", (b - a) / 1e9; if (n >= 100) printf ", %.1f us/request", (b - a) / 1e3 / n }')
		mount_bindfs "$tree" # a fresh bindfs for the next workload's warm-up as well
	done
	unmount_all
}

report() {
	local mode=$1
	report_table "$mode" entry 11 9 62
	if [ -n "$floorfs" ]; then report_floor "$mode"; fi
}

# The floor: the same runs through floorfs, with OPEN (floor) and without (noopen), against tmpfs and cellfs.
report_floor() {
	local mode=$1 wl t c f n u
	echo "the floor: floorfs serving the tmpfs tree from memory with cellfs's settings; noopen: floorfs -o no_open"
	printf '%-11s %8s %8s %8s %8s %8s %8s %8s %8s\n' workload tmpfs cellfs floor noopen f/tmpfs n/tmpfs c/floor \
		c/noopen
	for wl in $workloads; do
		t=${result[$mode,$wl,tmpfs]} c=${result[$mode,$wl,cellfs]}
		f=${result[$mode,$wl,floor]} n=${result[$mode,$wl,floor-noopen]}
		awk -v wl="$wl" -v t="$t" -v c="$c" -v f="$f" -v n="$n" 'function r(a, b) { return b > 0 ? a / b : 0 }
			BEGIN { printf "%-11s %8.4f %8.4f %8.4f %8.4f %8.2f %8.2f %8.2f %8.2f\n",
				wl, t, c, f, n, r(f, t), r(n, t), r(c, f), r(c, n) }'
	done
	[ "$transport" = uring ] || return 0
	echo "the io_uring floor: floorfs -o uring, on cellfs's own transport ($(grep -o 'transport: .*' "$work/floor-uring.err" | head -1))"
	printf '%-11s %8s %8s %8s %8s %8s\n' workload floor floor-ur fu/floor cellfs c/fl-ur
	for wl in $workloads; do
		f=${result[$mode,$wl,floor]} u=${result[$mode,$wl,floor-uring]} c=${result[$mode,$wl,cellfs]}
		awk -v wl="$wl" -v f="$f" -v u="$u" -v c="$c" 'function r(a, b) { return b > 0 ? a / b : 0 }
			BEGIN { printf "%-11s %8.4f %8.4f %8.2f %8.4f %8.2f\n", wl, f, u, r(u, f), c, r(c, u) }'
	done
}

echo "bench_mount: table quotes, $ncells cells: $nfiles files, $ndirs directories ($nentries entries)"
echo "bench_mount: tmpfs tree in $work; bindfs $(bindfs --version 2>/dev/null | head -1 | awk '{ print $2 }') (defaults);" \
	"page/dentry caches $dropping before each fresh run; fresh cellfs/bindfs$([ -n "$floorfs" ] && echo /floorfs) runs remount first"
echo "bench_mount: load average before: $(cut -d' ' -f1-3 /proc/loadavg) (figures from a busy machine are worth little)"
for mode in $modes; do
	run_mode "$mode"
	report "$mode"
done
echo
echo "bench_mount: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
