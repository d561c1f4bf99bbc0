#!/bin/bash
# import.sh CELLCTL — cellctl import and export as a user sees them: cbt's CSV (headers, quoting, value-
# encoded timestamps), JSON lines, every bad input (exit status 1, the exact one-line message, and the
# store unchanged afterwards), export's output, and round trips export -> import that reproduce a table.
#
# Writing a case (the harness is lib.sh's):
#     out <<'EOF' ... EOF    expected stdout of the next check (omit: none)
#     ok   ARGS...           must exit 0 with that stdout and nothing on stderr
#     err  'MESSAGE' ARGS... must exit 1 with no stdout and exactly MESSAGE on stderr
#     bad  'MESSAGE' ARGS... err, and the store's tables read the same before and after
#     input 'PRINTF-FORMAT'  writes $in (printf %b of the argument)
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export TMPDIR=$tmp
in=$tmp/in.csv

input() { printf '%b' "$1" >"$in"; }

# ok, with timestamps of now (13 digits or more, whole ms, all the same) shown as NOW.
now_ok() {
	local want=$tmp/want.now
	mv "$tmp/want.out" "$want"
	checks=$((checks + 1))
	"$cellctl" --db "$db" "$@" >"$tmp/got.raw" 2>"$tmp/got.err" || failed "$*: $(cat "$tmp/got.err")"
	[ "$(grep -oE '"ts":[0-9]{13,}' "$tmp/got.raw" | sort -u | wc -l)" -le 1 ] || failed "$*: several times of now"
	grep -qE '"ts":[0-9]{10,}[1-9][0-9]{0,2},' "$tmp/got.raw" && failed "$*: a time of now that is not whole ms"
	sed -E 's/"ts":[0-9]{13,}/"ts":NOW/' "$tmp/got.raw" | cmp -s "$want" - || {
		failed "$*: stdout differs"
		sed -E 's/"ts":[0-9]{13,}/"ts":NOW/' "$tmp/got.raw" | diff -u "$want" - | tail -n +3 | head -20 | sed 's/^/    /'
	}
	: >"$tmp/want.out"
}

# Everything the store's tables hold, every version, exactly.
snapshot() {
	local t
	for t in $("$cellctl" --db "$db" ls); do
		echo "== $t"
		"$cellctl" --db "$db" export "$t" format=jsonl
	done
}
bad() {
	snapshot >"$tmp/before"
	err "$@"
	snapshot >"$tmp/after"
	checks=$((checks + 1))
	cmp -s "$tmp/before" "$tmp/after" || failed "$(printf '%q ' "${@:2}"): a failed import changed the store"
}

# ---- Setup -------------------------------------------------------------------------------------------

ok createtable t families=cf,g
ok createtable other families=cf
ok set other keep cf:q=v@1000

# ---- CSV as cbt import reads it ----------------------------------------------------------------------

# Family row (each family applies to its column and those to its right), qualifier row, quoting with
# commas, doubled quotes and newlines, an empty qualifier, empty fields skipped, value-encoded
# timestamps (truncated to ms; one that does not parse stays in the value; -1 and none are "now").
input ',cf,,,g,\n,a,b,,c,d\nr1,"x,y","say ""hi""",e@3000,"multi\nline@2000",v@1234567\nr2,,,,,@5000\nr3,a@b@7000,1@1.5,,,\n'
ok import t "$in" timestamp=value-encoded
# Cells without a timestamp that parses get the time of the import (whole ms): NOW here.
out <<'EOF'
{"row":"r1","family":"cf","qualifier":"","ts":3000,"value":"e"}
{"row":"r1","family":"cf","qualifier":"a","ts":NOW,"value":"x,y"}
{"row":"r1","family":"cf","qualifier":"b","ts":NOW,"value":"say \"hi\""}
{"row":"r1","family":"g","qualifier":"c","ts":2000,"value":"multi\nline"}
{"row":"r1","family":"g","qualifier":"d","ts":1234000,"value":"v"}
{"row":"r2","family":"g","qualifier":"d","ts":5000,"value":""}
{"row":"r3","family":"cf","qualifier":"a","ts":7000,"value":"a@b"}
{"row":"r3","family":"cf","qualifier":"b","ts":NOW,"value":"1@1.5"}
EOF
now_ok export t format=jsonl
ok deleteallrows t

# No family row with column-family=; CRLF line ends; blank lines skipped; a row without a key skipped;
# the same row on two lines; stdin from a pipe and from a redirected file; a named pipe (<(...)).
input ',a,b\r\n\r\nr1,1@1000,2@1000\r\n,9@1000,9@1000\r\n\nr1,"3\r\n4@2000",\r\n'
ok import t "$in" column-family=g timestamp=value-encoded
out <<'EOF'
----------------------------------------
r1
  g:a                                      @ 1970/01/01-00:00:00.002000
    "3\n4"
  g:a                                      @ 1970/01/01-00:00:00.001000
    "1"
  g:b                                      @ 1970/01/01-00:00:00.001000
    "2"

EOF
ok read t
ok deleteallrows t
input ',cf\n,q\npiped,v@1000\n'
checks=$((checks + 1))
cat "$in" | "$cellctl" --db "$db" import t - timestamp=value-encoded 2>"$tmp/got.err" || failed "import from a pipe failed: $(cat "$tmp/got.err")"
input ',cf\n,q\nredirected,w@2000\n'
checks=$((checks + 1))
"$cellctl" --db "$db" import t - timestamp=value-encoded <"$in" 2>"$tmp/got.err" || failed "import from a redirect failed: $(cat "$tmp/got.err")"
input ',cf\n,q\nsubstituted,x@3000\n'
ok import t <(cat "$in") timestamp=value-encoded
out <<'EOF'
piped cf:q=v@1000
redirected cf:q=w@2000
substituted cf:q=x@3000
EOF
checks=$((checks + 1))
"$cellctl" --db "$db" export t format=jsonl | sed -E 's/^\{"row":"([^"]*)","family":"([^"]*)","qualifier":"([^"]*)","ts":([0-9]+),"value":"([^"]*)"\}$/\1 \2:\3=\5@\4/' >"$tmp/got.out"
cmp -s "$tmp/want.out" "$tmp/got.out" || failed "stdin imports: $(cat "$tmp/got.out")"
: >"$tmp/want.out"
ok deleteallrows t

# timestamp=now (the default): every cell gets one time of now, in whole milliseconds; '@' stays.
input ',cf,\n,a,b\nr1,x@1000,y\n'
ok import t "$in" app-profile=p batch-size=10 workers=2
checks=$((checks + 1))
"$cellctl" --db "$db" export t format=jsonl >"$tmp/got.out"
if [ "$(grep -c '"value":"x@1000"' "$tmp/got.out")" != 1 ] ||
	[ "$(sed -E 's/.*"ts":([0-9]+).*/\1/' "$tmp/got.out" | sort -u | wc -l)" != 1 ] ||
	! grep -q '"ts":[0-9]*000,' "$tmp/got.out"; then
	failed "timestamp=now: $(cat "$tmp/got.out")"
fi
ok deleteallrows t

# ---- Bad CSV: nothing written, the line named ---------------------------------------------------------

ok set t existing cf:a=1@1000
input ',cf,\n,a,b\nr1,1,2\nr2,1,2,3\nr3,1,2\n'
bad 'cellctl import: line 4: wrong number of fields: 4, want 3' import t "$in"
input ',cf,\n,a,b\nr1,1,2\nr2,1\n'
bad 'cellctl import: line 4: wrong number of fields: 2, want 3' import t "$in"
input ',cf,\n,a,b,c\nr1,1,2\n'
bad 'cellctl import: line 2: wrong number of fields: 4, want 3' import t "$in"
input ',cf,nosuch\n,a,b\nr1,1,2\n'
bad 'cellctl import: line 1: family "nosuch" not found in table "t"' import t "$in"
input ',cf,\n,a,b\nr1,1@1000,2@1000\nr2,1@-1000,2\n'
bad 'cellctl import: line 4, field 2: invalid timestamp "-1000" (negative)' import t "$in" timestamp=value-encoded
input ',cf,\n,a,b\nr1,a"b,2\n'
bad 'cellctl import: line 3, column 5: bare " in non-quoted-field' import t "$in"
input ',cf,\n,a,b\nr1,"a"b,2\n'
bad 'cellctl import: line 3, column 6: extraneous or missing " in quoted-field' import t "$in"
input ',cf,\n,a,b\nr1,"unterminated,2\n'
bad 'cellctl import: line 3, column 20: extraneous or missing " in quoted-field' import t "$in"
input ',cf,\n,a,b\nr1,"two\nlines"x,2\n'
bad 'cellctl import: line 4, column 6: extraneous or missing " in quoted-field' import t "$in"
input ''
bad 'cellctl import: the input has no column family row' import t "$in"
input '\n\n'
bad 'cellctl import: the input has no column family row' import t "$in"
input ',cf,\n'
bad 'cellctl import: the input has no qualifier row' import t "$in"
input 'k,cf,\n,a,b\nr1,1,2\n'
bad 'cellctl import: line 1: the first column must be empty in the column family and qualifier rows' import t "$in"
input ',cf,\nq,a,b\nr1,1,2\n'
bad 'cellctl import: line 2: the first column must be empty in the column family and qualifier rows' import t "$in"
# Aggregate families take addtocell only: import (plain cells) is refused, naming the family.
ok createfamily t sums:never:intsum
input ',cf,sums\n,a,b\nr1,1,2\n'
bad 'cellctl import: line 1: family "sums" of table "t" is an aggregate family (intsum): import writes plain cells (use addtocell)' import t "$in"
input ',a\nr1,1\n'
bad 'cellctl import: family "sums" of table "t" is an aggregate family (intsum): import writes plain cells (use addtocell)' import t "$in" column-family=sums
input '{"row":"r1","family":"cf","qualifier":"a","ts":1,"value":"v"}\n{"row":"r2","family":"sums","qualifier":"a","ts":1,"value":"12345678"}\n'
bad 'cellctl import: line 2: family "sums" of table "t" is an aggregate family (intsum): import writes plain cells (use addtocell)' import t "$in"
ok deletefamily t sums
input ',,cf\n,a,b\nr1,1,2\n'
bad 'cellctl import: line 1: the second column (the first data column) must have a column family and a qualifier' import t "$in"
input ',cf,\n,,b\nr1,1,2\n'
bad 'cellctl import: line 2: the second column (the first data column) must have a column family and a qualifier' import t "$in"
input 'k,a\nr1,1\n'
bad 'cellctl import: line 1: the first column must be empty in the column family and qualifier rows' import t "$in" column-family=cf
# With column-family= the first row is the qualifier row: ",a" after it is a row without a key, skipped.
input ',cf\n,a\n'
ok import t "$in" column-family=cf
input ',a,b\nr1,1,2\n'
bad 'cellctl import: family "nosuch" not found in table "t"' import t "$in" column-family=nosuch
bad 'cellctl import: line 2: the first column must be empty in the column family and qualifier rows' import t "$in"
printf ',cf\n,q\n%s,v\n' "$(head -c 4097 /dev/zero | tr '\0' k)" >"$in"
bad 'cellctl import: line 3: the row key is longer than 4096 bytes' import t "$in"
printf ',cf\n,%s\nr,v\n' "$(head -c 16385 /dev/zero | tr '\0' q)" >"$in"
bad 'cellctl import: line 2, field 2: the qualifier is longer than 16384 bytes' import t "$in"
input ',cf\n,q\nr,v\n'
bad 'cellctl import: table "nosuch" not found' import nosuch "$in"
bad "cellctl import: cannot open \"$tmp/nosuch.csv\": No such file or directory" import t "$tmp/nosuch.csv"
bad "cellctl import: cannot read \"$tmp\": Is a directory" import t "$tmp"
bad 'cellctl import: usage: cellctl import <table> <input-file>|- [column-family=<family-name>] [timestamp=<now|value-encoded>] [format=<csv|jsonl|dynamodb>] [key=<partition-key>[#<sort-key>]] [app-profile=<id>] [batch-size=<500>] [workers=<1>] [--quiet] [--batches]' import t
bad 'cellctl import: batch-size must be > 0 and < 100000 (batch-size="0")' import t "$in" batch-size=0
bad 'cellctl import: batch-size must be > 0 and < 100000 (batch-size="100000")' import t "$in" batch-size=100000
bad 'cellctl import: batch-size must be > 0 and < 100000 (batch-size="0x10")' import t "$in" batch-size=0x10
bad 'cellctl import: batch-size must be > 0 and < 100000 (batch-size="abc")' import t "$in" batch-size=abc=10
bad 'cellctl import: workers must be > 0 (workers="x")' import t "$in" workers=x
bad "cellctl import: timestamp must be one of 'now' or 'value-encoded' (timestamp=\"NOW\")" import t "$in" timestamp=NOW
bad "cellctl import: column-family cannot be ''" import t "$in" column-family=
bad 'cellctl import: format must be csv, jsonl or dynamodb (format="xml")' import t "$in" format=xml
# Arguments as cbt reads them: unknown ones are ignored (here with a warning), a value ends at a further
# '=', the last of a key wins.
input ',cf\n,q\nunknown,v\n'
run 0 'cellctl import: warning: ignoring unknown argument "bogus=1" (as cbt does)
cellctl import: warning: ignoring unknown argument "bogus" (as cbt does)
cellctl import: warning: ignoring unknown argument "batch-size" (as cbt does)
cellctl import: warning: ignoring unknown argument "=x" (as cbt does)' \
	"$cellctl" --db "$db" import t "$in" bogus=1 bogus batch-size =x batch-size=0 batch-size=99999
outb '1\n'
ok count t prefix=unknown
: >"$tmp/want.out"
ok deleterow t unknown
input ',q\nunknown,w@1000\n'
ok import t "$in" column-family=nosuch column-family=cf=x timestamp=value-encoded=1
out <<'EOF'
----------------------------------------
unknown
  cf:q                                     @ 1970/01/01-00:00:00.001000
    "w"

EOF
ok lookup t unknown
: >"$tmp/want.out"
ok deleterow t unknown
bad 'cellctl import: column-family= applies to CSV input only' import t "$in" format=jsonl column-family=cf
err "cellctl import: no store at \"$tmp/nostore\"" --db "$tmp/nostore" import t "$in"
checks=$((checks + 1))
[ -e "$tmp/nostore" ] && failed "import created a store"
ok deleterow t existing

# ---- JSON lines ---------------------------------------------------------------------------------------

# One cell per line or one row per line; exact µs timestamps; bytes as _b64 (here NUL, 0xff); escapes.
input '{"row":"r1","family":"cf","qualifier":"a","ts":1234567,"value":"tab\\there \\u00e9 \\ud83d\\ude00"}\n\n{"row_b64":"/w==","cells":[{"family":"g","qualifier_b64":"AP8=","ts":5,"value_b64":"AAEC"},{"ts":0,"value":"","qualifier":"","family":"cf"}]}\n  {"row":"r1","family":"cf","qualifier":"a","ts":1234566,"value":"older"}  \n'
ok import t "$in"
out <<'EOF'
{"row":"r1","family":"cf","qualifier":"a","ts":1234567,"value":"tab\there é 😀"}
{"row":"r1","family":"cf","qualifier":"a","ts":1234566,"value":"older"}
{"row_b64":"/w==","family":"cf","qualifier":"","ts":0,"value":""}
{"row_b64":"/w==","family":"g","qualifier_b64":"AP8=","ts":5,"value":"\u0000\u0001\u0002"}
EOF
ok export t format=jsonl
ok deleteallrows t
# format=jsonl forced on input that does not start with '{'
input '\n  \n{"row":"r","family":"cf","qualifier":"q","ts":1,"value":"v"}\n'
ok import t "$in" format=jsonl
ok deleteallrows t

ok set t existing cf:a=1@1000
input '{"row":"r1","family":"cf","qualifier":"a","ts":1,"value":"v"}\n{"row":"r2","family":"nosuch","qualifier":"a","ts":1,"value":"v"}\n'
bad 'cellctl import: line 2: family "nosuch" not found in table "t"' import t "$in"
input '{"row":"r1","family":"cf","qualifier":"a","ts":1,"value":"v"}\n{"row":"r2","family":"cf","qualifier":"a","ts":1}\n'
bad 'cellctl import: line 2: missing "value"' import t "$in"
input '{"row":"r1","family":"cf","qualifier":"a","ts":-1,"value":"v"}\n'
bad 'cellctl import: line 1: column 48: "ts" must not be negative' import t "$in"
input '{"row":"r1","family":"cf","qualifier":"a","ts":1.5,"value":"v"}\n'
bad 'cellctl import: line 1: column 48: "ts" must be an integer' import t "$in"
input '{"row":"r1","family":"cf","qualifier":"a","ts":1,"value":"\xff"}\n'
bad 'cellctl import: line 1: column 59: a string that is not valid UTF-8 (use the "_b64" form)' import t "$in"
input '{"row":"r1","family":"cf","qualifier":"a","ts":1,"value_b64":"@@@@"}\n'
bad 'cellctl import: line 1: column 62: bad base64 in "value_b64"' import t "$in"
input '{"row":"r1","family":"cf","qualifier":"a","ts":1,"value":"v","extra":1}\n'
bad 'cellctl import: line 1: column 62: unknown key "extra"' import t "$in"
input '{"row":"r1","family":"cf","qualifier":"a","ts":1,"value":"v","ts":2}\n'
bad 'cellctl import: line 1: column 62: "ts" given twice' import t "$in"
input '{"row":"r1","family":"cf","qualifier":"a","ts":1,"value":"v"} x\n'
bad 'cellctl import: line 1: column 63: text after the object' import t "$in"
input '{"row":"r1","family":"cf","qualifier":"a","ts":1,"value":"v"\n'
bad "cellctl import: line 1: column 62: want ',' or '}'" import t "$in"
input '{"row":"","family":"cf","qualifier":"a","ts":1,"value":"v"}\n'
bad 'cellctl import: line 1: the row key is empty' import t "$in"
input '{"row":"r","cells":[{"family":"cf","qualifier":"a","ts":1,"value":"v","row":"x"}]}\n'
bad 'cellctl import: line 1: column 71: unknown key "row"' import t "$in"
input '{"row":"r","family":"cf","cells":[]}\n'
bad 'cellctl import: line 1: a row with "cells" holds only "row" and "cells"' import t "$in"
input '{"row":"r","family":"cf","qualifier":"a","ts":1,"value":"v"}\n'
bad 'cellctl import: the input is JSON lines: column-family= and timestamp= apply to CSV only' import t "$in" timestamp=value-encoded
ok deleterow t existing

# ---- Export -------------------------------------------------------------------------------------------

ok createtable x families=cf,g
ok set x r1 cf:a=new@3000 cf:a=old@1000 'cf:b=x,y "q"@2000' cf:=empty-qual@1000 g:z=@1000
ok set x r2 cf:a=v@v@5000 cf:b=@1@5000
ok set x $'r3\nnl' g:z=z@7000
out <<'EOF'
,cf,,,g
,a,,b,z
r1,new@3000,empty-qual@1000,"x,y ""q""@2000",@1000
r1,old@1000,,,
r2,v@v@5000,,@1@5000,
"r3
nl",,,,z@7000
EOF
ok export x
out <<'EOF'
,cf,,,g
,a,,b,z
r1,new,empty-qual,"x,y ""q""",
r2,v@v,,@1,
"r3
nl",,,,z
EOF
ok export x timestamp=now
out <<'EOF'
,cf,
,a,b
r2,v@v@5000,@1@5000
EOF
ok export x prefix=r2 columns=cf:a,cf:b
out <<'EOF'
,cf,
,a,b
r1,new@3000,"x,y ""q""@2000"
EOF
ok export x start=r1 end=r2 cells-per-column=1 columns=cf:.
out <<'EOF'
{"row":"r2","family":"cf","qualifier":"a","ts":5000,"value":"v@v"}
{"row":"r2","family":"cf","qualifier":"b","ts":5000,"value":"@1"}
EOF
ok export x format=jsonl regex='r[2]' count=1
# Only empty qualifiers: a dummy first column, as cbt wants the first data column named.
ok createtable y families=f
ok set y r f:=v@1000
out <<'EOF'
,f,
,-,
r,,v@1000
EOF
ok export y
ok deleterow y r
out <<'EOF'
,f
,-
EOF
ok export y
# What CSV cannot carry: "\r\n" is refused, µs timestamps are reported.
input '{"row":"r","family":"f","qualifier":"q","ts":1000,"value":"a\\r\\nb"}\n'
ok import y "$in"
run 1 'cellctl export: row "r": its value in a cell holds "\r\n", which CSV cannot carry (a CSV reader reads it as "\n"); use format=jsonl' \
	sh -c '"$0" --db "$1" export y >/dev/null' "$cellctl" "$db"
out <<'EOF'
{"row":"r","family":"f","qualifier":"q","ts":1000,"value":"a\r\nb"}
EOF
ok export y format=jsonl
ok deleterow y r
input '{"row":"r","family":"f","qualifier":"q","ts":1234567,"value":"v"}\n'
ok import y "$in"
run 0 'cellctl export: warning: 1 cells have timestamps finer than milliseconds, which cbt import and cellctl import truncate (format=jsonl keeps them)' \
	sh -c '"$0" --db "$1" export y >/dev/null' "$cellctl" "$db"
err 'cellctl export: table "nosuch" not found' export nosuch
err 'cellctl export: format must be csv or jsonl (format="xml")' export x format=xml
err "cellctl export: timestamp must be one of 'now' or 'value-encoded' (timestamp=\"x\")" export x timestamp=x
err 'cellctl export: timestamp= applies to CSV output only' export x format=jsonl timestamp=now
err 'cellctl export: "start"/"end" may not be mixed with "prefix"' export x start=a prefix=b
err 'cellctl export: unknown arg key "bogus"' export x bogus=1
err 'cellctl export: bad count "x": invalid syntax' export x count=x
err 'cellctl export: usage: cellctl export <table> [start=<row-key>] [end=<row-key>] [prefix=<row-key-prefix>] [regex=<regex>] [columns=<family>:<qualifier>,...] [count=<n>] [cells-per-column=<n>] [format=<csv|jsonl>] [timestamp=<value-encoded|now>] [asof=<time>]' export

# ---- Round trips: export -> import reproduces the table -----------------------------------------------

# Awkward data CSV can carry (ms timestamps): versions, empty values and qualifiers, '@', quotes, commas,
# newlines, a lone '\r', NUL and invalid UTF-8, long keys (appended and not).
ok createtable src families=a,b,c:maxversions=2
long=$(head -c 4000 /dev/zero | tr '\0' L)
ok set src r1 a:x=1@1000 a:x=2@2000 a:x=3@3000 a:=@4000 'b:q,1="quoted" , value@5000' b:@=@@6000
ok set src "$long" a:x=long-row@10000 "c:$long=long-qual@11000" c:v=1@12000 c:v=2@13000 c:v=3@14000
ok set src 'zz' a:x=last@15000
input '{"row_b64":"cgH/","family":"a","qualifier_b64":"/gA=","ts":7000,"value_b64":"AGJpbv8="}\n{"row_b64":"cgH/","family":"a","qualifier":"cr","ts":8000,"value":"x\\ry\\r"}\n{"row_b64":"cgH/","family":"b","qualifier":"nl\\nq","ts":9000,"value":"multi\\nline\\n"}\n'
ok import src "$in"
for fmt in csv jsonl; do
	ok createtable "dst$fmt" families=a,b,c:maxversions=2
	"$cellctl" --db "$db" export src format=$fmt >"$tmp/export.$fmt"
	if [ $fmt = csv ]; then
		ok import "dst$fmt" "$tmp/export.$fmt" timestamp=value-encoded
	else
		ok import "dst$fmt" "$tmp/export.$fmt"
	fi
	checks=$((checks + 1))
	if ! cmp -s <("$cellctl" --db "$db" read src) <("$cellctl" --db "$db" read "dst$fmt"); then
		failed "round trip through $fmt: read differs"
		diff <("$cellctl" --db "$db" read src) <("$cellctl" --db "$db" read "dst$fmt") | cut -c1-100 | head -20
	fi
	checks=$((checks + 1))
	cmp -s <("$cellctl" --db "$db" export src format=jsonl) <("$cellctl" --db "$db" export "dst$fmt" format=jsonl) ||
		failed "round trip through $fmt: jsonl export differs"
done
# JSON lines also carry what CSV cannot: µs timestamps, "\r\n".
ok createtable src2 families=f
input '{"row":"r","family":"f","qualifier":"q","ts":1234567,"value":"a\\r\\nb"}\n{"row":"r","family":"f","qualifier":"q","ts":1234568,"value":"x"}\n{"row":"r","family":"f","qualifier":"\\r\\n","ts":1,"value":"y"}\n'
ok import src2 "$in"
ok createtable dst2 families=f
"$cellctl" --db "$db" export src2 format=jsonl | "$cellctl" --db "$db" import dst2 - 2>"$tmp/got.err"
checks=$((checks + 1))
cmp -s <("$cellctl" --db "$db" export src2 format=jsonl) <("$cellctl" --db "$db" export dst2 format=jsonl) ||
	failed "round trip of \\r\\n and µs timestamps through jsonl differs"

# read --format=json prints rows that import reads back (one row a line, "int" of aggregate cells ignored).
ok createtable dst3 families=f
"$cellctl" --db "$db" --format=json read src2 | "$cellctl" --db "$db" import dst3 - 2>"$tmp/got.err"
checks=$((checks + 1))
cmp -s <("$cellctl" --db "$db" export src2 format=jsonl) <("$cellctl" --db "$db" export dst3 format=jsonl) ||
	failed "read --format=json -> import differs: $(cat "$tmp/got.err")"

# A bigger table through both formats: several batches (100k cells per batch), sorted input appended.
ok createtable big families=f,g
awk 'BEGIN { print ",f,,g"; print ",a,b,c"; for (i = 0; i < 60000; i++) printf "row%07d,%d@%d000,,v%d@1000\n", i, i, i % 7, i }' >"$in"
ok import big "$in" timestamp=value-encoded
out <<'EOF'
60000
EOF
ok count big
ok createtable big2 families=f,g
"$cellctl" --db "$db" export big >"$tmp/big.csv"
ok import big2 "$tmp/big.csv" timestamp=value-encoded --quiet
checks=$((checks + 1))
cmp -s <("$cellctl" --db "$db" export big format=jsonl) <("$cellctl" --db "$db" export big2 format=jsonl) ||
	failed "big round trip differs"

# Exactly, compared by dumps: a table restored from its own dump into another store, its rows dropped
# (schema and creation time stay), then imported from the export must dump byte for byte as the original.
for fmt in jsonl csv; do
	db2=$tmp/db-$fmt
	ts_arg=()
	[ $fmt = csv ] && ts_arg=(timestamp=value-encoded)
	"$cellctl" --db "$db" dump src >"$tmp/src.dump"
	"$cellctl" --db "$db" export src format=$fmt >"$tmp/src.$fmt"
	checks=$((checks + 1))
	if ! "$cellctl" --db "$db2" restore "$tmp/src.dump" >/dev/null 2>"$tmp/got.err" ||
		! "$cellctl" --db "$db2" droprowrange src all=true 2>"$tmp/got.err" ||
		! "$cellctl" --db "$db2" import src "$tmp/src.$fmt" "${ts_arg[@]}" --quiet 2>"$tmp/got.err"; then
		failed "export ($fmt) -> import into a restored, emptied table: $(cat "$tmp/got.err")"
	elif ! cmp -s "$tmp/src.dump" <("$cellctl" --db "$db2" dump src); then
		failed "export ($fmt) -> import does not dump as the original"
	fi
done

finish import.sh
