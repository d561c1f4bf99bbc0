#!/usr/bin/env bash
# bench_import.sh — import and export rates: cellctl import of a CSV in key order (the append path),
# the same rows shuffled (ordinary writes), JSON lines, from a pipe; export as CSV and JSON lines; against
# `cbt import` into the Bigtable emulator (on fewer cells: it is slow) and a raw LMDB loop (raw_load.c)
# putting comparable keys with the same batching and syncs. Prints cells/s; exits 0 whatever the figures.
#
# usage: bench_import.sh CELLCTL RAW_LOAD [-n CELLS] [-c CBT_CELLS] [-r REPEATS]
#   (10 cells a row, values of 2 to 8 bytes; the best of REPEATS runs; the store lives under $TMPDIR)
set -u
export LC_ALL=C TZ=UTC

die() { echo "bench_import: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: bench_import.sh CELLCTL RAW_LOAD [-n CELLS] [-c CBT_CELLS] [-r REPEATS]"
cellctl=$(realpath "$1") raw=$(realpath "$2")
shift 2
ncells=1000000 cbtcells=100000 repeats=3
while getopts n:c:r: o; do
	case $o in
	n) ncells=$OPTARG ;;
	c) cbtcells=$OPTARG ;;
	r) repeats=$OPTARG ;;
	*) die "unknown option" ;;
	esac
done
emulator=${CBT_EMULATOR:-/usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator}

work=$(mktemp -d "${TMPDIR:-/tmp}/cellfs-benchi.XXXXXX") || die "mktemp failed"
emu_pid=
cleanup() {
	[ -n "$emu_pid" ] && { kill "$emu_pid" 2>/dev/null; wait "$emu_pid" 2>/dev/null; }
	rm -rf "$work"
}
trap cleanup EXIT

now() { date +%s.%N; }
rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", n / t }'; }

gen() { # gen ROWS: cbt CSV, rows in key order, 10 columns, value-encoded timestamps
	awk -v rows="$1" 'BEGIN {
		print ",cf,,,,,,,,,"; print ",c0,c1,c2,c3,c4,c5,c6,c7,c8,c9"
		for (r = 0; r < rows; r++) {
			line = sprintf("row%08d", r)
			for (c = 0; c < 10; c++) line = line sprintf(",v%d@1000", r * 10 + c)
			print line
		}
	}'
}
gen $((ncells / 10)) >"$work/sorted.csv"
{ head -2 "$work/sorted.csv"; tail -n +3 "$work/sorted.csv" | shuf --random-source=<(yes); } >"$work/shuffled.csv"
gen $((cbtcells / 10)) >"$work/small.csv"
echo "bench_import: $ncells cells ($(du -h "$work/sorted.csv" | cut -f1) of CSV), best of $repeats"

best=
# time_it LABEL CELLS CMD...: run REPEATS times on a fresh store each, print the best rate.
time_it() {
	local label=$1 n=$2 t0 t1 el b=
	shift 2
	for _ in $(seq "$repeats"); do
		rm -rf "$work/db"
		"$cellctl" --db "$work/db" createtable b families=cf >/dev/null || die "createtable failed"
		[ -n "${PRELOAD:-}" ] && { "$cellctl" --db "$work/db" import b "$work/sorted.csv" timestamp=value-encoded --quiet || die "preload failed"; }
		sync
		t0=$(now)
		"$@" || die "$label failed"
		t1=$(now)
		el=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
		if [ -z "$b" ] || awk -v a="$el" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$el; fi
	done
	best=$b
	printf '  %-40s %9d cells %8.3f s %10s cells/s\n' "$label" "$n" "$b" "$(rate "$n" "$b")"
}

echo "import:"
time_it "cellctl import, key order (append)" "$ncells" \
	"$cellctl" --db "$work/db" import b "$work/sorted.csv" timestamp=value-encoded --quiet
time_it "cellctl import, shuffled rows" "$ncells" \
	"$cellctl" --db "$work/db" import b "$work/shuffled.csv" timestamp=value-encoded --quiet
time_it "cellctl import, from a pipe" "$ncells" \
	sh -c '"$0" --db "$1" import b - timestamp=value-encoded --quiet <"$2"' "$cellctl" "$work/db" "$work/sorted.csv"
# JSON lines of the same cells
rm -rf "$work/db"
"$cellctl" --db "$work/db" createtable b families=cf >/dev/null
"$cellctl" --db "$work/db" import b "$work/sorted.csv" timestamp=value-encoded --quiet
"$cellctl" --db "$work/db" export b format=jsonl >"$work/cells.jsonl"
time_it "cellctl import, JSON lines" "$ncells" \
	"$cellctl" --db "$work/db" import b "$work/cells.jsonl" --quiet
for mode in append put; do
	t=
	for _ in $(seq "$repeats"); do
		rm -rf "$work/raw"
		mkdir "$work/raw"
		sync
		r=$("$raw" "$work/raw" "$ncells" 100000 $mode) || die "raw_load failed"
		if [ -z "$t" ] || awk -v a="$(echo "$r" | cut -d' ' -f3)" -v b="$(echo "$t" | cut -d' ' -f3)" 'BEGIN { exit !(a < b) }'; then t=$r; fi
	done
	printf '  %-40s %9d cells %8.3f s %10s cells/s\n' "raw LMDB loop, mdb_put $( [ $mode = append ] && echo MDB_APPEND || echo 'in order')" \
		"$ncells" "$(echo "$t" | cut -d' ' -f3)" "$(echo "$t" | cut -d' ' -f4)"
done
echo "export:"
PRELOAD=1 time_it "cellctl export, CSV" "$ncells" \
	sh -c '"$0" --db "$1" export b >/dev/null' "$cellctl" "$work/db"
PRELOAD=1 time_it "cellctl export, JSON lines" "$ncells" \
	sh -c '"$0" --db "$1" export b format=jsonl >/dev/null' "$cellctl" "$work/db"

if command -v cbt >/dev/null && [ -x "$emulator" ]; then
	"$emulator" -host 127.0.0.1 -port 0 >"$work/emulator.log" 2>&1 &
	emu_pid=$!
	addr=
	for _ in $(seq 100); do
		addr=$(sed -n 's/^Cloud Bigtable emulator running on \(.*\)$/\1/p' "$work/emulator.log")
		[ -n "$addr" ] && break
		sleep 0.1
	done
	[ -n "$addr" ] || die "the emulator did not start"
	mkdir -p "$work/home"
	cbtc() { HOME=$work/home BIGTABLE_EMULATOR_HOST=$addr cbt -project b -instance b -creds /dev/null "$@"; }
	cbtc createtable b families=cf >/dev/null 2>&1
	t0=$(now)
	cbtc import b "$work/small.csv" timestamp=value-encoded >/dev/null 2>&1 || die "cbt import failed"
	t1=$(now)
	el=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
	printf '  %-40s %9d cells %8.3f s %10s cells/s\n' "cbt import into the emulator" "$cbtcells" "$el" "$(rate "$cbtcells" "$el")"
	time_it "cellctl import, same cells" "$cbtcells" \
		"$cellctl" --db "$work/db" import b "$work/small.csv" timestamp=value-encoded --quiet
else
	echo "  cbt or the emulator is missing: no cbt import figure"
fi
exit 0
