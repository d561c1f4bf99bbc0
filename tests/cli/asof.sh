#!/bin/bash
# asof= of read, lookup, count and export (not cbt's): the table as it was at a time, given as µs or
# RFC 3339: each column's cells at or before it, rows with only newer cells absent, a version collected
# by a GC policy gone at every time; with read's other arguments; bad times refused in one line.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# row KEY, then cell COLUMN TIME VALUE...: cbt's text for a row (the caller ends it with a blank line)
row() { printf -- '----------------------------------------\n%s\n' "$1"; }
cell() { printf '  %-40s @ %s\n    "%s"\n' "$1" "1970/01/01-00:00:$2" "$3"; }

ok createtable t families=cf,v1:maxversions=1
ok set t r1 cf:a=a1@1000000 cf:a=a2@2000000 cf:a=a3@3000000 cf:b=b@1500000
ok set t r2 cf:a=r2@2500000
ok set t r3 v1:v=old@500000 v1:v=new@4000000

# Before everything (r3's old@500000 is collected: maxversions=1, and new@4000000 is newer)
ok read t asof=999999
ok read t asof=500000
ok read t asof=1970-01-01T00:00:00Z
{ row r1; cell cf:a 01.000000 a1; echo; } | out
ok read t asof=1000000
{ row r1; cell cf:a 02.000000 a2; cell cf:a 01.000000 a1; cell cf:b 01.500000 b; echo; } | out
ok read t asof=2000000
{ row r1; cell cf:a 02.000000 a2; cell cf:a 01.000000 a1; cell cf:b 01.500000 b; echo; row r2; cell cf:a 02.500000 r2; echo; } | out
ok read t asof=1970-01-01T00:00:02.5Z
{ row r1; cell cf:a 02.000000 a2; cell cf:a 01.000000 a1; cell cf:b 01.500000 b; echo; row r2; cell cf:a 02.500000 r2; echo; } | out
ok read t asof=1970-01-01T01:00:02.5000009+01:00
{ row r1; cell cf:a 03.000000 a3; cell cf:a 02.000000 a2; cell cf:a 01.000000 a1; cell cf:b 01.500000 b; echo
  row r2; cell cf:a 02.500000 r2; echo; row r3; cell v1:v 04.000000 new; echo; } | out
cp "$tmp/want.out" "$tmp/all.out"
ok read t asof=9223372036854775807
cp "$tmp/all.out" "$tmp/want.out"
ok read t asof= # (empty: as if not given, as cbt treats every argument)
cp "$tmp/all.out" "$tmp/want.out"
ok read t

# With read's other arguments
{ row r1; cell cf:a 02.000000 a2; cell cf:b 01.500000 b; echo; row r2; cell cf:a 02.500000 r2; echo; } | out
ok read t asof=2999999 cells-per-column=1
{ row r2; cell cf:a 02.500000 r2; echo; row r1; cell cf:a 02.000000 a2; echo; } | out
ok read t asof=2999999 reversed=true columns=cf:a cells-per-column=1
{ row r1; cell cf:b 01.500000 b; echo; } | out
ok read t asof=2999999 prefix=r1 columns=cf:b
{ row r1; cell cf:a 01.000000 a1; echo; } | out
ok read t asof=1999999 count=1 columns=:a regex=r.
{ row r1; cell cf:a 01.000000 ''; echo; } | out
ok read t asof=1000000 keys-only=true
outb '{"row":"r1","cells":[{"family":"cf","qualifier":"b","ts":1500000,"value":"b"}]}\n'
ok --format=json read t asof=1500000 columns=cf:b

# lookup, count, export
{ row r1; cell cf:a 01.000000 a1; cell cf:b 01.500000 b; echo; } | out
ok lookup t r1 asof=1500000
{ row r1; cell cf:a 01.000000 a1; echo; } | out
ok lookup t r1 asof=1999999 columns=cf:a cells-per-column=1
{ row ''; echo; } | out
ok lookup t r3 asof=3999999 # no cell then: cbt's empty row
echo 0 | out
ok count t asof=999999
echo 1 | out
ok count t asof=2499999
echo 2 | out
ok count t asof=2500000
echo 2 | out
ok count t asof=2500000 prefix=r
echo 3 | out
ok count t asof=4000000
outb '{"row":"r1","family":"cf","qualifier":"a","ts":1000000,"value":"a1"}\n'
ok export t format=jsonl asof=1000000

# Bad times: one line naming the value; nothing read
how='(give RFC 3339, as 2026-11-26T05:34:38Z, or microseconds since the epoch)'
err "cellctl read: bad asof \"x\": not RFC 3339 (YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM)) nor microseconds since the epoch $how" read t asof=x
err "cellctl read: bad asof \"2026-02-30T00:00:00Z\": day out of range $how" read t asof=2026-02-30T00:00:00Z
err "cellctl read: bad asof \"2026-11-26\": a date alone: RFC 3339 needs a time and a zone too (as T00:00:00Z) $how" read t asof=2026-11-26
err "cellctl read: bad asof \"2026-11-26T05:34:38\": no time zone: end it in Z or a numeric offset as +01:00 $how" read t asof=2026-11-26T05:34:38
err "cellctl read: bad asof \"-1\": before the epoch (1970-01-01T00:00:00Z): no cell is older $how" read t asof=-1
err "cellctl read: bad asof \"9223372036854775808\": microseconds out of range (at most 9223372036854775807) $how" read t asof=9223372036854775808
err "cellctl read: bad asof \"1\\n.\": not RFC 3339 (YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM)) nor microseconds since the epoch $how" read t "asof=$(printf '1\n.')"
err "cellctl lookup: bad asof \"soon\": not RFC 3339 (YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM)) nor microseconds since the epoch $how" lookup t r1 asof=soon
err "cellctl count: bad asof \"2026-11-26T25:00:00Z\": hour out of range $how" count t asof=2026-11-26T25:00:00Z
err "cellctl export: bad asof \"x\": not RFC 3339 (YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM)) nor microseconds since the epoch $how" export t asof=x
err 'cellctl read: table "nosuch" not found' read nosuch asof=1000000
err "cellctl read: no store at \"$tmp/nostore\"" --db "$tmp/nostore" read t asof=1000000
[ ! -e "$tmp/nostore" ] || failed "read asof= made a store"

finish asof
