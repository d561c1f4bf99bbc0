#!/bin/bash
# A damaged store through the daemon: corruptcheck.py flips one byte in each of CORRUPT_COPIES (default
# 40) copies of a store of several tables (seed CORRUPT_SEED) and walks each copy's mount. Every failure
# is EIO, the daemon never dies, tables the damage does not reach read as before (see corruptcheck.py).
. "$(dirname "$0")/lib.sh"
db=$TMP/db
cc() { "$CELLCTL" --db "$db" "$@" >/dev/null || fail "cellctl $*"; }
cc createtable t "families=a:maxversions=2,b"
cc set t r1 a:x=1@1000 a:x=2@2000 a:x=3@3000 b:y=hello@5000
cc set t $'r\n2' "b:z=$(printf 'compress me %.0s' $(seq 50))@7000"
cc set t "$(printf 'L%.0s' $(seq 500))" a:long=v@1000
cc createtable u families=f
for i in $(seq 0 9); do
	args=()
	for j in $(seq 0 19); do args+=("f:q$j=value $i $j $(printf 'x%.0s' $(seq $((j * 7))))@$((1000 + j))"); done
	cc set u "row#$i" "${args[@]}"
done
cc createtable v "families=hits:never:intsum,m"
cc addtocell v page#1 hits:day=3@86400000000 hits:day=4@86400000000
cc set v page#1 m:title=Home@1000
cc createtable w families=cf
cc set w a#b#c cf:q=deep@1000
"$CELLCTL" --db "$db" verify >/dev/null || fail "the intact store does not verify"
# Three fixed flips first, each a kind of damage this store's layout gives: a branch page's node offset
# that makes LMDB read outside the file (the store's fault guard: EIO, not SIGSEGV), a key made to sort
# before its row (EIO, not a listed name no lookup finds), and a damaged branch key that makes a seek
# land below where it sought (the seek steps on; a listing that seeks past rows must end).
python3 "$(dirname "$0")/corruptcheck.py" run "$db" "$MNT" "$TMP" "${CORRUPT_COPIES:-40}" "${CORRUPT_SEED:-4242}" 0 \
	32814:4,20012:120,16321:254 || fail "corruptcheck.py"
# A store of values that take several pages each (LMDB overflow pages), cut short at 6 page boundaries:
# a value whose pages are gone is EIO, never a SIGBUS while zstd reads it.
big=$TMP/big
cc() { "$CELLCTL" --db "$big" "$@" >/dev/null || fail "cellctl $*"; }
cc createtable t families=cf
for i in 1 2 3; do cc set t "r$i" "cf:q=$(head -c 30000 /dev/urandom | base64 -w0)@1000"; done
cc createtable small families=cf
cc set small r cf:q=v@1000
python3 "$(dirname "$0")/corruptcheck.py" run "$big" "$MNT" "$TMP" 0 1 6 || fail "corruptcheck.py (cut short)"
exit $status
