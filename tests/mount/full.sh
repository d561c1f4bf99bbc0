#!/bin/bash
# A full store through the mount (the contract, fs/CONTRACT.md, "Bad input": the store full is
# ENOSPC, the value before intact). The store lives on a 4 MiB tmpfs (FULL_FS=ext4: an 8 MiB ext4 image on a loop device); files of 64 KiB of random bytes are written until
# close() fails. Checked: the error is ENOSPC (from close(), where commit errors go), the refused new
# file is not there (the release does not retry a write-back whose error close() returned), every file
# whose close() succeeded reads back exactly, an overwrite refused for want of space leaves the old value, the
# daemon keeps serving and logs nothing for errors it returned, and after deleting files the store takes
# writes again. Needs root (mount -t tmpfs); skips (77) without it.
. "$(dirname "$0")/lib.sh"
small=$TMP/small
mkdir "$small"
if [ "${FULL_FS:-tmpfs}" = ext4 ]; then
	# On a disk file system the store pwrite()s its commits: the full disk is LMDB's short write
	if ! { truncate -s 8m "$TMP/ext4.img" && mkfs.ext4 -q -F -m 0 "$TMP/ext4.img" &&
		mount -o loop "$TMP/ext4.img" "$small"; } 2>/dev/null; then
		echo "SKIP: cannot mount a small ext4 image (not root? no loop device?)"
		exit 77
	fi
elif ! mount -t tmpfs -o size=4m cellfs-full "$small" 2>/dev/null; then
	echo "SKIP: cannot mount a small tmpfs (not root?)"
	exit 77
fi
trap 'st=$?; umount -l "$small" 2>/dev/null; (exit $st); cleanup' EXIT

db=$small/store
"$CELLCTL" --db "$db" createtable t families=cf >/dev/null || exit 1
mount_store "$db"
python3 - "$MNT/t" <<'EOF' || fail "ENOSPC through the mount"
import errno, os, sys
t = sys.argv[1]
os.makedirs(t + "/r/cf")
done = {}            # name -> bytes whose close() returned 0
err = None
for i in range(1000):
    name = "%s/r/cf/q%04d" % (t, i)
    data = os.urandom(65536)
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
    finally:
        try:
            os.close(fd)
            done[name] = data
        except OSError as e:
            err = e
    if err:
        break
if err is None:
    sys.exit("wrote %d x 64 KiB into a 4 MiB store without an error" % len(done))
if err.errno != errno.ENOSPC:
    sys.exit("close() failed with %s, want ENOSPC" % err)
if len(done) < 10:
    sys.exit("only %d files fitted before ENOSPC" % len(done))
failed = name
# the refused file is not there (it was new): not later written back by the release either
import time
time.sleep(0.3)  # (RELEASE is asynchronous)
if os.path.exists(failed):
    sys.exit("the refused new file %s is there (%d bytes)" % (failed, os.path.getsize(failed)))
if os.path.basename(failed) in os.listdir(os.path.dirname(failed)):
    sys.exit("the refused new file %s is listed" % failed)
# an overwrite that does not fit leaves the old value
victim = sorted(done)[0]
fd = os.open(victim, os.O_WRONLY | os.O_TRUNC)
os.write(fd, os.urandom(65536 * 4))
try:
    os.close(fd)
    sys.exit("an overwrite of 256 KiB into the full store succeeded")
except OSError as e:
    if e.errno != errno.ENOSPC:
        sys.exit("the overwrite failed with %s, want ENOSPC" % e)
for n, d in done.items():
    with open(n, "rb") as f:
        got = f.read()
    if got != d:
        sys.exit("%s: %d bytes read back, want the %d written" % (n, len(got), len(d)))
# deleting makes room; new writes fit again
for n in sorted(done)[: len(done) // 2]:
    os.unlink(n)
    del done[n]
fresh = t + "/r/cf/after"
with open(fresh, "wb") as f:
    f.write(b"x" * 65536)
with open(fresh, "rb") as f:
    if f.read() != b"x" * 65536:
        sys.exit("the write after deleting does not read back")
for n, d in done.items():
    with open(n, "rb") as f:
        if f.read() != d:
            sys.exit("%s changed after the deletions" % n)
print("ENOSPC after %d files of 64 KiB; the rest intact; writes resume after deletions" % (len(done) * 2))
EOF
unmount_store

# The store as left is whole: every cell readable by cellctl, the refused values nowhere.
"$CELLCTL" --db "$db" count t >"$TMP/count" 2>&1 || fail "cellctl count on the store left full: $(cat "$TMP/count")"
"$CELLCTL" --db "$db" read t >/dev/null 2>"$TMP/read.err" || fail "cellctl read: $(cat "$TMP/read.err")"
exit $status
