#!/usr/bin/env bash
# heatmap.sh — the Key Visualizer's recording as cellctl drives it, and its heatmap: a scripted load of
# known counts (100 writes to rows a#0..a#9, 10 reads of rows m#0..m#4 by reading commands, which write
# their counts when they close) drawn by `cellctl keyviz T out=FILE.svg`; the numbers behind the picture
# (each cell's <title>) summed per key range must be exactly the load's; under a uniform load every band
# shows about the same counts; no text of a picture overlaps another or passes its edge.
# `updatetable T keyviz=off` stops the recording; bad arguments are refused with one line.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ok createtable t families=f
for n in 1 2 3 4 5 6 7 8 9 10; do
	for i in 0 1 2 3 4 5 6 7 8 9; do
		"$cellctl" --db "$db" set t "a#$i" "f:q=v$n" || failed "set a#$i"
	done
done
for i in 0 1 2 3 4; do
	"$cellctl" --db "$db" set t "m#$i" f:q=v || failed "set m#$i"
done
for n in 1 2; do
	for i in 0 1 2 3 4; do
		"$cellctl" --db "$db" lookup t "m#$i" >/dev/null || failed "lookup m#$i"
	done
done

# The counts per key range (the band's first key; here one row a band) and kind, over all minutes.
sums() { # SVG
	python3 - "$1" <<'PY'
import re, sys, xml.etree.ElementTree as ET
ns = '{http://www.w3.org/2000/svg}'
root = ET.parse(sys.argv[1]).getroot()  # (well-formed XML, or this fails)
assert root.tag == ns + 'svg' and root.get('version') == '1.1'
sums = {}
for rect in root.iter(ns + 'rect'):
    t = rect.find(ns + 'title')
    if t is None:
        continue
    m = re.fullmatch(r'(reads|writes) (\d+), keys from (.*), \d{4}-\d\d-\d\d \d\d:\d\d UTC', t.text)
    assert m, t.text
    k = (m.group(3), m.group(1))
    sums[k] = sums.get(k, 0) + int(m.group(2))
for (key, kind) in sorted(sums):
    print(key, kind, sums[(key, kind)])
PY
}
# No two texts of the picture overlap, and none passes its edge: each text's box reckoned from its font
# size, its characters (monospace: 0.6 em each), its anchor and baseline (0.75 em above, 0.25 below).
layout_ok() { # SVG...
	python3 - "$@" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = '{http://www.w3.org/2000/svg}'
bad = 0
for path in sys.argv[1:]:
    root = ET.parse(path).getroot()
    W, H = float(root.get('width')), float(root.get('height'))
    boxes = []
    for t in root.iter(ns + 'text'):
        size = float(t.get('font-size'))
        w = len(t.text or '') * 0.6 * size
        x, y = float(t.get('x')), float(t.get('y'))
        x -= {'start': 0, 'middle': w / 2, 'end': w}[t.get('text-anchor', 'start')]
        boxes.append((x, y - 0.75 * size, x + w, y + 0.25 * size, t.text))
    for i, a in enumerate(boxes):
        if a[0] < 0 or a[1] < 0 or a[2] > W or a[3] > H:
            print(path, 'passes the edge:', a[4]); bad += 1
        for b in boxes[i + 1:]:
            if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                print(path, 'overlap:', a[4], '/', b[4]); bad += 1
sys.exit(1 if bad else 0)
PY
}
want_sums() {
	for i in 0 1 2 3 4 5 6 7 8 9; do echo "a#$i writes $((10 + ${1:-0}))"; done
	for i in 0 1 2 3 4; do
		echo "m#$i reads 2"
		echo "m#$i writes 1"
	done
}

ok keyviz t "out=$tmp/k.svg"
checks=$((checks + 1))
diff <(want_sums) <(sums "$tmp/k.svg") || failed "the heatmap's counts are not the load's"
checks=$((checks + 1))
grep -q '<text[^>]*>a#0</text>' "$tmp/k.svg" && grep -q '15 rows in 15 key ranges' "$tmp/k.svg" ||
	failed "the heatmap lacks its key labels or its row count"
# Drawing read the table without counting it.
ok keyviz t "out=$tmp/k2.svg"
checks=$((checks + 1))
diff <(want_sums) <(sums "$tmp/k2.svg") || failed "drawing the heatmap counted reads"

# Off: nothing more is counted; on again: counted.
ok updatetable t keyviz=off
"$cellctl" --db "$db" set t a#1 f:q=off || failed "set while off"
"$cellctl" --db "$db" read t >/dev/null || failed "read while off"
ok keyviz t "out=$tmp/k3.svg"
checks=$((checks + 1))
diff <(want_sums) <(sums "$tmp/k3.svg") || failed "counted while keyviz=off"
ok updatetable t keyviz=on
for i in 0 1 2 3 4 5 6 7 8 9; do
	"$cellctl" --db "$db" set t "a#$i" f:q=on || failed "set a#$i"
done
ok keyviz t "out=$tmp/k4.svg"
checks=$((checks + 1))
diff <(want_sums 1) <(sums "$tmp/k4.svg") || failed "not counted after keyviz=on"

# The store's records of it are checked by verify and not counted among its records.
out <<'EOF'
ok: 119 records, 1 tables, 116 cells, 238 bytes of values
EOF
ok verify

# A table of more rows than bands (48): its 1000 rows imported (the bulk loader: one write a row) and
# read whole, twice: every count lands in one cell, so the picture's totals are the load's.
awk 'BEGIN { print ",f"; print ",q"; for (i = 0; i < 1000; i++) printf "k%04d,v%d\n", i * 7 % 1000, i }' >"$tmp/big.csv"
ok createtable big families=f
ok import big "$tmp/big.csv"
"$cellctl" --db "$db" read big >/dev/null || failed "read big"
"$cellctl" --db "$db" read big keys-only=true >/dev/null || failed "read big keys-only"
ok keyviz big "out=$tmp/big.svg"
checks=$((checks + 1))
totals=$(sums "$tmp/big.svg" | awk '{ t[$2] += $3; n[$1] = 1 } END { printf "%d %d %d", t["reads"], t["writes"], length(n) }')
[ "$totals" = "2000 1000 48" ] || failed "the big table's heatmap: reads, writes, bands with counts: $totals"
grep -q '1000 rows in 48 key ranges of about 21 rows' "$tmp/big.svg" || failed "the big table's heatmap lacks its bands"
# That load is uniform (every row read twice, written once) and the store merged its 1000 keys into 64
# ranges a minute, most spanning parts of two bands: the ranges are split by the rows of them each band
# holds (20 or 21), so every band is within 25% of the mean, reads and writes alike.
checks=$((checks + 1))
uneven=$(sums "$tmp/big.svg" | awk '{ s[$2 "\t" $1] = $3; t[$2] += $3; n[$2]++ }
	END { for (k in s) { split(k, a, "\t"); m = t[a[1]] / n[a[1]]
		if (s[k] < 0.75 * m || s[k] > 1.25 * m) printf "%s %s %d (mean %.1f) ", a[1], a[2], s[k], m } }')
[ -z "$uneven" ] || failed "a uniform load, uneven bands: $uneven"

# An empty table: a picture that says nothing was recorded.
ok createtable e
ok keyviz e "out=$tmp/e.svg"
checks=$((checks + 1))
grep -q 'no accesses recorded' "$tmp/e.svg" || failed "an empty table's heatmap"

# Rows that share their first 16 bytes share a range: one read of the first is drawn at its band (the
# count too small to share goes to the range's first band), not at the last.
ok createtable p families=f
for r in sharedprefix16by-a sharedprefix16by-b sharedprefix16by-c; do
	"$cellctl" --db "$db" set p "$r" f:q=v || failed "set $r"
done
"$cellctl" --db "$db" lookup p sharedprefix16by-a >/dev/null || failed "lookup p"
ok keyviz p "out=$tmp/p.svg"
checks=$((checks + 1))
diff <(printf '%s\n' 'sharedprefix16by-a reads 1' 'sharedprefix16by-a writes 1' 'sharedprefix16by-b writes 1' \
	'sharedprefix16by-c writes 1') <(sums "$tmp/p.svg") || failed "a read of a shared range drawn elsewhere"

# A range whose rows are gone is drawn at the band where its key sorts: m's read, at a's band.
ok createtable d families=f
for r in a m z; do
	"$cellctl" --db "$db" set d "$r" f:q=v || failed "set $r"
done
"$cellctl" --db "$db" lookup d m >/dev/null || failed "lookup m"
ok deleterow d m
ok keyviz d "out=$tmp/d.svg"
checks=$((checks + 1))
[ "$(sums "$tmp/d.svg" | awk '$2 == "reads" { printf "%s %d;", $1, $3 }')" = "a 1;" ] ||
	failed "a read of a deleted row: $(sums "$tmp/d.svg" | tr '\n' ';')"

# Long keys (cut in the labels), escaped bytes, and the longest table name: nothing overlaps.
name=abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJKLMNOPQRSTUVW # (CS_MAX_TABLE: 50)
ok createtable "$name" families=f
for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19; do
	"$cellctl" --db "$db" set "$name" "customer#$i#order#2026-11-26T08:00:00Z<&>\"x" f:q=v || failed "set long key $i"
done
"$cellctl" --db "$db" read "$name" >/dev/null || failed "read $name"
ok keyviz "$name" "out=$tmp/long.svg"
checks=$((checks + 1))
[ "$(sums "$tmp/long.svg" | awk '{ t[$2] += $3 } END { printf "%d %d", t["reads"], t["writes"] }')" = "20 20" ] ||
	failed "the long keys' heatmap: its totals"
checks=$((checks + 1))
layout_ok "$tmp/k.svg" "$tmp/big.svg" "$tmp/e.svg" "$tmp/p.svg" "$tmp/long.svg" || failed "texts of the heatmap overlap"

err 'cellctl keyviz: table "nosuch" not found' keyviz nosuch "out=$tmp/n.svg"
err 'cellctl keyviz: out= names no file' keyviz t out=
err "cellctl keyviz: out= draws the heatmap: row-size=, row-limit=, cell-size= and max-families= are the report's" \
	keyviz t "out=$tmp/n.svg" row-size=4
err 'cellctl keyviz: unknown arg key "outt"' keyviz t "outt=$tmp/n.svg"
err "cellctl keyviz: writing \"$tmp/nodir/k.svg\": No such file or directory" keyviz t "out=$tmp/nodir/k.svg"
err 'cellctl updatetable: bad keyviz value "maybe" (want on or off)' updatetable t keyviz=maybe
err 'cellctl updatetable: usage: cellctl updatetable <table> keyviz=on|off' updatetable t
err 'cellctl updatetable: table "nosuch" not found' updatetable nosuch keyviz=off
checks=$((checks + 1))
[ ! -e "$tmp/n.svg" ] && ! ls "$tmp" | grep -q '\.tmp' || failed "a refused keyviz left a file"

finish heatmap
