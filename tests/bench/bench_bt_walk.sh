#!/bin/bash
# bench_bt_walk.sh CELLCTL CELLFS [-d DELAYS] [-W DELAYS] [-p PREFIXES] [-n ROWS] [-P CPUS] [-M [-L S]] — the
# mount on Bigtable at a network's distance: the emulator behind tests/bigtable/delayproxy.py, which delays
# each direction by D ms (DELAYS, one way, default "0 1 5": 0, 2 and 10 ms round trips), against a mount of
# a local store holding the same table in the same run. The table is issue 30's: PREFIXES first segments
# (20) x ROWS rows (500) x 2 columns, 20,000 files. Per workload the wall time, the calls the mount made
# (user.cellfs.stats, bigtable.calls.*) and the ratio to the local mount (-o cache_ttl=60 on each): a
# fresh `ls -lR`, a second one, `cp -a` of the table to tmpfs, `tar c` of it (piped to wc -c: GNU tar reads
# nothing when it writes to /dev/null), each on a fresh mount; `cat` of the first 2,000 files find lists
# on a fresh mount; 200 x `echo v >` into a new row; `rm -rf` of 1,000 more rows (loaded after, one
# column) on a fresh mount that listed the table. Then issue 30's targets at 2 and 10 ms round trips.
#   -W DELAYS  more delays (one way) at which only the fresh `ls -lR` runs (today's tree takes minutes at
#              10 ms): -d "0 1" -W 5
#   -P CPUS    everything (emulator, proxy, daemons, commands) under `taskset -c CPUS`
#   -M         instead: the 1M-row table (PREFIXES 1,000 x ROWS 1,000, one column, unless -p/-n say
#              otherwise) loaded with cellctl import straight into the emulator (time, the emulator's
#              memory), then `ls` of the table's directory on a fresh mount at each delay (default 1: a 2 ms
#              round trip) against the local store's: time, calls, the daemon's peak RSS (VmHWM);
#              -L SECONDS: a listing not done by then (default 600) is given up, its figures so far printed
# Figures only (tests/bench/README.md, "bigtable at a distance"); never a pass or fail on speed. Skips (77)
# without the emulator.
set -u
usage="usage: bench_bt_walk.sh CELLCTL CELLFS [-d DELAYS] [-W DELAYS] [-p PREFIXES] [-n ROWS] [-P CPUS] [-M [-L SECONDS]]"
cellctl=${1:?$usage}
cellfs=${2:?$usage}
shift 2
args=("$@")
delays= walk_only= prefixes= rows= cpus= million= limit=600
while getopts d:W:p:n:P:ML: o; do
	case $o in
	d) delays=$OPTARG ;;
	W) walk_only=$OPTARG ;;
	p) prefixes=$OPTARG ;;
	n) rows=$OPTARG ;;
	P) cpus=$OPTARG ;;
	M) million=1 ;;
	L) limit=$OPTARG ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
if [ -n "$cpus" ] && [ -z "${BENCH_BT_PINNED:-}" ]; then
	BENCH_BT_PINNED=$cpus exec taskset -c "$cpus" "$0" "$cellctl" "$cellfs" "${args[@]}"
fi
if [ -n "$million" ]; then
	: "${delays:=1}" "${prefixes:=1000}" "${rows:=1000}"
else
	: "${delays:=0 1 5}" "${prefixes:=20}" "${rows:=500}"
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../oracle/emulator.sh"
[ -x "$emulator" ] || { echo "SKIP: Bigtable emulator not found ($emulator)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cellfs-bench-walk.XXXXXX") || exit 1
mnt=$tmp/mnt
# cp -a's target: tmpfs where there is one, so that the copy measures the mount, not the disk
shm=$(mktemp -d /dev/shm/cellfs-bench-walk.XXXXXX 2>/dev/null) || shm=$tmp
proxy_pid= daemon_pid=
cleanup() {
	fusermount3 -uz "$mnt" 2>/dev/null
	[ -z "$daemon_pid" ] || wait "$daemon_pid" 2>/dev/null
	[ -z "$proxy_pid" ] || kill "$proxy_pid" 2>/dev/null
	emulator_stop
	rm -rf "$tmp" "$shm"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
die() { echo "FAIL: $*"; exit 1; }
emulator_start "$tmp/emulator.log" || exit 1
emulator_host=$BIGTABLE_EMULATOR_HOST
bt=bigtable://bench/walk
mkdir "$mnt"
pinning=unpinned
[ -z "$cpus" ] || pinning="pinned to CPU $cpus"
echo "# $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $pinning"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
calls() { # the calls the mount at $mnt has made so far (0 for a local store)
	getfattr --only-values -n user.cellfs.stats "$mnt" 2>/dev/null |
		awk '$1 ~ /^bigtable\.calls\./ { s += $2 } END { print s + 0 }'
}
# STORE: a fresh mount at $mnt, its daemon in the foreground of a background job ($daemon_pid); cache_ttl
# as the issue's (a local store has no use for it), so that a second walk is within it
mount_it() {
	unmount_it
	"$cellfs" "$1" "$mnt" -f -o cache_ttl=60 2>>"$tmp/daemon.log" &
	daemon_pid=$!
	for _ in $(seq 600); do mountpoint -q "$mnt" && return 0; sleep 0.05; done
	die "mounting $1"
}
unmount_it() { # (not by mountpoint -q: a root whose getattr fails is no mount point to it)
	[ -n "$daemon_pid" ] || return 0
	fusermount3 -u "$mnt" 2>/dev/null || { sleep 0.2; fusermount3 -uz "$mnt"; }
	wait "$daemon_pid" 2>/dev/null
	daemon_pid=
}
through() { # DELAY: BIGTABLE_EMULATOR_HOST at the proxy delaying DELAY ms each way (started anew)
	[ -z "$proxy_pid" ] || { kill "$proxy_pid" 2>/dev/null; wait "$proxy_pid" 2>/dev/null; }
	python3 "$here/../bigtable/delayproxy.py" "$emulator_host" "$1" >"$tmp/proxy.addr" &
	proxy_pid=$!
	for _ in $(seq 300); do [ -s "$tmp/proxy.addr" ] && break; sleep 0.1; done
	[ -s "$tmp/proxy.addr" ] || die "the delay proxy did not start"
	export BIGTABLE_EMULATOR_HOST
	BIGTABLE_EMULATOR_HOST=$(cat "$tmp/proxy.addr")
}
direct() { BIGTABLE_EMULATOR_HOST=$emulator_host; }
declare -A T C # T[label,workload] seconds, C[label,workload] calls
# measure LABEL NAME CMD...: run CMD, keep and print its time and calls
measure() {
	local label=$1 name=$2 t0 t1 c0 c1
	shift 2
	c0=$(calls)
	t0=$(now)
	"$@" >/dev/null 2>"$tmp/measure.err" || echo "  ($name failed: $(head -2 "$tmp/measure.err"))"
	t1=$(now)
	c1=$(calls)
	T[$label,$name]=$(secs "$t0" "$t1")
	C[$label,$name]=$((c1 - c0))
	printf '  %-24s %8s s %8d calls\n' "$name" "${T[$label,$name]}" "${C[$label,$name]}"
}

# ---- the 1M-row table: loading it into the emulator, and `ls` of the table's directory
if [ -n "$million" ]; then
	awk -v p="$prefixes" -v n="$rows" 'BEGIN { print ",f"; print ",a"; for (i = 0; i < p; i++)
		for (j = 0; j < n; j++) printf "s%03d#r%04d,%d\n", i, j, j }' >"$tmp/m.csv"
	total=$((prefixes * rows))
	echo "== $total rows ($prefixes first segments x $rows rows, one column)"
	"$cellctl" --db "$bt" createtable m families=f >/dev/null || die "createtable"
	t0=$(now)
	/usr/bin/time -f %M -o "$tmp/import.rss" "$cellctl" --db "$bt" import m "$tmp/m.csv" >/dev/null || die "import into the emulator"
	t1=$(now)
	echo "  cellctl import into the emulator: $(secs "$t0" "$t1") s, cellctl's peak RSS $(($(cat "$tmp/import.rss") / 1024)) MiB;" \
		"the emulator's RSS $(awk '/^VmRSS/ { print int($2 / 1024) }' /proc/"$emu_pid"/status) MiB" \
		"(peak $(awk '/^VmHWM/ { print int($2 / 1024) }' /proc/"$emu_pid"/status) MiB)"
	t0=$(now)
	{ "$cellctl" --db "$tmp/local" createtable m families=f && "$cellctl" --db "$tmp/local" import m "$tmp/m.csv"; } >/dev/null ||
		die "loading the local store"
	t1=$(now)
	echo "  cellctl import into a local store: $(secs "$t0" "$t1") s"
	# ls of the table's directory, given up after LIMIT s: then the figures so far, and the proxy stopped so
	# that the listing's calls fail and it ends (a request the daemon is serving cannot be killed)
	ls_table() {
		local c0 t0 t1 job ended= hwm
		c0=$(calls)
		t0=$(now)
		ls "$mnt/m" 2>"$tmp/ls.err" | wc -l >"$tmp/entries" &
		job=$!
		for _ in $(seq $((limit * 10))); do
			kill -0 "$job" 2>/dev/null || { ended=1; break; }
			sleep 0.1
		done
		t1=$(now)
		hwm=$(awk '/^VmHWM/ { print int($2 / 1024) }' /proc/"$daemon_pid"/status)
		if [ -n "$ended" ]; then
			echo "  ls of the table: $(secs "$t0" "$t1") s, $(($(calls) - c0)) calls, $(cat "$tmp/entries") entries," \
				"the daemon's peak RSS $hwm MiB"
		else
			echo "  ls of the table: not done after $(secs "$t0" "$t1") s: $(($(calls) - c0)) calls by then," \
				"the daemon's peak RSS $hwm MiB; stopping the proxy"
			[ -z "$proxy_pid" ] || { kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null; proxy_pid=; }
			wait "$job"
		fi
	}
	echo "== local store"
	mount_it "$tmp/local"
	ls_table
	for d in $delays; do
		through "$d"
		echo "== Bigtable, $d ms each way ($((2 * d)) ms round trip)"
		mount_it "$bt"
		ls_table
		unmount_it
	done
	exit 0
fi

# ---- issue 30's table: PREFIXES x ROWS rows "pNN#rNNNN", columns f:a and f:b; 1,000 rows big#rNNNN to remove
{
	echo ",f,f"
	echo ",a,b"
	awk -v p="$prefixes" -v n="$rows" 'BEGIN { for (i = 0; i < p; i++) for (j = 0; j < n; j++)
		printf "p%02d#r%04d,%d,%d\n", i, j, i * n + j, j }'
} >"$tmp/w.csv"
awk 'BEGIN { print ",f"; print ",a"; for (j = 0; j < 1000; j++) printf "big#r%04d,%d\n", j, j }' >"$tmp/big.csv"
load() { # STORE: the table w, afresh
	"$cellctl" --db "$1" deletetable w >/dev/null 2>&1
	"$cellctl" --db "$1" createtable w families=f >/dev/null &&
		"$cellctl" --db "$1" import w "$tmp/w.csv" >/dev/null || die "loading the table into $1"
}

walk() { ls -lR "$mnt/w"; }
copy() { rm -rf "$shm/copy" && cp -a "$mnt/w" "$shm/copy"; }
tarc() { tar cf - -C "$mnt" w | wc -c; }
cat_2000() { find "$mnt/w" -type f | head -2000 | xargs cat; }
write_200() { mkdir -p "$mnt/w/new/row/f" && for i in $(seq 200); do echo v >"$mnt/w/new/row/f/c$i" || return; done; }
rm_1000() { rm -rf "$mnt/w/big"; }
names=("fresh ls -lR" "second ls -lR" "cp -a" "tar c" "cat 2,000 files" "200 x echo >" "rm -rf 1,000 rows")

workloads() { # LABEL STORE [walk-only]
	local label=$1 store=$2
	mount_it "$store"
	measure "$label" "fresh ls -lR" walk
	[ $# -lt 3 ] || { unmount_it; return; }
	measure "$label" "second ls -lR" walk
	mount_it "$store"
	measure "$label" "cp -a" copy
	rm -rf "$shm/copy"
	mount_it "$store"
	measure "$label" "tar c" tarc
	mount_it "$store"
	measure "$label" "cat 2,000 files" cat_2000
	measure "$label" "200 x echo >" write_200
	unmount_it
	case $store in
	bigtable://*) (direct && "$cellctl" --db "$store" import w "$tmp/big.csv" >/dev/null) ;;
	*) "$cellctl" --db "$store" import w "$tmp/big.csv" >/dev/null ;;
	esac || die "loading the rows to remove"
	mount_it "$store"
	ls "$mnt/w" >/dev/null
	measure "$label" "rm -rf 1,000 rows" rm_1000
	unmount_it
}

echo "== local store ($((prefixes * rows * 2)) files)"
load "$tmp/local"
workloads local "$tmp/local"
ran=()
for d in $delays $walk_only; do
	direct
	load "$bt"
	through "$d"
	ran+=("$d")
	if [[ " $walk_only " == *" $d "* ]]; then
		echo "== Bigtable, $d ms each way ($((2 * d)) ms round trip): the fresh ls -lR only"
		workloads "$d" "$bt" walk-only
	else
		echo "== Bigtable, $d ms each way ($((2 * d)) ms round trip)"
		workloads "$d" "$bt"
	fi
done

# ---- the summary: time, calls and ratio to the local mount at each delay; issue 30's targets
echo
printf '%-20s %9s' workload local
for d in "${ran[@]}"; do printf ' | %10s %7s %6s' "$((2 * d)) ms RT s" calls "x loc"; done
echo
for n in "${names[@]}"; do
	printf '%-20s %9s' "$n" "${T[local,$n]}"
	for d in "${ran[@]}"; do
		if [ -n "${T[$d,$n]:-}" ]; then
			printf ' | %10s %7s %6s' "${T[$d,$n]}" "${C[$d,$n]}" \
				"$(awk -v a="${T[$d,$n]}" -v b="${T[local,$n]}" 'BEGIN { printf (b > 0 ? "%.1f" : "-"), a / b }')"
		else
			printf ' | %10s %7s %6s' - - -
		fi
	done
	echo
done
echo
echo "issue 30's targets:"
verdict() { awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b ? "met" : "NOT met") }'; }
for d in "${ran[@]}"; do
	rt=$((2 * d))
	if [ "$rt" = 2 ]; then
		for n in "fresh ls -lR" "second ls -lR" "cp -a" "tar c"; do
			[ -n "${T[$d,$n]:-}" ] || continue
			lim=$(awk -v b="${T[local,$n]}" 'BEGIN { printf "%.2f", 2 * b }')
			echo "  2 ms RT, $n: ${T[$d,$n]} s, target 2 x local = $lim s: $(verdict "${T[$d,$n]}" "$lim")"
		done
		n="200 x echo >"
		if [ -n "${T[$d,$n]:-}" ]; then
			lim=$(awk -v b="${T[local,$n]}" -v rt="$rt" 'BEGIN { printf "%.2f", b + 1.5 * 200 * rt / 1000 }')
			echo "  2 ms RT, $n: ${T[$d,$n]} s, target local + 1.5 x 200 RT = $lim s: $(verdict "${T[$d,$n]}" "$lim")"
		fi
	fi
	if [ "$rt" = 10 ]; then
		echo "  10 ms RT, fresh ls -lR: ${T[$d,fresh ls -lR]} s, target under 3 s: $(verdict "${T[$d,fresh ls -lR]}" 3)"
	fi
done
