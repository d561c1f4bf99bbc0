#!/bin/bash
# mount.sh CELLCTL CELLFS — the mount on Bigtable (the emulator): the tree and reads match cellctl; shell
# loading (mkdir -p, echo >, cp) lands in Bigtable; cp -a, tar (pax) and rsync -a round trips are exact;
# renames within a row work (every version moves, the target's newer cells go: rsync -a of an older file over
# a newer one), across rows mv copies (EXDEV), tables cannot be renamed;
# a Q@TS name of a sub-millisecond time is EINVAL when made; other clients'
# writes show within cache_ttl; -o only=TABLE/PREFIX mounts that prefix as the root; a dead instance is EIO
# within the deadline, never a hang.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ -n "$cellfs" ] || { echo "usage: mount.sh CELLCTL CELLFS"; exit 1; }
export CELLFS_BT_DEADLINE_MS=4000
mnt=$tmp/mnt

check "createtable" ccb createtable quotes "families=MD:maxversions=3,meta"
check "set" ccb set quotes "NASDAQ#ZXZZT#1426535612156" MD:BID=12.5@1426535612156000 MD:BID=12.25@1426535612150000 \
	MD:ASK=12.75@1426535612156000 meta:src=feed@1000
check "set row 2" ccb set quotes "NASDAQ#ABCD#1426535612160" MD:BID=1.5@1426535612160000
check "mount" mount_store "$bt" "$mnt" -o cache_ttl=1
[ $failures -eq 0 ] || { finish; exit; }

# ---- the tree and reads
check "ls table" bash -c '[ "$(ls "$0")" = NASDAQ ]' "$mnt/quotes"
check "ls row dirs" bash -c '[ "$(ls "$0" | tr "\n" " ")" = "ABCD ZXZZT " ]' "$mnt/quotes/NASDAQ"
check "ls family" bash -c '[ "$(ls "$0" | tr "\n" " ")" = "ASK BID BID@1426535612150000 " ]' "$mnt/quotes/NASDAQ/ZXZZT/1426535612156/MD"
check "cat newest" bash -c '[ "$(cat "$0")" = 12.5 ]' "$mnt/quotes/NASDAQ/ZXZZT/1426535612156/MD/BID"
check "cat older" bash -c '[ "$(cat "$0")" = 12.25 ]' "$mnt/quotes/NASDAQ/ZXZZT/1426535612156/MD/BID@1426535612150000"
check "size in ls -l is exact" bash -c '[ "$(stat -c %s "$0")" = 4 ]' "$mnt/quotes/NASDAQ/ZXZZT/1426535612156/MD/BID"
check "mtime is the cell's" bash -c '[ "$(stat -c %Y "$0")" = 1426535612 ]' "$mnt/quotes/NASDAQ/ZXZZT/1426535612156/MD/BID"
check "find counts the files" bash -c '[ "$(find "$0" -type f | wc -l)" = 5 ]' "$mnt/quotes"

# ---- loading from the shell lands in Bigtable, visible at once through the mount
check "mkdir -p + echo" bash -c 'mkdir -p "$0/quotes/NYSE/IBM/1/MD" && echo 150.5 >"$0/quotes/NYSE/IBM/1/MD/BID"' "$mnt"
check "cat what was written" bash -c '[ "$(cat "$0")" = 150.5 ]' "$mnt/quotes/NYSE/IBM/1/MD/BID"
check "cellctl reads it" bash -c '"$0" --db "$1" lookup quotes "NYSE#IBM#1" | grep -q 150.5' "$cellctl" "$bt"
check "a new version" bash -c 'echo 151 >"$0" && [ "$(cat "$0")" = 151 ] && ls "$(dirname "$0")" | grep -q "^BID@"' \
	"$mnt/quotes/NYSE/IBM/1/MD/BID"
check "mkdir a table" mkdir "$mnt/loaded"
check "cp into it" bash -c 'mkdir -p "$0/loaded/k1/f" && printf "a\0b" >"$1/v" && cp "$1/v" "$0/loaded/k1/f/q"' "$mnt" "$tmp"
check "the bytes arrive exactly" cmp "$tmp/v" "$mnt/loaded/k1/f/q"

# ---- renames: within a row atomic; across rows mv copies (EXDEV); tables cannot be renamed
check "mv within a row" mv "$mnt/quotes/NYSE/IBM/1/MD/BID" "$mnt/quotes/NYSE/IBM/1/MD/LAST"
check "moved" bash -c '[ "$(cat "$0")" = 151 ] && [ ! -e "$1" ]' "$mnt/quotes/NYSE/IBM/1/MD/LAST" "$mnt/quotes/NYSE/IBM/1/MD/BID"
check "mv within a row carries the older version too" bash -c '[ "$(ls "$0" | grep -c "^LAST@")" = 1 ] &&
	[ "$("$1" --db "$2" lookup quotes "NYSE#IBM#1" columns=MD:LAST | grep -c "^  MD:LAST")" = 2 ]' \
	"$mnt/quotes/NYSE/IBM/1/MD" "$cellctl" "$bt"
check "rename(2) across rows is EXDEV" bash -c 'python3 -c "
import os, sys, errno
try:
    os.rename(sys.argv[1], sys.argv[2])
except OSError as e:
    sys.exit(0 if e.errno == errno.EXDEV else 1)
sys.exit(1)" "$0" "$1"' "$mnt/quotes/NYSE/IBM/1/MD/LAST" "$mnt/quotes/NASDAQ/ABCD/1426535612160/MD/LAST"
check "mv across rows copies" mv "$mnt/quotes/NYSE/IBM/1/MD/LAST" "$mnt/quotes/NASDAQ/ABCD/1426535612160/MD/LAST"
check "copied" bash -c '[ "$(cat "$0")" = 151 ]' "$mnt/quotes/NASDAQ/ABCD/1426535612160/MD/LAST"
check "rename(2) of a table is EXDEV" bash -c 'python3 -c "
import os, sys, errno
try:
    os.rename(sys.argv[1], sys.argv[2])
except OSError as e:
    sys.exit(0 if e.errno == errno.EXDEV else 1)
sys.exit(1)" "$0" "$1"' "$mnt/loaded" "$mnt/renamed"

# ---- a rename onto a newer file replaces it (one mutation): every cell moves, the target's newer ones go;
# rsync -a of an older file over a newer one (its temporary file renamed within the row) does the same
check "set X and Y" ccb set quotes "NYSE#RN#1" MD:X=x1@1500000000000000 MD:X=x2@1500000001000000 \
	MD:Y=ynew@1700000000000000 MD:Y=yold@1400000000000000
seen() { # seen PATH: another client's write shows within cache_ttl (polled)
	for _ in $(seq 150); do
		[ -e "$1" ] && return 0
		sleep 0.2
	done
	return 1
}
check "X and Y show" seen "$mnt/quotes/NYSE/RN/1/MD/Y"
check "mv X Y" mv "$mnt/quotes/NYSE/RN/1/MD/X" "$mnt/quotes/NYSE/RN/1/MD/Y"
check "Y reads X's newest; cellctl: X's cells and Y's older one" bash -c '[ "$(cat "$0")" = x2 ] &&
	[ "$("$1" --db "$2" lookup quotes "NYSE#RN#1" | grep -v "^-" | tr -s " \n" " ")" = "$3" ]' \
	"$mnt/quotes/NYSE/RN/1/MD/Y" "$cellctl" "$bt" \
	"NYSE#RN#1 MD:Y @ 2017/07/14-02:40:01.000000 \"x2\" MD:Y @ 2017/07/14-02:40:00.000000 \"x1\" MD:Y @ 2014/05/13-16:53:20.000000 \"yold\" "
mkdir -p "$tmp/older/1/MD"
printf treeone >"$tmp/older/1/MD/Z"
touch -d @1577836800 "$tmp/older/1/MD/Z"
check "set Z newer" ccb set quotes "NYSE#RN#1" MD:Z=znew@1700000000000000
check "Z shows" seen "$mnt/quotes/NYSE/RN/1/MD/Z"
check "rsync -a of an older file over a newer one" rsync -a "$tmp/older/" "$mnt/quotes/NYSE/RN/"
check "... Z reads it, at its time" bash -c '[ "$(cat "$0")" = treeone ] && [ "$(stat -c %Y "$0")" = 1577836800 ]' \
	"$mnt/quotes/NYSE/RN/1/MD/Z"
check "... a second rsync -a transfers nothing" bash -c 'rsync -a --stats "$0" "$1" | grep -qx "Number of regular files transferred: 0"' \
	"$tmp/older/" "$mnt/quotes/NYSE/RN/"

# ---- a Q@TS name whose time Bigtable cannot keep (not whole milliseconds): EINVAL when it is made, not at
# close (where the shell would not see it)
sub=$mnt/quotes/NASDAQ/ZXZZT/1426535612156/MD/V@1700000000000123
einval() { # einval PYTHON-STATEMENT ARG...: the statement fails with EINVAL
	python3 -c "
import errno, os, sys
try:
    $1
except OSError as e:
    sys.exit(0 if e.errno == errno.EINVAL else 'got %s' % e)
sys.exit('succeeded')" "${@:2}"
}
check "create of a sub-millisecond Q@TS name is EINVAL" einval 'os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)' "$sub"
check "echo > a sub-millisecond Q@TS name fails in the shell" bash -c '! (echo y >"$0") 2>"$1" && grep -q "Invalid argument" "$1"' \
	"$sub" "$tmp/sub.err"
check "mknod of one is EINVAL" einval 'os.mknod(sys.argv[1], 0o100644)' "$sub"
check "a rename onto one is EINVAL" einval 'os.rename(sys.argv[1], sys.argv[2])' \
	"$mnt/quotes/NASDAQ/ZXZZT/1426535612156/MD/ASK" "$sub"
check "nothing of it written, ASK still there" bash -c '! "$0" --db "$1" lookup quotes "NASDAQ#ZXZZT#1426535612156" | grep -q "MD:V" &&
	[ "$(cat "$2")" = 12.75 ]' "$cellctl" "$bt" "$mnt/quotes/NASDAQ/ZXZZT/1426535612156/MD/ASK"
check "a whole-millisecond Q@TS name is written" bash -c 'echo y >"$0" && [ "$(cat "$0")" = y ] && rm "$0"' \
	"$mnt/quotes/NASDAQ/ZXZZT/1426535612156/MD/V@1700000000000000"

# ---- backups: cp -a, tar (pax), rsync -a out and back in, exact
check "cp -a out" cp -a "$mnt/quotes" "$tmp/bak"
check "cp -a out is the tree" diff -r "$mnt/quotes" "$tmp/bak"
check "mkdir restore table" mkdir "$mnt/restored"
check "cp -a in" bash -c 'cp -a "$0"/. "$1"/' "$tmp/bak" "$mnt/restored"
check "cp -a round trip: cbt-style read equal" bash -c 'diff <("$0" --db "$1" read quotes) <("$0" --db "$1" read restored)' "$cellctl" "$bt"
check "tar pax out" tar --format=pax -C "$mnt" -cf "$tmp/q.tar" quotes
check "mkdir tar target" mkdir "$tmp/untar"
check "tar extract locally" tar -C "$tmp/untar" -xf "$tmp/q.tar"
check "tar times exact" bash -c '[ "$(stat -c %Y "$0")" = 1426535612 ]' "$tmp/untar/quotes/NASDAQ/ZXZZT/1426535612156/MD/BID"
check "mkdir tar restore table" mkdir "$mnt/untarred"
check "tar pax in" tar --format=pax -C "$mnt/untarred" --strip-components=1 -xf "$tmp/q.tar"
check "tar round trip equal" bash -c 'diff <("$0" --db "$1" read quotes) <("$0" --db "$1" read untarred)' "$cellctl" "$bt"
check "rsync -a out" rsync -a "$mnt/quotes/" "$tmp/rs/"
check "rsync -a in" bash -c 'mkdir "$0" && rsync -a "$1/" "$0/"' "$mnt/rsynced" "$tmp/rs"
check "rsync round trip equal" bash -c 'diff <("$0" --db "$1" read quotes) <("$0" --db "$1" read rsynced)' "$cellctl" "$bt"

# ---- another client's write shows within cache_ttl
reads() { # reads PATH VALUE: PATH comes to hold VALUE within cache_ttl (polled)
	for _ in $(seq 100); do
		[ "$(cat "$1" 2>/dev/null)" = "$2" ] && return 0
		sleep 0.2
	done
	return 1
}
check "cellctl writes" ccb set quotes "NASDAQ#ZXZZT#1426535612156" MD:ASK=13@1426535613000000
checks=$((checks + 1))
reads "$mnt/quotes/NASDAQ/ZXZZT/1426535612156/MD/ASK" 13 || fail "another client's write never showed"

check "list a directory" ls "$mnt/quotes/NASDAQ/ZXZZT"
check "cellctl adds a row under it" ccb set quotes "NASDAQ#ZXZZT#1426535699999" MD:BID=9@1426535699999000
checks=$((checks + 1))
for _ in $(seq 100); do
	ls "$mnt/quotes/NASDAQ/ZXZZT" | grep -qx 1426535699999 && break
	sleep 0.2
done
ls "$mnt/quotes/NASDAQ/ZXZZT" | grep -qx 1426535699999 || fail "another client's new row never showed in a listing"

# ... and cbt's (where cbt is installed), over a value the mount has kept
cbtbin=${CBT:-/usr/bin/cbt}
if [ -x "$cbtbin" ]; then
	check "cbt writes" "$cbtbin" -creds /dev/null -project test -instance inst set quotes \
		"NASDAQ#ZXZZT#1426535612156" MD:ASK=14@1426535614000000
	checks=$((checks + 1))
	reads "$mnt/quotes/NASDAQ/ZXZZT/1426535612156/MD/ASK" 14 || fail "cbt's write never showed"
else
	echo "# cbt not found ($cbtbin): its write is not tried"
fi

# ---- -o only=TABLE/PREFIX (fs/share.h): that key prefix is the root, writes land below it; a missing table
# is refused in one line, nothing mounted
mkdir -p "$tmp/only2"
check "mount only=quotes/NASDAQ" mount_store "$bt" "$tmp/only" -o only=quotes/NASDAQ,cache_ttl=1
check "only=: the prefix's next segments at the root" bash -c '[ "$(ls "$0" | tr "\n" " ")" = "ABCD ZXZZT " ]' "$tmp/only"
check "only=: cat" bash -c '[ "$(cat "$0")" = 12.5 ]' "$tmp/only/ZXZZT/1426535612156/MD/BID"
check "only=: a write lands under the prefix" bash -c 'mkdir -p "$0/ONLY/MD" && echo o >"$0/ONLY/MD/q" &&
	"$1" --db "$2" lookup quotes "NASDAQ#ONLY" | grep -qF "\"o\\n\""' "$tmp/only" "$cellctl" "$bt"
check "only= of a missing table refused" bash -c '! "$0" "$1" "$2" -o only=nosuch 2>"$3" &&
	[ "$(cat "$3")" = "cellfs: -o only=nosuch: no table \"nosuch\" in the store" ] && ! mountpoint -q "$2"' \
	"$cellfs" "$bt" "$tmp/only2" "$tmp/only.err"

# ---- a dead instance: EIO within the deadline (4 s here), not a hang
emulator_stop
checks=$((checks + 1))
sleep 1.5 # (past cache_ttl: what was cached is dropped)
out=$(timeout 60 cat "$mnt/quotes/NASDAQ/ZXZZT/1426535612156/MD/BID" 2>&1)
st=$?
if [ $st -eq 124 ]; then
	fail "a read of a dead instance hung"
elif [ $st -eq 0 ] || ! echo "$out" | grep -q "Input/output error"; then
	# (the kernel may still hold the page; a listing of a never-seen directory must go to the store)
	out=$(timeout 60 ls "$mnt/quotes/NYSE/IBM/1" 2>&1); st=$?
	[ $st -ne 124 ] || fail "a listing of a dead instance hung"
	echo "$out" | grep -q "Input/output error" || fail "no EIO from a dead instance: $out"
fi

finish
