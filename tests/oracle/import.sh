#!/bin/bash
# import.sh CELLCTL — cellctl import against `cbt import` into the Bigtable emulator: the same CSV files
# (family and qualifier rows, RFC 4180 quoting with commas, doubled quotes and embedded newlines, CRLF,
# blank lines, rows without a key, empty fields, value-encoded timestamps, '@' that is not one) imported
# by both; `read` must then print the same bytes under several TZs, and bad files must fail in both.
# Cells stamped "now" are compared with their times masked. Skips (77) without cbt or the emulator.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# same_table TABLE: read through both, times of "now" (this minute, whole ms) masked, under several TZs.
same_table() {
	local tz f
	for tz in UTC Asia/Kolkata America/New_York; do
		export TZ=$tz
		cbt read "$1" >"$tmp/cbt.out" 2>"$tmp/cbt.err"
		cc read "$1" >"$tmp/cc.out" 2>"$tmp/cc.err"
		for f in cbt cc; do
			sed -i -E "s#@ $(date +%Y/%m/%d)-[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}000\$#@ NOW#" "$tmp/$f.out"
		done
		checks=$((checks + 1))
		if ! cmp -s "$tmp/cbt.out" "$tmp/cc.out"; then
			fail "TZ=$tz read $1: output differs (- cbt, + cellctl)"
			diff -u "$tmp/cbt.out" "$tmp/cc.out" | tail -n +3 | cat -A | head -40 | sed 's/^/    /'
		fi
	done
	unset TZ
}

both createtable t families=cf,g,h
both createtable t2 families=cf
both createtable t3 families=cf

# The CSV: CRLF and LF lines, a blank line, a row without a key, the same row on two lines.
printf '%b' ',cf,,,g,,h\n' \
	',a,b,,c,d,e\r\n' \
	'r1,"x,y@1000","say ""hi""@2000",empty-q@3000,"multi\nline@4000",plain,"trailing\n@5000"\n' \
	'\n' \
	'r2,a@b@6000,1@1.5,@7000,"q@1_000",@,v@0x10\r\n' \
	',ignored@1000,,,,,\n' \
	'r1,again@8000,,,,,\n' \
	'"r3\nkey",v@1234567,w@-999,x@-1,"a,b,c@9000",,\n' \
	'r4,,,,,,\n' \
	'r5,"é ü 日本@10000",$,"@",\t@11000,"  spaced  @12000",end@9223372036854775807\n' >"$tmp/data.csv"
both import t "$tmp/data.csv" timestamp=value-encoded
same_table t

# The same file with timestamp=now: every value whole, '@' included.
both import t2 "$tmp/data.csv" column-family=cf
same_table t2

# No family row: column-family=; the first row is the qualifier row.
printf '%b' ',a,b\nk1,1@1000,2@2000\nk2,,"3\n@3000"\n' >"$tmp/nofam.csv"
both import t3 "$tmp/nofam.csv" column-family=cf timestamp=value-encoded
same_table t3

# Bad files fail in both (cbt may have written earlier batches; cellctl writes nothing, see cli tests).
both createtable bad families=cf
printf ',cf,\n,a,b\nr1,1,2\nr2,1,2,3\n' >"$tmp/ragged.csv"
both import bad "$tmp/ragged.csv"
printf ',cf,\n,a,b\nr1,a"b,2\n' >"$tmp/quote.csv"
both import bad "$tmp/quote.csv"
printf ',cf,\n,a,b\nr1,"open,2\n' >"$tmp/open.csv"
both import bad "$tmp/open.csv"
printf ',cf,nosuch\n,a,b\nr1,1,2\n' >"$tmp/fam.csv"
both import bad "$tmp/fam.csv"
printf ',cf,\n,a,b\nr1,1@-2000,2\n' >"$tmp/ts.csv"
both import bad "$tmp/ts.csv" timestamp=value-encoded
printf 'k,cf\n,a\nr1,1\n' >"$tmp/first.csv"
both import bad "$tmp/first.csv"
printf ',,cf\n,a,b\nr1,1,2\n' >"$tmp/second.csv"
both import bad "$tmp/second.csv"
both import bad "$tmp/data.csv" column-family=nosuch
both import bad "$tmp/data.csv" batch-size=0
both import bad "$tmp/data.csv" workers=0
both import bad "$tmp/data.csv" timestamp=never
both import bad "$tmp/data.csv" column-family=
both import nosuch "$tmp/data.csv"
: >"$tmp/empty.csv"
both import bad "$tmp/empty.csv"
printf ',cf\n' >"$tmp/onlyfam.csv"
both import bad "$tmp/onlyfam.csv"
both import bad "$tmp/nosuch.csv"

both import bad "$tmp/data.csv" batch-size=100000
both import bad "$tmp/data.csv" batch-size=abc=1

# Arguments: unknown ones are ignored (cellctl warns), a value ends at a further '=', the last one wins.
both createtable args families=cf
both import args "$tmp/data.csv" bogus=1 bogus batch-size =x batch-size=0 batch-size=99999 timestamp=value-encoded
both import args "$tmp/nofam.csv" column-family=nosuch column-family=cf=x timestamp=value-encoded=1
same_table args

# What cellctl export writes, cbt import reads back into the same cells.
both createtable back families=cf,g,h
cc export t >"$tmp/export.csv"
both import back "$tmp/export.csv" timestamp=value-encoded
checks=$((checks + 1))
TZ=UTC cbt read back >"$tmp/back.cbt" 2>&1
TZ=UTC cc read t >"$tmp/t.cc" 2>&1
cmp -s "$tmp/back.cbt" "$tmp/t.cc" || {
	fail "cellctl export | cbt import does not reproduce the table"
	diff -u "$tmp/t.cc" "$tmp/back.cbt" | tail -n +3 | cat -A | head -20 | sed 's/^/    /'
}

finish
