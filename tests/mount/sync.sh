#!/bin/bash
# What the daemon syncs to disk (fs/README.md, "Durability"; the power-loss argument is there): the
# daemon runs under strace (fdatasync, fsync, msync, with -y naming each descriptor's file, -ttt entry
# times) while a file is written through the mount.
#  - write + fsync(): the store's data.mdb is fdatasync'd between the fsync() call and its return (LMDB's
#    mdb_env_sync: every committed page and the meta page on disk before fsync returns);
#  - write + close() without fsync: no sync during the close (commits are MDB_NOSYNC: a close survives a
#    crash of the daemon, a power loss only once synced), then one after it (watch.c's 5 s tick; polled up to 60 s);
#    and then the store's anchor (the synced snapshot's meta pages, store/lmdb/anchor.h), after data.mdb;
#  - rename() then fsync() of the directory (write, fsync, rename, fsync(dir), as careful programs do):
#    data.mdb is fdatasync'd within the directory's fsync (the fsyncdir handler);
#  - on a read-only mount, fsync() of a file and of a directory succeed (not EACCES).
# A power loss itself cannot be made here (no VM to cut); see fs/README.md for what is argued instead.
. "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || { echo "FAIL: strace is needed (tools/install-deps installs it)"; exit 1; }
db=$TMP/store
"$CELLCTL" --db "$db" createtable t families=cf || exit 1
# (LeakSanitizer cannot run under ptrace: no leak check for this daemon; the other mount tests make one)
cat >"$TMP/cellfs-strace" <<EOS
#!/bin/sh
ASAN_OPTIONS="\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0" exec strace -f -qq -y -ttt -e trace=fdatasync,fsync,msync -o "$TMP/strace.log" "$CELLFS" "\$@"
EOS
chmod +x "$TMP/cellfs-strace"
CELLFS=$TMP/cellfs-strace mount_store "$db"
mkdir -p "$MNT/t/r/cf"

# syncs T0 T1: the number of syncs of data.mdb whose call began within [T0, T1] (epoch seconds)
syncs() {
	awk -v a="$1" -v b="$2" '$3 ~ /^(fdatasync|fsync|msync)\(.*data\.mdb>/ && $2 >= a && $2 <= b { n++ } END { print n + 0 }' "$TMP/strace.log"
}
# anchored T0 T1: 1 if, within [T0, T1], the anchor was fdatasync'd after a sync of data.mdb
anchored() {
	awk -v a="$1" -v b="$2" '$2 >= a && $2 <= b && $3 ~ /^(fdatasync|fsync)\(.*data\.mdb>/ { d = 1 }
		$2 >= a && $2 <= b && $3 ~ /^fdatasync\(.*\/anchor>/ && d { n = 1 } END { print n + 0 }' "$TMP/strace.log"
}
# write PATH VALUE FSYNC: prints "T0 T1", the times just before the write and just after close()
write() {
	python3 - "$@" <<'PY'
import os, sys, time
path, val, do_sync = sys.argv[1], sys.argv[2].encode(), sys.argv[3] == '1'
t0 = time.time()
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, val)
if do_sync:
    os.fsync(fd)
os.close(fd)
print('%.6f %.6f' % (t0, time.time()))
PY
}

ok=
for attempt in 1 2 3; do # a close that happens to meet the 5 s tick is tried again
	read -r t0 t1 < <(write "$MNT/t/r/cf/a$attempt" "closed $attempt" 0)
	n=$(syncs "$t0" "$t1")
	[ "$n" -eq 0 ] && ok=1 && break
done
[ -n "$ok" ] || fail "every close() synced data.mdb: $n syncs within it"
for _ in $(seq 600); do # the 5 s sync; polled up to 60 s, for a loaded machine
	sleep 0.1
	t2=$(date +%s.%N)
	n=$(syncs "$t1" "$t2")
	[ "$n" -ge 1 ] && break
done
[ "$n" -ge 1 ] || fail "no sync of data.mdb within 60 s after a close: $(cat "$TMP/strace.log")"
echo "sync: close() without fsync: no sync during it, $n in the $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.1f", b - a }') s after"

for i in 1 2 3; do
	read -r t0 t1 < <(write "$MNT/t/r/cf/s$i" "fsynced $i" 1)
	n=$(syncs "$t0" "$t1")
	[ "$n" -ge 1 ] || fail "fsync() #$i returned without a sync of data.mdb: $(tail -5 "$TMP/strace.log")"
	[ "$(anchored "$t0" "$t1")" = 1 ] ||
		fail "fsync() #$i returned without syncing the anchor after data.mdb: $(tail -5 "$TMP/strace.log")"
	[ "$("$CELLCTL" --db "$db" lookup t r columns=cf:s$i | sed -n 4p)" = "    \"fsynced $i\"" ] ||
		fail "cellctl does not read the fsync'd cf:s$i"
done
echo "sync: fsync() #1..3: data.mdb, then the anchor, fdatasync'd before each returned"
read -r t0 t1 < <(python3 - "$MNT/t/r/cf" <<'PY'
import os, sys, time
d = sys.argv[1]
fd = os.open(d + '/tmp', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b'renamed')
os.fsync(fd)
os.close(fd)
os.rename(d + '/tmp', d + '/final')
t0 = time.time()
dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
os.fsync(dfd)
os.close(dfd)
print('%.6f %.6f' % (t0, time.time()))
PY
)
n=$(syncs "$t0" "$t1")
[ "$n" -ge 1 ] || fail "fsync() of a directory after a rename returned without a sync of data.mdb"
echo "sync: fsync() of the directory after a rename: data.mdb fdatasync'd"
grep 'data\.mdb' "$TMP/strace.log" | head -3
unmount_store

mount_store "$db" -o ro
python3 - "$MNT/t/r/cf" <<'PY' || fail "fsync on a read-only mount"
import os, sys
d = sys.argv[1]
fd = os.open(d + '/final', os.O_RDONLY)
os.fsync(fd)
os.fdatasync(fd)
os.close(fd)
fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
os.fsync(fd)
os.close(fd)
PY
unmount_store
exit $status
