#!/bin/bash
# The mount's part in the Key Visualizer (store/README.md, "Key Visualizer"): a table of rows a#0..a#9,
# w#0..w#4 (made through the mount) and z#0..z#9; a writable mount cats the files of a#0..a#4 and writes
# w#0..w#4; at unmount its counts are in the store, and `cellctl keyviz t out=` draws reads on exactly
# a#0..a#4 (and maybe w# rows, looked up), writes on exactly w#0..w#4, nothing on the rows never
# touched. A read-only mount, which cannot commit, spools its counts at unmount: its reads of a#5..a#7
# show too, and data.mdb is byte for byte as it was. How many requests one cat or echo makes is the
# kernel's business: only where the counts land, and that they are there, are checked.
. "$(dirname "$0")/lib.sh"
db=$TMP/store
cc() { "$CELLCTL" --db "$db" "$@" || exit 1; }

# heat_of: "KEY reads writes" per row (each its own band: fewer rows than bands), from the SVG's titles.
heat_of() {
	"$CELLCTL" --db "$db" keyviz t "out=$TMP/h.svg" || { fail "keyviz out="; return; }
	python3 - "$TMP/h.svg" <<'PY'
import re, sys, xml.etree.ElementTree as ET
ns = '{http://www.w3.org/2000/svg}'
sums = {}
for t in ET.parse(sys.argv[1]).getroot().iter(ns + 'title'):
    m = re.fullmatch(r'(reads|writes) (\d+), keys from (.*), \d{4}-\d\d-\d\d \d\d:\d\d UTC', t.text or '')
    if m:
        c = sums.setdefault(m.group(3), [0, 0])
        c[m.group(1) == 'writes'] += int(m.group(2))
for k in sorted(sums):
    print(k, *sums[k])
PY
}
# expect_heat WHAT READ_ROWS WRITE_ROWS: the rows but w#'s with reads are exactly READ_ROWS, those with
# writes exactly WRITE_ROWS (space-separated, sorted). (Whether making w#N reads it is the daemon's
# business: the lookup of a name not there yet finds nothing, but "w" may be looked up by reading w#0.)
expect_heat() {
	local got reads writes
	got=$(heat_of)
	reads=$(awk '$2 > 0 && $1 !~ /^w#/ { print $1 }' <<<"$got" | xargs)
	writes=$(awk '$3 > 0 { print $1 }' <<<"$got" | xargs)
	[ "$reads" = "$2" ] || fail "$1: reads on [$reads], want [$2]"
	[ "$writes" = "$3" ] || fail "$1: writes on [$writes], want [$3]"
}

cc createtable t families=f
{
	printf ',f\n,q\n'
	for i in 0 1 2 3 4 5 6 7 8 9; do printf 'a#%d,v\nz#%d,v\n' "$i" "$i"; done
} >"$TMP/rows.csv"
cc import t "$TMP/rows.csv"
# (the import's writes: every a# and z# row once)
all_az="a#0 a#1 a#2 a#3 a#4 a#5 a#6 a#7 a#8 a#9 z#0 z#1 z#2 z#3 z#4 z#5 z#6 z#7 z#8 z#9"
expect_heat "after the import" "" "$all_az"

mount_store "$db"
for i in 0 1 2 3 4; do
	[ "$(cat "$MNT/t/a/$i/f/q")" = v ] || fail "cat a/$i/f/q"
	mkdir -p "$MNT/t/w/$i/f" && echo "w$i" >"$MNT/t/w/$i/f/q" || fail "write w/$i/f/q"
done
unmount_store
w_rows="w#0 w#1 w#2 w#3 w#4"
expect_heat "after the writable mount" "a#0 a#1 a#2 a#3 a#4" \
	"a#0 a#1 a#2 a#3 a#4 a#5 a#6 a#7 a#8 a#9 $w_rows z#0 z#1 z#2 z#3 z#4 z#5 z#6 z#7 z#8 z#9"

# Read-only: spooled at unmount, no commit.
sum_before=$(cksum <"$db/data.mdb")
mount_store "$db" -o ro
for i in 5 6 7; do
	[ "$(cat "$MNT/t/a/$i/f/q")" = v ] || fail "cat a/$i/f/q (read-only)"
done
unmount_store
[ -s "$db/heat.spool" ] || fail "the read-only mount spooled nothing"
[ "$(stat -c %a "$db/heat.spool")" = "$(stat -c %a "$db/data.mdb")" ] ||
	fail "the spool's mode $(stat -c %a "$db/heat.spool") is not data.mdb's" # (it holds key prefixes)
[ "$(cksum <"$db/data.mdb")" = "$sum_before" ] || fail "the read-only mount changed data.mdb"
expect_heat "after the read-only mount" "a#0 a#1 a#2 a#3 a#4 a#5 a#6 a#7" \
	"a#0 a#1 a#2 a#3 a#4 a#5 a#6 a#7 a#8 a#9 $w_rows z#0 z#1 z#2 z#3 z#4 z#5 z#6 z#7 z#8 z#9"

# A commit takes the spool into the store's records: the same picture, the spool empty.
cc set t z#0 f:q=again
expect_heat "after a commit took the spool" "a#0 a#1 a#2 a#3 a#4 a#5 a#6 a#7" \
	"a#0 a#1 a#2 a#3 a#4 a#5 a#6 a#7 a#8 a#9 $w_rows z#0 z#1 z#2 z#3 z#4 z#5 z#6 z#7 z#8 z#9"
[ ! -s "$db/heat.spool" ] || fail "the commit left the spool"
exit $status
