#!/bin/bash
# copy.sh CELLCTL — cellctl copy between a local store and Bigtable (the emulator), both ways: the dump of
# what comes back is byte-identical to the original's (schema, creation time, every version, aggregate
# cells); a re-run duplicates nothing; a copy killed part-way, or one whose connection is cut mid-stream
# (a loopback proxy), is finished by running it again; what Bigtable cannot hold (a timestamp that is not
# whole milliseconds) is refused before anything is written, unless round=ms.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# ---- a local store with what a copy must carry
check "createtable" ccl createtable quotes "families=MD:maxversions=3,meta:never,e"
check "createtable agg" ccl createtable agg "families=sum:never:intsum,lo:maxversions=2:intmin"
check "createtable empty" ccl createtable empty families=f
for i in $(seq 0 9); do
	check "set versions $i" ccl set quotes "NASDAQ#S$i#1426535612156" "MD:BID=1$i.25@$((1426535612156000 + i * 1000))" \
		"MD:BID=1$i.5@$((1426535612157000 + i * 1000))" "meta:=empty-qualifier@1000" "e:x=@0"
done
check "set awkward bytes" ccl set quotes $'k\x01\xff\xfe#\xc3\xa9' $'MD:\xffq=\x01\x02\xff@2000' 'MD:sp ace=a b@3000'
check "addtocell" ccl addtocell agg r1 sum:n=5@1000
check "addtocell again" ccl addtocell agg r1 sum:n=7@1000
check "addtocell min" ccl addtocell agg r2 lo:m=-3@2000
# Many rows, and a value over gRPC's default 4 MiB receive limit (through import: too long for argv).
{
	echo ",MD,MD"
	echo ",A,B"
	for i in $(seq -w 1 3000); do echo "row$i,a$i@1500000000000000,b$i@1500000000001000"; done
} >"$tmp/many.csv"
check "import" ccl import quotes "$tmp/many.csv" timestamp=value-encoded
head -c 6291456 /dev/zero | tr '\0' v >"$tmp/big"
printf ',MD\n,big\nbig,%s@1500000000000000\n' "$(cat "$tmp/big")" >"$tmp/big.csv"
check "import big" ccl import quotes "$tmp/big.csv" timestamp=value-encoded

# ---- up and back
check "copy local -> bigtable" "$cellctl" copy "$tmp/local" "$bt"
check "ls shows the tables" bash -c '[ "$("$0" --db "$1" ls)" = "$(printf "agg\nempty\nquotes")" ]' "$cellctl" "$bt"
check "copy bigtable -> local" "$cellctl" copy "$bt" "$tmp/back"
same_dump "local -> bigtable -> local" "$tmp/local" "$tmp/back"
check "read of the 6 MiB value through bigtable" bash -c '"$0" --db "$1" lookup quotes big columns=MD:big | grep -c vvvv' "$cellctl" "$bt"

# ---- again: nothing duplicated (aggregate sums not added twice)
check "copy local -> bigtable again" "$cellctl" copy "$tmp/local" "$bt"
check "copy bigtable -> local again" "$cellctl" copy "$bt" "$tmp/back2"
same_dump "a re-run duplicates nothing" "$tmp/local" "$tmp/back2"

# ---- bigtable -> bigtable (another instance)
check "copy bigtable -> bigtable" "$cellctl" copy "$bt" bigtable://test/other
check "copy other -> local" "$cellctl" copy bigtable://test/other "$tmp/back3"
same_dump "bigtable -> bigtable" "$tmp/local" "$tmp/back3"

# ---- interrupted: killed after one batch, then run again
check "copy killed after a batch" bash -c 'CELLCTL_COPY_KILL_AFTER_BATCHES=1 "$0" copy "$1" "$2" batch-size=500; [ $? -ge 128 ]' \
	"$cellctl" "$tmp/local" bigtable://test/killed
check "some rows were copied, not all" bash -c 'n=$("$0" --db "$1" count quotes | tr -dc 0-9); [ "$n" -gt 0 ] && [ "$n" -lt 3011 ]' \
	"$cellctl" bigtable://test/killed
check "the re-run finishes it" "$cellctl" copy "$tmp/local" bigtable://test/killed
check "copy killed -> local" "$cellctl" copy bigtable://test/killed "$tmp/back4"
same_dump "killed and re-run" "$tmp/local" "$tmp/back4"

# ---- cut: a proxy that breaks each connection after some bytes; the copy resumes/retries and completes
python3 "$here/cutproxy.py" "$BIGTABLE_EMULATOR_HOST" 200000 3 >"$tmp/proxy.addr" 2>"$tmp/proxy.log" &
proxy_pid=$!
for _ in $(seq 100); do [ -s "$tmp/proxy.addr" ] && break; sleep 0.1; done
proxy=$(cat "$tmp/proxy.addr")
check "copy local -> bigtable through a cutting proxy" env BIGTABLE_EMULATOR_HOST="$proxy" "$cellctl" copy "$tmp/local" bigtable://test/cut
check "copy bigtable -> local through a cutting proxy" env BIGTABLE_EMULATOR_HOST="$proxy" "$cellctl" copy bigtable://test/cut "$tmp/back5"
check "the proxy cut connections" bash -c '[ "$(grep -c cut "$0")" -ge 2 ]' "$tmp/proxy.log"
kill "$proxy_pid" 2>/dev/null
wait "$proxy_pid" 2>/dev/null
same_dump "through a cutting proxy" "$tmp/local" "$tmp/back5"

# ---- cut for good: every connection breaks (the copy fails, saying so), then a re-run finishes the job.
# Batches before the 6 MiB value get through (each connection carries 300,000 bytes); that one never
# does. Bigtable keeps what it acknowledged: the message says how many cells that is (what the instance
# holds) and that a re-run finishes the job.
python3 "$here/cutproxy.py" "$BIGTABLE_EMULATOR_HOST" 300000 1000000 >"$tmp/proxy2.addr" 2>/dev/null &
proxy_pid=$!
for _ in $(seq 100); do [ -s "$tmp/proxy2.addr" ] && break; sleep 0.1; done
proxy=$(cat "$tmp/proxy2.addr")
checks=$((checks + 1))
if BIGTABLE_EMULATOR_HOST=$proxy CELLFS_BT_DEADLINE_MS=3000 \
	"$cellctl" copy "$tmp/local" bigtable://test/broken 2>"$tmp/broken.err"; then
	fail "a copy through a connection that always breaks succeeded"
elif [ "$(wc -l <"$tmp/broken.err")" -ne 1 ]; then
	fail "the failed copy's error is not one line: $(cat "$tmp/broken.err")"
fi
kill "$proxy_pid" 2>/dev/null
wait "$proxy_pid" 2>/dev/null
held=0
for t in agg empty quotes; do
	n=$("$cellctl" --db bigtable://test/broken export "$t" format=jsonl | wc -l)
	held=$((held + n))
done
checks=$((checks + 1))
re="^cellctl copy: writing to \"bigtable://test/broken\": ${proxy//./\\.}: [A-Z_]+: .*; at least $held cells are copied; running the copy again finishes it\$"
if [ "$held" -eq 0 ]; then
	fail "no batch got through before the cut (the test's premise): $(cat "$tmp/broken.err")"
elif ! grep -Eq "$re" "$tmp/broken.err"; then
	fail "the failed copy's error does not say the $held cells the instance holds: $(cat "$tmp/broken.err")"
fi
check "the re-run completes it" "$cellctl" copy "$tmp/local" bigtable://test/broken
check "copy broken -> local" "$cellctl" copy bigtable://test/broken "$tmp/back6"
same_dump "broken, then re-run" "$tmp/local" "$tmp/back6"

# ---- what Bigtable cannot hold: refused first, nothing written; round=ms rounds
check "createtable micro" ccl createtable micro families=f
printf '%s\n' '{"row":"r","family":"f","qualifier":"q","ts":1001,"value":"v"}' \
	'{"row":"r","family":"f","qualifier":"q","ts":5000,"value":"w"}' >"$tmp/micro.jsonl"
check "import micro" ccl import micro "$tmp/micro.jsonl" format=jsonl
checks=$((checks + 1))
if "$cellctl" copy "$tmp/local" "$bt" micro 2>"$tmp/err"; then
	fail "a µs timestamp was copied to Bigtable"
elif ! grep -q '"r"' "$tmp/err" || ! grep -q 'f:q' "$tmp/err" || ! grep -q 1001 "$tmp/err"; then
	fail "the refusal does not name the cell: $(cat "$tmp/err")"
fi
check "nothing was written" bash -c '! "$0" --db "$1" ls | grep -qx micro' "$cellctl" "$bt"
check "round=ms copies it" "$cellctl" copy "$tmp/local" "$bt" micro round=ms
check "rounded down" bash -c 'TZ=UTC "$0" --db "$1" read micro | grep -q "@ 1970/01/01-00:00:00.001000"' "$cellctl" "$bt"

finish
