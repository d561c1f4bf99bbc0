#!/bin/bash
# fault.sh CELLCTL — fault injection through the real binary (the test hook $CELLFS_FAULT=KIND:N makes
# the Nth LMDB call, zstd call or store allocation of the process fail). For `cellctl import` of a
# small CSV and of a gzip'd DynamoDB export, `set` and `restore`, and each kind: one run armed with an N too large to fire counts the
# calls C; then N = 1 .. C (every one, or a stride when capped, below), each on a fresh copy of the
# same store, and N = C + 1, which must not fire. Every run must exit 0 or 1 (never crash), print
# nothing but its one error line (naming the errno of the kind: EIO, ENOMEM) and the hook's report,
# leave a store `cellctl verify` passes, holding exactly the state before (it failed) or after (it
# succeeded, or only the sync after the commit failed), compared as `cellctl dump` bytes. Under ASan (the binary links libasan) a leak fails the
# run, and each loop is capped at FAULT_MAX_RUNS runs (default 20) by a stride, to keep tests/check fast.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export LC_ALL=C

max_runs=${FAULT_MAX_RUNS:-0}
if [ -z "${FAULT_MAX_RUNS:-}" ] && ldd "$cellctl" 2>/dev/null | grep -q libasan; then
	max_runs=20
fi
injected=0
# Clean errors besides the errno's own words: opening the store (an LMDB error there reads as a damaged
# store), and a failed sync after the commit (the store then holds the state after).
open_eio='cannot open store .*: not a valid cellfs store, or an I/O error'
committed='the write is committed but could not be flushed to disk'

# state STORE FILE: STORE's dump into FILE; the store must verify.
state() {
	local out
	if ! out=$("$cellctl" --db "$1" verify 2>&1); then
		failed "verify of $1: $out"
	fi
	"$cellctl" --db "$1" dump >"$2" 2>"$tmp/state.err" || failed "dump of $1: $(cat "$tmp/state.err")"
}

# fault_loop LABEL FIXTURE CMD ARGS...: `cellctl --db COPY CMD ARGS...` under every kind of fault.
fault_loop() {
	local label=$1 fixture=$2 cmd=$3 kind errstr n calls stride status line runs fired
	shift 2
	rm -rf "$tmp/run" && cp -a "$fixture" "$tmp/run"
	state "$tmp/run" "$tmp/before.dump"
	checks=$((checks + 1))
	"$cellctl" --db "$tmp/run" "$@" >"$tmp/want.stdout" 2>"$tmp/got.err" <"${stdin:-/dev/null}" ||
		{ failed "$label: fails without a fault: $(cat "$tmp/got.err")"; return; }
	state "$tmp/run" "$tmp/after.dump"
	for kind in lmdb zstd alloc; do
		case $kind in alloc) errstr='Cannot allocate memory' ;; *) errstr='Input/output error' ;; esac
		rm -rf "$tmp/run" && cp -a "$fixture" "$tmp/run"
		CELLFS_FAULT=$kind:1000000000 "$cellctl" --db "$tmp/run" "$@" >/dev/null 2>"$tmp/got.err" <"${stdin:-/dev/null}"
		calls=$(sed -n 's/^cellctl: CELLFS_FAULT=.* did not fire: \([0-9]*\) calls$/\1/p' "$tmp/got.err")
		checks=$((checks + 1))
		[ -n "$calls" ] || { failed "$label [$kind]: no count of calls: $(cat "$tmp/got.err")"; continue; }
		stride=1
		[ "$max_runs" -gt 0 ] && [ "$calls" -gt "$max_runs" ] && stride=$(((calls + max_runs - 1) / max_runs))
		runs=0 fired=0
		for ((n = 1; n <= calls + 1; n += (n + stride > calls && n < calls ? calls - n : stride))); do
			[ "$n" -gt "$calls" ] && n=$((calls + 1))
			rm -rf "$tmp/run" && cp -a "$fixture" "$tmp/run"
			checks=$((checks + 1))
			runs=$((runs + 1))
			CELLFS_FAULT=$kind:$n "$cellctl" --db "$tmp/run" "$@" >"$tmp/got.out" 2>"$tmp/got.err" \
				<"${stdin:-/dev/null}"
			status=$?
			line=$(tail -n 1 "$tmp/got.err")
			sed -i '$d' "$tmp/got.err"
			if [ $status -ne 0 ] && [ $status -ne 1 ]; then
				failed "$label [$kind:$n]: exit status $status"
				sed 's/^/    stderr: /' "$tmp/got.err"
				continue
			fi
			if [ "$n" -le "$calls" ]; then
				[ "$line" = "cellctl: CELLFS_FAULT=$kind:$n fired" ] || failed "$label [$kind:$n]: the fault did not fire ($line)"
				fired=$((fired + 1))
			else
				[ "$line" = "cellctl: CELLFS_FAULT=$kind:$n did not fire: $calls calls" ] ||
					failed "$label [$kind:$n]: past the last call: $line"
			fi
			if [ $status -eq 0 ]; then
				[ -s "$tmp/got.err" ] && failed "$label [$kind:$n]: succeeded with stderr: $(cat "$tmp/got.err")"
				cmp -s "$tmp/got.out" "$tmp/want.stdout" || failed "$label [$kind:$n]: succeeded with other output"
			elif [ "$(wc -l <"$tmp/got.err")" -ne 1 ] || ! grep -Eq "^cellctl $cmd: .*($errstr|$open_eio)" "$tmp/got.err"; then
				failed "$label [$kind:$n]: not one clean error line ($errstr):"
				sed 's/^/    stderr: /' "$tmp/got.err"
			fi
			state "$tmp/run" "$tmp/now.dump"
			if [ $status -eq 0 ] || grep -q "$committed" "$tmp/got.err"; then
				cmp -s "$tmp/now.dump" "$tmp/after.dump" || failed "$label [$kind:$n]: succeeded, but the store is not the state after"
			else
				cmp -s "$tmp/now.dump" "$tmp/before.dump" || failed "$label [$kind:$n]: failed, but the store is not the state before"
			fi
			[ "$n" -gt "$calls" ] && break
		done
		injected=$((injected + fired))
		echo "$label [$kind]: $calls calls, $fired faults injected (stride $stride)"
	done
}

# The fixture: table t with a plain and a versioned family, a few rows, compressible values.
comp=$(printf 'compressible %.0s' $(seq 40))
ok createtable t families=cf,big:maxversions=2
ok set t r1 cf:a=1@1000 big:v="$comp"@1000
ok set t r3 cf:a=3@1000
cp -a "$db" "$tmp/fixture"

# import: one batch (cells of existing and new rows, a compressible value), exact timestamps.
printf ',cf,,big\n,a,b,v\nr1,1@2000,2@2000,%s@2000\nr2,x@5000,,\nr9,,,%s@3000\n' "$comp" "$comp" >"$tmp/in.csv"
fault_loop import "$tmp/fixture" import t "$tmp/in.csv" timestamp=value-encoded
# import format=dynamodb, gzip'd: a set and a map need families the table lacks, created in the batch's
# transaction, so a fault leaves neither them nor any cell.
printf '%s\n' '{"Item":{"pk":{"S":"r1"},"a":{"S":"'"$comp"'"},"tags":{"SS":["x","y"]},"m":{"M":{"k":{"N":"1"}}},"l":{"L":[{"S":"a"},{"S":"b"}]}}}' |
	gzip -c >"$tmp/in.json.gz"
fault_loop import-dynamodb "$tmp/fixture" import t "$tmp/in.json.gz" format=dynamodb key=pk timestamp=9000
fault_loop set "$tmp/fixture" set t r1 cf:a=new@7000 cf:z=z@7000 big:v="$comp$comp"@7000 big:w=w@7000

# restore: another store's dump (tables t and u) over the fixture, replacing t.
ok --db "$tmp/src" createtable t families=cf
ok --db "$tmp/src" createtable u "families=f,n:never:intsum"
ok --db "$tmp/src" set t other cf:q="$comp"@1 cf:r=r@2
ok --db "$tmp/src" set u row f:q="$comp"@5
ok --db "$tmp/src" addtocell u row n:c=5@1000
"$cellctl" --db "$tmp/src" dump >"$tmp/src.dump"
fault_loop restore "$tmp/fixture" restore "$tmp/src.dump" overwrite=true

echo "faults injected: $injected"
finish fault
