#!/bin/bash
# Access: who may reach a store and a mount, and where paths lead (fs/CONTRACT.md, "Bad input" and
# fs/CONTRACT.md, "Mounting"; cellfs.c's comment on allow_other). Checked as root (the mounting user) and as nobody
# (uid 65534, through setpriv):
#   - store directories are created 0700 and their files 0600, by cellctl and by cellfs on the default
#     store, under umask 0 and 022;
#   - without allow_other the kernel refuses nobody everything (EACCES);
#   - with allow_other (default_permissions follows) nobody reads by the modes the mount reports (0755
#     directories, 0644 files, owned by the mounting user) and every write is EACCES; root still writes;
#   - `..` leads back up inside the mount; escaped `/` and `..` (%2F, %2E%2E) stay key bytes inside their
#     table; a rename out of the mount is EXDEV.
# Needs root (setpriv to another user); skips (77) without it. -o ro is in tests/badinput (18 kinds of
# write) and writecheck.py.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP: needs root and setpriv"
	exit 77
fi
chmod 0711 "$TMP" # nobody may pass through to the mountpoint (and no further: the kernel decides)
# the probe and what it imports, where nobody can read them (the source tree may be under root's home)
mkdir -m 0755 "$TMP/probe"
cp "$(dirname "$0")"/{accessprobe,writecheck,mountcheck}.py "$TMP/probe/"
probe=$TMP/probe/accessprobe.py
py=/usr/bin/python3 # not a shim under root's home: nobody runs it too
[ -x $py ] || py=$(command -v python3)

# ---- modes of what the store creates
mode() { stat -c %a "$1"; }
modes() { # modes WHO DIR...: each DIR 700, its data.mdb and lock.mdb 600
	local who=$1 p f
	shift
	for p in "$@"; do
		[ "$(mode "$p")" = 700 ] || fail "$who: $p is $(mode "$p"), want 700"
	done
	for f in data.mdb lock.mdb; do
		[ "$(mode "$p/$f")" = 600 ] || fail "$who: $p/$f is $(mode "$p/$f"), want 600"
	done
}
for um in 0 022; do
	d=$TMP/um$um/sub/store
	(umask $um && "$CELLCTL" --db "$d" createtable t families=cf >/dev/null) || fail "cellctl createtable (umask $um)"
	modes "umask $um, cellctl" "$TMP/um$um/sub" "$d"
	home=$TMP/home$um # cellfs on the default store creates it on first use
	mkdir "$home"
	(umask $um && exec env -u CELLFS_DB -u XDG_DATA_HOME HOME="$home" "$CELLFS" "$MNT" -f "${transport_opts[@]}") 2>"$TMP/daemon.err" &
	DAEMON_PID=$!
	for _ in $(seq 6000); do mountpoint -q "$MNT" && break; sleep 0.01; done
	mountpoint -q "$MNT" || { fail "cellfs on the default store did not mount: $(cat "$TMP/daemon.err")"; continue; }
	unmount_store
	s=$home/.local/share/cellfs/default
	modes "umask $um, cellfs" "$home/.local/share/cellfs" "$s"
done

# ---- the mount: owner only, unless allow_other
db=$TMP/db
"$CELLCTL" --db "$db" createtable t families=cf >/dev/null || exit 1
"$CELLCTL" --db "$db" set t r1 cf:q=v@1426535612156000 >/dev/null || exit 1
"$CELLCTL" --db "$db" createtable empty families=cf >/dev/null || exit 1
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

same() { # same WHAT: the store is as dumped in $TMP/before
	"$CELLCTL" --db "$db" dump >"$TMP/after" && cmp -s "$TMP/before" "$TMP/after" || fail "$1: the store changed"
}
"$CELLCTL" --db "$db" dump >"$TMP/before"
mount_store "$db"
as_nobody $py "$probe" private "$MNT" || fail "a mount without allow_other, as nobody"
same "nobody, no allow_other"
$py "$probe" owner "$MNT" "$TMP" "$CELLCTL" "$db" || fail "the mounting user"
unmount_store

mount_store "$db" -o allow_other
"$CELLCTL" --db "$db" dump >"$TMP/before"
as_nobody $py "$probe" other "$MNT" || fail "a mount with allow_other, as nobody"
same "nobody, allow_other"
$py "$probe" root-writes "$MNT" || fail "a mount with allow_other, as root"
unmount_store
exit $status
