#!/bin/bash
# dump.sh CELLCTL — cellctl dump, restore, gc, stats, verify and compact as a user sees them: exact
# stdout, stderr and exit status (the harness is lib.sh's), round trips compared byte for byte, and every
# refused restore leaving the store exactly as it was (compared by dumping it).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export LC_ALL=C

ok_in() { local d=$1; shift; run 0 "" "$cellctl" --db "$d" "$@"; }
err_in() { local d=$1 msg=$2; shift 2; run 1 "$msg" "$cellctl" --db "$d" "$@"; }

# dump_to STORE FILE: a dump that must succeed.
dump_to() {
	checks=$((checks + 1))
	"$cellctl" --db "$1" dump >"$2" 2>"$tmp/dump.err" || failed "dump of $1: $(cat "$tmp/dump.err")"
}

# same_store STORE FILE WHAT: STORE dumps to exactly FILE.
same_store() {
	dump_to "$1" "$tmp/same.dump"
	checks=$((checks + 1))
	cmp -s "$2" "$tmp/same.dump" || failed "$3: the store changed"
}

for c in compact dump gc restore stats verify; do
	checks=$((checks + 1))
	"$cellctl" help $c | head -1 | grep -q "^cellctl $c" || failed "help $c does not start with its synopsis"
done

# ---- A store with everything a dump must carry -------------------------------------------------------

long=$(printf 'k%.0s' $(seq 600))          # a 600-byte row key: kv's long-key path
longq=$(printf 'q%.0s' $(seq 1000))
comp=$(printf 'compressible %.0s' $(seq 7000)) # ~90 KB, compresses well
head -c 120000 /dev/urandom | tr -d '\000\n' | head -c 90000 >"$tmp/rand"
rnd=$(cat "$tmp/rand")                         # incompressible (bytes a shell argument can carry)
ok createtable awk "families=f,v2:maxversions=2,\"old:maxage=1d||maxversions=5\""
ok createtable empty
ok createtable many families=m
ok set awk $'r\n1' f:$'\x01'=$'\xc3\x28'@2000 f:=@3000 v2:q=a@1000 v2:q=b@2000 v2:q=c@3000
ok set awk $'r\n1' $'f:\xff=v@1000'
ok set awk "$long" "f:$longq=long@1000" "f:$longq=long2@2000" "old:x=y@5000"
ok set awk big "f:comp=$comp@1000" "f:rand=$rnd@1000" f:empty=@1000
for r in $(seq 100); do
	args=()
	for ts in $(seq 10); do args+=("m:c=value $ts of row $r@$((ts * 1000))"); done
	"$cellctl" --db "$db" set many "row$r" "${args[@]}" || failed "set many row$r"
done

# ---- dump and restore --------------------------------------------------------------------------------

dump_to "$db" "$tmp/d1"
dump_to "$db" "$tmp/d1b"
checks=$((checks + 1))
cmp -s "$tmp/d1" "$tmp/d1b" || failed "two dumps of one store differ"
checks=$((checks + 1))
[ "$(head -c 8 "$tmp/d1")" = CELLDUMP ] || failed "a dump does not start with CELLDUMP"

# (the byte count depends on the random value's length after tr: compare the line's shape only)
"$cellctl" --db "$tmp/db2" restore "$tmp/d1" >"$tmp/got.out" 2>"$tmp/got.err"
checks=$((checks + 1))
grep -qx 'restored 3 tables, 103 rows, 1010 cells ([0-9]* bytes of values)' "$tmp/got.out" && [ ! -s "$tmp/got.err" ] ||
	failed "restore into a fresh store: $(cat "$tmp/got.out" "$tmp/got.err")"
cp "$tmp/got.out" "$tmp/restore1.out"
: >"$tmp/want.out"
same_store "$tmp/db2" "$tmp/d1" "dump of the restored store differs from the original's dump"
# The collected version (v2 keeps 2 of 3) is not in the dump; reads agree.
printf '%b' '----------------------------------------\nr\n1\n  f:                                       @ 1970/01/01-00:00:00.003000\n    ""\n  f:\x01                                      @ 1970/01/01-00:00:00.002000\n    "\\xc3("\n  f:\xff                                      @ 1970/01/01-00:00:00.001000\n    "v"\n  v2:q                                     @ 1970/01/01-00:00:00.003000\n    "c"\n  v2:q                                     @ 1970/01/01-00:00:00.002000\n    "b"\n\n' >"$tmp/want.out"
ok_in "$tmp/db2" read awk $'prefix=r\n'
out <<'EOF'
Family Name	GC Policy				Value Type
-----------	---------				----------
f							{}
old		(age() > 1d || versions() > 5)		{}
v2		versions() > 2				{}
EOF
ok_in "$tmp/db2" ls awk
# From standard input, and "-".
cp "$tmp/restore1.out" "$tmp/want.out"
stdin=$tmp/d1 run 0 "" "$cellctl" --db "$tmp/db3" restore -
checks=$((checks + 1))
"$cellctl" --db "$tmp/db4" restore <"$tmp/d1" >/dev/null 2>&1 || failed "restore < FILE"
same_store "$tmp/db4" "$tmp/d1" "restore from standard input"

# Named tables, in the order given.
"$cellctl" --db "$db" dump many empty >"$tmp/d2" || failed "dump many empty"
out <<'EOF'
restored 2 tables, 100 rows, 1000 cells (17020 bytes of values)
EOF
ok_in "$tmp/db5" restore "$tmp/d2"
out <<'EOF'
empty
many
EOF
ok_in "$tmp/db5" ls

err 'cellctl dump: table "nosuch" not found' dump awk nosuch
err 'cellctl dump: table "awk" given twice' dump awk awk
err 'cellctl dump: invalid table name "a b"' dump 'a b'
err_in "$tmp/nostore" "cellctl dump: no store at \"$tmp/nostore\"" dump

# Existing tables: refused (the store unchanged), or replaced with overwrite=true.
ok_in "$tmp/db5" set many row1 m:c=changed@99000
dump_to "$tmp/db5" "$tmp/db5.before"
err_in "$tmp/db5" 'cellctl restore: table "many" already exists (overwrite=true replaces it); nothing was restored' \
	restore "$tmp/d2"
err_in "$tmp/db5" 'cellctl restore: table "many" already exists (overwrite=true replaces it); nothing was restored' \
	restore "$tmp/d2" overwrite=false
same_store "$tmp/db5" "$tmp/db5.before" "a refused restore"
out <<'EOF'
restored 2 tables, 100 rows, 1000 cells (17020 bytes of values)
EOF
ok_in "$tmp/db5" restore "$tmp/d2" overwrite=true
checks=$((checks + 1))
"$cellctl" --db "$tmp/db5" dump many empty | cmp -s - "$tmp/d2" || failed "restore overwrite=true: the tables differ"

err "cellctl restore: cannot open \"$tmp/nosuch\": No such file or directory" restore "$tmp/nosuch"
checks=$((checks + 1))
[ -e "$tmp/nosuch" ] && failed "restore of a missing file created something"
err 'cellctl restore: bad overwrite= value "maybe": want true or false' restore "$tmp/d2" overwrite=maybe
err 'cellctl restore: usage: cellctl restore [<file>] [overwrite=<true|false>] [round=ms]' restore "$tmp/d2" "$tmp/d2"
printf 'hello' >"$tmp/notdump"
err "cellctl restore: \"$tmp/notdump\": not a cellfs dump (no CELLDUMP header); nothing was restored" \
	restore "$tmp/notdump"
printf 'CELLDUMP\2\0\0\0\0\0\0\0' >"$tmp/v2dump"
err "cellctl restore: \"$tmp/v2dump\": format version 2 is not supported (this build reads 1); nothing was restored" \
	restore "$tmp/v2dump"

# Aggregate families keep their value type (the family attribute "type").
ok_in "$tmp/agg" createtable ag "families=s:never:intsum,m:maxversions=1:intmax,plain"
ok_in "$tmp/agg" addtocell ag r s:n=5@1000 s:n=-2@1000 m:x=7@2000 m:x=3@2000
dump_to "$tmp/agg" "$tmp/ag.dump"
out <<'EOF'
restored 1 tables, 1 rows, 2 cells (16 bytes of values)
EOF
ok_in "$tmp/agg2" restore "$tmp/ag.dump"
same_store "$tmp/agg2" "$tmp/ag.dump" "restore of aggregate families"
"$cellctl" --db "$tmp/agg" ls ag >"$tmp/ag.ls"
cp "$tmp/ag.ls" "$tmp/want.out"
ok_in "$tmp/agg2" ls ag
ok_in "$tmp/agg2" addtocell ag r s:n=10@1000
out <<'EOF'
----------------------------------------
r
  m:x                                      @ 1970/01/01-00:00:00.002000
    "\x00\x00\x00\x00\x00\x00\x00\a"
  s:n                                      @ 1970/01/01-00:00:00.001000
    "\x00\x00\x00\x00\x00\x00\x00\r"

EOF
ok_in "$tmp/agg2" read ag

# ---- Truncated and corrupted dumps: refused, the store exactly as it was ------------------------------

small=$tmp/small
ok_in "$small" createtable s "families=f:maxversions=2,g"
ok_in "$small" set s r1 f:a=1@1000 f:a=2@2000 g:=@0
ok_in "$small" set s $'r\n2' f:$'\xff'=x@3000
"$cellctl" --db "$small" dump s >"$tmp/s.dump"
dump_to "$db" "$tmp/db.before"
n=$(stat -c %s "$tmp/s.dump")
bad=0
for ((i = 0; i < n; i++)); do
	head -c $i "$tmp/s.dump" >"$tmp/trunc"
	"$cellctl" --db "$db" restore overwrite=true <"$tmp/trunc" >"$tmp/got.out" 2>"$tmp/got.err"
	status=$?
	if [ $status -ne 1 ] || [ -s "$tmp/got.out" ] || [ "$(wc -l <"$tmp/got.err")" -ne 1 ] ||
		! grep -Eqx 'cellctl restore: standard input: (truncated: .*|not a cellfs dump \(no CELLDUMP header\)); nothing was restored' "$tmp/got.err"; then
		bad=$((bad + 1))
		[ $bad -le 3 ] && failed "restore of the first $i bytes: status $status, $(cat "$tmp/got.err")"
	fi
done
checks=$((checks + n))
head -c 16 "$tmp/s.dump" >"$tmp/trunc16"
err "cellctl restore: \"$tmp/trunc16\": truncated: the dump ends after 16 bytes, before its trailer; nothing was restored" \
	restore "$tmp/trunc16" overwrite=true
head -c 40 "$tmp/s.dump" >"$tmp/trunc40"
err "cellctl restore: \"$tmp/trunc40\": truncated: the dump ends inside the frame at offset 16; nothing was restored" \
	restore "$tmp/trunc40" overwrite=true
# Every byte flipped: a checksum (or the header) catches it.
bad=0
for ((i = 0; i < n; i++)); do
	cp "$tmp/s.dump" "$tmp/flip"
	b=$(od -An -tu1 -j $i -N1 "$tmp/flip" | tr -d ' ')
	printf "\\$(printf %03o $((b ^ 0x10)))" | dd of="$tmp/flip" bs=1 seek=$i conv=notrunc status=none
	"$cellctl" --db "$db" restore "$tmp/flip" overwrite=true >"$tmp/got.out" 2>"$tmp/got.err"
	status=$?
	if [ $status -ne 1 ] || [ -s "$tmp/got.out" ] || [ "$(wc -l <"$tmp/got.err")" -ne 1 ] ||
		! grep -q "; nothing was restored\$" "$tmp/got.err"; then
		bad=$((bad + 1))
		[ $bad -le 3 ] && failed "restore with byte $i flipped: status $status, $(cat "$tmp/got.err")"
	fi
done
checks=$((checks + n))
cp "$tmp/s.dump" "$tmp/flip"
printf 'X' | dd of="$tmp/flip" bs=1 seek=30 conv=notrunc status=none
err "cellctl restore: \"$tmp/flip\": checksum mismatch in the frame at offset 16; nothing was restored" \
	restore "$tmp/flip" overwrite=true
# Some truncations of the big dump (past its first frames and blocks), from a file.
size=$(stat -c %s "$tmp/d1")
for len in 17 100 5000 $((size / 3)) $((size / 2)) $((size - 9)) $((size - 1)); do
	head -c $len "$tmp/d1" >"$tmp/trunc"
	checks=$((checks + 1))
	"$cellctl" --db "$db" restore "$tmp/trunc" overwrite=true >"$tmp/got.out" 2>"$tmp/got.err"
	[ $? -eq 1 ] && grep -q '^cellctl restore: ".*": truncated: .*; nothing was restored$' "$tmp/got.err" ||
		failed "restore of the first $len bytes of the big dump: $(cat "$tmp/got.err")"
done
printf 'extra' | cat "$tmp/s.dump" - >"$tmp/extra"
err "cellctl restore: \"$tmp/extra\": unexpected bytes after the trailer at offset $n; nothing was restored" \
	restore "$tmp/extra" overwrite=true
same_store "$db" "$tmp/db.before" "refused restores"

# ---- gc, stats ---------------------------------------------------------------------------------------

g=$tmp/gcdb
ok_in "$g" createtable t "families=a:maxversions=1,b"
ok_in "$g" set t r1 a:x=1@1000 a:x=2@2000 a:x=3@3000 b:y=hello@5000
out <<'EOF'
table	family	rows	cells	raw-bytes	stored-bytes	key-bytes	ratio	garbage-cells	garbage-bytes
t	-	1	2	6	12	44	0.50	2	52
t	a	-	1	1	4	22	0.25	-	-
t	b	-	1	5	8	22	0.62	-	-
EOF
ok_in "$g" stats t
out <<'EOF'
removed 2 cells, freed 52 bytes
EOF
ok_in "$g" gc t
out <<'EOF'
removed 0 cells, freed 0 bytes
EOF
ok_in "$g" gc
out <<'EOF'
table	family	rows	cells	raw-bytes	stored-bytes	key-bytes	ratio	garbage-cells	garbage-bytes
t	-	1	2	6	12	44	0.50	0	0
t	a	-	1	1	4	22	0.25	-	-
t	b	-	1	5	8	22	0.62	-	-
EOF
ok_in "$g" stats
ok_in "$g" createtable gone families=f
ok_in "$g" set gone r f:q=v@1
ok_in "$g" deletetable gone
out <<'EOF'
removed 1 cells, freed 25 bytes
EOF
ok_in "$g" gc
err_in "$g" 'cellctl gc: table "nosuch" not found' gc nosuch
err_in "$g" 'cellctl gc: usage: cellctl gc [<table>]' gc a b
err_in "$g" 'cellctl stats: table "nosuch" not found' stats nosuch
err_in "$g" 'cellctl stats: usage: cellctl stats [<table>]' stats a b
err_in "$tmp/nostore" "cellctl gc: no store at \"$tmp/nostore\"" gc

# ---- verify ------------------------------------------------------------------------------------------

out <<'EOF'
ok: 5 records, 1 tables, 2 cells, 6 bytes of values
EOF
ok_in "$g" verify
err_in "$g" 'cellctl verify: usage: cellctl verify' verify extra
# Damage found where it lies: a compressed value's frame, and a raw value's cell header.
v=$tmp/vdb
ok_in "$v" createtable t families=f
ok_in "$v" set t row1 "f:comp=$comp@1000" f:raw=UNIQUEVALUE@2000
damaged() { # damaged OFFSET XOR: a copy of $v with one byte changed
	rm -rf "$tmp/vcopy"
	mkdir "$tmp/vcopy"
	cp "$v/data.mdb" "$tmp/vcopy/"
	local b
	b=$(od -An -tu1 -j "$1" -N1 "$tmp/vcopy/data.mdb" | tr -d ' ')
	printf "\\$(printf %03o $((b ^ $2)))" | dd of="$tmp/vcopy/data.mdb" bs=1 seek="$1" conv=notrunc status=none
}
zoff=$(grep -obUaP '\x28\xb5\x2f\xfd' "$v/data.mdb" | head -1 | cut -d: -f1)
damaged $((zoff + 8)) 0x55
out <<'EOF'
table "t" row "row1" column "f:comp" @1000: value does not decompress (91000 bytes, compressed to 33)
EOF
run 1 'cellctl verify: 1 problem found in 5 records' "$cellctl" --db "$tmp/vcopy" verify
roff=$(grep -obUa 'UNIQUEVALUE' "$v/data.mdb" | head -1 | cut -d: -f1)
damaged $((roff - 3)) 0x40
out <<'EOF'
table "t" row "row1" column "f:raw" @2000: cell header corrupt (record of 14 bytes)
EOF
run 1 'cellctl verify: 1 problem found in 5 records' "$cellctl" --db "$tmp/vcopy" verify
err_in "$tmp/nostore" "cellctl verify: no store at \"$tmp/nostore\"" verify
# A file cut short (a bad copy) or a page reference out of the file: LMDB faults reading past the end,
# under the store's guard, and the walk ends as for any damaged B-tree, reported where it stopped.
cut=$tmp/cutdb
ok_in "$cut" createtable t families=f
awk 'BEGIN { print ",f"; print ",q"; for (i = 0; i < 3000; i++) printf "r%05d,value-%d-%s\n", i, i, "xxxxxxxxxxxxxxxxxxxxxxxx" }' >"$tmp/cut.csv"
ok_in "$cut" import t "$tmp/cut.csv"
# where its pages end: the file may be longer (grown ahead, in memory), zeros past them
full=$(python3 -c 'import sys; print(len(open(sys.argv[1], "rb").read().rstrip(b"\0")))' "$cut/data.mdb")
cut_verify() { # cut_verify WHAT: verify the copy in $tmp/cutcopy: one problem, the walk's end
	checks=$((checks + 1))
	"$cellctl" --db "$tmp/cutcopy" verify >"$tmp/got.out" 2>"$tmp/got.err"
	local status=$?
	[ $status -eq 1 ] &&
		grep -qxE 'the B-tree is damaged after [0-9]+ records: a page is corrupt or lies outside the file' "$tmp/got.out" &&
		[ "$(wc -l <"$tmp/got.out")" -eq 1 ] &&
		grep -qxE 'cellctl verify: 1 problem found in [0-9]+ records' "$tmp/got.err" &&
		[ "$(wc -l <"$tmp/got.err")" -eq 1 ] ||
		failed "verify of $1: status $status, stdout: $(head -c 300 "$tmp/got.out"), stderr: $(head -c 300 "$tmp/got.err")"
}
for size in 8192 16384 $((full / 4 / 4096 * 4096)) $((full / 2 / 4096 * 4096)); do
	rm -rf "$tmp/cutcopy"
	mkdir "$tmp/cutcopy"
	cp "$cut/data.mdb" "$tmp/cutcopy/"
	truncate -s "$size" "$tmp/cutcopy/data.mdb"
	cut_verify "a store cut to $size bytes (its pages end at $full)"
done
for pgno in 0x7fffff 0xffffffffff; do # a branch page's second child, far past the end (and the map)
	rm -rf "$tmp/cutcopy"
	mkdir "$tmp/cutcopy"
	cp "$cut/data.mdb" "$tmp/cutcopy/"
	python3 - "$tmp/cutcopy/data.mdb" "$pgno" <<'EOF' || failed "no branch page to damage"
import struct, sys
path, pgno = sys.argv[1], int(sys.argv[2], 0)
data = bytearray(open(path, 'rb').read())
for off in range(2 * 4096, len(data), 4096):  # LMDB pages: after the two meta pages
    flags, lower = struct.unpack_from('<HH', data, off + 10)
    if flags & 1 and (lower - 16) // 2 >= 2:  # P_BRANCH with two children or more
        node = struct.unpack_from('<H', data, off + 18)[0]
        struct.pack_into('<HHH', data, off + node, pgno & 0xffff, pgno >> 16 & 0xffff, pgno >> 32 & 0xffff)
        open(path, 'wb').write(data)
        sys.exit(0)
sys.exit(1)
EOF
	cut_verify "a store whose branch page points to page $pgno"
done

# ---- a file left at the map's size -------------------------------------------------------------------

# An opener killed between LMDB's open (which makes a written map's file the map's size, 1 TiB) and its
# cut leaves the file so (sparse); the next open of any kind cuts it back, a read-only command's too.
left=$tmp/leftdb
ok_in "$left" createtable t families=f
ok_in "$left" set t r f:q=v@1000
"$cellctl" --db "$left" read t >"$tmp/left.before"
for cmd in ls "read t" "count t" verify "set t r f:q=w@2000" dump; do
	truncate -s 1T "$left/data.mdb"
	checks=$((checks + 1))
	# shellcheck disable=SC2086 # (the command's words)
	"$cellctl" --db "$left" $cmd >/dev/null 2>"$tmp/got.err" || failed "$cmd on a file left at 1 TiB: $(cat "$tmp/got.err")"
	size=$(stat -c %s "$left/data.mdb")
	[ "$size" -le $((1 << 20)) ] || failed "$cmd left the file at $size bytes"
done
out <<'EOF'
ok: 5 records, 1 tables, 2 cells, 2 bytes of values
EOF
ok_in "$left" verify
"$cellctl" --db "$left" read t cells-per-column=2 columns=f:q end=s >"$tmp/left.after"
checks=$((checks + 1))
grep -q '"v"' "$tmp/left.after" && grep -q '"w"' "$tmp/left.after" || failed "the cut store reads: $(cat "$tmp/left.after")"

# ---- compact -----------------------------------------------------------------------------------------

checks=$((checks + 1))
"$cellctl" --db "$db" compact "$tmp/compacted" >"$tmp/got.out" 2>"$tmp/got.err" &&
	grep -qx "wrote $tmp/compacted: [0-9]* bytes (the store: [0-9]* bytes)" "$tmp/got.out" ||
	failed "compact: $(cat "$tmp/got.out" "$tmp/got.err")"
same_store "$tmp/compacted" "$tmp/db.before" "the compacted copy"
checks=$((checks + 1))
[ "$(stat -c %s "$tmp/compacted/data.mdb")" -le "$(stat -c %s "$db/data.mdb")" ] || failed "the compacted copy is larger"
err "cellctl compact: \"$tmp/compacted\" already holds a store" compact "$tmp/compacted"
mkdir "$tmp/full"
touch "$tmp/full/x"
err "cellctl compact: \"$tmp/full\" holds other files" compact "$tmp/full"
err 'cellctl compact: usage: cellctl compact <dest-dir>' compact
err 'cellctl compact: usage: cellctl compact <dest-dir>' compact a b

finish dump.sh
