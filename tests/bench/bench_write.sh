#!/usr/bin/env bash
# bench_write.sh — writing through the mount against tmpfs and bindfs: a shell loop creating 20k cells
# with `echo > f`, the same loop overwriting them, `rm -rf` of them, and `cp -a` of a 20k-file table into
# the mount and out of it; pinned to one CPU and unpinned. Prints the times, the ratios cellfs/tmpfs and
# cellfs/bindfs, the FUSE requests per file by kind and the targets. With -f FLOORW, two more columns:
# the same loops through floorw (floorw.c, the cheapest writable FUSE daemon, with cellfs's settings: what
# FUSE itself costs a writer) answering FLUSH (floor) and refusing it as bindfs does (floor-noflush);
# with -t uring also floorw on cellfs's io_uring transport (floor-uring: what FUSE over io_uring costs).
# With -k, one more column: cellfs again, in a table whose Key Visualizer recording is off (`cellctl
# updatetable T keyviz=off`), run in turn with the others: what the recording costs (on/off).
# A benchmark: it exits 0 whatever the figures (1 only if it could not run). See README.md.
#
# usage: bench_write.sh CELLFS CELLCTL [-n CELLS] [-r REPEATS] [-s best|median] [-m "pinned unpinned"] [-t uring|fuse]
#                       [-w "WORKLOADS"] [-f FLOORW] [-k]
set -u
export LC_ALL=C

die() { echo "bench_write: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: bench_write.sh CELLFS CELLCTL [-n CELLS] [-r REPEATS] [-s best|median] [-m MODES] [-w WORKLOADS] [-t uring|fuse]"
cellfs=$(realpath "$1") cellctl=$(realpath "$2")
shift 2
ncells=20000 repeats=5 stat=best modes="pinned unpinned" floorw="" kvoff="" transport=fuse
workloads="create overwrite rm cp-in cp-out"
while getopts n:r:s:m:w:f:t:k o; do
	case $o in
	n) ncells=$OPTARG ;;
	r) repeats=$OPTARG ;;
	s) stat=$OPTARG ;;
	m) modes=$OPTARG ;;
	t) transport=$OPTARG ;;
	w) workloads=$OPTARG ;;
	f) floorw=$(realpath "$OPTARG") || die "no floorw at $OPTARG" ;;
	k) kvoff=1 ;;
	*) die "unknown option" ;;
	esac
done
nrows=$((ncells / 10)) # 10 columns a row

[ -e /dev/fuse ] || { echo "bench_write: no /dev/fuse: skipped"; exit 0; }
command -v bindfs >/dev/null || die "bindfs is missing (tools/install-deps installs it)"
command -v getfattr >/dev/null || die "getfattr is missing (package attr)"

# Everything in tmpfs, the store too: the figures are the daemon's and FUSE's, not the disk's.
work=$(mktemp -d /dev/shm/cellfs-benchw.XXXXXX) || die "mktemp under /dev/shm failed"
store=$work/store cmnt=$work/cellfs bsrc=$work/bindsrc bmnt=$work/bindfs tdir=$work/tmpfs
src=$work/src out=$work/out fmnt=$work/floor nmnt=$work/floor-noflush umnt=$work/floor-uring
cpid="" bpid="" fpid="" npid="" upid=""
fss="tmpfs bindfs cellfs"
[ -n "$floorw" ] && fss+=" floor floor-noflush"
[ -n "$floorw" ] && [ "$transport" = uring ] && fss+=" floor-uring"
[ -n "$kvoff" ] && fss+=" cellfs-kvoff"
mkdir -p "$cmnt" "$bsrc" "$bmnt" "$tdir" "$src" "$out" "$fmnt" "$nmnt" "$umnt" || die "mkdir in $work"

. "$(dirname "$0")/lib.sh"
check_transport
cleanup() {
	unmount_all
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

pin=()
mount_floor() { # floor | floor-noflush | floor-uring
	if [ "$1" = floor ]; then
		unmount "$fmnt" "$fpid"
		"${pin[@]}" "$floorw" "$fmnt" -f >/dev/null &
		fpid=$!
		wait_mounted "$fmnt" floorw
	elif [ "$1" = floor-uring ]; then
		unmount "$umnt" "$upid"
		"${pin[@]}" "$floorw" "$umnt" -f -o uring >/dev/null 2>"$work/floor-uring.err" &
		upid=$!
		wait_mounted "$umnt" "floorw -o uring"
	else
		unmount "$nmnt" "$npid"
		"${pin[@]}" "$floorw" "$nmnt" -f -o no_flush >/dev/null &
		npid=$!
		wait_mounted "$nmnt" "floorw -o no_flush"
	fi
}

"$cellctl" --db "$store" createtable seed >/dev/null || die "cellctl createtable failed"

# The loops, run by bash in the table's directory: NROWS rows r1..rN, family cf, columns q0..q9.
loop_create='for ((r = 1; r <= N; r++)); do mkdir -p r$r/cf; for q in 0 1 2 3 4 5 6 7 8 9; do echo "v$r.$q" > r$r/cf/q$q; done; done'
loop_overwrite='for ((r = 1; r <= N; r++)); do for q in 0 1 2 3 4 5 6 7 8 9; do echo "w$r.$q" > r$r/cf/q$q; done; done'

# The table directory of filesystem FS, made empty (cellfs: a new table).
table_dir() { # FS
	case $1 in
	tmpfs) echo "$tdir/t" ;;
	bindfs) echo "$bmnt/t" ;;
	cellfs) echo "$cmnt/t" ;;
	cellfs-kvoff) echo "$cmnt/toff" ;;
	floor) echo "$fmnt/t" ;;
	floor-noflush) echo "$nmnt/t" ;;
	floor-uring) echo "$umnt/t" ;;
	esac
}
fresh_table() { # FS: an empty table directory
	local d
	d=$(table_dir "$1")
	if [ -d "$d" ]; then
		if [ "$1" = cellfs ] || [ "$1" = cellfs-kvoff ]; then
			rm -rf "$d"/* 2>/dev/null
			rmdir "$d" || die "cannot drop table ${d##*/} in cellfs"
		else
			rm -rf "$d"
		fi
	fi
	mkdir "$d" || die "mkdir $d"
	# With -k both tables are set by cellctl, a write of another process: the mount drops its caches
	# when it sees one (fs/watch.c, within 200 ms), so both pay it, and before the timed run.
	if [ -n "$kvoff" ] && { [ "$1" = cellfs ] || [ "$1" = cellfs-kvoff ]; }; then
		local onoff=on
		[ "$1" = cellfs-kvoff ] && onoff=off
		"$cellctl" --db "$store" updatetable "${d##*/}" keyviz=$onoff ||
			die "cellctl updatetable ${d##*/} keyviz=$onoff failed"
		sleep 1
	fi
}
# The state a workload starts from (not timed).
prepare() { # WL FS
	local d
	d=$(table_dir "$2")
	case $1 in
	create | cp-in) fresh_table "$2" ;;
	overwrite | rm | cp-out)
		fresh_table "$2"
		(cd "$d" && N=$nrows bash -c "N=$nrows; $loop_create") || die "filling $d failed"
		;;
	esac
	rm -rf "$out"/*
}
run_cmd() { # WL FS: the timed command, in the table's directory
	local d
	d=$(table_dir "$2")
	case $1 in
	create) (cd "$d" && "${pin[@]}" bash -c "N=$nrows; $loop_create") ;;
	overwrite) (cd "$d" && "${pin[@]}" bash -c "N=$nrows; $loop_overwrite") ;;
	rm) (cd "$d" && "${pin[@]}" rm -rf -- ./*) ;;
	cp-in) "${pin[@]}" cp -a "$src/t/." "$d/" ;;
	cp-out) "${pin[@]}" cp -a "$d/." "$out/" ;;
	esac
}

# A 20k-file tree to copy in, as the create loop makes it, with times set (cp -a carries them).
mkdir -p "$src/t" && (cd "$src/t" && bash -c "N=$nrows; $loop_create") || die "making the source tree"
find "$src/t" -type f -exec touch -d '2015-03-16 19:53:32.156789' {} + || die "touch"

stats() { getfattr --only-values -n user.cellfs.stats "$cmnt" 2>/dev/null; }
stats_into() { # ARRAY: fill the associative array named ARRAY from the counters
	local -n a=$1
	local k v
	a=()
	while read -r k v; do a[$k]=$v; done < <(stats)
}
daemon_cpu() { cat /proc/"$cpid"/task/*/schedstat 2>/dev/null | awk '{ n += $1 } END { print n + 0 }'; }
pick() {
	sort -g | awk -v s="$stat" '{ v[NR] = $1 }
		END { print s == "best" ? v[1] : (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

declare -A result reqs cpu
elapsed=0
run_once() { # WL FS
	local t0 t1
	prepare "$1" "$2"
	sync
	t0=$EPOCHREALTIME
	run_cmd "$1" "$2" || echo "bench_write: $1 on $2 failed" >&2
	t1=$EPOCHREALTIME
	elapsed=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
}

run_mode() {
	local mode=$1 wl fs r
	if [ "$mode" = pinned ]; then pin=(taskset -c 0); else pin=(); fi
	mount_cellfs
	mount_bindfs "$bsrc"
	if [ -n "$floorw" ]; then
		mount_floor floor
		mount_floor floor-noflush
		[ "$transport" = uring ] && mount_floor floor-uring
	fi
	for wl in $workloads; do
		local -A times=()
		for ((r = 0; r < repeats; r++)); do
			for fs in $fss; do
				run_once "$wl" "$fs"
				times[$fs]+="$elapsed "
			done
		done
		for fs in $fss; do
			result[$mode,$wl,$fs]=$(printf '%s\n' ${times[$fs]} | pick)
		done
		# Requests per file and the daemon's CPU: one more run between two readings of the counters.
		prepare "$wl" cellfs
		local -A before after
		stats_into before
		local c0 c1 line="" total=0 n k
		c0=$(daemon_cpu)
		run_cmd "$wl" cellfs
		c1=$(daemon_cpu)
		stats_into after
		for k in "${!after[@]}"; do
			n=$((${after[$k]:-0} - ${before[$k]:-0}))
			[ "$k" = getxattr ] && n=$((n - 1)) # the reading itself
			[ "$n" -gt 0 ] || continue
			total=$((total + n))
			line+=" $k $(awk -v n="$n" -v e="$ncells" 'BEGIN { printf "%.2f", n / e }')"
		done
		reqs[$mode,$wl]="$(awk -v n="$total" -v e="$ncells" 'BEGIN { printf "%.2f", n / e }')|$(echo "$line" | xargs -n2 | sort | tr '\n' ' ')"
		cpu[$mode,$wl]=$(awk -v a="$c0" -v b="$c1" -v n="$total" 'BEGIN {
			printf "%.3f s", (b - a) / 1e9; if (n >= 100) printf ", %.1f us/request", (b - a) / 1e3 / n }')
	done
	unmount_all
}

wl_target() {
	case $1 in
	create) echo 3.5 ;;
	rm) echo 3.0 ;;
	*) echo - ;;
	esac
}

report() {
	local mode=$1
	report_table "$mode" file 10 8 70
	if [ -n "$floorw" ]; then report_floor "$mode"; fi
	if [ -n "$kvoff" ]; then report_kvoff "$mode"; fi
}

# The Key Visualizer's recording: cellfs in table t (on, the default) against table toff (off).
report_kvoff() {
	local mode=$1 wl c k
	echo "the Key Visualizer's recording: cellfs in a table with keyviz on (t) and off (toff), same mount, runs interleaved"
	printf '%-10s %8s %8s %8s\n' workload on off on/off
	for wl in $workloads; do
		c=${result[$mode,$wl,cellfs]} k=${result[$mode,$wl,cellfs-kvoff]}
		awk -v w="$wl" -v c="$c" -v k="$k" 'BEGIN { printf "%-10s %8.4f %8.4f %8.4f\n", w, c, k, c / k }'
	done
}

# The floor: the same loops through floorw, answering FLUSH (floor) and not (noflush, as bindfs).
report_floor() {
	local mode=$1 wl t b c f n u
	echo "the floor: floorw serving the writes from memory with cellfs's settings; noflush: floorw -o no_flush"
	printf '%-10s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n' workload tmpfs bindfs cellfs floor noflush f/tmpfs \
		f/bindfs n/bindfs c/floor
	for wl in $workloads; do
		t=${result[$mode,$wl,tmpfs]} b=${result[$mode,$wl,bindfs]} c=${result[$mode,$wl,cellfs]}
		f=${result[$mode,$wl,floor]} n=${result[$mode,$wl,floor-noflush]}
		awk -v w="$wl" -v t="$t" -v b="$b" -v c="$c" -v f="$f" -v n="$n" 'BEGIN {
			printf "%-10s %8.4f %8.4f %8.4f %8.4f %8.4f %8.2f %8.2f %8.2f %8.2f\n", w, t, b, c, f, n,
				f / t, f / b, n / b, c / f }'
	done
	[ "$transport" = uring ] || return 0
	echo "the io_uring floor: floorw -o uring, on cellfs's own transport ($(grep -o 'transport: .*' "$work/floor-uring.err" | head -1))"
	printf '%-10s %8s %8s %8s %8s %8s\n' workload floor floor-ur fu/floor cellfs c/fl-ur
	for wl in $workloads; do
		f=${result[$mode,$wl,floor]} u=${result[$mode,$wl,floor-uring]} c=${result[$mode,$wl,cellfs]}
		awk -v w="$wl" -v f="$f" -v u="$u" -v c="$c" 'BEGIN {
			printf "%-10s %8.4f %8.4f %8.2f %8.4f %8.2f\n", w, f, u, u / f, c, c / u }'
	done
}

echo "bench_write: $ncells cells ($nrows rows x 10 columns, family cf), shell loops in bash; tmpfs tree," \
	"bindfs $(bindfs --version 2>/dev/null | head -1 | awk '{ print $2 }') over tmpfs, cellfs store in tmpfs ($work)"
echo "bench_write: load average before: $(cut -d' ' -f1-3 /proc/loadavg) (figures from a busy machine are worth little)"
for mode in $modes; do
	run_mode "$mode"
	report "$mode"
done
echo
echo "bench_write: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
