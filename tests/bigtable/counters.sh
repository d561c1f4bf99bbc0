#!/bin/bash
# counters.sh CELLCTL CELLFS — what the Bigtable backend counts of its calls (cs_store_counters()):
# `cellctl --stats` prints it on stderr at the end and leaves stdout as it was; a local store prints
# nothing; rows and cells received are each row and cell once, even when a proxy breaks the stream and
# the read resumes (counted as retries); the mount's user.cellfs.stats carries the same counters and they
# grow with the requests that need the instance.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# counter FILE NAME: the value of counter NAME in FILE ("NAME VALUE" lines), or "none"
counter() { awk -v n="$2" '$1 == n { v = $2 } END { print (v == "" ? "none" : v) }' "$1"; }
# calls FILE: the sum of every bigtable.calls.* counter in FILE
calls() { awk '$1 ~ /^bigtable\.calls\./ { s += $2 } END { print s + 0 }' "$1"; }

# ---- 2,000 rows of two cells, about 400 KB: more than the proxy below lets one connection carry
rows=2000
check "createtable" ccb createtable t families=f
{
	printf ',f,f\n,a,b\n'
	for i in $(seq 1 $rows); do printf 'r%04d,%0100d,%0100d\n' "$i" "$i" "$i"; done
} >"$tmp/t.csv"
check "import" ccb import t "$tmp/t.csv"

# ---- --stats: stdout unchanged, the counters on stderr after a header naming the store
check "read without --stats" bash -c '"$0" --db "$1" read t >"$2"' "$cellctl" "$bt" "$tmp/plain.out"
check "read with --stats" bash -c '"$0" --stats --db "$1" read t >"$2" 2>"$3"' "$cellctl" "$bt" "$tmp/stats.out" "$tmp/stats.err"
check "stdout is the same with --stats" cmp "$tmp/plain.out" "$tmp/stats.out"
checks=$((checks + 1))
[ "$(head -1 "$tmp/stats.err")" = "# stats of $bt" ] || fail "the stats' header: $(head -1 "$tmp/stats.err")"
for name in bigtable.calls.ReadRows bigtable.retries bigtable.messages_received bigtable.bytes_received \
	bigtable.bytes_sent bigtable.rows_received bigtable.cells_received; do
	checks=$((checks + 1))
	[ "$(counter "$tmp/stats.err" $name)" != none ] || fail "--stats does not print $name: $(cat "$tmp/stats.err")"
done
checks=$((checks + 1))
[ "$(counter "$tmp/stats.err" bigtable.rows_received)" = $rows ] ||
	fail "rows received: $(counter "$tmp/stats.err" bigtable.rows_received), not $rows"
checks=$((checks + 1))
[ "$(counter "$tmp/stats.err" bigtable.cells_received)" = $((2 * rows)) ] ||
	fail "cells received: $(counter "$tmp/stats.err" bigtable.cells_received), not $((2 * rows))"
checks=$((checks + 1))
[ "$(counter "$tmp/stats.err" bigtable.bytes_received)" -gt $((rows * 200)) ] ||
	fail "bytes received: $(counter "$tmp/stats.err" bigtable.bytes_received), not more than the values' $((rows * 200))"

# ---- a local store has no service: --stats prints nothing
check "createtable local" ccl createtable t families=f
check "local --stats" bash -c '"$0" --stats --db "$1" ls >/dev/null 2>"$2"' "$cellctl" "$tmp/local" "$tmp/local.err"
check "a local store's --stats prints nothing" bash -c '! [ -s "$0" ]' "$tmp/local.err"

# ---- through a proxy that breaks its first connections after 100,000 bytes: the read resumes; each row
# and cell is still counted once, and the resumes are retries
python3 "$here/cutproxy.py" "$BIGTABLE_EMULATOR_HOST" 100000 2 >"$tmp/proxy.addr" 2>"$tmp/proxy.log" &
proxy_pid=$!
for _ in $(seq 100); do [ -s "$tmp/proxy.addr" ] && break; sleep 0.1; done
check "read through a cutting proxy" bash -c 'BIGTABLE_EMULATOR_HOST=$(cat "$4") "$0" --stats --db "$1" read t >"$2" 2>"$3"' \
	"$cellctl" "$bt" "$tmp/cut.out" "$tmp/cut.err" "$tmp/proxy.addr"
kill "$proxy_pid" 2>/dev/null
wait "$proxy_pid" 2>/dev/null
check "the same rows through the proxy" cmp "$tmp/plain.out" "$tmp/cut.out"
checks=$((checks + 1))
if [ "$(grep -c cut "$tmp/proxy.log")" -ge 1 ]; then
	[ "$(counter "$tmp/cut.err" bigtable.retries)" -ge 1 ] || fail "a broken read counted no retry: $(cat "$tmp/cut.err")"
	[ "$(counter "$tmp/cut.err" bigtable.rows_received)" = $rows ] ||
		fail "rows received through the proxy: $(counter "$tmp/cut.err" bigtable.rows_received), not $rows"
	[ "$(counter "$tmp/cut.err" bigtable.cells_received)" = $((2 * rows)) ] ||
		fail "cells received through the proxy: $(counter "$tmp/cut.err" bigtable.cells_received), not $((2 * rows))"
else
	fail "the proxy cut no connection"
fi

# ---- the mount: user.cellfs.stats carries the counters, and a read that needs the instance adds calls
if [ -n "$cellfs" ]; then
	mnt=$tmp/mnt
	check "mount" mount_store "$bt" "$mnt"
	stats() { getfattr --only-values -n user.cellfs.stats "$mnt" 2>/dev/null >"$1"; }
	check "stats after mounting" stats "$tmp/m0"
	check "ls of the table" ls "$mnt/t" >/dev/null
	check "cat of a file" cat "$mnt/t/r0001/f/a" >/dev/null
	check "stats after reading" stats "$tmp/m1"
	checks=$((checks + 1))
	[ "$(counter "$tmp/m1" bigtable.calls.ReadRows)" != none ] || fail "the mount's stats have no ReadRows: $(cat "$tmp/m1")"
	checks=$((checks + 1))
	[ "$(calls "$tmp/m1")" -gt "$(calls "$tmp/m0")" ] || fail "reading made no call: $(calls "$tmp/m0") then $(calls "$tmp/m1")"
	checks=$((checks + 1))
	[ "$(counter "$tmp/m1" bigtable.rows_received)" -ge 1 ] || fail "the mount received no row: $(cat "$tmp/m1")"
fi
finish
