#!/bin/bash
# dynamodb.sh CELLCTL — cellctl import format=dynamodb: DynamoDB table exports (one {"Item":...} a line)
# covering every DynamoDB type, plain and gzip'd, written as the cells tools/import/README.md states (row keys,
# families, qualifiers, value bytes, list versions and their order); every bad line, bad argument and
# damaged gzip stream refused with one line naming it, the store unchanged afterwards.
#
# Writing a case (the harness is lib.sh's):
#     out <<'EOF' ... EOF    expected stdout of the next check (omit: none)
#     ok   ARGS...           must exit 0 with that stdout and nothing on stderr
#     err  'MESSAGE' ARGS... must exit 1 with no stdout and exactly MESSAGE on stderr
#     bad  'MESSAGE' ARGS... err, and the store's tables and families read the same before and after
#     lines LINE...          writes $in, one argument a line, bytes as given (no escapes interpreted)
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export TMPDIR=$tmp
in=$tmp/export.json
q=\"$in\"   # the input as messages name it

lines() { printf '%s\n' "$@" >"$in"; }

# Everything the store holds: each table's families and every cell, every version, exactly.
snapshot() {
	local t
	for t in $("$cellctl" --db "$db" ls); do
		echo "== $t"
		"$cellctl" --db "$db" --format=json ls "$t"
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
# The export of table $1 in JSON lines must be $2's.
same_cells() {
	checks=$((checks + 1))
	cmp -s <("$cellctl" --db "$db" export "$1" format=jsonl) <("$cellctl" --db "$db" export "$2" format=jsonl) ||
		failed "tables $1 and $2 hold different cells"
}

# ---- Every type -----------------------------------------------------------------------------------------

# An item with every DynamoDB type (é as its bytes, and as \u00e9), nested maps, lists and sets inside a
# map and a list; an item with a binary sort key; one with spaces, a sort key holding the delimiter and a
# CRLF line end; a blank line.
e=$'\xc3\xa9'
item1='{"Item":{"pk":{"S":"user1"},"sk":{"N":"20200501"},"name":{"S":"caf\u00e9 '$e'"},"age":{"N":"-12.5E3"},"blob":{"B":"AP8B"},"ok":{"BOOL":true},"no":{"BOOL":false},"nothing":{"NULL":true},"tags":{"SS":["red","blue"]},"nums":{"NS":["1","2.5"]},"bins":{"BS":["AAE=","/w=="]},"addr":{"M":{"city":{"S":"Paris"},"zip":{"N":"75001"},"geo":{"L":[{"N":"48.8"},{"N":"2.3"}]},"flags":{"SS":["a"]},"none":{"NULL":true}}},"hist":{"L":[{"S":"first"},{"N":"2"},{"M":{"k":{"BOOL":true}}},{"B":"AA=="},{"L":[]}]}}}'
item2='{"Item":{"pk":{"S":"user2"},"sk":{"B":"c2s="},"v":{"S":""},"m":{"M":{}},"l":{"L":[]}}}'
item3=$' { "Item" : { "sk" : { "S" : "a#b" } , "pk":{"S":"user3"} } } \r'
lines "$item1" "$item2" "" "$item3"
ok createtable users families=cf
ok import users "$in" format=dynamodb key=pk#sk timestamp=1000000
out <<'EOF'
{"row":"user1#20200501","family":"addr","qualifier":"city","ts":1000000,"value":"Paris"}
{"row":"user1#20200501","family":"addr","qualifier":"flags","ts":1000000,"value":"{\"SS\":[\"a\"]}"}
{"row":"user1#20200501","family":"addr","qualifier":"geo","ts":1000000,"value":"{\"L\":[{\"N\":\"48.8\"},{\"N\":\"2.3\"}]}"}
{"row":"user1#20200501","family":"addr","qualifier":"none","ts":1000000,"value":""}
{"row":"user1#20200501","family":"addr","qualifier":"zip","ts":1000000,"value":"75001"}
{"row":"user1#20200501","family":"bins","qualifier":"\u0000\u0001","ts":1000000,"value":"\u0000"}
{"row":"user1#20200501","family":"bins","qualifier_b64":"/w==","ts":1000000,"value":"\u0000"}
{"row":"user1#20200501","family":"cf","qualifier":"age","ts":1000000,"value":"-12.5E3"}
{"row":"user1#20200501","family":"cf","qualifier":"blob","ts":1000000,"value_b64":"AP8B"}
{"row":"user1#20200501","family":"cf","qualifier":"hist","ts":1004000,"value":"{\"L\":[]}"}
{"row":"user1#20200501","family":"cf","qualifier":"hist","ts":1003000,"value":"\u0000"}
{"row":"user1#20200501","family":"cf","qualifier":"hist","ts":1002000,"value":"{\"M\":{\"k\":{\"BOOL\":true}}}"}
{"row":"user1#20200501","family":"cf","qualifier":"hist","ts":1001000,"value":"2"}
{"row":"user1#20200501","family":"cf","qualifier":"hist","ts":1000000,"value":"first"}
{"row":"user1#20200501","family":"cf","qualifier":"name","ts":1000000,"value":"café é"}
{"row":"user1#20200501","family":"cf","qualifier":"no","ts":1000000,"value":"false"}
{"row":"user1#20200501","family":"cf","qualifier":"nothing","ts":1000000,"value":""}
{"row":"user1#20200501","family":"cf","qualifier":"ok","ts":1000000,"value":"true"}
{"row":"user1#20200501","family":"cf","qualifier":"pk","ts":1000000,"value":"user1"}
{"row":"user1#20200501","family":"cf","qualifier":"sk","ts":1000000,"value":"20200501"}
{"row":"user1#20200501","family":"nums","qualifier":"1","ts":1000000,"value":"\u0000"}
{"row":"user1#20200501","family":"nums","qualifier":"2.5","ts":1000000,"value":"\u0000"}
{"row":"user1#20200501","family":"tags","qualifier":"blue","ts":1000000,"value":"\u0000"}
{"row":"user1#20200501","family":"tags","qualifier":"red","ts":1000000,"value":"\u0000"}
{"row":"user2#sk","family":"cf","qualifier":"pk","ts":1000000,"value":"user2"}
{"row":"user2#sk","family":"cf","qualifier":"sk","ts":1000000,"value":"sk"}
{"row":"user2#sk","family":"cf","qualifier":"v","ts":1000000,"value":""}
{"row":"user3#a#b","family":"cf","qualifier":"pk","ts":1000000,"value":"user3"}
{"row":"user3#a#b","family":"cf","qualifier":"sk","ts":1000000,"value":"a#b"}
EOF
ok export users format=jsonl
# The list's versions as read shows them: newest (the last element) first.
out <<'EOF'
----------------------------------------
user1#20200501
  cf:hist                                  @ 1970/01/01-00:00:01.004000
    "{\"L\":[]}"
  cf:hist                                  @ 1970/01/01-00:00:01.003000
    "\x00"
  cf:hist                                  @ 1970/01/01-00:00:01.002000
    "{\"M\":{\"k\":{\"BOOL\":true}}}"
  cf:hist                                  @ 1970/01/01-00:00:01.001000
    "2"
  cf:hist                                  @ 1970/01/01-00:00:01.000000
    "first"

EOF
ok lookup users user1#20200501 columns=cf:hist
# The families the sets and maps needed were created (GC policy never, so a list keeps every version);
# the empty map "m" of user2 made one too.
out <<'EOF'
{"family":"addr","gc_policy":"never"}
{"family":"bins","gc_policy":"never"}
{"family":"cf","gc_policy":"never"}
{"family":"m","gc_policy":"never"}
{"family":"nums","gc_policy":"never"}
{"family":"tags","gc_policy":"never"}
EOF
ok --format=json ls users

# The same export gzip'd: by name or not (its first bytes say so), from a pipe, and as an export's many
# files are loaded: their gzip members one after another.
gzip -9 -c "$in" >"$tmp/part.json.gz"
ok createtable gz families=cf
ok import gz "$tmp/part.json.gz" format=dynamodb key=pk#sk timestamp=1000000
same_cells users gz
cp "$tmp/part.json.gz" "$tmp/part-no-suffix"
ok createtable gz2
ok import gz2 "$tmp/part-no-suffix" format=dynamodb key=pk#sk timestamp=1000000
same_cells users gz2
printf '%s\n' "$item1" | gzip -c >"$tmp/a.json.gz"
printf '%s\n%s\n' "$item2" "$item3" | gzip -c >"$tmp/b.json.gz"
: | gzip -c >"$tmp/empty.json.gz" # an empty partition's file
ok createtable gz3
checks=$((checks + 1))
cat "$tmp/a.json.gz" "$tmp/empty.json.gz" "$tmp/b.json.gz" |
	"$cellctl" --db "$db" import gz3 - format=dynamodb key=pk#sk timestamp=1000000 2>"$tmp/got.err" ||
	failed "import of concatenated gzip files: $(cat "$tmp/got.err")"
same_cells users gz3
# Empty inputs import nothing, successfully.
: >"$in"
ok import gz3 "$in" format=dynamodb key=pk
ok import gz3 "$tmp/empty.json.gz" format=dynamodb key=pk
same_cells users gz3

# timestamp=now (the default): every cell at the time of the import, in whole milliseconds, list element i
# at that time + i ms.
lines "$item1"
ok createtable now
ok import now "$in" format=dynamodb key=pk#sk
checks=$((checks + 1))
"$cellctl" --db "$db" export now format=jsonl | sed -E 's/.*"qualifier(_b64)?":"([^"]*)","ts":([0-9]+).*/\2 \3/' >"$tmp/ts"
base=$(awk '$1 == "age" { print $2 }' "$tmp/ts")
if [ -z "$base" ] || [ $((base % 1000)) -ne 0 ] || [ "$base" -lt 1000000000000000 ] ||
	[ "$(awk -v b="$base" '$1 != "hist" && $2 != b' "$tmp/ts" | wc -l)" -ne 0 ] ||
	[ "$(awk -v b="$base" '$1 == "hist" { print ($2 - b) / 1000 }' "$tmp/ts" | tr '\n' ' ')" != "4 3 2 1 0 " ]; then
	failed "timestamp=now: $(cat "$tmp/ts")"
fi

# key=PK alone: the row key is the partition key's value (N as its text, B decoded), a delimiter in it
# is only a byte; column-family= names the scalars' family.
lines '{"Item":{"id":{"N":"42"},"x":{"S":"n"}}}' '{"Item":{"id":{"B":"/wA="},"x":{"S":"b"}}}' \
	'{"Item":{"id":{"S":"a#b"},"x":{"S":"s"},"attrs":{"SS":["q"]}}}'
ok createtable single families=attrs0
ok import single "$in" format=dynamodb key=id column-family=item timestamp=2000
out <<'EOF'
{"row":"42","family":"item","qualifier":"id","ts":2000,"value":"42"}
{"row":"42","family":"item","qualifier":"x","ts":2000,"value":"n"}
{"row":"a#b","family":"attrs","qualifier":"q","ts":2000,"value":"\u0000"}
{"row":"a#b","family":"item","qualifier":"id","ts":2000,"value":"a#b"}
{"row":"a#b","family":"item","qualifier":"x","ts":2000,"value":"s"}
{"row_b64":"/wA=","family":"item","qualifier":"id","ts":2000,"value_b64":"/wA="}
{"row_b64":"/wA=","family":"item","qualifier":"x","ts":2000,"value":"b"}
EOF
ok export single format=jsonl
# Imported again with the same timestamp= it replaces each cell with itself: nothing doubles.
ok import single "$in" format=dynamodb key=id column-family=item timestamp=2000
checks=$((checks + 1))
[ "$("$cellctl" --db "$db" export single format=jsonl | wc -l)" -eq 7 ] || failed "a second import doubled cells"

# ---- Bad lines: the line named, nothing written ------------------------------------------------------------

ok createtable t families=cf
ok createfamily t sums:never:intsum
ok set t existing cf:a=1@1000
good='{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"a":{"S":"v"}}}'
imp=(import t "$in" format=dynamodb key=pk#sk timestamp=1000)
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s2"}}'
bad "cellctl import: line 2 of $q: column 42: want ',' or '}'" "${imp[@]}"
lines "$good" 'not json'
bad "cellctl import: line 2 of $q: column 1: want '{'" "${imp[@]}"
lines "$good" '{"Keys":{"pk":{"S":"p"}},"NewImage":{}}'
bad "cellctl import: line 2 of $q: column 2: unknown key \"Keys\" (a line of a full export holds \"Item\" only)" "${imp[@]}"
lines "$good" '{}'
bad "cellctl import: line 2 of $q: no \"Item\" (a line of a full export is {\"Item\":{...}})" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"}},"Item":{}}'
bad "cellctl import: line 2 of $q: column 41: \"Item\" given twice" "${imp[@]}"
lines "$good" '{"Item":[]}'
bad "cellctl import: line 2 of $q: column 9: \"Item\" must be an object of attributes" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"}}} x'
bad "cellctl import: line 2 of $q: column 42: text after the object" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"a":{"X":"1"}}}'
bad "cellctl import: line 2 of $q: column 45: unknown type descriptor \"X\" (want S, N, B, BOOL, NULL, SS, NS, BS, M or L)" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"a":{"s":"1"}}}'
bad "cellctl import: line 2 of $q: column 45: unknown type descriptor \"s\" (want S, N, B, BOOL, NULL, SS, NS, BS, M or L)" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"a":{}}}'
bad "cellctl import: line 2 of $q: column 44: a value without a type descriptor" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"a":{"S":"1","N":"1"}}}'
bad "cellctl import: line 2 of $q: column 52: a value holds one type descriptor, not more" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"a":"v"}}'
bad "cellctl import: line 2 of $q: column 44: want a value: an object with a type descriptor, as {\"S\":\"text\"}" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"a":{"S":"v"}}}'
bad "cellctl import: line 2 of $q: the item has no key attribute \"sk\"" "${imp[@]}"
lines "$good" '{"Item":{"sk":{"S":"s"}}}'
bad "cellctl import: line 2 of $q: the item has no key attribute \"pk\"" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"BOOL":true},"sk":{"S":"s"}}}'
bad "cellctl import: line 2 of $q: key attribute \"pk\" is of type BOOL: key attributes are S, N or B" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"SS":["s"]}}}'
bad "cellctl import: line 2 of $q: key attribute \"sk\" is of type SS: key attributes are S, N or B" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":""},"sk":{"S":"s"}}}'
bad "cellctl import: line 2 of $q: key attribute \"pk\" is empty" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p#q"},"sk":{"S":"s"}}}'
bad "cellctl import: line 2 of $q: the partition key \"p#q\" holds the table's delimiter \"#\", so the row key would not say where it ends" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"b":{"B":"AP8"}}}'
bad "cellctl import: line 2 of $q: column 49: bad base64 in a \"B\" value" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"b":{"BS":["AA==","A@=="]}}}'
bad "cellctl import: line 2 of $q: column 58: bad base64 in a member of a \"BS\" set" "${imp[@]}"
for n in '12a' '' '-' '.' '1e' '1.2.3' ' 1' '0x10' 'NaN' 'Infinity'; do
	lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"n":{"N":"'"$n"'"}}}'
	bad "cellctl import: line 2 of $q: column 49: bad number in an \"N\" value (want digits, a point, an exponent, as \"-12.5E3\")" "${imp[@]}"
done
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"N":"1"},"n":{"NS":["1","x"]}}}'
bad "cellctl import: line 2 of $q: column 55: bad number in a member of an \"NS\" set (want digits, a point, an exponent, as \"-12.5E3\")" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"tags":{"SS":[]}}}'
bad "cellctl import: line 2 of $q: column 53: an empty set (DynamoDB has none)" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"tags":{"SS":[1]}}}'
bad "cellctl import: line 2 of $q: column 54: want a string" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"a":{"S":"1"},"a":{"N":"1"}}}'
bad "cellctl import: line 2 of $q: column 54: attribute \"a\" given twice" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"m":{"M":{"k":{"S":"1"},"k":{"S":"2"}}}}}'
bad "cellctl import: line 2 of $q: column 64: map key \"k\" given twice" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"b":{"BOOL":"true"}}}'
bad "cellctl import: line 2 of $q: column 52: \"BOOL\" must be true or false" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"b":{"NULL":false}}}'
bad "cellctl import: line 2 of $q: column 52: \"NULL\" must be true" "${imp[@]}"
lines "$good" $'{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"s":{"S":"\xff"}}}'
bad "cellctl import: line 2 of $q: column 50: a string that is not valid UTF-8" "${imp[@]}"
# Sets and maps become families: their names must be family names, and not the scalars' family.
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"my tags":{"SS":["a"]}}}'
bad "cellctl import: line 2 of $q: attribute \"my tags\" is a set (SS), which becomes a family of its name, but family names match [_a-zA-Z0-9][-_.a-zA-Z0-9]* (at most 64 bytes)" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"cf":{"M":{"a":{"S":"1"}}}}}'
bad "cellctl import: line 2 of $q: attribute \"cf\" is a map (M), which becomes a family of its name, but \"cf\" is the family of the scalar attributes (choose another with column-family=)" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"sums":{"NS":["1"]}}}'
bad "cellctl import: line 2 of $q: family \"sums\" of table \"t\" is an aggregate family (intsum): import writes plain cells (use addtocell)" "${imp[@]}"
# Nesting deeper than 64 maps and lists.
deep=$(printf '{"L":[%.0s' $(seq 65))$(printf ']}%.0s' $(seq 65))
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"d":'"$deep"'}}'
bad "cellctl import: line 2 of $q: column 428: maps and lists nested more than 64 deep" "${imp[@]}"
# Limits of keys and qualifiers.
long=$(head -c 4096 /dev/zero | tr '\0' k)
lines "$good" '{"Item":{"pk":{"S":"'"$long"'"},"sk":{"S":"s"}}}'
bad "cellctl import: line 2 of $q: the row key would be 4098 bytes, longer than 4096" "${imp[@]}"
lines "$good" '{"Item":{"pk":{"S":"p"},"sk":{"S":"s"},"m":{"M":{"'"$(head -c 16385 /dev/zero | tr '\0' k)"'":{"S":"v"}}}}}'
bad "cellctl import: line 2 of $q: attribute \"m\": a map key of 16385 bytes is longer than a qualifier may be (16384 bytes)" "${imp[@]}"

# ---- Damaged gzip streams ------------------------------------------------------------------------------------

lines "$good" "$good" "$good"
gzip -c "$in" >"$tmp/ok.gz"
size=$(stat -c %s "$tmp/ok.gz")
head -c $((size - 4)) "$tmp/ok.gz" >"$tmp/trunc.gz"
bad "cellctl import: line 4 of \"$tmp/trunc.gz\": the gzip stream ends early (truncated)" import t "$tmp/trunc.gz" format=dynamodb key=pk#sk
head -c 20 "$tmp/ok.gz" >"$tmp/trunc2.gz"
bad "cellctl import: line 1 of \"$tmp/trunc2.gz\": the gzip stream ends early (truncated)" import t "$tmp/trunc2.gz" format=dynamodb key=pk#sk
# The CRC-32 of the contents (the trailer's first 4 bytes) made wrong.
{ head -c $((size - 8)) "$tmp/ok.gz"; printf '\x00\x00\x00\x00'; tail -c 4 "$tmp/ok.gz"; } >"$tmp/crc.gz"
bad "cellctl import: line 4 of \"$tmp/crc.gz\": the gzip stream is damaged (incorrect data check)" import t "$tmp/crc.gz" format=dynamodb key=pk#sk
{ cat "$tmp/ok.gz"; printf 'junk'; } >"$tmp/junk.gz"
bad "cellctl import: line 4 of \"$tmp/junk.gz\": other bytes follow the end of the gzip stream" import t "$tmp/junk.gz" format=dynamodb key=pk#sk
{ head -c 3 "$tmp/ok.gz"; printf '\xff'; tail -c +5 "$tmp/ok.gz"; } >"$tmp/flags.gz"
bad "cellctl import: line 1 of \"$tmp/flags.gz\": the gzip stream is damaged (unknown header flags set)" import t "$tmp/flags.gz" format=dynamodb key=pk#sk
# gzip'd CSV and JSON lines too, and their damage named the same way.
printf ',cf\n,q\nr1,v@5000\n' | gzip -c >"$tmp/csv.gz"
ok import t "$tmp/csv.gz" timestamp=value-encoded
printf '{"row":"r2","family":"cf","qualifier":"q","ts":6000,"value":"w"}\n' | gzip -c >"$tmp/jsonl.gz"
ok import t "$tmp/jsonl.gz"
out <<'EOF'
{"row":"existing","family":"cf","qualifier":"a","ts":1000,"value":"1"}
{"row":"r1","family":"cf","qualifier":"q","ts":5000,"value":"v"}
{"row":"r2","family":"cf","qualifier":"q","ts":6000,"value":"w"}
EOF
ok export t format=jsonl
head -c 30 "$tmp/csv.gz" >"$tmp/csvtrunc.gz"
bad "cellctl import: line 4 of \"$tmp/csvtrunc.gz\": the gzip stream ends early (truncated)" import t "$tmp/csvtrunc.gz"

# ---- Bad arguments ---------------------------------------------------------------------------------------------

lines "$good"
bad 'cellctl import: format=dynamodb needs key=<partition-key>[#<sort-key>]: the table'\''s key attributes' import t "$in" format=dynamodb
bad 'cellctl import: key must be <partition-key> or <partition-key>#<sort-key>, attribute names (key="")' import t "$in" format=dynamodb key=
bad 'cellctl import: key must be <partition-key> or <partition-key>#<sort-key>, attribute names (key="#sk")' import t "$in" format=dynamodb key=#sk
bad 'cellctl import: key must be <partition-key> or <partition-key>#<sort-key>, attribute names (key="pk#")' import t "$in" format=dynamodb key=pk#
bad 'cellctl import: key must be <partition-key> or <partition-key>#<sort-key>, attribute names (key="a#b#c")' import t "$in" format=dynamodb key=a#b#c
bad 'cellctl import: key names one attribute twice (key="pk#pk")' import t "$in" format=dynamodb key=pk#pk
bad 'cellctl import: timestamp must be now or a time in microseconds since the epoch, a whole number of milliseconds (timestamp="1500")' import t "$in" format=dynamodb key=pk#sk timestamp=1500
bad 'cellctl import: timestamp must be now or a time in microseconds since the epoch, a whole number of milliseconds (timestamp="value-encoded")' import t "$in" format=dynamodb key=pk#sk timestamp=value-encoded
bad 'cellctl import: timestamp must be now or a time in microseconds since the epoch, a whole number of milliseconds (timestamp="-1000")' import t "$in" format=dynamodb key=pk#sk timestamp=-1000
bad 'cellctl import: column-family "a b" is not a valid family name ([_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most 64 bytes)' import t "$in" format=dynamodb key=pk#sk 'column-family=a b'
bad 'cellctl import: family "sums" of table "t" is an aggregate family (intsum): import writes plain cells (use addtocell)' import t "$in" format=dynamodb key=pk#sk column-family=sums
bad 'cellctl import: key= applies to format=dynamodb only' import t "$in" key=pk
bad 'cellctl import: format must be csv, jsonl or dynamodb (format="dynamo")' import t "$in" format=dynamo
bad 'cellctl import: table "nosuch" not found' import nosuch "$in" format=dynamodb key=pk#sk
# key= takes the rest of the argument: attribute names may hold '='.
lines '{"Item":{"a=b":{"S":"k"}}}'
ok import t "$in" format=dynamodb key=a=b timestamp=9000
out <<'EOF'
----------------------------------------
k
  cf:a=b                                   @ 1970/01/01-00:00:00.009000
    "k"

EOF
ok lookup t k

finish dynamodb.sh
