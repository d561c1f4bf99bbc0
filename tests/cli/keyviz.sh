#!/bin/bash
# keyviz.sh CELLCTL — cellctl keyviz, the key-design report: one table built to break each rule of the
# schema guides gets exactly that finding (checked in the --format=json output, parsed with python3), a
# well-designed table gets none ("no findings"), the thresholds' defaults are the guide's numbers, and
# bad arguments are refused with one line. Test data are ASCII keys built with printf and imported as CSV
# with explicit timestamps.
#
# The harness is lib.sh's (ok/err check stdout, stderr and status exactly).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v python3 >/dev/null || { echo "keyviz.sh: python3 is needed to read the JSON report"; exit 77; }

# load TABLE FAMILIES: a new table; then CSV lines "key,value@ts" on stdin into family cf, column q.
load() {
	local t=$1 fams=$2
	"$cellctl" --db "$db" createtable "$t" "families=$fams" >/dev/null || failed "createtable $t"
	{ echo ",q"; cat; } >"$tmp/$t.csv"
	"$cellctl" --db "$db" import "$t" "$tmp/$t.csv" column-family=cf timestamp=value-encoded --quiet ||
		failed "import $t"
}

# json TABLE [ARGS...]: the JSON report into $tmp/r.json (status checked).
json() {
	checks=$((checks + 1))
	"$cellctl" --db "$db" --format=json keyviz "$@" >"$tmp/r.json" 2>"$tmp/r.err" ||
		{ failed "keyviz $*: exit status $?: $(cat "$tmp/r.err")"; return 1; }
	[ -s "$tmp/r.err" ] && failed "keyviz $*: stderr: $(cat "$tmp/r.err")"
	[ "$(wc -l <"$tmp/r.json")" -eq 1 ] || failed "keyviz $*: not one line of JSON"
}

# py 'EXPR' LABEL: python EXPR over the parsed report r must be true.
py() {
	checks=$((checks + 1))
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
rules = [f["rule"] for f in r["findings"]]
find = lambda name: [f for f in r["findings"] if f["rule"] == name][0]
ok = eval(sys.argv[2])
if not ok:
    print(json.dumps(r, indent=1)[:3000])
sys.exit(0 if ok else 1)' "$tmp/r.json" "$1" >"$tmp/py.out" 2>&1 || { failed "$2: $1"; sed 's/^/    /' "$tmp/py.out" | head -60; }
}

# rules TABLE [ARGS...] WANT: the findings' rules, comma-separated, are WANT.
rules() {
	local want=${*: -1}
	json "${@:1:$#-1}" && py "','.join(rules) == '$want'" "keyviz ${*:1:$#-1}: rules want '$want'"
}

T0=1426535612156 # ms
LMAX=9223372036854775807

checks=$((checks + 1))
"$cellctl" help keyviz | head -1 | grep -q "^cellctl keyviz <table>" || failed "help keyviz does not start with its synopsis"

# ---- A well-designed table: field-promoted keys, padded numbers, the time last ------------------------
# EXCHANGE#SYMBOL#TIME, each quote written at its own time, so the newest writes spread over the symbols.
for ex in NASDAQ NYSE; do
	for sym in AAPL GOOG IBM MSFT ZXZZT; do
		for i in $(seq 0 19); do
			t=$((T0 + i * 1000))
			echo "$ex#$sym#$t,1.$i@$((t * 1000))"
		done
	done
done | load quotes cf:maxversions=3
# METER#DATE: twelve consecutive meter ids, zero-padded to 10 digits, five days each.
for m in $(seq 987650 987661); do
	for d in 20170726 20170727 20170728 20170729 20170730; do
		echo "$(printf '%010d' "$m")#$d,42@$((T0 * 1000 + ${d: -1} * 1000))"
	done
done | load sensor cf
rules quotes ''
rules sensor ''
out <<'EOF'
table quotes: 200 rows, 200 cells, 700 bytes of values; keys split at "#"
depth  rows  distinct  looks like            e.g.
0      200   2         text, 4-6 bytes       "NASDAQ" "NYSE"
1      200   5         text, 3-5 bytes       "AAPL" "GOOG" "IBM" ...
2      200   20        timestamp (epoch ms)  "1426535612156" "1426535613156" "1426535614156" ...
newest writes: 1 of the newest 10 cells in the last 10 rows, 0 in the first 10
no findings
EOF
ok keyviz quotes
json sensor
py 'r["depths"][0]["kind"] == "sequence" and r["depths"][1]["kind"] == "timestamp"' "sensor: depth kinds"
py 'r["depths"][0]["detail"] == "sequence 987650..987661" and r["depths"][0]["distinct"] == 12' "sensor: the meter ids"

# ---- Keys starting with a timestamp: every new row at the end ----------------------------------------
for i in $(seq 0 199); do
	t=$((T0 + i * 1000))
	echo "$t#sensor$((i % 7)),1@$((t * 1000))"
done | load tsfirst cf
rules tsfirst timestamp-first
py 'find("timestamp-first")["numbers"] == {"newest_cells": 10, "in_last_rows": 10, "last_rows": 10}' "tsfirst: all the newest writes in the last rows"
py 'find("timestamp-first")["depth"] == 0 and "epoch ms" in find("timestamp-first")["message"]' "tsfirst: depth and unit"
py 'find("timestamp-first")["examples"][1]["row"] == "1426535811156#sensor3"' "tsfirst: the last row is an example"
# The same keys after a constant prefix (BATTERY#TIME) are still timestamp-first; ISO dates too.
for i in $(seq 0 49); do
	printf 'BATTERY#2015-03-01T10:%02d:00Z,1@%d\n' "$i" $(((T0 + i) * 1000))
done | load battery cf
rules battery timestamp-first
py 'find("timestamp-first")["depth"] == 1 and "iso-8601" in find("timestamp-first")["message"]' "battery: ISO dates at depth 1"

# ---- Keys starting with a sequential number -----------------------------------------------------------
for i in $(seq 1 200); do
	printf '%08d,1@%d\n' "$i" $(((T0 + i) * 1000))
done | load orders cf
rules orders sequence-first
py 'find("sequence-first")["numbers"]["min"] == 1 and find("sequence-first")["numbers"]["max"] == 200' "orders: the range"
py 'find("sequence-first")["numbers"]["in_last_rows"] == 10' "orders: the newest writes in the last rows"

# ---- A salted prefix: SALT#SENSOR#DATE, the salt the sensor's number modulo 4 -------------------------
for s in $(seq 0 39); do
	for d in 20150301 20150302; do
		echo "$((s % 4))#sensor$s#$d,1@$((T0 * 1000))"
	done
done | load salted cf
rules salted salted-prefix
py 'find("salted-prefix")["numbers"] == {"salts": 4, "rows_min": 20, "rows_max": 20}' "salted: four salts"
py 'len(find("salted-prefix")["examples"]) == 3 and find("salted-prefix")["examples"][1]["row"].startswith("1#")' "salted: one example per salt"

# ---- Hashed keys: md5 of a user name -----------------------------------------------------------------
for i in $(seq 1 100); do
	echo "$(printf 'user%d' "$i" | md5sum | cut -c1-32),1@$((T0 * 1000))"
done | load hashed cf
rules hashed hashed-prefix
py 'find("hashed-prefix")["numbers"] == {"distinct": 100, "length": 32}' "hashed: 100 hashes of 32 characters"
py 'r["depths"][0]["kind"] == "hash"' "hashed: depth 0 is a hash"
# A hex device id under a type, many dates each (phone#4c410523#20200501), is an id, not a hashed key.
for i in $(seq 1 20); do
	id=$(printf 'dev%d' "$i" | md5sum | cut -c1-8)
	for d in 20200501 20200502 20200503; do echo "phone#$id#$d,1@$((T0 * 1000))"; done
done | load phones cf
rules phones ''

# ---- Numbers not zero-padded: "10" sorts before "9" --------------------------------------------------
for i in $(seq 1 30); do
	echo "user#$((i * i * 7)),1@$((T0 * 1000))"
done | load unpadded cf
rules unpadded unpadded-numbers
py 'find("unpadded-numbers")["depth"] == 1 and find("unpadded-numbers")["numbers"]["min_digits"] == 1 and find("unpadded-numbers")["numbers"]["max_digits"] == 4' "unpadded: widths"
py '[e["row"] for e in find("unpadded-numbers")["examples"]] == ["user#1008", "user#112"]' "unpadded: the first pair out of order"
py 'find("unpadded-numbers")["examples"][0]["note"] == "sorts before \"user#112\""' "unpadded: the note"
json unpadded
checks=$((checks + 1))
"$cellctl" --db "$db" keyviz unpadded | grep -qx '    "user#1008"  (sorts before "user#112")' || failed "unpadded: the text report shows the pair"

# ---- Reversed timestamps: SENSOR#(Long.MAX - ts) -----------------------------------------------------
for s in a b c; do
	for i in $(seq 0 9); do
		t=$((T0 + i * 1000))
		echo "sensor-$s#$((LMAX - t)),1@$((t * 1000))"
	done
done | load reversed cf
rules reversed reversed-timestamp
py 'find("reversed-timestamp")["depth"] == 1 and r["depths"][1]["kind"] == "reversed-timestamp"' "reversed: depth 1"
py '"Long.MAX - epoch ms" in find("reversed-timestamp")["message"]' "reversed: the unit"

# Leading the key, they put the newest writes at the start of the key space.
for i in $(seq 0 99); do
	t=$((T0 + i * 1000))
	echo "$((LMAX - t))#s$((i % 5)),1@$((t * 1000))"
done | load revfirst cf
rules revfirst reversed-timestamp
py 'find("reversed-timestamp")["numbers"] == {"rows": 100, "newest_cells": 10, "in_first_rows": 10, "first_rows": 10}' "revfirst: the newest writes in the first rows"

# ---- Bytes that are not text: escaped in text, base64 in JSON ----------------------------------------
ok createtable bin families=cf
ok set bin "$(printf 'k\xff\x01#a')" cf:q=1
ok set bin "$(printf 'k\xff\x01#b')" cf:q=1
json bin
py 'r["depths"][0]["samples"] == [{"segment_b64": "a/8B"}] and r["depths"][0]["kind"] == "binary"' "bin: a binary segment in base64"
checks=$((checks + 1))
"$cellctl" --db "$db" keyviz bin | grep -qxF '0      2     1         binary, 3 bytes  "k\xff\x01"' || failed "bin: the text report escapes the segment"

# ---- Sizes: rows and cells (small thresholds; the defaults are the guide's) ---------------------------
v500=$(printf 'x%.0s' $(seq 500))
ok createtable sizes families=cf
ok set sizes a "cf:1=$v500" "cf:2=$v500" "cf:3=$v500"
ok set sizes b "cf:1=$v500" "cf:2=$v500" "cf:3=$v500" "cf:4=$v500" "cf:5=$v500" "cf:6=$v500" "cf:7=$v500"
ok set sizes c "cf:big=$v500$v500"
ok set sizes d cf:small=1
rules sizes ''
py 'r["thresholds"] == {"row_size": 100 * 2**20, "row_limit": 256 * 2**20, "cell_size": 10 * 2**20, "max_families": 100}' "the defaults are the guide's"
rules sizes row-size=1K row-limit=4K cell-size=600 'row-size,row-limit,cell-size'
py 'find("row-size")["numbers"] == {"rows": 2, "largest_bytes": 3500, "threshold_bytes": 1024}' "sizes: rows over 1 KiB"
py '[e["row"] for e in find("row-size")["examples"]] == ["a", "b"] and find("row-size")["examples"][0]["note"] == "1500 bytes"' "sizes: the big rows"
py '[e["row"] for e in find("row-limit")["examples"]] == ["b"] and find("row-limit")["numbers"]["limit_bytes"] == 4096' "sizes: the row near the limit"
py 'find("cell-size")["examples"] == [{"row": "c", "column": "cf:big", "note": find("cell-size")["examples"][0]["note"]}] and find("cell-size")["examples"][0]["note"].startswith("1000 bytes @")' "sizes: the big cell"

# ---- More than 100 families --------------------------------------------------------------------------
fams=$(seq -f 'f%g' 0 100 | paste -sd,)
ok createtable wide "families=$fams"
ok set wide r f0:q=1
rules wide families
py 'find("families")["numbers"] == {"families": 101, "threshold": 100}' "wide: 101 families"
rules wide max-families=101 ''

# ---- More versions than the GC policy keeps; gc removes them and the finding --------------------------
ok createtable versions "families=cf:maxversions=2,log:maxversions=3 and maxage=1d"
ok set versions r1 cf:q=1@1000 cf:q=2@2000 cf:q=3@3000 cf:q=4@4000 cf:q=5@5000
ok set versions r2 cf:q=1@1000 cf:p=1@1000
ok set versions r3 log:q=1@1000 log:q=1@2000 log:q=1@3000 log:q=1@4000
rules versions versions
py 'find("versions")["numbers"] == {"max_versions": 2, "most_written": 5, "collected_cells": 3, "columns_at_limit": 1}' "versions: the numbers"
py 'find("versions")["examples"] == [{"row": "r1", "column": "cf:q", "note": "2 versions"}]' "versions: the column"
py 'r["versions_checked"]' "versions: checked"
checks=$((checks + 1))
"$cellctl" --db "$db" gc versions >/dev/null || failed "gc versions"
rules versions ''

# ---- Edge cases and bad arguments --------------------------------------------------------------------
ok createtable empty families=cf
out <<'EOF'
table empty: 0 rows, 0 cells, 0 bytes of values; keys split at "#"
no findings
EOF
ok keyviz empty
err 'cellctl keyviz: usage: cellctl keyviz <table> [row-size=<bytes>] [row-limit=<bytes>] [cell-size=<bytes>] [max-families=<n>]' keyviz
err 'cellctl keyviz: table "nosuch" not found' keyviz nosuch
err 'cellctl keyviz: unknown arg key "bogus"' keyviz quotes bogus=1
err 'cellctl keyviz: bad row-size="1X": want a size in bytes (a number, K, M or G after it for KiB, MiB, GiB)' keyviz quotes row-size=1X
err 'cellctl keyviz: bad max-families="-1": want a number of families from 0 to 100000' keyviz quotes max-families=-1

finish keyviz
