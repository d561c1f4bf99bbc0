#!/bin/bash
# bench_bigtable.sh CELLCTL CELLFS [-n ROWS] [-r REPEATS] [-f BT_FLOOR] [-s] — cellctl and the mount on Bigtable (a private
# emulator) against cbt on the same emulator and the same data: import (cells/s), a full read, and ls -lR
# and cat of the table through the mount against cbt read of the same rows; the client's CPU per cell and
# the emulator's CPU over the same run (the client is the bottleneck when its CPU nears the emulator's).
# BT_FLOOR (tests/bench/bt_floor.c) reads the table with ReadRows and decodes nothing: the transport's
# own cost, the floor under cellctl read. -s skips the mount's figures (minutes at 100,000 rows).
# Figures only (tests/bench/README.md "bigtable"); never a pass or fail on speed. Skips (77) without
# cbt or the emulator.
set -u
cellctl=${1:?usage: bench_bigtable.sh CELLCTL CELLFS [-n ROWS] [-r REPEATS] [-f BT_FLOOR] [-s]}
cellfs=${2:?usage}
shift 2
rows=20000 repeats=3 bt_floor= mount=1
while getopts n:r:f:s o; do
	case $o in
	n) rows=$OPTARG ;;
	r) repeats=$OPTARG ;;
	f) bt_floor=$OPTARG ;;
	s) mount= ;;
	*) exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../oracle/emulator.sh"
command -v cbt >/dev/null || { echo "SKIP: cbt not found"; exit 77; }
[ -x "$emulator" ] || { echo "SKIP: Bigtable emulator not found ($emulator)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cellfs-bench-bt.XXXXXX") || exit 1
mnt=$tmp/mnt
cleanup() { fusermount3 -uz "$mnt" 2>/dev/null; emulator_stop; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
emulator_start "$tmp/emulator.log" || exit 1
mkdir "$tmp/home" "$mnt"
cbt() { HOME=$tmp/home command cbt -project bench -instance cbt -creds /dev/null "$@"; }
cc() { "$cellctl" --db bigtable://bench/cc "$@"; }

# ROWS rows of 5 cells (the seeds' quotes), value-encoded timestamps: both tools read the same file.
# (%.0f: mawk's %d stops at 2^31.)
{
	echo ",MD,MD,MD,MD,MD"
	echo ",ASK,ASKSIZE,BID,BIDSIZE,EXCHANGE"
	awk -v n="$rows" 'BEGIN { for (i = 0; i < n; i++) { t = 1426535612000 + i * 17; ts = t * 1000
		printf "NASDAQ#S%04d#%.0f,%d.75@%.0f,%d@%.0f,%d.25@%.0f,%d@%.0f,NASDAQ@%.0f\n", i % 500, t, 100 + i % 50, ts,
		300 - i % 30, ts, 100 + i % 50, ts, 200 + i % 40, ts, ts } }'
} >"$tmp/quotes.csv"
cells=$((rows * 5))

cpu_of() { # the CPU seconds (user + system) pid $1 has used
	awk '{ print ($14 + $15) / '"$(getconf CLK_TCK)"' }' "/proc/$1/stat"
}
# run NAME CMD...: best wall time of REPEATS runs, with client CPU (from time) and emulator CPU.
run() {
	local name=$1 best= bcpu= bemu=
	shift
	for _ in $(seq "$repeats"); do
		local e0 e1 out wall ucpu
		[ -n "${setup:-}" ] && eval "$setup"
		e0=$(cpu_of "$emu_pid")
		out=$( { TIMEFORMAT='%R %U %S'; time "$@" >/dev/null 2>/dev/null; } 2>&1 | tail -1)
		e1=$(cpu_of "$emu_pid")
		wall=${out%% *}
		ucpu=$(echo "$out" | awk '{ print $2 + $3 }')
		if [ -z "$best" ] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$wall bcpu=$ucpu bemu=$(awk -v a="$e0" -v b="$e1" 'BEGIN { print b - a }')
		fi
	done
	printf '%-28s %8.2f s %10.0f cells/s  client CPU %6.2f s (%5.2f µs/cell)  emulator CPU %6.2f s (client %3.0f%%)\n' \
		"$name" "$best" "$(awk -v c=$cells -v w="$best" 'BEGIN { print c / w }')" "$bcpu" \
		"$(awk -v c=$cells -v u="$bcpu" 'BEGIN { print u * 1e6 / c }')" "$bemu" \
		"$(awk -v u="$bcpu" -v e="$bemu" 'BEGIN { print (e > 0 ? 100 * u / e : 0) }')"
	eval "res_${name//[^a-zA-Z0-9]/_}=$best"
}

echo "bigtable: $rows rows, $cells cells; best of $repeats; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
setup='cbt deletetable q >/dev/null 2>&1; cbt createtable q families=MD >/dev/null'
run cbt-import cbt import q "$tmp/quotes.csv" timestamp=value-encoded
setup='cc deletetable q >/dev/null 2>&1; cc createtable q families=MD >/dev/null'
run cellctl-import "$cellctl" --db bigtable://bench/cc import q "$tmp/quotes.csv" timestamp=value-encoded
setup=
[ "$(cbt count q)" = "$rows" ] && [ "$(cc count q)" = "$rows" ] || { echo "the imports did not load $rows rows"; exit 1; }
run cbt-read cbt read q
run cellctl-read "$cellctl" --db bigtable://bench/cc read q
[ -n "$bt_floor" ] && run floor-read "$bt_floor" bench cc q
if [ -n "$mount" ]; then
	"$cellfs" bigtable://bench/cc "$mnt" -o cache_ttl=600 || exit 1
	setup='fusermount3 -u "$mnt" && "$cellfs" bigtable://bench/cc "$mnt" -o cache_ttl=600'
	run mount-ls-lR ls -lR "$mnt/q"
	run mount-cat bash -c 'find "$0" -type f -exec cat {} +' "$mnt/q"
	fusermount3 -u "$mnt"
	setup=
fi
"$cellctl" copy bigtable://bench/cc "$tmp/local" q || exit 1
# The other floor under cellctl read: the same text printed from a local store (no gRPC, no emulator).
run local-read "$cellctl" --db "$tmp/local" read q
if [ -n "$mount" ]; then
	# The floor of the mount's figures: the same table on a local store, mounted the same way.
	"$cellfs" "$tmp/local" "$mnt" || exit 1
	setup='fusermount3 -u "$mnt" && "$cellfs" "$tmp/local" "$mnt"'
	run local-mount-ls-lR ls -lR "$mnt/q"
	run local-mount-cat bash -c 'find "$0" -type f -exec cat {} +' "$mnt/q"
	fusermount3 -u "$mnt"
fi
setup='"$cellctl" --db bigtable://bench/up deletetable q >/dev/null 2>&1'
run cellctl-copy-up "$cellctl" copy "$tmp/local" bigtable://bench/up q
setup=
echo "ratios (cbt time / cellctl time):"
awk -v a="$res_cbt_import" -v b="$res_cellctl_import" 'BEGIN { printf "  import %.2fx\n", a / b }'
awk -v a="$res_cbt_import" -v b="$res_cellctl_copy_up" 'BEGIN { printf "  copy from a local store vs cbt import %.2fx\n", a / b }'
awk -v a="$res_cbt_read" -v b="$res_cellctl_read" 'BEGIN { printf "  read   %.2fx\n", a / b }'
[ -n "$mount" ] || exit 0
awk -v a="$res_cbt_read" -v b="$res_mount_ls_lR" 'BEGIN { printf "  ls -lR through the mount vs cbt read %.2fx\n", a / b }'
awk -v a="$res_cbt_read" -v b="$res_mount_cat" 'BEGIN { printf "  cat of every file through the mount vs cbt read %.2fx\n", a / b }'
awk -v a="$res_local_mount_ls_lR" -v b="$res_mount_ls_lR" 'BEGIN { printf "  ls -lR: the mount on a local store vs on Bigtable %.2fx\n", a / b }'
awk -v a="$res_local_mount_cat" -v b="$res_mount_cat" 'BEGIN { printf "  cat: the mount on a local store vs on Bigtable %.2fx\n", a / b }'
