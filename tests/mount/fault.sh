#!/bin/bash
# Fault injection in the daemon: cellfs mounted with the test hook CELLFS_FAULT=KIND:N (armed once the
# mount is ready: the Nth LMDB call, zstd call or store allocation from then on fails), then a workload
# of `echo >`-style writes (an existing column, a new row made with mkdir -p, a compressible 4 KiB value),
# a read, a listing, an unlink and a rename, each done once by one python process that notes its result
# or errno (the new row's file is not written when its mkdir -p failed). Every
# operation must succeed or fail with EIO or ENOMEM; the daemon must answer every request, unmount and
# exit 0, its stderr holding nothing but the hook's report (and, under ASan, no report or leak); the
# store must then verify and hold, for each operation, exactly the state after it (it succeeded) or
# before it (it failed). One run armed with an N too large to fire counts the calls C; N then runs from 1
# to C with a stride so that at most MOUNT_FAULT_RUNS runs (default 20, 8 under ASan; 0: every N) are
# made per kind, and N = C + 1 ends each loop. C varies by a few between runs (a request slow enough
# makes the supervisor start another reader, with its own read transaction; the watcher syncs every
# 5 s): a run that does not fire ends the loop, and fails only if it is more than 8 calls short of C.
. "$(dirname "$0")/lib.sh"
export LC_ALL=C
db=$TMP/store
fixture=$TMP/fixture
max_runs=${MOUNT_FAULT_RUNS:-20}
if [ -z "${MOUNT_FAULT_RUNS:-}" ] && ldd "$CELLFS" 2>/dev/null | grep -q libasan; then
	max_runs=8
fi
cc() { "$CELLCTL" --db "$1" "${@:2}" || exit 1; }
cc "$fixture" createtable t families=cf
cc "$fixture" set t a cf:x=old@1000
cc "$fixture" set t b cf:y=keep@1000
cc "$fixture" set t c cf:z=gone@1000
cc "$fixture" set t d cf:w=still@1000
"$CELLCTL" --db "$fixture" --format=json read t >"$TMP/fixture.json" || exit 1

# The workload: one line per operation, "NAME ok" or "NAME ERRNO".
workload() {
	python3 - "$MNT/t" "$(cd "$(dirname "$0")" && pwd)" <<'PY'
import errno, os, sys
t = sys.argv[1]
sys.path.append(sys.argv[2])
from faultops import op, write
op("write_x", lambda: write(t + "/a/cf/x", b"new1"))
if op("mkdir_n", lambda: os.makedirs(t + "/n/cf")):
    op("write_new_row", lambda: write(t + "/n/cf/q", b"hello"))
else:
    print("write_new_row skipped") # no directory to write in
op("write_big", lambda: write(t + "/a/cf/big", b"compressible " * 320))
op("read_y", lambda: open(t + "/b/cf/y", "rb").read() == b"keep")
op("list_d", lambda: os.listdir(t + "/d/cf") == ["w"])
op("unlink_z", lambda: os.unlink(t + "/c/cf/z"))
op("rename_y", lambda: os.rename(t + "/b/cf/y", t + "/b/cf/y2"))
PY
}

# judge RESULTS JSON KIND: each operation's result against the store's state (cellctl read as JSON).
judge() {
	python3 - "$1" "$2" "$TMP/fixture.json" "$3" <<'PY'
import json, sys
res = dict(l.split() for l in open(sys.argv[1]) if l.strip())
def cells(path):
    out = {}
    for l in open(path):
        r = json.loads(l)
        for c in r["cells"]:
            out.setdefault((r["row"], c["family"], c["qualifier"]), []).append((c["ts"], c["value"]))
    return out
now, before, kind = cells(sys.argv[2]), cells(sys.argv[3]), sys.argv[4]
clean = {"lmdb": "EIO", "zstd": "EIO", "alloc": "ENOMEM"}[kind]
bad = []
want_ops = ["write_x", "mkdir_n", "write_new_row", "write_big", "read_y", "list_d", "unlink_z", "rename_y"]
for o in want_ops:
    if res.get(o) not in ("ok", clean) and not (o == "write_new_row" and res.get(o) == "skipped"):
        bad.append("%s: %s, want ok or %s" % (o, res.get(o), clean))
def newest(k):
    return now[k][0][1] if k in now else None
done = {o: res.get(o) == "ok" for o in want_ops}
exp = dict(before)
if done["write_x"]:
    if newest(("a", "cf", "x")) != "new1" or len(now.get(("a", "cf", "x"), [])) != 2:
        bad.append("write_x succeeded but a/cf/x is %r" % now.get(("a", "cf", "x")))
    exp[("a", "cf", "x")] = now.get(("a", "cf", "x"))
if done["write_new_row"]:
    if newest(("n", "cf", "q")) != "hello":
        bad.append("write_new_row succeeded but n/cf/q is %r" % now.get(("n", "cf", "q")))
    exp[("n", "cf", "q")] = now.get(("n", "cf", "q"))
if done["write_big"]:
    if newest(("a", "cf", "big")) != "compressible " * 320:
        bad.append("write_big succeeded but a/cf/big is not its value")
    exp[("a", "cf", "big")] = now.get(("a", "cf", "big"))
if done["unlink_z"]:
    exp.pop(("c", "cf", "z"), None)
if done["rename_y"]:
    v = exp.pop(("b", "cf", "y"))
    if ("b", "cf", "y2") not in now or newest(("b", "cf", "y2")) != "keep":
        bad.append("rename_y succeeded but b/cf/y2 is %r" % now.get(("b", "cf", "y2")))
    exp[("b", "cf", "y2")] = now.get(("b", "cf", "y2"))
for k in sorted(set(exp) | set(now)):
    if exp.get(k) != now.get(k):
        bad.append("%s: the store holds %r, want %r (results: %s)" % ("/".join(k), now.get(k), exp.get(k), res))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}

injected=0
for kind in lmdb zstd alloc; do
	calls= n=1 stride=1 runs=0 fired=0
	# The first run measures: armed far beyond what the workload reaches.
	for ((;;)); do
		rm -rf "$db" && cp -a "$fixture" "$db"
		if [ -z "$calls" ]; then spec=$kind:1000000000; else spec=$kind:$n; fi
		CELLFS_FAULT=$spec mount_store "$db"
		workload >"$TMP/results"
		fusermount3 -u "$MNT" || fail "[$spec] fusermount3 -u failed"
		wait "$DAEMON_PID"
		rc=$?
		DAEMON_PID=
		[ $rc -eq 0 ] || fail "[$spec] the daemon exited with status $rc"
		strip_transport
		report=$(grep "^cellfs: CELLFS_FAULT=$spec " "$TMP/daemon.err")
		# (besides the report, only the line the daemon logs for an EIO from the store, fs/README.md, and
		# its report of a last sync at unmount that the fault failed: EIO, or ENOMEM for an allocation)
		eio='^cellfs: [a-z]*: input/output error: the store is damaged \([0-9]* so far; cellctl verify names what\)$|^cellfs: could not sync the store at unmount: (Input/output error|Cannot allocate memory)$'
		if grep -v "^cellfs: CELLFS_FAULT=$spec " "$TMP/daemon.err" | grep -Ev "$eio" | grep -q .; then
			fail "[$spec] the daemon wrote to stderr: $(grep -v "^cellfs: CELLFS_FAULT=" "$TMP/daemon.err" | grep -Ev "$eio" | head -c 2000)"
		fi
		if ! out=$("$CELLCTL" --db "$db" verify 2>&1); then
			fail "[$spec] the store does not verify: $out"
		fi
		"$CELLCTL" --db "$db" --format=json read t >"$TMP/now.json" || fail "[$spec] cellctl read failed"
		[ -n "${FAULT_DEBUG:-}" ] && { echo "[$spec]" $(cat "$TMP/results") >&2; cat "$TMP/daemon.err" >&2; }
		judge "$TMP/results" "$TMP/now.json" "$kind" | sed "s/^/FAIL: [$spec] /" >&2
		[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
		if [ -z "$calls" ]; then
			calls=$(sed -n 's/^cellfs: CELLFS_FAULT=.* did not fire: \([0-9]*\) calls$/\1/p' <<<"$report")
			[ -n "$calls" ] || { fail "[$spec] no count of calls: $report"; break; }
			grep -qv ' ok$' "$TMP/results" && fail "[$spec] an operation failed with no fault: $(cat "$TMP/results")"
			[ "$max_runs" -gt 0 ] && [ "$calls" -gt "$max_runs" ] && stride=$(((calls + max_runs - 1) / max_runs))
			continue
		fi
		runs=$((runs + 1))
		if [ "$report" = "cellfs: CELLFS_FAULT=$spec fired" ]; then
			fired=$((fired + 1))
		else
			# Past the workload's calls: the loop is done. The count varies by a few between runs.
			[ "$n" -ge $((calls - 8)) ] || fail "[$spec] did not fire within the $calls calls counted: $report"
			break
		fi
		[ "$n" -gt "$calls" ] && break
		n=$((n + stride))
		[ "$n" -gt "$calls" ] && n=$((calls + 1))
	done
	injected=$((injected + fired))
	echo "$kind: $calls calls, $runs runs (stride $stride), $fired faults injected"
done
echo "faults injected: $injected"
exit $status
