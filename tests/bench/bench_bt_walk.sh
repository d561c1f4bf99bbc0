#!/bin/bash
# bench_bt_walk.sh CELLCTL CELLFS [-d "DELAYS"] [-p PREFIXES] [-n ROWS] — the mount on Bigtable at a
# network's distance: the emulator behind tests/bigtable/delayproxy.py, which delays each direction by
# D ms (DELAYS, one-way, default "0 1": loopback and a 2 ms round trip), against a mount of a local store
# holding the same table. The table is issue 30's: PREFIXES first segments (20) x ROWS rows (500) x 2
# columns, 20,000 files. Per workload, the wall time and the calls the mount made (user.cellfs.stats,
# bigtable.calls.*): a fresh `ls -lR`, a second one, `cat` of the first 2,000 files on a fresh mount, and
# 200 x `echo v >` into a new row. Figures only (tests/bench/README.md, "bigtable at a distance"); never
# a pass or fail on speed. Skips (77) without the emulator.
set -u
cellctl=${1:?usage: bench_bt_walk.sh CELLCTL CELLFS [-d DELAYS] [-p PREFIXES] [-n ROWS]}
cellfs=${2:?usage}
shift 2
delays="0 1" prefixes=20 rows=500
while getopts d:p:n: o; do
	case $o in
	d) delays=$OPTARG ;;
	p) prefixes=$OPTARG ;;
	n) rows=$OPTARG ;;
	*) exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../oracle/emulator.sh"
[ -x "$emulator" ] || { echo "SKIP: Bigtable emulator not found ($emulator)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cellfs-bench-walk.XXXXXX") || exit 1
mnt=$tmp/mnt
proxy_pid=
cleanup() {
	fusermount3 -uz "$mnt" 2>/dev/null
	[ -z "$proxy_pid" ] || kill "$proxy_pid" 2>/dev/null
	emulator_stop
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
emulator_start "$tmp/emulator.log" || exit 1
emulator_host=$BIGTABLE_EMULATOR_HOST
mkdir "$mnt"

# the table: PREFIXES x ROWS rows "pNN#rNNNN", columns f:a and f:b
{
	echo ",f,f"
	echo ",a,b"
	awk -v p="$prefixes" -v n="$rows" 'BEGIN { for (i = 0; i < p; i++) for (j = 0; j < n; j++)
		printf "p%02d#r%04d,%d,%d\n", i, j, i * n + j, j }'
} >"$tmp/w.csv"
"$cellctl" --db bigtable://bench/walk createtable w families=f >/dev/null &&
	"$cellctl" --db bigtable://bench/walk import w "$tmp/w.csv" >/dev/null &&
	"$cellctl" --db "$tmp/local" createtable w families=f >/dev/null &&
	"$cellctl" --db "$tmp/local" import w "$tmp/w.csv" >/dev/null || { echo "FAIL: loading the table"; exit 1; }

now() { date +%s.%N; }
calls() { # the calls the mount at $mnt has made so far
	getfattr --only-values -n user.cellfs.stats "$mnt" 2>/dev/null |
		awk '$1 ~ /^bigtable\.calls\./ { s += $2 } END { print s + 0 }'
}
mount_it() { # STORE: a fresh mount at $mnt
	fusermount3 -uz "$mnt" 2>/dev/null
	"$cellfs" "$1" "$mnt" || { echo "FAIL: mounting $1"; exit 1; }
}
# measure NAME CMD...: "NAME SECONDS CALLS"
measure() {
	local name=$1 t0 t1 c0 c1
	shift
	c0=$(calls)
	t0=$(now)
	"$@" >/dev/null 2>&1
	t1=$(now)
	c1=$(calls)
	awk -v n="$name" -v s="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" -v c=$((c1 - c0)) \
		'BEGIN { printf "%-22s %8.2f s %8d calls\n", n, s, c }'
}
walk() { ls -lR "$mnt/w"; }
cat_2000() { find "$mnt/w" -type f | head -2000 | xargs cat; }
write_200() { mkdir -p "$mnt/w/new/row/f" && for i in $(seq 200); do echo v >"$mnt/w/new/row/f/c$i"; done; }

workloads() { # STORE
	mount_it "$1"
	measure "fresh ls -lR" walk
	measure "second ls -lR" walk
	mount_it "$1"
	measure "cat 2,000 files" cat_2000
	measure "200 x echo >" write_200
	fusermount3 -u "$mnt"
}

echo "== local store ($((prefixes * rows * 2)) files)"
workloads "$tmp/local"
for d in $delays; do
	python3 "$here/../bigtable/delayproxy.py" "$emulator_host" "$d" >"$tmp/proxy.addr" &
	proxy_pid=$!
	for _ in $(seq 100); do [ -s "$tmp/proxy.addr" ] && break; sleep 0.1; done
	export BIGTABLE_EMULATOR_HOST
	BIGTABLE_EMULATOR_HOST=$(cat "$tmp/proxy.addr")
	"$cellctl" --db bigtable://bench/walk deletetable w >/dev/null 2>&1 # (the last round's new row: a fresh copy)
	BIGTABLE_EMULATOR_HOST=$emulator_host
	"$cellctl" --db bigtable://bench/walk createtable w families=f >/dev/null &&
		"$cellctl" --db bigtable://bench/walk import w "$tmp/w.csv" >/dev/null || { echo "FAIL: reloading"; exit 1; }
	BIGTABLE_EMULATOR_HOST=$(cat "$tmp/proxy.addr")
	echo "== Bigtable, $d ms each way ($((2 * d)) ms round trip)"
	workloads bigtable://bench/walk
	kill "$proxy_pid" 2>/dev/null
	wait "$proxy_pid" 2>/dev/null
	proxy_pid=
	BIGTABLE_EMULATOR_HOST=$emulator_host
done
