#!/bin/bash
# fault.sh CELLCTL — out of memory inside the Bigtable module of a real cellctl: the test hook
# $CELLFS_FAULT=alloc:N fails the Nth allocation of the process, the module's included (remote.c lends
# the module the host's fault state, backend.h's cs_host). For `ls`, `ls T`, `read T`, `set` and `import`
# against the emulator: one run armed with an N too large to fire counts the calls C; then every N = 1 .. C,
# and C + 1, which must not fire. Each run exits 0 or 1 (never a crash, no ASan report), with nothing on
# stderr but its one error line naming ENOMEM and the hook's report; a run that succeeds prints what the
# unarmed run printed; after a write each row it touches, read back unarmed, holds the state before (not
# there) or the state after, whole (Bigtable's writes are atomic per row). The writes go to rows of their
# own per N (kNNNN...), so no run needs the table made again. The proof that faults reach the module: the
# same counts with a copy of the module whose cs_backend_bind cannot be found (its name's bytes changed)
# must be smaller, for every command (that copy's allocations count in a fault state nothing arms).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export LC_ALL=C TZ=UTC

found=$(unbound_module "$cellctl" "$tmp/unbound") || exit 1
checks=$((checks + 1))
[ "${found:-0}" -gt 0 ] || fail "the module has no cs_backend_bind: its allocations count in a fault state of its own"

# calls_of [unbound] ARGS...: the allocations `cellctl ARGS` makes (the hook's count, armed too high).
calls_of() {
	local env=()
	[ "$1" = unbound ] && { env=(CELLFS_MODULE_DIR="$tmp/unbound"); shift; }
	env "${env[@]}" CELLFS_FAULT=alloc:1000000000 "$cellctl" --db "$bt" "$@" >/dev/null 2>"$tmp/count.err" </dev/null
	sed -n 's/^cellctl: CELLFS_FAULT=alloc:1000000000 did not fire: \([0-9]*\) calls$/\1/p' "$tmp/count.err"
}

# rows_state KEY: the rows of this run's write (ROWS, KEY in place of k0000), each read back unarmed,
# into $tmp/rows/ROW (empty: not there).
rows_state() {
	local r
	rm -rf "$tmp/rows" && mkdir "$tmp/rows"
	for r in "${rows[@]}"; do
		r=${r//k0000/$1}
		ccb read w prefix="$r" >"$tmp/rows/$r" 2>"$tmp/rows.err" || fail "reading $r back: $(cat "$tmp/rows.err")"
	done
}

# fault_loop LABEL CMD ARGS...: `cellctl --db $bt CMD ARGS` for every N (KEY in ARGS, and in the file
# $template if set, replaced by this run's key). With ROWS set it writes those rows (k0000 for the key).
injected=0 inside=0
fault_loop() {
	local label=$1 cmd=$2 n key calls unbound status line fired=0 failed=0 r
	shift
	key=k0000
	[ -n "${template:-}" ] && sed "s/KEY/$key/g" "$template" >"$tmp/in-$key"
	checks=$((checks + 1))
	calls=$(calls_of "${@//KEY/$key}")
	[ -n "$calls" ] || { fail "$label: no count of calls: $(cat "$tmp/count.err")"; return; }
	[ "$(wc -l <"$tmp/count.err")" -eq 1 ] || fail "$label: unarmed, stderr: $(cat "$tmp/count.err")"
	"$cellctl" --db "$bt" "${@//KEY/$key}" >"$tmp/want.out" 2>"$tmp/want.err" </dev/null ||
		{ fail "$label: fails without a fault: $(cat "$tmp/want.err")"; return; }
	[ ${#rows[@]} -gt 0 ] && { rows_state k0000 && rm -rf "$tmp/after" && cp -a "$tmp/rows" "$tmp/after"; }
	key=k9999
	[ -n "${template:-}" ] && sed "s/KEY/$key/g" "$template" >"$tmp/in-$key"
	checks=$((checks + 1))
	unbound=$(calls_of unbound "${@//KEY/$key}")
	if [ -z "$unbound" ] || [ "$unbound" -ge "$calls" ]; then
		fail "$label: no allocation of the module counts: $calls calls with it bound, ${unbound:-?} without"
	fi
	for ((n = 1; n <= calls + 1; n++)); do
		printf -v key 'k%04d' "$n"
		[ -n "${template:-}" ] && sed "s/KEY/$key/g" "$template" >"$tmp/in-$key"
		checks=$((checks + 1))
		CELLFS_FAULT=alloc:$n "$cellctl" --db "$bt" "${@//KEY/$key}" >"$tmp/got.out" 2>"$tmp/got.err" </dev/null
		status=$?
		line=$(tail -n 1 "$tmp/got.err")
		sed -i '$d' "$tmp/got.err"
		if [ $status -ne 0 ] && [ $status -ne 1 ]; then
			fail "$label [alloc:$n]: exit status $status"
			sed 's/^/    stderr: /' "$tmp/got.err" | head -40
			continue
		fi
		if [ "$n" -le "$calls" ]; then
			[ "$line" = "cellctl: CELLFS_FAULT=alloc:$n fired" ] || fail "$label [alloc:$n]: the fault did not fire ($line)"
			fired=$((fired + 1))
		else
			[ "$line" = "cellctl: CELLFS_FAULT=alloc:$n did not fire: $calls calls" ] ||
				fail "$label [alloc:$n]: past the last call: $line"
		fi
		if [ $status -eq 0 ]; then
			[ -s "$tmp/got.err" ] && fail "$label [alloc:$n]: succeeded with stderr: $(cat "$tmp/got.err")"
			[ ${#rows[@]} -gt 0 ] || cmp -s "$tmp/got.out" "$tmp/want.out" ||
				fail "$label [alloc:$n]: succeeded with other output: $(diff "$tmp/want.out" "$tmp/got.out" | head -5)"
		else
			failed=$((failed + 1))
			if [ "$(wc -l <"$tmp/got.err")" -ne 1 ] || ! grep -q "^cellctl $cmd: .*Cannot allocate memory" "$tmp/got.err"; then
				fail "$label [alloc:$n]: not one clean error line (ENOMEM):"
				sed 's/^/    stderr: /' "$tmp/got.err" | head -40
			fi
		fi
		if [ ${#rows[@]} -gt 0 ]; then
			rows_state "$key"
			for r in "${rows[@]}"; do
				r=${r//k0000/$key}
				checks=$((checks + 1))
				if cmp -s "$tmp/rows/$r" <(sed "s/k0000/$key/g" "$tmp/after/${r//$key/k0000}"); then
					continue
				elif [ $status -eq 0 ]; then
					fail "$label [alloc:$n]: succeeded, but row $r is not the state after: $(head -c 300 "$tmp/rows/$r")"
				elif [ -s "$tmp/rows/$r" ]; then
					fail "$label [alloc:$n]: row $r is half-written: $(head -c 300 "$tmp/rows/$r")"
				fi
			done
		fi
	done
	injected=$((injected + fired))
	inside=$((inside + calls - unbound))
	echo "$label: $calls calls ($((calls - unbound)) of them the module's), $fired faults injected, $failed runs failed"
}

# The tables: t read (a few rows, versions, a long value), w written (a row of its own per run).
long=$(printf 'value %.0s' $(seq 200))
check "createtable t" ccb createtable t families=cf,big:maxversions=2
check "createtable w" ccb createtable w families=cf,big:maxversions=2
check "set t r1" ccb set t r1 cf:a=1@1000 big:v="$long"@1000 big:v=older@500
check "set t r2" ccb set t r2 cf:a=2@1000 cf:b="$(printf '\xc3\xa9')"@2000
check "set t r3" ccb set t r3 big:w=3@3000

rows=()
fault_loop ls ls
fault_loop ls-table ls t
fault_loop read read t
rows=(k0000)
fault_loop set set w KEY cf:a=1@7000 cf:z=z@7000 big:v="$long"@7000 big:w=w@7000
rows=(k0000-a k0000-b k0000-c)
template=$tmp/in.csv
printf ',cf,,big\n,a,b,v\nKEY-a,1@2000,2@2000,%s@2000\nKEY-b,x@5000,,\nKEY-c,,,%s@3000\n' "$long" "$long" >"$template"
fault_loop import import w "$tmp/in-KEY" timestamp=value-encoded
template=

echo "faults injected: $injected, of the module's allocations: $inside"
finish
