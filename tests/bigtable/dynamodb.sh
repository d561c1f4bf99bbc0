#!/bin/bash
# dynamodb.sh CELLCTL — cellctl import format=dynamodb into Bigtable (the emulator): a gzip'd export with
# every DynamoDB type gives the same families and cells there as in a local store, list versions at
# whole milliseconds; a bad line writes nothing there either (it is found before anything is sent).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

item1='{"Item":{"pk":{"S":"user1"},"sk":{"N":"20200501"},"name":{"S":"caf\u00e9"},"blob":{"B":"AP8B"},"ok":{"BOOL":true},"nothing":{"NULL":true},"tags":{"SS":["red","blue"]},"nums":{"NS":["1","2.5"]},"bins":{"BS":["AAE=","/w=="]},"addr":{"M":{"city":{"S":"Paris"},"geo":{"L":[{"N":"48.8"}]}}},"hist":{"L":[{"S":"first"},{"N":"2"},{"M":{"k":{"BOOL":true}}}]}}}'
item2='{"Item":{"pk":{"S":"user2"},"sk":{"B":"c2s="},"v":{"S":""}}}'
printf '%s\n%s\n' "$item1" "$item2" | gzip -c >"$tmp/part.json.gz"

for s in ccl ccb; do
	check "$s createtable" $s createtable users families=cf
	check "$s import" $s import users "$tmp/part.json.gz" format=dynamodb key=pk#sk timestamp=1000000
	check "$s import now" $s createtable now
	check "$s import now" $s import now "$tmp/part.json.gz" format=dynamodb key=pk#sk
done
check "the same families on bigtable" bash -c 'cmp <("$0" --db "$1" --format=json ls users) <("$0" --db "$2" --format=json ls users)' \
	"$cellctl" "$tmp/local" "$bt"
check "the same cells on bigtable" bash -c 'cmp <("$0" --db "$1" export users format=jsonl) <("$0" --db "$2" export users format=jsonl)' \
	"$cellctl" "$tmp/local" "$bt"
check "20 cells" bash -c '[ "$("$0" --db "$1" export users format=jsonl | wc -l)" -eq 20 ]' "$cellctl" "$bt"
check "timestamp=now: whole ms, the list 1 ms apart" bash -c '
	"$0" --db "$1" export now format=jsonl | grep "\"qualifier\":\"hist\"" | sed -E "s/.*\"ts\":([0-9]+).*/\1/" >"$2"
	[ "$(wc -l <"$2")" -eq 3 ] && [ $(( $(sed -n 1p "$2") - $(sed -n 3p "$2") )) -eq 2000 ] && ! grep -qv "000$" "$2"' \
	"$cellctl" "$bt" "$tmp/ts"

printf '%s\n%s\n' "$item2" '{"Item":{"pk":{"S":"user9"},"sk":{"S":"x"},"fresh":{"SS":[]}}}' >"$tmp/bad.json"
ccb export users format=jsonl >"$tmp/before"
checks=$((checks + 1))
if ccb import users "$tmp/bad.json" format=dynamodb key=pk#sk 2>"$tmp/err"; then
	fail "a bad line was imported"
elif [ "$(cat "$tmp/err")" != "cellctl import: line 2 of \"$tmp/bad.json\": column 58: an empty set (DynamoDB has none)" ]; then
	fail "a bad line: $(cat "$tmp/err")"
fi
check "a bad line wrote nothing" bash -c 'cmp "$2" <("$0" --db "$1" export users format=jsonl)' "$cellctl" "$bt" "$tmp/before"
check "nor made a family" bash -c '! "$0" --db "$1" ls users | grep -q fresh' "$cellctl" "$bt"

finish
