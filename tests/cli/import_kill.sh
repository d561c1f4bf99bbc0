#!/bin/bash
# import_kill.sh CELLCTL [ROUNDS] — cellctl import killed (SIGKILL) at random points (tools/import/README.md, "How
# import writes": every finished batch survives a crash). Each round imports its own JSON-lines file
# (rows rNN_IIIIII, two cells a line; key order on even rounds, which takes the MDB_APPEND path, shuffled
# on odd ones) with a random batch-size and --batches, and kill -9s it after a random delay up to 90%
# of what an uninterrupted import takes (some finish first; counted). Then: `cellctl verify` exits 0; the round's cells in the
# store are exactly the input's first K cells with their values and timestamps, K a batch boundary and at
# least what --batches acknowledged; no other rows. Then the import is run again to the end and every
# cell of the round must be there. At the end the whole table is every round's input, nothing more.
# ROUNDS (default 30, 10 under a sanitizer; or $IMPORT_KILL_ROUNDS) rounds; IMPORT_KILL_SEED=N repeats the random choices.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
rounds=${2:-${IMPORT_KILL_ROUNDS:-30}}
# under a sanitizer (tests/check sets ASAN_OPTIONS) 10 rounds: that pass looks for memory errors
[ -z "${2:-}${IMPORT_KILL_ROUNDS:-}" ] && [ -n "${ASAN_OPTIONS:-}" ] && rounds=10
lines=${IMPORT_KILL_LINES:-2000}
seed=${IMPORT_KILL_SEED:-$RANDOM}
# the interpreter itself: a version manager's shim costs a quarter second a call, three calls a round
py=$(python3 -c 'import sys; print(sys.executable)') || exit 1
python3() { "$py" "$@"; }
RANDOM=$seed
echo "seed $seed, $rounds rounds of $lines lines"

"$cellctl" --db "$db" createtable t families=cf,g || exit 1

# gen ROUNDS...: each round's input in $tmp/in.ROUND, one row a line
gen() {
	python3 - "$tmp" "$lines" "$seed" "$@" <<'EOF'
import json, random, sys
tmp, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for rnd in map(int, sys.argv[4:]):
    rng = random.Random(seed * 1000 + rnd)
    order = list(range(n))
    if rnd % 2:
        rng.shuffle(order)
    with open("%s/in.%d" % (tmp, rnd), "w") as f:
        for i in order:
            big = 'x' * rng.choice([0, 0, 0, 300, 5000])  # some values compressed, some over a page
            cells = [{"family": "cf", "qualifier": "a", "ts": 1000 + i, "value": "r%d-%d-a%s" % (rnd, i, big)},
                     {"family": "g", "qualifier": "b", "ts": 2000 + rnd, "value": "r%d-%d-b" % (rnd, i)}]
            print(json.dumps({"row": "r%02d_%06d" % (rnd, i), "cells": cells}), file=f)
EOF
}

# judge ROUND INPUT EXPORT STDERR BATCH KILLED: the export holds a prefix of the input ending on a batch
# boundary, covering every acknowledged batch; prints "K ACKED"
judge() {
	python3 - "$@" <<'EOF'
import json, re, sys
rnd, inp, exp, err, batch, complete = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6] == "complete"
want = []
for line in open(inp):
    o = json.loads(line)
    for c in o["cells"]:
        want.append((o["row"], c["family"], c["qualifier"], c["ts"], c["value"]))
got = []
for line in open(exp):
    c = json.loads(line)
    got.append((c["row"], c["family"], c["qualifier"], c["ts"], c["value"]))
acked = 0
text = open(err).read()
for m in re.finditer(r"^cellctl import: committed lines 1-(\d+), (\d+) cells\n", text, re.M):
    acked = max(acked, int(m.group(2)))
bad = []
k = len(got)
if sorted(got) != sorted(want[:k]):
    extra = set(got) - set(want[:k])
    bad.append("the store's %d cells are not the input's first %d: e.g. %r" % (k, k, sorted(extra)[:1] or sorted(set(want[:k]) - set(got))[:1]))
if k < acked:
    bad.append("%d cells in the store, %d acknowledged" % (k, acked))
if complete and k != len(want):
    bad.append("%d cells in the store after a complete import of %d" % (k, len(want)))
if k % (2 * batch) and k != len(want):
    bad.append("%d cells: not a boundary of batches of %d lines" % (k, batch))
for b in bad:
    print("round %s: %s" % (rnd, b), file=sys.stderr)
print(k, acked)
sys.exit(1 if bad else 0)
EOF
}

# One import, uninterrupted, to know how long one takes.
gen 99 $(seq 1 "$rounds")
start=$(date +%s%N)
"$cellctl" --db "$db" import t "$tmp/in.99" batch-size=50 --quiet || failed "the timing import failed"
full_ms=$((($(date +%s%N) - start) / 1000000 + 1))
"$cellctl" --db "$db" deleteallrows t || failed "deleteallrows"

kills=0 finished=0 total_checked=0
for r in $(seq 1 "$rounds"); do
	cp "$tmp/in.$r" "$tmp/in"
	: >"$tmp/err" # (a kill before the redirection would leave the last round's)
	batch=$((RANDOM % 200 + 10))
	delay_ms=$((RANDOM % (full_ms * 9 / 10 + 1)))
	"$cellctl" --db "$db" import t "$tmp/in" "batch-size=$batch" --batches 2>"$tmp/err" &
	pid=$!
	sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	status=$?
	checks=$((checks + 1))
	if [ $status -eq 137 ]; then
		kills=$((kills + 1))
	elif [ $status -eq 0 ]; then
		finished=$((finished + 1))
	else
		failed "round $r: import exited $status: $(cat "$tmp/err")"
	fi
	checks=$((checks + 1))
	"$cellctl" --db "$db" verify >"$tmp/verify.out" 2>&1 || failed "round $r: verify after the kill: $(cat "$tmp/verify.out")"
	checks=$((checks + 1))
	"$cellctl" --db "$db" export t "prefix=r$(printf %02d "$r")_" format=jsonl >"$tmp/exp" 2>"$tmp/exp.err" ||
		failed "round $r: export: $(cat "$tmp/exp.err")"
	checks=$((checks + 1))
	res=$(judge "$r" "$tmp/in" "$tmp/exp" "$tmp/err" "$batch" partial) || failed "round $r: after the kill"
	echo "round $r: batch-size $batch, killed after ${delay_ms}ms (status $status): $res (cells in the store, acknowledged)"
	# the import again, to the end
	checks=$((checks + 1))
	start=$(date +%s%N)
	"$cellctl" --db "$db" import t "$tmp/in" --quiet || failed "round $r: the import run again failed"
	full_ms=$((($(date +%s%N) - start) / 1000000 + 1)) # (the next round's kills range over this)
	"$cellctl" --db "$db" export t "prefix=r$(printf %02d "$r")_" format=jsonl >"$tmp/exp" || failed "round $r: export"
	checks=$((checks + 1))
	judge "$r" "$tmp/in" "$tmp/exp" /dev/null 1 complete >/dev/null || failed "round $r: after the import ran again"
	total_checked=$((total_checked + $(wc -l <"$tmp/exp")))
	cat "$tmp/in" >>"$tmp/all"
done
checks=$((checks + 1))
"$cellctl" --db "$db" verify >"$tmp/verify.out" 2>&1 || failed "verify at the end: $(cat "$tmp/verify.out")"
"$cellctl" --db "$db" export t format=jsonl >"$tmp/exp" || failed "export at the end"
checks=$((checks + 1))
judge all "$tmp/all" "$tmp/exp" /dev/null 1 complete >/dev/null || failed "the whole table at the end"
echo "$kills imports killed, $finished finished before the kill; $total_checked cells checked after the reruns, $(wc -l <"$tmp/exp") in the table"
finish import-kill
