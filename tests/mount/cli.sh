#!/bin/bash
# The daemon's command line: bad invocations fail with status 1 and exactly one message (plus the usage
# line where the arguments are wrong), mounting nothing; -o ro; going to the background; the default
# store ($CELLFS_DB); mount.fuse3's calling convention, as an /etc/fstab line of type fuse.cellfs uses it,
# and fstab's options (_netdev, noauto, x-systemd.*) ignored.
. "$(dirname "$0")/lib.sh"
store=$TMP/store
"$CELLCTL" --db "$store" createtable t families=cf || exit 1
"$CELLCTL" --db "$store" set t r cf:q=v@1426535612156000 || exit 1
mkdir "$TMP/empty" "$TMP/bin"
touch "$TMP/file"
real=$(realpath "$TMP")


usage="usage: $CELLFS [STORE] MOUNTPOINT [-o options] [-f] [-d]"
expect_fail "cellfs: no mountpoint given
$usage" "$CELLFS"
expect_fail "cellfs: no mountpoint given
$usage" "$CELLFS" -f -o ro
expect_fail "cellfs: too many arguments: \"c\"
$usage" "$CELLFS" a b c
# A store is made only where there is none and nothing else: a new path in a directory that exists, or
# an empty directory; never by a read-only mount, never when the mount point is wrong.
mkdir "$TMP/other"
echo x >"$TMP/other/notes"
expect_fail "cellfs: \"$real/other\" is not a cellfs store (it holds other files)" "$CELLFS" "$TMP/other" "$MNT"
[ "$(ls -A "$TMP/other")" = notes ] || fail "cellfs OTHER MNT wrote into a directory that is not a store: $(ls -A "$TMP/other")"
expect_fail "cellfs: cannot open store \"$real/file\": Not a directory" "$CELLFS" "$TMP/file" "$MNT"
expect_fail "cellfs: no store at \"$TMP/nodir/s\", and no directory to make one in: No such file or directory" \
	"$CELLFS" "$TMP/nodir/s" "$MNT"
expect_fail "cellfs: no store at \"$real/nostore\" (a read-only mount cannot create one)" "$CELLFS" "$TMP/nostore" "$MNT" -o ro
expect_fail "cellfs: no store at \"$real/empty\" (a read-only mount cannot create one)" "$CELLFS" "$TMP/empty" "$MNT" -f -o ro
expect_fail "fuse: bad mount point \`$TMP/nodir': No such file or directory" "$CELLFS" "$TMP/nostore" "$TMP/nodir"
# A store name like a URL that is not one (one slash) is refused, not made a directory of that name.
mkdir -p "$TMP/bigtable:/demo"
expect_fail "cellfs: cannot open store \"bigtable:/demo/x\": a Bigtable store is named bigtable://PROJECT/INSTANCE (start the path with ./ to name a directory so)" \
	bash -c 'cd "$1" && exec "$2" bigtable:/demo/x "$3"' _ "$TMP" "$(realpath "$CELLFS")" "$MNT"
[ -z "$(ls -A "$TMP/bigtable:/demo")" ] || fail "cellfs bigtable:/demo/x MNT made $(ls -A "$TMP/bigtable:/demo")"
rm -r "$TMP/bigtable:"
[ ! -e "$TMP/nostore" ] && [ ! -e "$TMP/nodir" ] && [ -z "$(ls -A "$TMP/empty")" ] ||
	fail "a refused mount made something: $(ls -d "$TMP/nostore" "$TMP/nodir" "$TMP/empty"/* 2>&1)"
# new_store ARG PATH: cellfs ARG MNT makes a store at PATH (saying so in one line), empty and writable;
# mounted again, it says nothing.
new_store() {
	mount_store "$1"
	strip_transport wait
	printf 'cellfs: created a new store at "%s"\n' "$2" | cmp -s - "$TMP/daemon.err" ||
		fail "cellfs $1 MNT: stderr $(cat "$TMP/daemon.err"), want one line: created a new store at \"$2\""
	: >"$TMP/daemon.err"
	[ -z "$(ls -A "$MNT")" ] || fail "cellfs $1 MNT: a new store is not empty: $(ls -A "$MNT")"
	mkdir "$MNT/t" && mkdir -p "$MNT/t/r/cf" && echo v >"$MNT/t/r/cf/q" || fail "cellfs $1 MNT: cannot write"
	unmount_store
	"$CELLCTL" --db "$2" read t | grep -qx '    "v\\n"' || fail "cellfs $1 MNT: the store holds: $("$CELLCTL" --db "$2" read t 2>&1)"
	mount_store "$1"
	[ "$(cat "$MNT/t/r/cf/q" 2>&1)" = v ] || fail "cellfs $1 MNT, again: t/r/cf/q: $(cat "$MNT/t/r/cf/q" 2>&1)"
	unmount_store
}
new_store "$TMP/nostore" "$real/nostore"
new_store "$TMP/empty" "$real/empty"
cd "$TMP" || exit 1
new_store newstore/ "$real/newstore"
cd - >/dev/null || exit 1
expect_fail "fuse: unknown option(s): \`-o bogus'" "$CELLFS" "$store" "$MNT" -o bogus
expect_fail "fuse: unknown option(s): \`-o bogus=1'" "$CELLFS" "$store" "$MNT" -f -o ro,bogus=1
expect_fail "fuse: unknown option(s): \`-x'" "$CELLFS" "$store" "$MNT" -x
expect_fail "fuse: bad mount point \`$TMP/nodir': No such file or directory" "$CELLFS" "$store" "$TMP/nodir"

"$CELLFS" --help >"$TMP/out" 2>"$TMP/err" || fail "cellfs --help: exit status $?"
head -n1 "$TMP/out" | grep -qx "usage: $CELLFS \[STORE\] MOUNTPOINT \[-o options\] \[-f\] \[-d\] \[-s\]" ||
	fail "cellfs --help: $(head -n1 "$TMP/out")"
"$CELLFS" --version >"$TMP/out" 2>"$TMP/err" || fail "cellfs --version: exit status $?"
grep -qx 'cellfs [0-9.]* (libfuse [0-9.]*)' "$TMP/out" && [ ! -s "$TMP/err" ] || fail "cellfs --version: $(cat "$TMP/out" "$TMP/err")"

# options OPTS: the mount's options in /proc/mounts; type and source checked on the way.
mount_line() {
	awk -v m="$MNT" '$2 == m' /proc/mounts
}
check_mounted() { # check_mounted HOW SOURCE ro|rw
	local line
	line=$(mount_line)
	# shellcheck disable=SC2086 # (split into fields)
	set -- "$1" "$2" "$3" $line
	[ "$6" = fuse.cellfs ] && [ "$4" = "$2" ] && [ "${7%%,*}" = "$3" ] ||
		fail "$1: /proc/mounts says: $line; want $2 $MNT fuse.cellfs $3,..."
	[ "$(cat "$MNT/t/r/cf/q" 2>&1)" = v ] || fail "$1: cat t/r/cf/q: $(cat "$MNT/t/r/cf/q" 2>&1)"
}
unmount_bg() { # unmount a daemon that went to the background; it must go away
	local pids
	pids=$(daemon_pids)
	[ -n "$pids" ] || fail "$1: no cellfs process serves $MNT"
	fusermount3 -u "$MNT" || fail "$1: fusermount3 -u failed"
	for _ in $(seq 6000); do
		[ -z "$(daemon_pids)" ] && return
		sleep 0.01
	done
	fail "$1: cellfs still runs 5s after fusermount3 -u"
}

# -o ro, in the foreground
mount_store "$store" -o ro
check_mounted "-o ro" "$real/store" ro
for op in "touch $MNT/t/r/cf/new" "mkdir $MNT/t/d"; do
	$op 2>"$TMP/err" && fail "$op succeeded on a read-only mount"
	grep -q 'Read-only file system' "$TMP/err" || fail "$op: $(cat "$TMP/err")"
done
unmount_store

# to the background (no -f): exits 0 once mounted, silently
"$CELLFS" "$store" "$MNT" >"$TMP/out" 2>"$TMP/err" || fail "cellfs STORE MNT: exit status $?"
[ ! -s "$TMP/out" ] && [ ! -s "$TMP/err" ] || fail "cellfs STORE MNT printed: $(cat "$TMP/out" "$TMP/err")"
check_mounted "cellfs STORE MNT" "$real/store" rw
unmount_bg "cellfs STORE MNT"

# /etc/fstab's options for mount(8) and systemd, given to cellfs by hand: ignored, not refused
fstab_opts=_netdev,noauto,nofail,defaults,x-systemd.automount,x-systemd.mount-timeout=30,comment=x
"$CELLFS" "$store" "$MNT" -o "$fstab_opts" >"$TMP/out" 2>"$TMP/err" || fail "cellfs -o $fstab_opts: exit status $?"
[ ! -s "$TMP/out" ] && [ ! -s "$TMP/err" ] || fail "cellfs -o $fstab_opts printed: $(cat "$TMP/out" "$TMP/err")"
check_mounted "cellfs -o $fstab_opts" "$real/store" rw
unmount_bg "cellfs -o $fstab_opts"

# the default store: $CELLFS_DB, created on first use; cellctl's writes show
CELLFS_DB=$TMP/default "$CELLFS" "$MNT" -f "${transport_opts[@]}" 2>"$TMP/daemon.err" &
DAEMON_PID=$!
for _ in $(seq 6000); do mountpoint -q "$MNT" && break; sleep 0.01; done
if mountpoint -q "$MNT"; then
	[ -z "$(ls -A "$MNT")" ] || fail "a new default store is not empty: $(ls -A "$MNT")"
	CELLFS_DB=$TMP/default "$CELLCTL" createtable fresh || fail "cellctl createtable in the default store"
	for _ in $(seq 3000); do [ -d "$MNT/fresh" ] && break; sleep 0.01; done
	[ -d "$MNT/fresh" ] || fail "a table created with cellctl in \$CELLFS_DB does not show"
	unmount_store
else
	fail "cellfs MNT with CELLFS_DB set did not mount: $(cat "$TMP/daemon.err")"
fi

# mount.fuse3's convention: `cellfs STORE MNT -o OPTS`, cellfs found on PATH
ln -s "$CELLFS" "$TMP/bin/cellfs"
PATH=$TMP/bin:$PATH /sbin/mount.fuse3 "$store" "$MNT" -o ro,dev,suid -t fuse.cellfs 2>"$TMP/err" ||
	fail "mount.fuse3 STORE MNT -t fuse.cellfs: exit status $?: $(cat "$TMP/err")"
check_mounted "mount.fuse3 -t fuse.cellfs -o ro" "$real/store" ro
unmount_bg "mount.fuse3"

# mount(8) itself. It runs helpers with a fixed PATH, so name the program in the source (fuse's
# PROGRAM#SOURCE form), and use plain `-t fuse.cellfs` only if that PATH finds this very cellfs.
mount -t fuse "$TMP/bin/cellfs#$store" "$MNT" 2>"$TMP/err" || fail "mount -t fuse cellfs#STORE: exit status $?: $(cat "$TMP/err")"
check_mounted "mount -t fuse cellfs#STORE" "$real/store" rw
unmount_bg "mount -t fuse"
# an /etc/fstab line (a private fstab file through mount -T), with the options such lines carry
printf '%s %s fuse %s,ro 0 0\n' "$TMP/bin/cellfs#$store" "$MNT" "$fstab_opts" >"$TMP/fstab"
mount -T "$TMP/fstab" "$MNT" 2>"$TMP/err" || fail "mount -T FSTAB MNT: exit status $?: $(cat "$TMP/err")"
check_mounted "mount -T FSTAB MNT" "$real/store" ro
unmount_bg "mount -T FSTAB"
if [ "$(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin command -v cellfs)" -ef "$CELLFS" ]; then
	mount -t fuse.cellfs -o ro "$store" "$MNT" 2>"$TMP/err" || fail "mount -t fuse.cellfs: exit status $?: $(cat "$TMP/err")"
	check_mounted "mount -t fuse.cellfs -o ro" "$real/store" ro
	unmount_bg "mount -t fuse.cellfs"
else
	echo "note: cellfs is not installed on mount(8)'s PATH; mount -t fuse.cellfs checked through mount.fuse3 only"
fi
# A store file left at the map's size (1 TiB, sparse: an opener killed before cutting it back) is cut
# back by the daemon's open, read-only or not.
for opts in "-o ro" ""; do
	truncate -s 1T "$store/data.mdb"
	# shellcheck disable=SC2086 # (the options' words)
	mount_store "$store" $opts
	size=$(stat -c %s "$store/data.mdb")
	[ "$size" -le $((1 << 20)) ] || fail "cellfs STORE MNT $opts left the file at $size bytes"
	[ "$(cat "$MNT/t/r/cf/q" 2>&1)" = v ] || fail "cellfs STORE MNT $opts after the cut: t/r/cf/q: $(cat "$MNT/t/r/cf/q" 2>&1)"
	unmount_store
done
"$CELLCTL" --db "$store" verify >/dev/null || fail "the store cut back by the daemon does not verify"
exit $status
