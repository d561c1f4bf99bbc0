#!/bin/bash
# A plain table written with cellctl, read back with `cellctl read`/`lookup`/`count`/`ls` and through the
# mount with cat, stat, ls, find and getfattr: the same rows, cells, values and timestamps.
. "$(dirname "$0")/lib.sh"
db=$TMP/store
cc() { "$CELLCTL" --db "$db" "$@" || exit 1; }
cc createtable plain "families=cf:maxversions=2,meta:never,MD"
cc set plain com.example#www cf:title="Example Domain@1426535612156000" cf:title=Example@1426535612157000 \
	meta:lang=en@1426535612158000
cc set plain com.example#www cf:title=third@1426535612159000 # maxversions=2: the oldest goes
cc set plain com.example#mail cf:mx=10@1426535612160000 MD:BID=1.5@1426535612161000
cc set plain "org#a#b#c" "cf:with space=a value with spaces@1426535612162000"
cc set plain r1 cf:=empty-qualifier@1426535612163000 cf:q=@1426535612164000
cc set plain r1#child cf:q=child@1426535612165000
cc set plain "MD#x" cf:q=family-named-segment@1426535612166000
cc set plain now cf:q=now
mount_store "$db"
check cellctl "$MNT" "$db" plain
unmount_store

# A DynamoDB export imported into a table whose delimiter is '|' (made through a mount with
# -o delimiter=|): the partition key (holding '#', a plain byte here) and the sort key (holding '|')
# joined with '|', shown as directories; a set's member a file holding one zero byte; a list's elements
# versions, the last one newest.
mount_store "$db" -o 'delimiter=|'
mkdir "$MNT/ddb" || fail "mkdir of table ddb"
unmount_store
printf '%s\n' '{"Item":{"pk":{"S":"user#1"},"sk":{"S":"2020|05"},"name":{"S":"x"},"tags":{"SS":["red"]},"hist":{"L":[{"S":"a"},{"S":"b"}]}}}' \
	>"$TMP/ddb.json"
cc import ddb "$TMP/ddb.json" format=dynamodb key=pk#sk timestamp=1426535612156000
mount_store "$db"
item=$MNT/ddb/user#1/2020/05
[ "$(cat "$item/cf/name" 2>&1)" = x ] || fail "dynamodb: cf/name: $(cat "$item/cf/name" 2>&1)"
[ "$(od -An -tx1 "$item/tags/red" 2>&1 | tr -d ' ')" = 00 ] || fail "dynamodb: tags/red is not one zero byte"
[ "$(cat "$item/cf/hist" 2>&1)" = b ] || fail "dynamodb: the newest version of cf/hist is not the last element"
[ "$(cat "$item/cf/hist@1426535612156000" 2>&1)" = a ] || fail "dynamodb: the first element is not the older version"
check cellctl "$MNT" "$db" ddb
unmount_store
exit $status
