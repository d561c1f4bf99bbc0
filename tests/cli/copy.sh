#!/bin/bash
# copy.sh CELLCTL GEN_AWKWARD — cellctl copy between two local stores: a copy's dump is byte for byte
# the source's (schema, creation times, delimiters, every version); a copy run again, and a copy killed
# part-way (the test hook CELLCTL_COPY_KILL_AFTER_BATCHES) and run again, give the same dump with nothing
# duplicated (aggregate sums not added twice); whatever is refused (a missing table, an incompatible
# destination table, a timestamp collision under round=ms, bad arguments) writes nothing.
# (The refusal of sub-millisecond timestamps needs a store without CS_CAP_TS_MICROS: the bigtable suite.)
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gen_awkward=${2:?usage: ${0##*/} CELLCTL GEN_AWKWARD}
export LC_ALL=C
src=$tmp/src

ok_in() { local d=$1; shift; run 0 "" "$cellctl" --db "$d" "$@"; }

# dump_to STORE FILE [TABLE...]: a dump that must succeed.
dump_to() {
	local d=$1 f=$2
	shift 2
	checks=$((checks + 1))
	"$cellctl" --db "$d" dump "$@" >"$f" 2>"$tmp/dump.err" || failed "dump of $d: $(cat "$tmp/dump.err")"
}

# same_dump STORE FILE WHAT: STORE dumps to exactly FILE.
same_dump() {
	dump_to "$1" "$tmp/same.dump"
	checks=$((checks + 1))
	cmp -s "$2" "$tmp/same.dump" || failed "$3"
}

# cells STORE: the visible cells of every table (stats' cells column, summed over the table lines).
cells() {
	"$cellctl" --db "$1" stats | awk -F'\t' '$2 == "-" { n += $4 } END { print n + 0 }'
}

checks=$((checks + 1))
"$cellctl" help copy | head -1 | grep -q "^cellctl copy <src-store> <dst-store>" || failed "help copy: no synopsis"

# ---- The source: every kind of table ----------------------------------------------------------------

# awk, dots ('.'), pipe ('/'), deep (4 KiB keys), empty, t-1.x ('|'): naming edges, 5 MiB values, NULs,
# µs timestamps; bk: many versions, 3 MiB values, GC policies.
"$gen_awkward" "$src" awkward && "$gen_awkward" "$src" backup || exit 1
# Aggregate families, with sums built from several inputs at one timestamp.
ok_in "$src" createtable agg "families=sum:never:intsum,mn:maxversions=3:intmin,mx:never:intmax,plain"
ok_in "$src" addtocell agg a sum:n=5@1000 sum:n=7@1000 sum:n=-2@2000 mn:n=9@1000 mn:n=3@1000 mx:n=4@1000
ok_in "$src" addtocell agg b sum:n=1@1000 mx:m=-8@3000 mx:m=6@3000
ok_in "$src" set agg b plain:p=x@1000
# bytes: awkward bytes in keys, qualifiers and values, exact timestamps, many versions, a 2 MiB random
# value; big: 3000 cells, for batches.
python3 - "$tmp" <<'EOF'
import base64, json, random, sys
tmp = sys.argv[1]
rng = random.Random(19)
b64 = lambda b: base64.b64encode(b).decode()
with open(tmp + "/bytes.jsonl", "w") as f:
    for row in [b"\x00", b"\x00\xff", b"r\n1", b"\xff\xfe#x", b"\xc3\xa9t\xc3\xa9"]:
        cells = []
        for q in [b"", b"\x00q", b"q\xff", b"a:b=c@1"]:
            for v in range(20):
                cells.append({"family": "f", "qualifier_b64": b64(q), "ts": 1426535612156000 + v * 1001,
                              "value_b64": b64(bytes([v, 0, 255]) + row + q)})
        cells.append({"family": "g", "qualifier": "only", "ts": 7, "value": ""})
        f.write(json.dumps({"row_b64": b64(row), "cells": cells}) + "\n")
    big = bytes(rng.getrandbits(8) for _ in range(2 << 20))
    f.write(json.dumps({"row": "large", "family": "f", "qualifier": "v", "ts": 5, "value_b64": b64(big)}) + "\n")
with open(tmp + "/big.jsonl", "w") as f:
    for i in range(3000):
        f.write(json.dumps({"row": "r%05d" % i, "family": "f", "qualifier": "q", "ts": 1000 + i,
                            "value": "value %d" % i}) + "\n")
EOF
ok_in "$src" createtable bytes "families=f,g:maxversions=3"
ok_in "$src" import bytes "$tmp/bytes.jsonl"
ok_in "$src" createtable big families=f
ok_in "$src" import big "$tmp/big.jsonl"
dump_to "$src" "$tmp/src.dump"
total=$(cells "$src")

# ---- A whole store, then again ----------------------------------------------------------------------

raw_ok copy "$src" "$tmp/c1"
same_dump "$tmp/c1" "$tmp/src.dump" "a copy's dump differs from the source's"
raw_ok copy "$src" "$tmp/c1"
same_dump "$tmp/c1" "$tmp/src.dump" "a copy run again: the dump differs from the source's"
out <<'EOF'
----------------------------------------
a
  sum:n                                    @ 1970/01/01-00:00:00.002000
    "\xff\xff\xff\xff\xff\xff\xff\xfe"
  sum:n                                    @ 1970/01/01-00:00:00.001000
    "\x00\x00\x00\x00\x00\x00\x00\f"

----------------------------------------
b
  sum:n                                    @ 1970/01/01-00:00:00.001000
    "\x00\x00\x00\x00\x00\x00\x00\x01"

EOF
ok_in "$tmp/c1" read agg columns=sum:n
checks=$((checks + 1))
"$cellctl" --db "$tmp/c1" verify >"$tmp/verify.out" 2>&1 || failed "verify of a copy: $(cat "$tmp/verify.out")"
# The copy takes the copy on (nothing of the first store is needed).
raw_ok copy "$tmp/c1" "$tmp/c2" --quiet
same_dump "$tmp/c2" "$tmp/src.dump" "a copy of a copy differs from the source"

# ---- Killed part-way, then run again ----------------------------------------------------------------

# kill_copy N DST WANT: copy in batches of 500 cells, killed (SIGKILL) with batch N + 1 written and not
# committed: exactly WANT cells are in DST, and it verifies.
kill_copy() {
	local n=$1 d=$2 want=$3 status got
	checks=$((checks + 1))
	# (in braces: the shell's own "Killed" notice goes to /dev/null)
	{ CELLCTL_COPY_KILL_AFTER_BATCHES=$n "$cellctl" copy "$src" "$d" batch-size=500 >"$tmp/got.out" 2>"$tmp/got.err"; } 2>/dev/null
	status=$?
	[ $status -eq 137 ] && [ ! -s "$tmp/got.out" ] ||
		failed "copy killed after $n batches: status $status, want 137: $(cat "$tmp/got.out" "$tmp/got.err")"
	checks=$((checks + 1))
	got=$(cells "$d")
	[ "$got" = "$want" ] || failed "copy killed after $n batches: $got cells in the copy, want $want"
	checks=$((checks + 1))
	"$cellctl" --db "$d" verify >"$tmp/verify.out" 2>&1 || failed "verify after a kill: $(cat "$tmp/verify.out")"
}
checks=$((checks + 1))
[ "$total" -gt 2000 ] || failed "the source has only $total cells"
kill_copy 0 "$tmp/k" 0                        # the tables created, no cell
kill_copy 3 "$tmp/k" 1500                     # some tables whole, one in part
kill_copy 2 "$tmp/k" 1500                     # killed again before reaching as far: the same cells
raw_ok copy "$src" "$tmp/k"
same_dump "$tmp/k" "$tmp/src.dump" "a killed copy run again: the dump differs from the source's"
# Killed in the middle of the aggregate table (batches of 2 cells: row a's 4 committed, with its sums),
# run again: no sum added twice.
checks=$((checks + 1))
{ CELLCTL_COPY_KILL_AFTER_BATCHES=2 "$cellctl" copy "$src" "$tmp/ka" agg batch-size=2 >/dev/null 2>&1; } 2>/dev/null
[ $? -eq 137 ] || failed "copy of agg killed after 2 batches: not killed"
checks=$((checks + 1))
[ "$(cells "$tmp/ka")" = 4 ] || failed "copy of agg killed after 2 batches: $(cells "$tmp/ka") cells, want 4"
raw_ok copy "$src" "$tmp/ka" agg batch-size=2
dump_to "$src" "$tmp/agg.dump" agg
same_dump "$tmp/ka" "$tmp/agg.dump" "a killed copy of agg run again: the dump differs from the source's"

# ---- Some tables ------------------------------------------------------------------------------------

raw_ok copy "$src" "$tmp/sub" pipe dots agg
dump_to "$src" "$tmp/sub.dump" agg dots pipe
same_dump "$tmp/sub" "$tmp/sub.dump" "a copy of three tables differs from the source's three"
# Into a store that has other tables: they stay.
raw_ok copy "$src" "$tmp/sub" bytes
dump_to "$src" "$tmp/sub.dump" agg bytes dots pipe
same_dump "$tmp/sub" "$tmp/sub.dump" "a copy of a fourth table: the store differs from the source's four"

# ---- Refused: nothing written -----------------------------------------------------------------------

raw_err "cellctl copy: table \"nosuch\" not found in \"$src\"" copy "$src" "$tmp/none" agg nosuch
checks=$((checks + 1))
[ ! -e "$tmp/none" ] || failed "a copy of a missing table created the destination"
raw_err "cellctl copy: no store at \"$tmp/nostore\"" copy "$tmp/nostore" "$tmp/none"
checks=$((checks + 1))
[ ! -e "$tmp/none" ] && [ ! -e "$tmp/nostore" ] || failed "a copy from no store created a store"
raw_err "cellctl copy: \"$src\" and \"$src\" are the same store" copy "$src" "$src"
ln -s src "$tmp/srclink"
raw_err "cellctl copy: \"$src\" and \"$tmp/srclink\" are the same store" copy "$src" "$tmp/srclink"
raw_err "cellctl copy: \"$tmp/./src\" and \"$src\" are the same store" copy "$tmp/./src" "$src" agg
same_dump "$src" "$tmp/src.dump" "a refused copy onto itself changed the source"

# incompatible MESSAGE CREATETABLE-ARGS...: a destination holding the table createtable makes refuses a
# copy of every table with MESSAGE (DST in it: the destination's name), and is unchanged.
incompatible() {
	local d=$tmp/inc.$checks
	local msg="cellctl copy: ${1//DST/$d}"
	shift
	ok_in "$d" createtable "$@"
	dump_to "$d" "$tmp/inc.before"
	raw_err "$msg" copy "$src" "$d"
	same_dump "$d" "$tmp/inc.before" "a refused copy changed the destination"
}
incompatible "family \"mn\" of table \"agg\" has the GC policy \"maxversions=2\" in \"DST\", \"maxversions=3\" in the source; nothing was copied" \
	agg "families=sum:never:intsum,mn:maxversions=2:intmin,mx:never:intmax,plain"
incompatible "table \"agg\" of \"DST\" has no family \"plain\"; nothing was copied" \
	agg "families=sum:never:intsum,mn:maxversions=3:intmin,mx:never:intmax"
incompatible "family \"sum\" of table \"agg\" has the value type bytes in \"DST\", intsum in the source; nothing was copied" \
	agg "families=sum,mn:maxversions=3:intmin,mx:never:intmax,plain"
incompatible "family \"mx\" of table \"agg\" has the value type intmin in \"DST\", intmax in the source; nothing was copied" \
	agg "families=sum:never:intsum,mn:maxversions=3:intmin,mx:never:intmin,plain"
incompatible "table \"dots\" of \"DST\" has the delimiter \"#\", the source's has \".\"; nothing was copied" \
	dots families=f
# The last table of the copy is the incompatible one: no table before it is created either.
incompatible "table \"t-1.x\" of \"DST\" has the delimiter \"#\", the source's has \"|\"; nothing was copied" \
	t-1.x "families=f_1:maxversions=1"
# A destination table with the source's families and more takes the copy.
ok_in "$tmp/more" createtable agg "families=sum:never:intsum,mn:maxversions=3:intmin,mx:never:intmax,plain,extra"
raw_ok copy "$src" "$tmp/more" agg
"$cellctl" --db "$src" read agg >"$tmp/want.out"
ok_in "$tmp/more" read agg
checks=$((checks + 1))
"$cellctl" --db "$tmp/more" ls agg | grep -q '^extra' || failed "the destination table lost its own family"

# ---- round=ms -----------------------------------------------------------------------------------------

cat >"$tmp/ms.jsonl" <<'EOF'
{"row":"r1","family":"f","qualifier":"a","ts":2000999,"value":"y"}
{"row":"r1","family":"f","qualifier":"a","ts":1000123,"value":"x"}
{"row":"r1","family":"f","qualifier":"b","ts":1000900,"value":"other column"}
{"row":"r2","family":"f","qualifier":"a","ts":1000500,"value":"other row"}
{"row":"r2","family":"g","qualifier":"a","ts":5000,"value":"whole"}
EOF
ok_in "$tmp/ms" createtable m families=f,g
ok_in "$tmp/ms" import m "$tmp/ms.jsonl"
raw_ok copy "$tmp/ms" "$tmp/ms2" round=ms
cat >"$tmp/want.out" <<'EOF'
{"row":"r1","cells":[{"family":"f","qualifier":"a","ts":2000000,"value":"y"},{"family":"f","qualifier":"a","ts":1000000,"value":"x"},{"family":"f","qualifier":"b","ts":1000000,"value":"other column"}]}
{"row":"r2","cells":[{"family":"f","qualifier":"a","ts":1000000,"value":"other row"},{"family":"g","qualifier":"a","ts":5000,"value":"whole"}]}
EOF
ok_in "$tmp/ms2" --format=json read m
raw_ok copy "$tmp/ms" "$tmp/ms3" round=none
dump_to "$tmp/ms" "$tmp/ms.dump"
same_dump "$tmp/ms3" "$tmp/ms.dump" "round=none changed timestamps"
# Two versions of a column that round to one millisecond: refused, naming both, nothing copied.
printf '%s\n' '{"row":"r3","family":"f","qualifier":"c","ts":3000100,"value":"1"}' \
	'{"row":"r3","family":"f","qualifier":"c","ts":3000900,"value":"2"}' >"$tmp/ms.jsonl"
ok_in "$tmp/ms" import m "$tmp/ms.jsonl"
raw_err 'cellctl copy: table "m" row "r3" column "f:c" @3000900 and @3000100: both round to @3000000 (round=ms); nothing was copied' \
	copy "$tmp/ms" "$tmp/ms4" round=ms
ok_in "$tmp/ms4" ls

# ---- Arguments ----------------------------------------------------------------------------------------

usage="cellctl copy: usage: cellctl copy <src-store> <dst-store> [<table>...] [round=<none|ms>] [batch-size=<n>] [--quiet]"
raw_err "$usage" copy
raw_err "$usage" copy "$src"
raw_err 'cellctl copy: round must be ms or none (round="s")' copy "$src" "$tmp/none" round=s
raw_err 'cellctl copy: batch-size must be 1 to 100000 cells (batch-size="0")' copy "$src" "$tmp/none" batch-size=0
raw_err 'cellctl copy: batch-size must be 1 to 100000 cells (batch-size="100001")' copy "$src" "$tmp/none" batch-size=100001
raw_err 'cellctl copy: batch-size must be 1 to 100000 cells (batch-size="1e3")' copy "$src" "$tmp/none" batch-size=1e3
raw_err 'cellctl copy: unknown arg key "count"' copy "$src" "$tmp/none" count=1
raw_err 'cellctl copy: invalid table name "a b"' copy "$src" "$tmp/none" "a b"
raw_err 'cellctl copy: table "agg" given twice' copy "$src" "$tmp/none" agg dots agg
CELLCTL_COPY_KILL_AFTER_BATCHES=x raw_err 'cellctl copy: CELLCTL_COPY_KILL_AFTER_BATCHES="x" is not a number of batches' \
	copy "$src" "$tmp/none"
checks=$((checks + 1))
[ ! -e "$tmp/none" ] || failed "a copy with bad arguments created the destination"

finish copy
