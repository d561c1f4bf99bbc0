#!/bin/bash
# distance.sh CELLCTL CELLFS — the mount on Bigtable at a cloud region's distance (issue 30): the emulator
# behind delayproxy.py at 1 ms each way, what each workload costs in calls (never in time). cellctl loads
# and checks the data directly against the emulator; only the mount goes through the proxy. The table is
# the issue's: 20 first segments x 500 rows x 2 columns, 20,000 files. Within cache_ttl a fresh `ls -lR`
# is at most 50 calls, a second one and a `cat` of every file none; 200 x `echo v >` in a new row at most
# 210, every cell then in Bigtable; `rm -rf` of 1,000 rows at most 20, none left after an fsync of the
# table; a walk longer than cache_ttl does not start over; the mount recovers after the proxy cuts every
# connection. Calls are the mount's own counters (user.cellfs.stats, bigtable.calls.*); a failure names
# the calls by method. (Another client's write showing within cache_ttl is mount.sh's test.)
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ -n "$cellfs" ] || { echo "usage: distance.sh CELLCTL CELLFS"; exit 1; }
emulator_host=$BIGTABLE_EMULATOR_HOST
prefixes=20 rows=500

# ---- the delay proxy, 1 ms each way (a 2 ms round trip); stopped after the mounts (lib.sh's cleanup)
python3 "$here/delayproxy.py" "$emulator_host" 1 >"$tmp/proxy.addr" 2>"$tmp/proxy.log" &
proxy_pid=$!
trap 'cleanup; kill "$proxy_pid" 2>/dev/null; wait "$proxy_pid" 2>/dev/null' EXIT
for _ in $(seq 300); do [ -s "$tmp/proxy.addr" ] && break; sleep 0.1; done
proxied=$(cat "$tmp/proxy.addr")
[ -n "$proxied" ] || { echo "FAIL: the delay proxy did not start: $(cat "$tmp/proxy.log")"; exit 1; }
# dmount MNT OPTIONS...: mount the instance at MNT through the proxy
dmount() { BIGTABLE_EMULATOR_HOST=$proxied mount_store "$bt" "$@"; }

# ---- the table w: pNN#rNNNN, columns f:a and f:b (as tests/bench/bench_bt_walk.sh), loaded directly
{
	echo ",f,f"
	echo ",a,b"
	awk -v p=$prefixes -v n=$rows 'BEGIN { for (i = 0; i < p; i++) for (j = 0; j < n; j++)
		printf "p%02d#r%04d,%d,%d\n", i, j, i * n + j, j }'
} >"$tmp/w.csv"
files=$((prefixes * rows * 2))
bytes=$(awk -F, 'NR > 2 { s += length($2) + length($3) } END { print s }' "$tmp/w.csv")
check "createtable w" ccb createtable w families=f
check "import w" ccb import w "$tmp/w.csv"
# c: a table the mounts never read before the cut below
check "createtable c" ccb createtable c families=f
check "set c" ccb set c "one#row" f:x=1
[ $failures -eq 0 ] || { finish; exit; }

# ---- the counters
# stats MNT FILE: the mount's counters ("NAME VALUE" lines) into FILE
stats() { getfattr --only-values -n user.cellfs.stats "$1" >"$2" 2>"$2.err" || echo "getfattr: $(cat "$2.err")" >"$2"; }
# calls_between A B: the calls made between the snapshots A and B
calls_between() {
	awk '$1 ~ /^bigtable\.calls\./ { s += (FILENAME == ARGV[1] ? -$2 : $2) } END { print s + 0 }' "$1" "$2"
}
# counter_between NAME A B: how much counter NAME grew between A and B
counter_between() {
	awk -v n="$1" '$1 == n { s += (FILENAME == ARGV[1] ? -$2 : $2) } END { print s + 0 }' "$2" "$3"
}
# methods_between A B: the calls between A and B by method ("ReadRows 12, MutateRows 3"), or "none"
methods_between() {
	awk '$1 ~ /^bigtable\.calls\./ { m = substr($1, 16); d[m] += (FILENAME == ARGV[1] ? -$2 : $2); if (!(m in o)) { o[m] = ++k; name[k] = m } }
		END { for (i = 1; i <= k; i++) if (d[name[i]]) { s = s sep name[i] " " d[name[i]]; sep = ", " } print (s == "" ? "none" : s) }' "$1" "$2"
}
# at_most WHAT LIMIT A B: the calls between snapshots A and B are at most LIMIT; the figure is printed
# either way (the log is the record of what today's tree costs)
at_most() {
	local n
	n=$(calls_between "$3" "$4")
	checks=$((checks + 1))
	echo "# $1: $n calls (at most $2): $(methods_between "$3" "$4")"
	[ "$n" -le "$2" ] || fail "$1: $n calls, more than $2 ($(methods_between "$3" "$4"))"
}

# ---- a fresh walk, a second one, a cat of every file, all within cache_ttl (one mount). The issue's figure
# is cache_ttl=60; the mount here keeps 600 s, so that an ASan build on a loaded machine cannot outlast it:
# what is asserted is "within the TTL", and 60 s would make the result depend on the machine's speed.
mnt=$tmp/mnt
check "mount through the proxy" dmount "$mnt" -o cache_ttl=600
[ $failures -eq 0 ] || { finish; exit; }
start=$(date +%s)
stats "$mnt" "$tmp/s0"
check "fresh ls -lR" bash -c 'ls -lR "$0" >"$1"' "$mnt/w" "$tmp/lsR.1"
stats "$mnt" "$tmp/s1"
at_most "fresh ls -lR of $files files" 50 "$tmp/s0" "$tmp/s1"
checks=$((checks + 1))
[ "$(grep -c '^-' "$tmp/lsR.1")" = $files ] || fail "the fresh ls -lR lists $(grep -c '^-' "$tmp/lsR.1") files, not $files"

check "second ls -lR" bash -c 'ls -lR "$0" >"$1"' "$mnt/w" "$tmp/lsR.2"
stats "$mnt" "$tmp/s2"
at_most "second ls -lR within cache_ttl" 0 "$tmp/s1" "$tmp/s2"
check "the second ls -lR is the first" cmp "$tmp/lsR.1" "$tmp/lsR.2"

check "cat of every file" bash -c 'find "$0" -type f -print0 | xargs -0 cat >"$1"' "$mnt/w" "$tmp/cat.out"
stats "$mnt" "$tmp/s3"
at_most "cat of every file within cache_ttl" 0 "$tmp/s2" "$tmp/s3"
checks=$((checks + 1))
[ "$(wc -c <"$tmp/cat.out")" = "$bytes" ] || fail "the cat read $(wc -c <"$tmp/cat.out") bytes, not $bytes"

# ---- 200 x echo > in a new row (mkdir -p): about one MutateRow a file; then every cell is in Bigtable
check "mkdir -p and 200 x echo v >" bash -c 'mkdir -p "$0" && for i in $(seq 200); do echo v >"$0/f$i" || exit; done' \
	"$mnt/w/new/row/f"
stats "$mnt" "$tmp/s4"
at_most "mkdir -p and 200 x echo v > in a new row" 210 "$tmp/s3" "$tmp/s4"
for i in $(seq 200); do
	printf '{"row":"new#row","family":"f","qualifier":"f%d","value":"v\\n"}\n' "$i"
done | sort >"$tmp/new.want"
ccb export w prefix="new#row" format=jsonl 2>&1 | sed 's/"ts":[0-9]*,//' | sort >"$tmp/new.got"
checks=$((checks + 1))
cmp -s "$tmp/new.want" "$tmp/new.got" ||
	fail "the 200 cells in Bigtable (cellctl export): $(comm -3 "$tmp/new.want" "$tmp/new.got" | wc -l) lines differ: $(comm -3 "$tmp/new.want" "$tmp/new.got" | head -3)"
echo "# the first mount's phases took $(($(date +%s) - start)) s (cache_ttl 600)"

# ---- rm -rf of a 1,000-row subtree (big#rNNNN, one column, loaded directly), on a fresh mount whose
# listing of the table is done first (not counted): deletes go in batches; after an fsync of the table's
# directory (a flush of any unlinks still queued) cellctl sees none of the rows
{
	echo ",f"
	echo ",a"
	awk 'BEGIN { for (j = 0; j < 1000; j++) printf "big#r%04d,%d\n", j, j }'
} >"$tmp/big.csv"
check "import big" ccb import w "$tmp/big.csv"
check "1,000 rows under big" bash -c '[ "$("$0" --db "$1" count w prefix=big#)" = 1000 ]' "$cellctl" "$bt"
mnt2=$tmp/mnt2
check "second mount through the proxy" dmount "$mnt2" -o cache_ttl=600
check "ls of the table" bash -c 'ls "$0" | grep -qx big' "$mnt2/w"
stats "$mnt2" "$tmp/s5"
check "rm -rf of 1,000 rows" rm -rf "$mnt2/w/big"
stats "$mnt2" "$tmp/s6"
at_most "rm -rf of a 1,000-row subtree" 20 "$tmp/s5" "$tmp/s6"
check "the subtree is gone from the mount" bash -c '! [ -e "$0" ] && ! ls "$1" | grep -qx big' "$mnt2/w/big" "$mnt2/w"
check "fsync of the table's directory" python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.close(fd)' "$mnt2/w"
checks=$((checks + 1))
left=$(ccb count w prefix=big# 2>&1)
[ "$left" = 0 ] || fail "after rm -rf and fsync, cellctl counts $left rows under big#"

# ---- the proxy cuts every connection at once: the mount's next call (a listing of a table it never read)
# reconnects and works
kill -USR1 "$proxy_pid"
checks=$((checks + 1))
for _ in $(seq 300); do grep -q '^cut' "$tmp/proxy.log" && break; sleep 0.1; done
grep -q '^cut [1-9]' "$tmp/proxy.log" || fail "the proxy cut no connection: $(cat "$tmp/proxy.log")"
stats "$mnt2" "$tmp/s7"
check "ls after the cut" bash -c '[ "$(ls "$0")" = one ]' "$mnt2/c"
stats "$mnt2" "$tmp/s8"
checks=$((checks + 1))
[ "$(calls_between "$tmp/s7" "$tmp/s8")" -ge 1 ] || fail "the ls after the cut made no call"

# ---- a walk longer than cache_ttl does not start over. The mount keeps 5 s; the walk lists the 20 first
# segments one at a time (ls -lR of each), 2.5 s apart, so it lasts at least 9 TTLs. With each entry
# expiring cache_ttl after it was fetched, a segment is read at most twice: once if the walk's first
# listing streamed the whole table, once more when the walk reaches it after that expired; and each
# segment's listing costs a few calls (its stream, the lookups of the table and the segment, a size
# estimate): rows received <= 2 x the table's rows, calls <= 4 x 20 + 20. A walk that starts over at
# each expiry (every cache dropped at once, or the whole table read again to answer the next lookup)
# reads the table once per TTL, 9 times or more here, and its listings level by level make thousands
# of calls (today's tree: about ten a directory). The bounds hold only while one segment's listing
# takes less than a TTL (else its own entries expire under it and are fetched again, row by row): 5 s
# rather than the 2 s a fast machine would allow, so that an ASan build on a loaded machine stays within
# it; where a listing took longer anyway the bounds are not checked (said in one line), so the result
# never depends on the machine's speed.
ttl=5
table_rows=$(ccb count w 2>&1)
mnt3=$tmp/mnt3
check "third mount through the proxy, cache_ttl=$ttl" dmount "$mnt3" -o cache_ttl=$ttl
stats "$mnt3" "$tmp/s9"
t0=$(date +%s.%N)
longest=0 longest_p=
for i in $(seq 0 $((prefixes - 1))); do
	p=$(printf 'p%02d' "$i")
	[ "$i" -eq 0 ] || sleep 2.5
	a=$(date +%s.%N)
	ls -lR "$mnt3/w/$p" >"$tmp/walk.$p" 2>&1 || { fail "ls -lR of $p: $(head -3 "$tmp/walk.$p")"; break; }
	b=$(date +%s.%N)
	if awk -v a="$a" -v b="$b" -v l="$longest" 'BEGIN { exit !(b - a > l) }'; then
		longest=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b - a }')
		longest_p=$p
	fi
	[ "$(grep -c '^-' "$tmp/walk.$p")" = $((rows * 2)) ] || fail "ls -lR of $p lists $(grep -c '^-' "$tmp/walk.$p") files"
done
t1=$(date +%s.%N)
stats "$mnt3" "$tmp/s10"
received=$(counter_between bigtable.rows_received "$tmp/s9" "$tmp/s10")
echo "# the slow walk took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s (cache_ttl $ttl; the longest" \
	"segment, $longest_p, $longest s), received $received rows (table: $table_rows rows)"
if awk -v l="$longest" -v t=$ttl 'BEGIN { exit !(l >= t) }'; then
	echo "# not checked: the listing of $longest_p took $longest s, not less than cache_ttl ($ttl s), so its" \
		"own entries expired under it: $(calls_between "$tmp/s9" "$tmp/s10") calls ($(methods_between "$tmp/s9" "$tmp/s10"))"
else
	checks=$((checks + 1))
	[ "$received" -le $((2 * table_rows)) ] ||
		fail "a walk longer than cache_ttl received $received rows, more than 2 x the table's $table_rows: it started over"
	at_most "a walk longer than cache_ttl, $prefixes segments" $((4 * prefixes + 20)) "$tmp/s9" "$tmp/s10"
fi

for m in "$mnt" "$mnt2" "$mnt3"; do
	check "the daemon at $m still serves" mountpoint -q "$m"
done
finish
