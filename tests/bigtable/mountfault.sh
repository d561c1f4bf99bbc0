#!/bin/bash
# mountfault.sh CELLCTL CELLFS — out of memory inside the Bigtable module of the mount: cellfs on the
# emulator with the test hook CELLFS_FAULT=alloc:N (armed once the mount is ready; the module's
# allocations count in the daemon's fault state, store/backend.h's cs_host), then a workload done once
# by one python process noting each operation's result or errno: mkdir -p of a new row and a file written
# in it, a read, a listing and a rename within a row. Each run has rows of its own (kNNNN, kNNNN-r, the
# latter made unarmed before the mount), so no run needs the table made again. (No unlink: on Bigtable
# an unlink is queued, and the mount answers it with the error of the read that follows it, fs/wops.c
# keep_emptied(), even where that read failed before sending the queue: an unlink then fails with ENOMEM
# and is done all the same, at the next send. An open issue of the mount, not of the module.) Every
# operation must succeed or fail with ENOMEM or EIO; the daemon must answer every request, unmount and
# exit 0 with nothing on stderr but its transport line, the hook's report and the lines it logs for a
# failure (fs/README.md); the rows, read back unarmed, must hold each operation's state after it (it
# succeeded) or before it (it failed). One run armed too high counts the calls C; N then runs from 1 to C
# with a stride (at most BT_MOUNT_FAULT_RUNS runs, default 16, 6 under ASan; 0: every N), and C + 1 ends
# the loop (C varies by a few between runs: the store's threads read ahead and expire what they keep, so
# a run past the calls it made ends the loop, a failure only when more than 8 short of C). The proof that
# faults reach the module: C with a copy of the module whose cs_backend_bind cannot be found is smaller.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export LC_ALL=C TZ=UTC
[ -n "$cellfs" ] || { echo "usage: mountfault.sh CELLCTL CELLFS"; exit 1; }
export CELLFS_BT_DEADLINE_MS=20000
max_runs=${BT_MOUNT_FAULT_RUNS:-16}
if [ -z "${BT_MOUNT_FAULT_RUNS:-}" ] && ldd "$cellfs" 2>/dev/null | grep -q libasan; then
	max_runs=6
fi
unbound_module "$cellfs" "$tmp/unbound" >/dev/null || exit 1

check "createtable t" ccb createtable t families=cf
check "set t r1" ccb set t r1 cf:a=1@1000 cf:b=2@1000
mnt=$tmp/mnt
mkdir "$mnt"

# run SPEC KEY [unbound]: make KEY's rows, mount with CELLFS_FAULT=SPEC, run the workload (results in
# $tmp/results), unmount; the daemon's stderr (less its transport line) in $tmp/daemon.err.
run() {
	local spec=$1 key=$2 env=() pid rc
	[ "${3:-}" = unbound ] && env=(CELLFS_MODULE_DIR="$tmp/unbound")
	ccb set t "$key-r" cf:y=keep@1000 >/dev/null ||
		{ fail "[$spec] making the rows of $key"; return 1; }
	env "${env[@]}" CELLFS_FAULT="$spec" "$cellfs" "$bt" "$mnt" -f 2>"$tmp/daemon.err" &
	pid=$!
	for _ in $(seq 6000); do # (60 s: the ASan daemon on a loaded machine)
		mountpoint -q "$mnt" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
	done
	if ! mountpoint -q "$mnt"; then
		kill "$pid" 2>/dev/null
		wait "$pid"
		fail "[$spec] cellfs did not mount: $(cat "$tmp/daemon.err")"
		return 1
	fi
	mounts+=("$mnt")
	python3 - "$mnt/t" "$key" "$(cd "$(dirname "${BASH_SOURCE[0]}")/../mount" && pwd)" >"$tmp/results" <<'PY'
import errno, os, sys
t, key = sys.argv[1], sys.argv[2]
sys.path.append(sys.argv[3])
from faultops import op, write
if op("mkdir_n", lambda: os.makedirs("%s/%s/cf" % (t, key))):
    op("write_new_row", lambda: write("%s/%s/cf/q" % (t, key), b"hello"))
else:
    print("write_new_row skipped")
op("read_a", lambda: open(t + "/r1/cf/a", "rb").read() == b"1")
op("list_r1", lambda: sorted(os.listdir(t + "/r1/cf")) == ["a", "b"])
op("rename_y", lambda: os.rename("%s/%s-r/cf/y" % (t, key), "%s/%s-r/cf/y2" % (t, key)))
PY
	fusermount3 -u "$mnt" || fail "[$spec] fusermount3 -u failed"
	wait "$pid"
	rc=$?
	unset 'mounts[-1]'
	[ $rc -eq 0 ] || fail "[$spec] the daemon exited with status $rc: $(head -c 2000 "$tmp/daemon.err")"
	sed -i '0,/^cellfs: transport: /{/^cellfs: transport: /d}' "$tmp/daemon.err"
}

# judge SPEC KEY: the results against the rows read back (unarmed).
judge() {
	local spec=$1 key=$2
	ccb --format=json read t prefix="$key" >"$tmp/now.json" 2>"$tmp/read.err" ||
		{ fail "[$spec] reading $key's rows back: $(cat "$tmp/read.err")"; return; }
	python3 - "$tmp/results" "$tmp/now.json" "$key" <<'PY' | sed "s/^/FAIL: [$spec] /"
import json, sys
res = dict(l.split() for l in open(sys.argv[1]) if l.strip())
key = sys.argv[3]
now = {}
for l in open(sys.argv[2]):
    r = json.loads(l)
    for c in r["cells"]:
        now.setdefault((r["row"], c["family"], c["qualifier"]), []).append(c["value"])
bad = []
ops = ["mkdir_n", "write_new_row", "read_a", "list_r1", "rename_y"]
for o in ops:
    if res.get(o) not in ("ok", "ENOMEM", "EIO") and not (o == "write_new_row" and res.get(o) == "skipped"):
        bad.append("%s: %s, want ok, ENOMEM or EIO" % (o, res.get(o)))
want = {(key + "-r", "cf", "y"): ["keep"]}
if res.get("write_new_row") == "ok":
    want[(key, "cf", "q")] = ["hello"]
if res.get("rename_y") == "ok":
    del want[(key + "-r", "cf", "y")]
    want[(key + "-r", "cf", "y2")] = ["keep"]
for k in sorted(set(want) | set(now)):
    if want.get(k) != now.get(k):
        bad.append("%s: the instance holds %r, want %r (results: %s)" % ("/".join(k), now.get(k), want.get(k), res))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
	[ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))
	checks=$((checks + 1))
	# Besides the hook's report: the lines the daemon logs for a failure it cannot return (fs/README.md).
	local allowed='^cellfs: [a-z]*: input/output error'
	checks=$((checks + 1))
	if grep -v "^cellfs: CELLFS_FAULT=$spec " "$tmp/daemon.err" | grep -Ev "$allowed" | grep -q .; then
		fail "[$spec] the daemon wrote to stderr: $(grep -v "^cellfs: CELLFS_FAULT=" "$tmp/daemon.err" | head -c 2000)"
	fi
}

count() {
	sed -n 's/^cellfs: CELLFS_FAULT=.* did not fire: \([0-9]*\) calls$/\1/p' "$tmp/daemon.err"
}

run alloc:1000000000 k0000 || exit 1
calls=$(count)
judge alloc:1000000000 k0000
[ -n "$calls" ] || { fail "no count of calls: $(cat "$tmp/daemon.err")"; finish; exit; }
grep -qv ' ok$' "$tmp/results" && fail "an operation failed with no fault: $(cat "$tmp/results")"
run alloc:1000000000 k9999 unbound || exit 1
unbound=$(count)
checks=$((checks + 1))
if [ -z "$unbound" ] || [ "$unbound" -ge "$calls" ]; then
	fail "no allocation of the module counts: $calls calls with it bound, ${unbound:-?} without"
fi

stride=1
[ "$max_runs" -gt 0 ] && [ "$calls" -gt "$max_runs" ] && stride=$(((calls + max_runs - 1) / max_runs))
fired=0 failed=0
if [ -n "${BT_MOUNT_FAULT_N:-}" ]; then # (to look at one run again: its N, the workload's results)
	for n in $BT_MOUNT_FAULT_N; do
		printf -v key 'k%04d' "$n"
		run "alloc:$n" "$key" && judge "alloc:$n" "$key"
		echo "[alloc:$n] $(tr '\n' ' ' <"$tmp/results")$(grep -v "^cellfs: CELLFS_FAULT=" "$tmp/daemon.err")"
	done
	finish
	exit
fi
for ((n = 1; ; n += stride)); do
	[ "$n" -gt "$calls" ] && n=$((calls + 1))
	printf -v key 'k%04d' "$n"
	run "alloc:$n" "$key" || continue
	judge "alloc:$n" "$key"
	grep -qv ' ok$\| skipped$' "$tmp/results" && failed=$((failed + 1))
	if grep -qx "cellfs: CELLFS_FAULT=alloc:$n fired" "$tmp/daemon.err"; then
		fired=$((fired + 1))
	else
		c=$(count)
		checks=$((checks + 1))
		[ -n "$c" ] && [ "$n" -ge $((calls - 8)) ] || fail "[alloc:$n] did not fire within the $calls calls counted: $(cat "$tmp/daemon.err")"
		break
	fi
	[ "$n" -gt "$calls" ] && break
done
echo "mount: $calls calls ($((calls - unbound)) of them the module's), stride $stride, $fired faults injected, $failed runs with an operation failed"
finish
