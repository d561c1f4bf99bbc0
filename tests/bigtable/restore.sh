#!/bin/bash
# restore.sh CELLCTL — cellctl restore onto Bigtable (the emulator): a dump of a local store restored there
# dumps the same bytes again (schema, creation time, versions, aggregate cells, awkward bytes, a 6 MiB
# value); a table that exists is refused, overwrite=true replaces it; a bad dump (truncated, corrupt)
# writes nothing; one whose copy breaks part-way (a proxy that cuts every connection) leaves no table
# behind and says so; a µs timestamp is refused, round=ms rounds it.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# ---- a local store and its dump
check "createtable" ccl createtable quotes "families=MD:maxversions=3,meta:never,e"
check "createtable agg" ccl createtable agg "families=sum:never:intsum,lo:maxversions=2:intmin"
check "createtable long" ccl createtable long "families=f:maxage=50d,g:(maxage=365d or maxversions=2) and maxage=10000d"
check "createtable empty" ccl createtable empty families=f
for i in $(seq 0 9); do
	check "set versions $i" ccl set quotes "NASDAQ#S$i#1426535612156" "MD:BID=1$i.25@$((1426535612156000 + i * 1000))" \
		"MD:BID=1$i.5@$((1426535612157000 + i * 1000))" "meta:=empty-qualifier@1000" "e:x=@0"
done
check "set awkward bytes" ccl set quotes "$(printf 'k\001\377\376#\303\251')" "$(printf 'MD:\377q=\001\002\377@2000')" 'MD:sp ace=a b@3000'
check "set long" ccl set long r "f:a=1" "g:b=2"
check "addtocell" ccl addtocell agg r1 sum:n=5@1000
check "addtocell again" ccl addtocell agg r1 sum:n=7@1000
check "addtocell min" ccl addtocell agg r2 lo:m=-3@2000
head -c 6291456 /dev/zero | tr '\0' v >"$tmp/big"
printf ',MD\n,big\nbig,%s@1500000000000000\n' "$(cat "$tmp/big")" >"$tmp/big.csv"
check "import big" ccl import quotes "$tmp/big.csv" timestamp=value-encoded
check "dump" bash -c '"$0" --db "$1" dump >"$2"' "$cellctl" "$tmp/local" "$tmp/all.dump"

# restored WHAT STORE: the dump of STORE is all.dump, byte for byte
restored() {
	checks=$((checks + 1))
	"$cellctl" --db "$2" dump >"$tmp/got.dump" 2>"$tmp/got.err" || { fail "$1: dump of $2: $(cat "$tmp/got.err")"; return 1; }
	cmp -s "$tmp/all.dump" "$tmp/got.dump" || fail "$1: the dump of $2 differs ($(cmp "$tmp/all.dump" "$tmp/got.dump" 2>&1 | head -1))"
}
# tables STORE: its tables, one line
tables() { "$cellctl" --db "$1" ls 2>/dev/null | tr '\n' ' '; }

# ---- restore onto Bigtable: the same tables
checks=$((checks + 1))
if ! ccb restore "$tmp/all.dump" >"$tmp/out" 2>"$tmp/err"; then
	fail "restore onto bigtable: $(cat "$tmp/err")"
elif ! grep -q '^restored 4 tables, ' "$tmp/out"; then
	fail "restore onto bigtable says: $(cat "$tmp/out")"
fi
restored "restore onto bigtable" "$bt"
check "from standard input too" bash -c '"$0" --db bigtable://test/stdin restore <"$1"' "$cellctl" "$tmp/all.dump"
restored "from standard input" bigtable://test/stdin
check "no temporary store is left" bash -c '! ls -d "$0"/cellctl-restore.* 2>/dev/null' "${TMPDIR:-/tmp}"

# ---- a table that exists: refused, nothing changes; overwrite=true replaces
check "set in the restored table" ccb set quotes extra MD:BID=1
checks=$((checks + 1))
if ccb restore "$tmp/all.dump" 2>"$tmp/err"; then
	fail "a restore over existing tables succeeded"
elif ! grep -q 'table "agg" already exists (overwrite=true replaces it); nothing was restored' "$tmp/err"; then
	fail "the refusal: $(cat "$tmp/err")"
fi
check "nothing changed" bash -c '"$0" --db "$1" lookup quotes extra | grep -q "\"1\""' "$cellctl" "$bt"
check "overwrite=true" ccb restore "$tmp/all.dump" overwrite=true
restored "overwrite=true" "$bt"

# ---- a bad dump writes nothing
size=$(stat -c %s "$tmp/all.dump")
head -c $((size / 2)) "$tmp/all.dump" >"$tmp/trunc.dump"
checks=$((checks + 1))
if "$cellctl" --db bigtable://test/trunc restore "$tmp/trunc.dump" 2>"$tmp/err"; then
	fail "a truncated dump was restored"
elif ! grep -q 'truncated.*nothing was restored' "$tmp/err"; then
	fail "the truncated dump's error: $(cat "$tmp/err")"
fi
check "no table made from a truncated dump" test -z "$(tables bigtable://test/trunc)"
cp "$tmp/all.dump" "$tmp/bad.dump"
printf 'X' | dd of="$tmp/bad.dump" bs=1 seek=$((size / 3)) conv=notrunc status=none
checks=$((checks + 1))
if "$cellctl" --db bigtable://test/bad restore "$tmp/bad.dump" 2>"$tmp/err"; then
	fail "a corrupt dump was restored"
elif ! grep -q 'nothing was restored' "$tmp/err"; then
	fail "the corrupt dump's error: $(cat "$tmp/err")"
fi
check "no table made from a corrupt dump" test -z "$(tables bigtable://test/bad)"

# ---- the copy breaks part-way: the tables made are deleted again, and the message says so
python3 "$here/cutproxy.py" "$BIGTABLE_EMULATOR_HOST" 300000 1000000 >"$tmp/proxy.addr" 2>/dev/null &
proxy_pid=$!
for _ in $(seq 100); do [ -s "$tmp/proxy.addr" ] && break; sleep 0.1; done
checks=$((checks + 1))
if BIGTABLE_EMULATOR_HOST=$(cat "$tmp/proxy.addr") CELLFS_BT_DEADLINE_MS=3000 \
	"$cellctl" --db bigtable://test/broken restore "$tmp/all.dump" 2>"$tmp/broken.err"; then
	fail "a restore through a connection that always breaks succeeded"
elif ! tail -1 "$tmp/broken.err" | grep -q 'stopped part-way; the tables it made are deleted again: nothing was restored'; then
	fail "the broken restore's error: $(cat "$tmp/broken.err")"
fi
check "no table is left behind" test -z "$(tables bigtable://test/broken)"
# over tables that exist, with overwrite=true: those are gone too, and it says so
check "restore onto broken2" "$cellctl" --db bigtable://test/broken2 restore "$tmp/all.dump"
checks=$((checks + 1))
if BIGTABLE_EMULATOR_HOST=$(cat "$tmp/proxy.addr") CELLFS_BT_DEADLINE_MS=3000 \
	"$cellctl" --db bigtable://test/broken2 restore "$tmp/all.dump" overwrite=true 2>"$tmp/broken.err"; then
	fail "a restore with overwrite=true through a connection that always breaks succeeded"
elif ! tail -1 "$tmp/broken.err" | grep -q 'and so are the 4 it was to replace (overwrite=true): nothing was restored'; then
	fail "the broken overwrite's error: $(cat "$tmp/broken.err")"
fi
check "no table is left behind (overwrite)" test -z "$(tables bigtable://test/broken2)"
kill "$proxy_pid" 2>/dev/null
wait "$proxy_pid" 2>/dev/null
check "a re-run restores it" "$cellctl" --db bigtable://test/broken restore "$tmp/all.dump"
restored "broken, then re-run" bigtable://test/broken

# ---- what Bigtable cannot hold: refused first, nothing written; round=ms rounds
check "createtable micro" "$cellctl" --db "$tmp/micro" createtable micro families=f
printf '%s\n' '{"row":"r","family":"f","qualifier":"q","ts":1001,"value":"v"}' >"$tmp/micro.jsonl"
check "import micro" "$cellctl" --db "$tmp/micro" import micro "$tmp/micro.jsonl" format=jsonl
check "dump micro" bash -c '"$0" --db "$1" dump >"$2"' "$cellctl" "$tmp/micro" "$tmp/micro.dump"
checks=$((checks + 1))
if "$cellctl" --db bigtable://test/micro restore "$tmp/micro.dump" 2>"$tmp/err"; then
	fail "a µs timestamp was restored onto Bigtable"
elif ! grep -q 1001 "$tmp/err" || [ "$(tail -1 "$tmp/err")" != 'cellctl restore: nothing was restored onto "bigtable://test/micro"' ]; then
	fail "the refusal: $(cat "$tmp/err")"
fi
check "nothing was written (micro)" test -z "$(tables bigtable://test/micro)"
check "round=ms restores it" "$cellctl" --db bigtable://test/micro restore "$tmp/micro.dump" round=ms
check "rounded down" bash -c 'TZ=UTC "$0" --db bigtable://test/micro read micro | grep -q "@ 1970/01/01-00:00:00.001000"' "$cellctl"

finish
