#!/bin/bash
# The daemon and several cellctl processes on one store at once (fs/CONTRACT.md, "Durability and sharing").
# While the store is mounted, all at the same time:
#  - CONCUR_INC processes (default 4) each run `cellctl increment c ctr n:hits=1` CONCUR_INC_N times (25):
#    ReadModifyWrite from many processes must count exactly (the counter ends at their product, read by
#    cellctl and through the mount);
#  - 2 writers `cellctl set c gen_W cf:a=V cf:b=V cf:c=V cf:d=V` for generations 1..40, one transaction
#    each, and 5 imports rewriting rows imp_0..imp_199 (4 cells a line, batch-size=7) at generations 1..5;
#  - 2 shell loops writing `m_K/cf/v` through the mount (`printf > file`), 60 generations each;
#  - 2 readers (`concurcheck.py reader`): `cellctl lookup`/`read` of those rows must never show a row
#    whose newest cells carry two generations (half a row), and every file read through the mount while
#    it is rewritten must be one whole value (VAL(W, G) has the same size in every generation).
# Then: each row's newest cells are its last generation, `cellctl verify` exits 0, the daemon unmounts
# cleanly having printed nothing.
. "$(dirname "$0")/lib.sh"
CHECK=${CONCURCHECK:-$(dirname "$MOUNTCHECK")/concurcheck.py}
inc=${CONCUR_INC:-4} inc_n=${CONCUR_INC_N:-25}
writers=2 gens=40 imports=5 mwriters=2 mgens=60
db=$TMP/store
"$CELLCTL" --db "$db" createtable c families=cf,n || exit 1

val() { # val W G: the tag "W.G|" (G six digits) repeated to 3000 bytes
	local s
	s=$(printf '%s.%06d|' "$1" "$2")
	while [ ${#s} -lt 3000 ]; do s=$s$s; done
	printf '%s' "${s:0:3000}"
}
python3 - "$TMP" "$imports" <<'PY'
import json, sys
tmp, n = sys.argv[1], int(sys.argv[2])
for g in range(1, n + 1):
    tag = 'imp.%06d|' % g
    v = (tag * (3000 // len(tag) + 1))[:3000]
    with open('%s/imp.%d' % (tmp, g), 'w') as f:
        for r in range(200):
            cells = [{"family": "cf", "qualifier": q, "ts": g * 1000, "value": v} for q in "abcd"]
            print(json.dumps({"row": "imp_%d" % r, "cells": cells}), file=f)
PY

mount_store "$db"
stop=$TMP/stop
pids=()
for i in $(seq "$inc"); do
	(for _ in $(seq "$inc_n"); do "$CELLCTL" --db "$db" increment c ctr n:hits=1 >/dev/null || echo "increment failed"; done) \
		>"$TMP/inc.$i" 2>&1 &
	pids+=($!)
done
for w in $(seq 0 $((writers - 1))); do
	(for g in $(seq "$gens"); do
		v=$(val "gen_$w" "$g")
		"$CELLCTL" --db "$db" set c "gen_$w" "cf:a=$v" "cf:b=$v" "cf:c=$v" "cf:d=$v" || echo "set failed"
		echo "$g" >"$TMP/gen_$w.last"
	done) >"$TMP/set.$w" 2>&1 &
	pids+=($!)
done
(for g in $(seq "$imports"); do
	"$CELLCTL" --db "$db" import c "$TMP/imp.$g" batch-size=7 --quiet || echo "import failed"
done) >"$TMP/imp.out" 2>&1 &
pids+=($!)
for m in $(seq 0 $((mwriters - 1))); do
	(mkdir -p "$MNT/c/m_$m/cf" && for g in $(seq "$mgens"); do
		val "m_$m" "$g" >"$MNT/c/m_$m/cf/v" || echo "write failed"
		echo "$g" >"$TMP/m_$m.last"
	done) >"$TMP/mw.$m" 2>&1 &
	pids+=($!)
done
python3 "$CHECK" reader "$db" "$MNT" "$stop" reader1 >"$TMP/r1" 2>&1 &
r1=$!
python3 "$CHECK" reader "$db" "$MNT" "$stop" reader2 >"$TMP/r2" 2>&1 &
r2=$!
for p in "${pids[@]}"; do wait "$p"; done
touch "$stop"
wait $r1 || fail "reader 1: $(cat "$TMP/r1")"
wait $r2 || fail "reader 2: $(cat "$TMP/r2")"
cat "$TMP/r1" "$TMP/r2"
for f in "$TMP"/inc.* "$TMP"/set.* "$TMP/imp.out" "$TMP"/mw.*; do
	[ ! -s "$f" ] || fail "${f##*/}: $(head -c 500 "$f")"
done

want=$((inc * inc_n))
got=$("$CELLCTL" --db "$db" increment c ctr n:hits=0) || fail "reading the counter"
[ "$got" = "$want" ] || fail "the counter is $got after $inc processes x $inc_n increments, want $want"
ok=
for _ in $(seq 3000); do # the mount follows within about a second (30 s: a loaded machine)
	mnt_val=$(od -An -tx1 "$MNT/c/ctr/n/hits" | tr -d ' \n')
	[ "$mnt_val" = "$(printf '%016x' "$want")" ] && ok=1 && break
	sleep 0.01
done
[ -n "$ok" ] || fail "the mount's c/ctr/n/hits reads $mnt_val, want $want"
python3 "$CHECK" final "$db" "$MNT" "$writers" "$imports" "$mwriters" || fail "concurcheck.py final"

# rm -r beside another writer. When another process writes, the watcher drops the kernel's entries, also
# between rm's unlink of Q (the column, every version) and of the Q@TS names it listed, which the kernel
# then looks up again: those must still go (fs/README.md). First that sequence exactly (the watcher seen to
# have dropped the entries twice), then rm -r of a tree of 200 rows while cellctl writes in a loop.
mkdir -p "$MNT/c/rmq/cf" || fail "mkdir c/rmq/cf"
for v in 1 2 3; do echo $v >"$MNT/c/rmq/cf/q"; done
mapfile -t names < <(ls "$MNT/c/rmq/cf")
[ ${#names[@]} = 3 ] || fail "c/rmq/cf lists ${names[*]}, want q and two q@TS"
# (one process, as rm -r is: only it may unlink what the watcher made the kernel forget)
python3 - "$MNT/c" "$CELLCTL" "$db" "${names[@]:1}" <<'PY' || fail "rm of q, then of its q@TS names after the watcher dropped the kernel's entries"
import os, subprocess, sys, time
c, cellctl, db, versions = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
os.unlink(os.path.join(c, 'rmq/cf/q'))
for f in ('foreign1', 'foreign2'):
    os.listdir(c)
    subprocess.run([cellctl, '--db', db, 'set', 'c', f, 'cf:x=1'], check=True)
    for _ in range(3000):
        if f in os.listdir(c):
            break
        time.sleep(0.01)
for n in versions:  # another process does not find them: gone, as it should
    if subprocess.run(['stat', os.path.join(c, 'rmq/cf', n)], capture_output=True).returncode == 0:
        sys.exit('stat of %s from another process found it after q was removed' % n)
for n in versions:
    os.unlink(os.path.join(c, 'rmq/cf', n))
PY
python3 -c '
import json
for r in range(200):
    cells = [{"family": "cf", "qualifier": q, "ts": 1000 * v, "value": "%s%d" % (q, v)} for q in "pq" for v in range(1, 5)]
    print(json.dumps({"row": "tree#%03d" % r, "cells": cells}))' >"$TMP/tree.jsonl"
"$CELLCTL" --db "$db" import c "$TMP/tree.jsonl" format=jsonl >/dev/null || fail "importing c/tree"
ls -R "$MNT/c/tree" >/dev/null
(i=0; while [ ! -e "$TMP/rm.stop" ]; do "$CELLCTL" --db "$db" set c other cf:x=$((i++)) || exit 1; done) &
setter=$!
rm -r "$MNT/c/tree" 2>"$TMP/rm.err" || fail "rm -r c/tree beside cellctl set exited $?: $(head -c 1000 "$TMP/rm.err")"
touch "$TMP/rm.stop"
wait $setter || fail "the cellctl set loop failed"
[ ! -s "$TMP/rm.err" ] || fail "rm -r c/tree: $(head -c 1000 "$TMP/rm.err")"
[ ! -e "$MNT/c/tree" ] || fail "c/tree is still there after rm -r"
left=$("$CELLCTL" --db "$db" read c prefix=tree keys-only=true | grep -c '^tree')
[ "$left" = 0 ] || fail "rm -r c/tree left $left rows"
"$CELLCTL" --db "$db" verify >"$TMP/verify.out" 2>&1 || fail "cellctl verify: $(cat "$TMP/verify.out")"
echo "concur: $want increments from $inc processes counted exactly; $((writers * gens)) sets, $imports imports, $((mwriters * mgens)) mount writes"
unmount_store
exit $status
