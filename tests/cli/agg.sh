#!/bin/bash
# agg.sh CELLCTL — aggregate families (createtable/createfamily types, ls, addtocell, set refused),
# droprowrange, and --format=json for ls, read, lookup and count. Each case checks stdout, stderr and the
# exit status exactly, and every refused write is followed by a read showing nothing changed.
#
# The harness is lib.sh's (as cli.sh): out/outb set the expected stdout of the next check; ok ARGS must
# exit 0 with it and an empty stderr; err 'MESSAGE' ARGS must exit 1 with no stdout and exactly MESSAGE on
# stderr.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# unchanged NAME ARGS...: the output of ARGS (a read) is what it was when NAME was last saved.
save() { local n=$1; shift; "$cellctl" --db "$db" "$@" >"$tmp/saved.$n" 2>&1; }
unchanged() {
	local n=$1; shift
	checks=$((checks + 1))
	"$cellctl" --db "$db" "$@" >"$tmp/now.$n" 2>&1
	cmp -s "$tmp/saved.$n" "$tmp/now.$n" || { failed "a refused command changed the store ($n):"; diff -u "$tmp/saved.$n" "$tmp/now.$n" | sed 's/^/    /'; }
}

SUM='{"aggregateType":{"inputType":{"int64Type":{"encoding":{"bigEndianBytes":{}}}}, "sum":{}}}'
MIN='{"aggregateType":{"inputType":{"int64Type":{"encoding":{"bigEndianBytes":{}}}}, "min":{}}}'
MAX='{"aggregateType":{"inputType":{"int64Type":{"encoding":{"bigEndianBytes":{}}}}, "max":{}}}'

for c in addtocell droprowrange; do
	checks=$((checks + 1))
	"$cellctl" help $c | head -1 | grep -q "^cellctl $c" || failed "help $c does not start with its synopsis"
done

# ---- Aggregate families: createtable, createfamily, ls -----------------------------------------------

err 'cellctl createtable: family "h": value type "inthll" is not supported (only intsum, intmin and intmax)' createtable a families=s:never:intsum,h:never:inthll
err 'cellctl createtable: family "h": unknown value type "bogus" (want intsum, intmin or intmax)' createtable a families=h:never:bogus
err 'cellctl createtable: family "h": unknown value type "" (want intsum, intmin or intmax)' createtable a families=h:never:
err 'cellctl createtable: family "h": value type "StringUtf8Bytes" is not supported (only intsum, intmin and intmax)' createtable a families=h:never:StringUtf8Bytes
err 'cellctl createtable: family "h": value type "INTHLL" is not supported (only intsum, intmin and intmax)' createtable a families=h:never:INTHLL
err 'cellctl createtable: family "h": unknown value type "int sum" (want intsum, intmin or intmax)' createtable a "families=h:never:int sum"
err 'cellctl createtable: family "h:never:intsum:x": too many '"':'"' (want <family>[:<gcpolicy>[:<type>]])' createtable a families=h:never:intsum:x
err 'cellctl createtable: family "h": invalid GC policy "intsum": expected maxversions=N, maxage=D or "(", got "intsum"' createtable a families=h:intsum
err 'cellctl createtable: family "h": invalid GC policy "": empty policy' createtable a families=h::intsum
checks=$((checks + 1))
[ -e "$db" ] && failed "a createtable with a bad value type created the store"

ok createtable agg "families=s:never:intsum,mn:maxversions=2:intmin,mx:maxversions=1:intmax,plain,o:maxversions=5 || maxage=1d:intsum"
ok createfamily agg s2:never:intsum
ok createfamily agg p2:maxversions=1
# Value types in any case, as cbt reads them (Go's strings.ToLower, which lowers U+0130 to 'i' too).
ok createtable case "families=a:never:INTSUM,b:maxversions=1:IntMin,c:never:iNtMaX,d:never:$(printf '\xc4\xb0')NTSUM"
ok createfamily case e:never:IntSum
out <<EOF
Family Name	GC Policy		Value Type
-----------	---------		----------
a					$SUM
b		versions() > 1		$MIN
c					$MAX
d					$SUM
e					$SUM
EOF
ok ls case
ok deletetable case
out <<EOF
Family Name	GC Policy				Value Type
-----------	---------				----------
mn		versions() > 2				$MIN
mx		versions() > 1				$MAX
o		(versions() > 5 || age() > 1d)		$SUM
p2		versions() > 1				{}
plain							{}
s							$SUM
s2							$SUM
EOF
ok ls agg
save ls ls agg
err 'cellctl createfamily: family "h": value type "inthll" is not supported (only intsum, intmin and intmax)' createfamily agg h:never:inthll
err 'cellctl createfamily: family "h": unknown value type "x" (want intsum, intmin or intmax)' createfamily agg h:maxversions=1:x
err 'cellctl createfamily: family "s" already exists in table "agg"' createfamily agg s:never:intmax
err 'cellctl createfamily: table "nosuch" not found' createfamily nosuch s:never:intsum
unchanged ls ls agg

# ---- addtocell -------------------------------------------------------------------------------------

ok addtocell agg r s:a=5@1000 s:a=7@1000 s:a=3@2000 app-profile=x s:a=10@1000
ok addtocell agg r mn:a=10@1000 mn:a=3@1000 mn:a=7@1000 mx:a=10@1000 mx:a=-3@1000
ok addtocell agg r s:hex=0x10@1000 s:under=1_000@1000 s:plus=+5@1000 s:neg=-0x10@1000 s:=3@1000 :s:colon=1@1000
ok addtocell agg r s:wrap=9223372036854775807@1000 s:wrap=1@1000 s:trunc=1@1234567 s:zero=1@-999
out <<'EOF'
----------------------------------------
r
  mn:a                                     @ 1970/01/01-00:00:00.001000
    "\x00\x00\x00\x00\x00\x00\x00\x03"
  mx:a                                     @ 1970/01/01-00:00:00.001000
    "\x00\x00\x00\x00\x00\x00\x00\n"
  s:                                       @ 1970/01/01-00:00:00.001000
    "\x00\x00\x00\x00\x00\x00\x00\x03"
  s:a                                      @ 1970/01/01-00:00:00.002000
    "\x00\x00\x00\x00\x00\x00\x00\x03"
  s:a                                      @ 1970/01/01-00:00:00.001000
    "\x00\x00\x00\x00\x00\x00\x00\x16"
  s:colon                                  @ 1970/01/01-00:00:00.001000
    "\x00\x00\x00\x00\x00\x00\x00\x01"
  s:hex                                    @ 1970/01/01-00:00:00.001000
    "\x00\x00\x00\x00\x00\x00\x00\x10"
  s:neg                                    @ 1970/01/01-00:00:00.001000
    "\xff\xff\xff\xff\xff\xff\xff\xf0"
  s:plus                                   @ 1970/01/01-00:00:00.001000
    "\x00\x00\x00\x00\x00\x00\x00\x05"
  s:trunc                                  @ 1970/01/01-00:00:01.234000
    "\x00\x00\x00\x00\x00\x00\x00\x01"
  s:under                                  @ 1970/01/01-00:00:00.001000
    "\x00\x00\x00\x00\x00\x00\x03\xe8"
  s:wrap                                   @ 1970/01/01-00:00:00.001000
    "\x80\x00\x00\x00\x00\x00\x00\x00"
  s:zero                                   @ 1970/01/01-00:00:00.000000
    "\x00\x00\x00\x00\x00\x00\x00\x01"

EOF
ok lookup agg r
# Separate commands merge as one does; GC policies apply to aggregate cells (mn keeps 2 versions).
ok addtocell agg r2 s:a=1@1000
ok addtocell agg r2 s:a=2@1000
ok addtocell agg r2 mn:a=5@1000 mn:a=4@2000 mn:a=3@3000
out <<'EOF'
----------------------------------------
r2
  mn:a                                     @ 1970/01/01-00:00:00.003000
    "\x00\x00\x00\x00\x00\x00\x00\x03"
  mn:a                                     @ 1970/01/01-00:00:00.002000
    "\x00\x00\x00\x00\x00\x00\x00\x04"
  s:a                                      @ 1970/01/01-00:00:00.001000
    "\x00\x00\x00\x00\x00\x00\x00\x03"

EOF
ok lookup agg r2
# A maxage policy collects old aggregate cells as any other: only the one written now is shown.
ok addtocell agg r4 o:a=1@1000 o:a=2 o:a=3@1000
checks=$((checks + 1))
[ "$("$cellctl" --db "$db" --format=json lookup agg r4 | sed -E 's/"ts":[0-9]+/"ts":T/')" = '{"row":"r4","cells":[{"family":"o","qualifier":"a","ts":T,"value":"\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0002","int":2}]}' ] ||
	failed "maxage=1d does not collect an aggregate cell of 1970"
# No @ts (or a value cut at a newline, which loses it): now, in whole milliseconds.
ok addtocell agg r3 s:now=1 $'s:nl=2\n3@1000'
checks=$((checks + 1))
lines=$("$cellctl" --db "$db" lookup agg r3 | grep -cE '^  s:n(ow|l) +@ 2[0-9]{3}/[0-9]{2}/[0-9]{2}-[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}000$')
[ "$lines" = 2 ] || failed "addtocell without a timestamp: not two cells at now"
# deletecolumn works in aggregate families; a new input then starts from nothing.
ok deletecolumn agg r2 s a
ok addtocell agg r2 s:a=40@1000
out <<'EOF'
----------------------------------------
r2
  s:a                                      @ 1970/01/01-00:00:00.001000
    "\x00\x00\x00\x00\x00\x00\x00("

EOF
ok lookup agg r2 columns=s:

# Refused, naming the argument, writing nothing (the valid arguments before the bad one included).
save r lookup agg r
err 'cellctl addtocell: usage: cellctl addtocell <table> <row-key> [app-profile=<app-profile-id>] <family>:<column>=<val>[@<timestamp>] ...' addtocell agg r
err 'cellctl addtocell: usage: cellctl addtocell <table> <row-key> [app-profile=<app-profile-id>] <family>:<column>=<val>[@<timestamp>] ...' addtocell agg
err 'cellctl addtocell: bad addtocell arg "noeq"' addtocell agg r s:a=1@1000 noeq
err 'cellctl addtocell: bad value "x" in "s:a=x@1000": invalid syntax (addtocell takes integers)' addtocell agg r s:a=1@1000 s:a=x@1000
err 'cellctl addtocell: bad value "" in "s:a=@1000": invalid syntax (addtocell takes integers)' addtocell agg r s:a=@1000
err 'cellctl addtocell: bad value "1.5" in "s:a=1.5@1000": invalid syntax (addtocell takes integers)' addtocell agg r s:a=1.5@1000
err 'cellctl addtocell: bad value " 1" in "s:a= 1@1000": invalid syntax (addtocell takes integers)' addtocell agg r 's:a= 1@1000'
err 'cellctl addtocell: bad value "5@1000" in "s:a=5@1000@2000": invalid syntax (addtocell takes integers)' addtocell agg r s:a=5@1000@2000
err 'cellctl addtocell: bad value "9223372036854775808" in "s:a=9223372036854775808@1000": value out of range (addtocell takes integers)' addtocell agg r s:a=9223372036854775808@1000
err 'cellctl addtocell: invalid timestamp -1 in "s:a=1@-1"' addtocell agg r s:a=1@1000 s:a=1@-1
err 'cellctl addtocell: invalid timestamp -5000 in "s:a=1@-5000"' addtocell agg r s:a=1@-5000
err 'cellctl addtocell: family "plain" of table "agg" is not an aggregate family: write it with set (argument "plain:a=1@1000")' addtocell agg r s:a=1@1000 plain:a=1@1000
err 'cellctl addtocell: family "nofam" not found in table "agg" (argument "nofam:a=1")' addtocell agg r s:a=1@1000 nofam:a=1
err 'cellctl addtocell: table "nosuch" not found' addtocell nosuch r s:a=1
err 'cellctl addtocell: row keys must be non-empty' addtocell agg '' s:a=1
err 'cellctl addtocell: row key of 4097 bytes is longer than 4096' addtocell agg "$(printf '%04097d' 0)" s:a=1
err 'cellctl addtocell: row key or qualifier too long (row keys up to 4096 bytes, qualifiers up to 16384)' addtocell agg r s:a=1@1000 "s:$(printf '%016385d' 0)=1"
err 'cellctl addtocell: authorized views are not supported (argument "authorized-view=v")' addtocell agg r authorized-view=v s:a=1
err 'cellctl addtocell: nothing to add' addtocell agg r app-profile=x
# Plain writes into an aggregate family are refused: set, and set among valid cells.
err 'cellctl set: family "s" of table "agg" is an aggregate family (intsum): write it with addtocell (argument "s:a=abc@1000")' set agg r s:a=abc@1000
err 'cellctl set: family "mx" of table "agg" is an aggregate family (intmax): write it with addtocell (argument "mx:a=12345678@1000")' set agg r plain:a=v@1000 mx:a=12345678@1000
unchanged r lookup agg r

# ---- droprowrange ------------------------------------------------------------------------------------

ok createtable d families=cf
for k in a a#1 a#2 ab b b#1 c; do
	ok set d "$k" cf:q=v@1000
done
save d read d keys-only=true
err 'cellctl droprowrange: usage: cellctl droprowrange <table> (prefix=<row-key-prefix> | all=true)' droprowrange
err 'cellctl droprowrange: say which rows: prefix=<row-key-prefix>, or all=true for every row' droprowrange d
err 'cellctl droprowrange: say which rows: prefix=<row-key-prefix>, or all=true for every row' droprowrange d all=false
err 'cellctl droprowrange: empty prefix= (to drop every row, say all=true)' droprowrange d prefix=
err 'cellctl droprowrange: prefix= and all=true may not be given together' droprowrange d prefix=a all=true
err 'cellctl droprowrange: bad all "yes": want true or false' droprowrange d all=yes
err 'cellctl droprowrange: bad arg "a"' droprowrange d a
err 'cellctl droprowrange: unknown arg key "start"' droprowrange d start=a
err 'cellctl droprowrange: prefix of 4097 bytes is longer than the longest row key (4096 bytes)' droprowrange d prefix="$(printf '%04097d' 0)"
err 'cellctl droprowrange: table "nosuch" not found' droprowrange nosuch prefix=a
err 'cellctl droprowrange: table "nosuch" not found' droprowrange nosuch all=true
unchanged d read d keys-only=true
ok droprowrange d prefix=a#
out <<'EOF'
{"row":"a","cells":[{"family":"cf","qualifier":"q","ts":1000}]}
{"row":"ab","cells":[{"family":"cf","qualifier":"q","ts":1000}]}
{"row":"b","cells":[{"family":"cf","qualifier":"q","ts":1000}]}
{"row":"b#1","cells":[{"family":"cf","qualifier":"q","ts":1000}]}
{"row":"c","cells":[{"family":"cf","qualifier":"q","ts":1000}]}
EOF
ok --format=json read d keys-only=true
ok droprowrange d prefix=b
ok droprowrange d prefix=nothing-here
out <<'EOF'
3
EOF
ok count d
# A dropped row written again holds only what is written after the drop.
ok set d b cf:q=new@2000
out <<'EOF'
----------------------------------------
b
  cf:q                                     @ 1970/01/01-00:00:00.002000
    "new"

EOF
ok read d prefix=b
ok droprowrange d all=1
out <<'EOF'
0
EOF
ok count d
ok set d z cf:q=v@1000
out <<'EOF'
1
EOF
ok count d
# Aggregate cells in a dropped range do not count towards later inputs.
ok droprowrange agg prefix=r2
ok addtocell agg r2 s:a=1@1000
out <<'EOF'
----------------------------------------
r2
  s:a                                      @ 1970/01/01-00:00:00.001000
    "\x00\x00\x00\x00\x00\x00\x00\x01"

EOF
ok lookup agg r2

# ---- --format=json ---------------------------------------------------------------------------------

ok createtable j "families=cf,s:maxversions=1:intsum"
ok set j r1 cf:a=hello@900000 cf:a=older@500000 'cf:q"uo\te=x"y\z@2000' $'cf:ctl=\x01\x1f\x7f\t@1000'
ok set j $'r2\xff' $'cf:\xfe=\xff\x01@1000' cf:empty=@1000 $'cf:utf=\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80@1000'
ok set j $'\xed\xa0\x80surrogate' $'cf:\xc0\xafoverlong=\xf4\x90\x80\x80@1000'
ok addtocell j r1 s:n=-2@1000 s:n=1@1000 s:old=5@1000 s:old=6@2000 s:big=0x7f7f7f7f7f7f7f7f@1000
out <<'EOF'
{"table":"agg"}
{"table":"d"}
{"table":"j"}
EOF
ok --format=json ls
out <<'EOF'
{"family":"cf","gc_policy":"never"}
{"family":"s","gc_policy":"maxversions=1","value_type":"intsum"}
EOF
ok --format json ls j
# Byte fields: "X" when valid UTF-8 (controls escaped), else "X_b64" (invalid bytes, surrogates,
# overlong forms, code points past U+10FFFF). Aggregate cells add "int". Each cell is written once.
out <<'EOF'
{"row":"r1","cells":[{"family":"cf","qualifier":"a","ts":900000,"value":"hello"},{"family":"cf","qualifier":"a","ts":500000,"value":"older"},{"family":"cf","qualifier":"ctl","ts":1000,"value":"\u0001\u001f\u007f\t"},{"family":"cf","qualifier":"q\"uo\\te","ts":2000,"value":"x\"y\\z"},{"family":"s","qualifier":"big","ts":1000,"value":"\u007f\u007f\u007f\u007f\u007f\u007f\u007f\u007f","int":9187201950435737471},{"family":"s","qualifier":"n","ts":1000,"value_b64":"//////////8=","int":-1},{"family":"s","qualifier":"old","ts":2000,"value":"\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0006","int":6}]}
{"row_b64":"cjL/","cells":[{"family":"cf","qualifier":"empty","ts":1000,"value":""},{"family":"cf","qualifier":"utf","ts":1000,"value":"é日😀"},{"family":"cf","qualifier_b64":"/g==","ts":1000,"value_b64":"/wE="}]}
{"row_b64":"7aCAc3Vycm9nYXRl","cells":[{"family":"cf","qualifier_b64":"wK9vdmVybG9uZw==","ts":1000,"value_b64":"9JCAgA=="}]}
EOF
ok --format=json read j
if command -v python3 >/dev/null 2>&1; then
	checks=$((checks + 1))
	"$cellctl" --db "$db" --format=json read j | python3 -c '
import base64, json, sys
for line in sys.stdin:
    row = json.loads(line)
    for c in row["cells"]:
        v = c["value"].encode() if "value" in c else base64.b64decode(c["value_b64"])
        if c["family"] == "s":
            assert int.from_bytes(v, "big", signed=True) == c["int"], c
' || failed "--format=json read: not JSON lines, or an int that does not match its value"
fi
out <<'EOF'
{"row":"r1","cells":[{"family":"cf","qualifier":"a","ts":900000,"value":"hello"},{"family":"cf","qualifier":"ctl","ts":1000,"value":"\u0001\u001f\u007f\t"},{"family":"cf","qualifier":"q\"uo\\te","ts":2000,"value":"x\"y\\z"}]}
EOF
ok --format=json read j columns=cf:a,a,cf: cells-per-column=1 prefix=r1
out <<'EOF'
{"row":"r1","cells":[{"family":"cf","qualifier":"a","ts":900000},{"family":"cf","qualifier":"a","ts":500000},{"family":"cf","qualifier":"ctl","ts":1000},{"family":"cf","qualifier":"q\"uo\\te","ts":2000},{"family":"s","qualifier":"big","ts":1000},{"family":"s","qualifier":"n","ts":1000},{"family":"s","qualifier":"old","ts":2000}]}
EOF
ok --format=json read j keys-only=true count=1
out <<'EOF'
{"row":"r1","cells":[{"family":"s","qualifier":"big","ts":1000,"value":"\u007f\u007f\u007f\u007f\u007f\u007f\u007f\u007f","int":9187201950435737471},{"family":"s","qualifier":"n","ts":1000,"value_b64":"//////////8=","int":-1},{"family":"s","qualifier":"old","ts":2000,"value":"\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0006","int":6}]}
EOF
ok --format=json lookup j r1 columns=s:
# A missing row is no line (text prints cbt's empty row); so is nothing read.
ok --format=json lookup j nosuch
ok --format=json lookup j ''
ok --format=json read j count=0
ok --format=json read j prefix=zz
out <<'EOF'
{"count":3}
EOF
ok --format=json count j
out <<'EOF'
{"count":0}
EOF
ok --format=json count j prefix=zz
out <<'EOF'
3
EOF
ok --format=text count j
# Commands without output are unaffected by --format.
ok --format=json set j r3 cf:a=v@1000
ok --format=json addtocell j r3 s:a=1@1000
# Errors are the same one line on stderr, whatever the format.
err 'cellctl read: table "nosuch" not found' --format=json read nosuch
err 'cellctl lookup: table "nosuch" not found' --format=json lookup nosuch r
err 'cellctl count: table "nosuch" not found' --format=json count nosuch
err 'cellctl ls: table "nosuch" not found' --format=json ls nosuch
err 'cellctl read: bad count "x": invalid syntax' --format=json read j count=x
run 1 'cellctl: unknown format "xml" for --format (want text or json)' "$cellctl" --db "$db" --format=xml ls
run 1 'cellctl: unknown format "" for --format (want text or json)' "$cellctl" --db "$db" --format= ls
run 1 'cellctl: unknown format "JSON" for --format (want text or json)' "$cellctl" --format JSON --db "$db" ls
run 1 'cellctl: option --format needs text or json' "$cellctl" --db "$db" --format

finish
