#!/bin/bash
# Backups with standard tools (fs/CONTRACT.md, "Backups with standard tools"): table bk of `gen_awkward STORE
# backup` (escaped names, empty segments, segments equal to family names, long names that still fit,
# 50 versions in one second, whole-second versions, 3 MiB values, empty values, five families with GC
# policies that keep every version) is backed up from the mount with cp -a, tar --format=pax,
# tar --format=gnu and rsync -a; each copy is checked against the tree the mount must show; each is then
# restored into an empty mount of a fresh store and the store compared with the original cell for cell
# (row, family, qualifier, timestamp, value) and family for family (GC policy), by dump_store.
#   cp -a, tar pax, rsync -a: exact, the tool exits 0 and prints nothing.
#   tar pax again, the archive rebuilt in a shuffled member order (BACKUP_SEED): exact.
#   cp -a of the table directory onto the top of the mount (cp makes the table): exact.
#   tar gnu (whole seconds): what happened is listed; only the newest cells' timestamps may differ, and
#   only by the rounding to seconds; anything else must come with an error from the tool.
# Table short (names only a short form gives: 4,000-byte key segments, 16 KiB qualifiers), whose whole
# names the attribute user.cellfs.name carries: cp -a, tar --xattrs --format=pax (also shuffled) and rsync -aX
# back it up and restore it exactly; tar without --xattrs fails on each file so named, and rows below a directory so named
# come back under the bytes of its short form (mode noname).
. "$(dirname "$0")/lib.sh"
: "${GEN_AWKWARD:?}" "${DUMP_STORE:?}"
SEED=${BACKUP_SEED:-$RANDOM}
echo "shuffle seed: BACKUP_SEED=$SEED"

# Copies of table short are kept where a file may hold a 16 KiB attribute (ext4 keeps about 4 KiB per file,
# and cp -a drops what does not fit without a word): TMP if it can, else /dev/shm (tmpfs).
XTMP=
for d in "$TMP" /dev/shm; do
	x=$(mktemp -d "$d/cellfs-xattr.XXXXXX" 2>/dev/null) || continue
	if setfattr -n user.probe -v "$(head -c 16400 /dev/zero | tr '\0' q)" "$x" 2>/dev/null; then
		XTMP=$x
		break
	fi
	rm -rf "$x"
done
if [ -z "$XTMP" ]; then
	echo "SKIP: neither $TMP nor /dev/shm keeps 16 KiB extended attributes"
	exit 77
fi
# shellcheck disable=SC2154 # (xrc: set in the trap)
[ "$XTMP" = "${XTMP#"$TMP"}" ] && trap 'xrc=$?; rm -rf "$XTMP"; (exit $xrc); cleanup' EXIT

"$GEN_AWKWARD" "$TMP/src" backup || exit 1
mkdir "$TMP/dump.src"
"$DUMP_STORE" "$TMP/src" "$TMP/dump.src" || exit 1

# tool LABEL CMD...: run CMD; a backup must exit 0 and print nothing on stderr.
tool() {
	local label=$1 rc
	shift
	"$@" 2>"$TMP/$label.err"
	rc=$?
	if [ $rc -ne 0 ] || [ -s "$TMP/$label.err" ]; then
		fail "$label: $* exited $rc: $(head -c 1500 "$TMP/$label.err")"
	fi
}

# ---- back up, reading through the mount ----
mount_store "$TMP/src"
mkdir "$TMP/cp" "$TMP/rsync" "$XTMP/cp" "$XTMP/rsync"
tool backup-cp-bk cp -a "$MNT/bk" "$TMP/cp/"
tool backup-pax-bk tar --format=pax -cf "$TMP/bk.pax" -C "$MNT/bk" .
tool backup-gnu-bk tar --format=gnu -cf "$TMP/bk.gnu" -C "$MNT/bk" .
tool backup-rsync-bk rsync -a "$MNT/bk/" "$TMP/rsync/bk/"
tool backup-cp-short cp -a "$MNT/short" "$XTMP/cp/"
tool backup-pax-short tar --xattrs --format=pax -cf "$TMP/short.pax" -C "$MNT/short" .
tool backup-pax-noxattrs-short tar --format=pax -cf "$TMP/short-noxattrs.pax" -C "$MNT/short" .
tool backup-rsync-short rsync -aX "$MNT/short/" "$XTMP/rsync/short/"
for t in bk short; do
	# the schema, as a user keeps it: the families' GC policies (attribute=0xHEX lines)
	getfattr --absolute-names -d -e hex -m '^user\.cellfs\.family\.' "$MNT/$t" | sed -n 's/^user/user/p' \
		>"$TMP/$t.schema" || fail "getfattr $MNT/$t"
done
unmount_store
check copy "$TMP/dump.src" bk dir "$TMP/cp/bk"
check copy "$TMP/dump.src" bk dir "$TMP/rsync/bk"
check copy "$TMP/dump.src" bk pax "$TMP/bk.pax"
check copy "$TMP/dump.src" bk gnu "$TMP/bk.gnu"
check copy "$TMP/dump.src" short dir "$XTMP/cp/short"
check copy "$TMP/dump.src" short dir "$XTMP/rsync/short"
check copy "$TMP/dump.src" short pax "$TMP/short.pax"

# The pax archive again, its members in a shuffled order (tar extracts in archive order whatever -T
# says, so the archive itself is rebuilt: extracted to disk, then archived from a shuffled list).
mkdir "$TMP/pax.x"
tar -xf "$TMP/bk.pax" -C "$TMP/pax.x" --warning=no-timestamp || fail "extracting bk.pax to disk"
(cd "$TMP/pax.x" && find . -mindepth 1 -print0 | shuf -z --random-source=<(yes "$SEED") >"$TMP/shuffled.list")
tar --format=pax -cf "$TMP/bk-shuffled.pax" -C "$TMP/pax.x" --no-recursion --null --no-unquote \
	-T "$TMP/shuffled.list" || fail "tar of the shuffled list"
echo "shuffled archive, first members: $(tar -tf "$TMP/bk-shuffled.pax" | head -4 | tr '\n' ' ' | cut -c1-300)"
# and table short's, attributes kept (so extracted where they fit)
mkdir "$XTMP/pax.x"
tar --xattrs -xf "$TMP/short.pax" -C "$XTMP/pax.x" --warning=no-timestamp || fail "extracting short.pax to disk"
(cd "$XTMP/pax.x" && find . -mindepth 1 -print0 | shuf -z --random-source=<(yes "$SEED") >"$TMP/short-shuffled.list")
tar --xattrs --format=pax -cf "$TMP/short-shuffled.pax" -C "$XTMP/pax.x" --no-recursion --null --no-unquote \
	-T "$TMP/short-shuffled.list" || fail "tar of the shuffled list of short"

# ---- restore ----
# restore LABEL TABLE HOW MODE CMD: a fresh store holding nothing, mounted; unless HOW is "bycopy", the
# table made with mkdir at the top of the mount; CMD (a string run by bash with TMP, and DST the table's
# directory, in its environment) restores into it; if HOW is "setfattr", the families' GC policies are
# then set from the schema kept at backup; unmount (the daemon must exit 0, silent); dump the store;
# compare (mountcheck.py restored MODE).
restore() {
	local label=$1 table=$2 how=$3 mode=$4 cmd=$5 rc name val
	local store=$TMP/r.$label
	{ "$CELLCTL" --db "$store" createtable scratch && "$CELLCTL" --db "$store" deletetable scratch; } || exit 1
	mount_store "$store"
	DST=$MNT/$table
	if [ "$how" != bycopy ]; then
		mkdir "$DST" || fail "$label: mkdir $DST"
	fi
	TMP=$TMP XTMP=$XTMP DST=$DST bash -c "$cmd" 2>"$TMP/$label.err"
	rc=$?
	if [ "$how" = setfattr ]; then
		while IFS='=' read -r name val; do
			setfattr -n "$name" -v "$val" "$DST" || fail "$label: setfattr -n $name -v $val $DST"
		done <"$TMP/$table.schema"
	fi
	unmount_store
	mkdir "$TMP/dump.$label"
	"$DUMP_STORE" "$store" "$TMP/dump.$label" || fail "$label: dump_store"
	echo "== $label: $cmd (exit $rc)"
	check restored "$label" "$TMP/dump.src" "$TMP/dump.$label" "$table" "$mode" "$rc" "$TMP/$label.err"
}

# shellcheck disable=SC2016 # (the commands are expanded by the restoring bash)
{
X='--warning=no-timestamp' # (tar's own warning for the far-future timestamps)
restore cp bk mkdir exact 'cp -a "$TMP/cp/bk/." "$DST/"'
restore pax bk setfattr exact 'tar -xf "$TMP/bk.pax" -C "$DST" '"$X"
restore pax-shuffled bk setfattr exact 'tar -xf "$TMP/bk-shuffled.pax" -C "$DST" '"$X"
restore rsync bk setfattr exact 'rsync -a "$TMP/rsync/bk/" "$DST/"'
restore cp-table bk bycopy exact 'cp -a "$TMP/cp/bk" "$(dirname "$DST")/"'
restore gnu bk setfattr seconds 'tar -xf "$TMP/bk.gnu" -C "$DST" '"$X"
restore short-cp short mkdir exact 'cp -a "$XTMP/cp/short/." "$DST/"'
restore short-pax short setfattr exact 'tar --xattrs -xf "$TMP/short.pax" -C "$DST" '"$X"
restore short-pax-shuffled short setfattr exact 'tar --xattrs -xf "$TMP/short-shuffled.pax" -C "$DST" '"$X"
restore short-rsync short setfattr exact 'rsync -aX "$XTMP/rsync/short/" "$DST/"'
restore short-pax-noxattrs short setfattr noname 'tar -xf "$TMP/short-noxattrs.pax" -C "$DST" '"$X"
}

# ---- older files over newer ones (fs/CONTRACT.md, "Renames", and a handle given an older time) ----
# A tree whose files are older than those of the same names in the mount (which also hold versions older
# still, and one at exactly the tree file's time): rsync -a (temporary file, time set, rename) makes the mount
# equal the tree: each file reads the tree's bytes at the tree's time, the mount's cells newer than it gone,
# the older kept, the one at its time replaced; a second rsync -a transfers nothing. cp -a (the time set on
# the open handle) does the same. Compared with `cellctl read` against a store written with cellctl.
mkdir -p "$TMP/older/r1/cf" "$TMP/older/r2/x/cf" "$TMP/older/r3/cf"
printf treeone >"$TMP/older/r1/cf/f1" && touch -d @1577836800 "$TMP/older/r1/cf/f1"
printf treetwo >"$TMP/older/r2/x/cf/f2" && touch -d @1577836800.123 "$TMP/older/r2/x/cf/f2"
printf three >"$TMP/older/r3/cf/f3" && touch -d @1500000000 "$TMP/older/r3/cf/f3"
for t in ov ov2; do
	{ "$CELLCTL" --db "$TMP/ov" createtable $t families=cf &&
		"$CELLCTL" --db "$TMP/ov" set $t r1 cf:f1=newer@1700000000000000 cf:f1=oldest@1400000000000000 &&
		"$CELLCTL" --db "$TMP/ov" set $t 'r2#x' cf:f2=newer2@1700000000000000 cf:f2=same@1577836800123000
	} >/dev/null || exit 1
done
{ "$CELLCTL" --db "$TMP/ov.want" createtable ov families=cf &&
	"$CELLCTL" --db "$TMP/ov.want" set ov r1 cf:f1=treeone@1577836800000000 cf:f1=oldest@1400000000000000 &&
	"$CELLCTL" --db "$TMP/ov.want" set ov 'r2#x' cf:f2=treetwo@1577836800123000 &&
	"$CELLCTL" --db "$TMP/ov.want" set ov r3 cf:f3=three@1500000000000000
} >/dev/null || exit 1
mount_store "$TMP/ov"
tool rsync-older rsync -a "$TMP/older/" "$MNT/ov/"
rsync -a --stats "$TMP/older/" "$MNT/ov/" >"$TMP/rsync-again.out" 2>&1 || fail "the second rsync -a: $(cat "$TMP/rsync-again.out")"
grep -q '^Number of regular files transferred: 0$' "$TMP/rsync-again.out" ||
	fail "the second rsync -a of the same tree transferred files: $(grep -i 'transferred' "$TMP/rsync-again.out")"
tool cp-older cp -a "$TMP/older/." "$MNT/ov2/"
unmount_store
"$CELLCTL" --db "$TMP/ov.want" read ov >"$TMP/ov.want.txt" || exit 1
for t in ov ov2; do
	"$CELLCTL" --db "$TMP/ov" read $t >"$TMP/$t.got.txt" || exit 1
	diff "$TMP/ov.want.txt" "$TMP/$t.got.txt" >"$TMP/$t.diff" ||
		fail "older files over newer ones ($t: $([ $t = ov ] && echo rsync -a || echo cp -a)): cellctl read differs from the tree: $(head -c 1500 "$TMP/$t.diff")"
done
exit $status
