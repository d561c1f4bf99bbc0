#!/bin/bash
# defer.sh CELLCTL CELLFS — the mount's unlinks on Bigtable are queued and sent in batches (CS_TXN_DEFER,
# store/bigtable/bt_defer.c): rm -rf of a 300-row directory makes far fewer mutation calls than one per
# file; fsync of a directory sends the queue (another process sees every row gone); `rm f; echo x > f`
# leaves x; a refused MutateRows makes the next request on the table EIO with the queue's words in the
# log (the unlink's own, when it had to send the queue itself), and the file is still there; unmounting
# right after an unlink sends it. Counts, not times.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
[ -n "$cellfs" ] || { echo "SKIP: no cellfs given"; exit 77; }
[ -e /dev/fuse ] || { echo "SKIP: no /dev/fuse"; exit 77; }

counter() { awk -v n="$2" '$1 == n { v = $2 } END { print (v == "" ? 0 : v) }' "$1"; }

# mount_fg STORE MNT LOG: cellfs in the foreground, in the background (its pid in $fg_pid, its log LOG),
# once the mount shows table t.
mount_fg() {
	mkdir -p "$2"
	"$cellfs" "$1" "$2" -f 2>"$3" &
	fg_pid=$!
	mounts+=("$2")
	for _ in $(seq 600); do
		[ -d "$2/t" ] && return 0
		kill -0 "$fg_pid" 2>/dev/null || break
		sleep 0.1
	done
	fail "mounting $1 on $2: $(cat "$3")"
	return 1
}
# unmount_fg MNT: unmount, and wait for the daemon to end (it sends what is queued before).
unmount_fg() {
	fusermount3 -u "$1" || fail "unmounting $1"
	for _ in $(seq 600); do kill -0 "$fg_pid" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$fg_pid" 2>/dev/null || fail "the daemon of $1 did not end after its unmount"
	wait "$fg_pid" 2>/dev/null
}
fsync_dir() { python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); os.close(fd)' "$1"; }

rows=300
check "createtable" ccb createtable t families=f
{
	printf ',f\n,q\n'
	for i in $(seq 1 $rows); do printf 'd#%04d,v%d\n' "$i" "$i"; done
	printf 'e#1,old\ng#1,keep\ng#2,other\nu#1,gone\n'
} >"$tmp/t.csv"
check "import" ccb import t "$tmp/t.csv"

mnt=$tmp/mnt
mount_fg "$bt" "$mnt" "$tmp/fs.log" || { finish; exit; }
stats() { getfattr --only-values -n user.cellfs.stats "$mnt" >"$1" 2>/dev/null || fail "reading user.cellfs.stats"; }

# ---- rm -rf of 300 rows: batches, not a call per file
[ "$(ls "$mnt/t/d" | wc -l)" = $rows ] || fail "the directory does not hold $rows rows: $(ls "$mnt/t/d" | wc -l)"
stats "$tmp/s0"
check "rm -rf of $rows rows" rm -rf "$mnt/t/d"
check "fsync of the table's directory" fsync_dir "$mnt/t"
stats "$tmp/s1" # (the fsync sent what was still queued)
for m in MutateRow MutateRows ReadRows; do
	eval "d_$m=\$((\$(counter "$tmp/s1" bigtable.calls.$m) - \$(counter "$tmp/s0" bigtable.calls.$m)))"
done
echo "rm -rf of $rows rows: MutateRow $d_MutateRow, MutateRows $d_MutateRows, ReadRows $d_ReadRows"
# (one MutateRow per file before; a batch goes out 100 ms after its first entry, so a slow machine
# makes more of them: at most one per two files is still not one per file)
[ "$d_MutateRow" -le 10 ] || fail "rm -rf of $rows rows made $d_MutateRow MutateRow calls (one per file?)"
[ $((d_MutateRow + d_MutateRows)) -le $((rows / 2)) ] ||
	fail "rm -rf of $rows rows made $d_MutateRow MutateRow and $d_MutateRows MutateRows calls"
[ $((d_MutateRow + d_MutateRows)) -ge 1 ] || fail "rm -rf of $rows rows and an fsync made no mutation call"
check "count after the fsync" bash -c '"$0" --db "$1" count t prefix=d >"$2"' "$cellctl" "$bt" "$tmp/count"
[ "$(cat "$tmp/count")" = 0 ] || fail "after rm -rf and fsync, cellctl counts $(cat "$tmp/count") rows under d"
[ ! -e "$mnt/t/d" ] || fail "the mount still shows t/d"

# ---- rm f; echo x > f: the write comes after the delete
f=$mnt/t/e/1/f/q
check "cat e/1" cat "$f"
check "rm then write" bash -c 'rm "$0" && echo x >"$0"' "$f"
[ "$(cat "$f" 2>&1)" = x ] || fail "after rm f; echo x > f the mount reads: $(cat "$f" 2>&1)"
check "fsync after the write" fsync_dir "$mnt/t"
check "lookup e#1" bash -c '"$0" --db "$1" lookup t e#1 >"$2"' "$cellctl" "$bt" "$tmp/e1"
grep -q '"x\\n"' "$tmp/e1" || fail "after rm f; echo x > f cellctl reads: $(cat "$tmp/e1")"

# ---- unmounting right after an unlink sends it
check "rm u/1" rm "$mnt/t/u/1/f/q"
unmount_fg "$mnt"
check "lookup u#1" bash -c '"$0" --db "$1" lookup t u#1 >"$2"' "$cellctl" "$bt" "$tmp/u1"
! grep -q gone "$tmp/u1" || fail "the unlink made just before unmounting is not in the instance: $(cat "$tmp/u1")"

# ---- a refused MutateRows: the next request on the table is EIO, logged; the file is still there
python3 "$here/callproxy.py" "$BIGTABLE_EMULATOR_HOST" 1 MutateRows >"$tmp/proxy.addr" 2>"$tmp/proxy.log" &
proxy=$!
for _ in $(seq 100); do [ -s "$tmp/proxy.addr" ] && break; sleep 0.1; done
mnt2=$tmp/mnt2
BIGTABLE_EMULATOR_HOST=$(cat "$tmp/proxy.addr") mount_fg "$bt" "$mnt2" "$tmp/fs2.log" || { kill $proxy; finish; exit; }
g=$mnt2/t/g/1/f/q
[ "$(cat "$g" 2>&1)" = keep ] || fail "g/1 reads $(cat "$g" 2>&1)"
# The unlink is queued; the send fails (after its retries) and the error is the next request's on the
# table: the unlink's own, when a read it makes must see the row and sends the queue itself (then rm
# fails), else the next one's, once the send has begun (its first attempt is counted).
if rm "$g" 2>"$tmp/rm.err"; then
	for _ in $(seq 600); do
		getfattr --only-values -n user.cellfs.stats "$mnt2" >"$tmp/s2" 2>/dev/null
		[ "$(counter "$tmp/s2" bigtable.calls.MutateRows)" -ge 1 ] && break
		sleep 0.1
	done
	[ "$(counter "$tmp/s2" bigtable.calls.MutateRows)" -ge 1 ] || fail "the queue was never sent: $(cat "$tmp/s2")"
	if cat "$mnt2/t/g/2/f/q" >"$tmp/g2.out" 2>"$tmp/g2.err"; then
		fail "the request after a failed queue succeeded: $(cat "$tmp/g2.out")"
	fi
	grep -q "Input/output error" "$tmp/g2.err" || fail "the request after a failed queue: $(cat "$tmp/g2.err")"
else
	grep -q "Input/output error" "$tmp/rm.err" || fail "rm of g/1 failed otherwise: $(cat "$tmp/rm.err")"
fi
grep -q "input/output error: 1 queued deletes of table t failed: 127.0.0.1:[0-9]*: UNAVAILABLE" "$tmp/fs2.log" ||
	fail "the daemon's log does not say what failed: $(cat "$tmp/fs2.log")"
grep -q refused "$tmp/proxy.log" || fail "the proxy refused nothing"
ok=
for _ in $(seq 100); do # (the kernel may hold the name as absent for a second)
	[ "$(cat "$g" 2>/dev/null)" = keep ] && ok=1 && break
	sleep 0.1
done
[ -n "$ok" ] || fail "g/1, whose delete failed, does not read back: $(cat "$g" 2>&1)"
check "g/2 reads after the error was reported" cat "$mnt2/t/g/2/f/q"
check "lookup g#1" bash -c '"$0" --db "$1" lookup t g#1 >"$2"' "$cellctl" "$bt" "$tmp/g1"
grep -q keep "$tmp/g1" || fail "g#1 is not in the instance: $(cat "$tmp/g1")"
unmount_fg "$mnt2"
kill $proxy 2>/dev/null
wait $proxy 2>/dev/null

finish
