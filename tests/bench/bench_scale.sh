#!/usr/bin/env bash
# bench_scale.sh — how cellfs's costs grow with the table and with a directory. Figures only: it exits 0
# whatever they are (1 only if it could not run). See README.md, "scale".
#
# Tables: for each size in CELLS (default "100000 1000000"), a table of CELLS/2 rows in one flat
# directory of row keys, one family, two columns (`cellctl import` of a CSV), then through a fresh mount:
# `ls -l` of the table (one directory of CELLS/2 entries), `find` over the table, the unmount (with the
# kernel holding every inode find saw), and on a fresh mount `cat` of the last cell in key order. Each
# step: its time and the time per entry; the CPU time per entry of the daemon (all its threads) and of
# the client (ls, find, rm: its user and system time, the kernel's side of FUSE included), which tell
# whose cost grows; the daemon's RSS after it (VmRSS; of it RssAnon, the daemon's own memory, the rest
# being the store's pages mapped by LMDB) and its peak (VmHWM).
# Directories: for each size in DIRS (default "1000 10000 100000"), a shell loop creating that many files
# in one family directory (`echo x > f`), `ls -l` of it (after dropping the kernel's caches of the mount),
# and `rm -rf` of it: time and time per entry.
# The store is in /dev/shm, so the figures are the daemon's and FUSE's, not the disk's.
#
# usage: bench_scale.sh CELLFS CELLCTL [-c "CELLS..."] [-d "DIRS..."] [-p]   (-p: pinned to CPU 0)
set -u
export LC_ALL=C

die() { echo "bench_scale: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: bench_scale.sh CELLFS CELLCTL [-c CELLS] [-d DIRS] [-p]"
cellfs=$(realpath "$1") cellctl=$(realpath "$2")
shift 2
sizes="100000 1000000" dirs="1000 10000 100000" pin=()
while getopts c:d:p o; do
	case $o in
	c) sizes=$OPTARG ;;
	d) dirs=$OPTARG ;;
	p) pin=(taskset -c 0) ;;
	*) die "unknown option" ;;
	esac
done
[ -e /dev/fuse ] || { echo "bench_scale: no /dev/fuse: skipped"; exit 0; }
command -v getfattr >/dev/null || die "getfattr is missing (package attr)"

work=$(mktemp -d /dev/shm/cellfs-scale.XXXXXX) || die "mktemp under /dev/shm failed"
cmnt=$work/mnt store=$work/store cpid=""
mkdir -p "$cmnt" || die "mkdir in $work"
. "$(dirname "$0")/lib.sh"
cleanup() { unmount "$cmnt" "$cpid"; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 1' INT TERM

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
per() { awk -v t="$1" -v n="$2" 'BEGIN { printf "%.2f", t * 1e6 / n }'; } # µs per entry
mem() { # the daemon's VmRSS, of it RssAnon (its own memory: the rest is the store's mapped pages), VmHWM,
	# and RssAnon over the inodes it holds for the kernel (user.cellfs.stats)
	local inodes
	inodes=$(getfattr --absolute-names --only-values -n user.cellfs.stats "$cmnt" 2>/dev/null |
		awk '$1 == "inodes" { print $2 }')
	awk -v i="${inodes:-0}" '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } /^VmHWM:/ { h = $2 }
		END { printf "RSS %.1f MB, anon %.1f MB (peak RSS %.1f MB), %d inodes, %.0f B/inode", r / 1024,
			a / 1024, h / 1024, i, i ? a * 1024 / i : 0 }' "/proc/$cpid/status"
}
dcpu() { awk '{ printf "%d", ($14 + $15) * 1e6 / '"$(getconf CLK_TCK)"' }' "/proc/$cpid/stat"; } # µs
# Run CMD... as a step: sets d (seconds), dc (the daemon's CPU, µs) and cc (the client's, µs).
step() {
	local t c0 tf
	tf=$(mktemp) c0=$(dcpu) t=$(now)
	{ TIMEFORMAT='%U %S'; time "$@" >/dev/null 2>&4 || echo "bench_scale: $* failed" >&4; } 4>&2 2>"$tf"
	d=$(since "$t") dc=$(($(dcpu) - c0)) cc=$(awk 'END { printf "%d", ($1 + $2) * 1e6 }' "$tf")
	rm -f "$tf"
}
line() { # STEP SECONDS ENTRIES [DAEMON_CPU_US CLIENT_CPU_US]
	local cpu=""
	[ $# -ge 5 ] && cpu=$(awk -v d="$4" -v c="$5" -v n="$3" 'BEGIN { printf "cpu/entry: daemon %.2f client %.2f µs", d / n, c / n }')
	printf '  %-26s %9.3f s %9s µs/entry  %s  daemon %s\n' "$1" "$2" "$(per "$2" "$3")" "$cpu" "$(mem)"
}
drop_caches() { sync; echo 2 >/proc/sys/vm/drop_caches 2>/dev/null || true; }

echo "bench_scale: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)${pin:+, pinned to CPU 0}"
for cells in $sizes; do
	rows=$((cells / 2))
	rm -rf "$store"
	"$cellctl" --db "$store" createtable t families=cf >/dev/null || die "createtable"
	# rows r0000000..: one flat directory (no delimiter in the keys), two columns
	awk -v n="$rows" 'BEGIN { print ",cf,cf"; print ",a,b"; for (i = 0; i < n; i++) printf "r%09d,%d,x\n", i, i }' \
		>"$work/t.csv"
	echo "table: $cells cells, $rows rows in one directory, one family, two columns"
	t=$(now)
	"$cellctl" --db "$store" import t "$work/t.csv" >/dev/null || die "import"
	d=$(since "$t")
	printf '  %-26s %9.3f s %9s µs/cell\n' "cellctl import" "$d" "$(per "$d" "$cells")"
	rm -f "$work/t.csv"

	"${pin[@]}" "$cellfs" "$store" "$cmnt" -f >/dev/null &
	cpid=$!
	wait_mounted "$cmnt" cellfs
	line "mounted" 0 1
	step ls -l "$cmnt/t"; line "ls -l of the table" "$d" "$rows" "$dc" "$cc"
	n=$((4 * rows + 1)) # the table, each row's directory and family directory, two files a row
	step find "$cmnt/t"; line "find ($n entries)" "$d" "$n" "$dc" "$cc"
	t=$(now); unmount "$cmnt" "$cpid"; d=$(since "$t")
	printf '  %-26s %9.3f s   (the kernel holding every inode find saw)\n' "unmount" "$d"
	# A fresh mount: one cell at the end of the key space, from the root down.
	"${pin[@]}" "$cellfs" "$store" "$cmnt" -f >/dev/null &
	cpid=$!
	wait_mounted "$cmnt" cellfs
	last=$(printf 'r%09d' $((rows - 1)))
	t=$(now); cat "$cmnt/t/$last/cf/b" >/dev/null; d=$(since "$t"); line "cat of the last cell" "$d" 1
	unmount "$cmnt" "$cpid"
	cpid=""
done

rm -rf "$store"
"$cellctl" --db "$store" createtable t families=cf >/dev/null || die "createtable"
"${pin[@]}" "$cellfs" "$store" "$cmnt" -f >/dev/null &
cpid=$!
wait_mounted "$cmnt" cellfs
for n in $dirs; do
	echo "directory: $n files in one family directory"
	dir=$cmnt/t/r/cf
	mkdir -p "$dir" || die "mkdir -p $dir"
	t=$(now)
	for ((i = 0; i < n; i++)); do echo x >"$dir/c$i"; done
	d=$(since "$t"); line "create (echo x > f)" "$d" "$n"
	drop_caches
	step ls -l "$dir"; line "ls -l" "$d" "$n" "$dc" "$cc"
	step rm -rf "$dir"; line "rm -rf" "$d" "$n" "$dc" "$cc"
done
exit 0
