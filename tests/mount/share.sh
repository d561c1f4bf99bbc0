#!/bin/bash
# A shared mount (fs/share.h; fs/CONTRACT.md, "Mounting"): -o only=TABLE and only=TABLE/PREFIX make that
# table or key prefix the root (listing, cat, writes, mkdir -p, cp -a out and back into an empty mount,
# compared with cellctl read; nothing above it reachable; a table made later not shown, the table dropped
# an empty root, made again shown again); a prefix with no rows yet mounts empty and takes writes; bad values fail with one line naming them, status 1, nothing mounted or made; -o uid=, gid=,
# file_mode=, dir_mode= (numbers and names) are what stat shows for the root, directories and files, chmod
# and chown change nothing; with allow_other (default_permissions in /proc/mounts) the kernel enforces
# them for nobody (setpriv): dir_mode=0755 owned by root denies nobody's writes and allows its reads,
# owned by nobody (uid=65534) allows them, file_mode=0600 denies nobody's reads. The allow_other part
# needs root and setpriv (else it is skipped, saying so; the rest runs).
. "$(dirname "$0")/lib.sh"
db=$TMP/db
C() { "$CELLCTL" --db "$db" "$@"; }
C createtable quotes families=MD >/dev/null || exit 1
C set quotes 'NASDAQ#ZXZZT#1426535612156' MD:BID=1.5@1426535612156000 MD:ASK=1.6@1426535612156000 >/dev/null || exit 1
C set quotes 'NASDAQ#ZXZZT#1426535612157' MD:BID=1.7@1426535612157000 >/dev/null || exit 1
C set quotes 'NYSE#A#1426535612156' MD:BID=99@1426535612156000 >/dev/null || exit 1
C createtable other families=cf >/dev/null || exit 1
C set other r cf:q=o@1426535612156000 >/dev/null || exit 1

# same WANT WHAT: $TMP/got holds WANT (lines), else a failure naming WHAT
same() {
	printf '%s\n' "$1" | cmp -s - "$TMP/got" || fail "$2: got
$(cat "$TMP/got")
want
$1"
}

# ---- only=TABLE: the table's top level is the root
mount_store "$db" -o only=quotes
ls -A "$MNT" >"$TMP/got" 2>&1
same "NASDAQ
NYSE" "ls of only=quotes"
[ "$(cat "$MNT/NASDAQ/ZXZZT/1426535612156/MD/BID" 2>&1)" = 1.5 ] || fail "only=quotes: cat NASDAQ/ZXZZT/1426535612156/MD/BID"
[ ! -e "$MNT/quotes" ] && [ ! -e "$MNT/other" ] || fail "only=quotes: a table is reachable at the root"
getfattr --absolute-names -n user.cellfs.family.MD --only-values "$MNT" >"$TMP/got" 2>&1; echo >>"$TMP/got"
same never "only=quotes: the root's family attribute (the table's schema)"
mkdir -p "$MNT/NEW/x/MD" && echo hi >"$MNT/NEW/x/MD/q" || fail "only=quotes: mkdir -p and a write"
[ "$(C lookup quotes 'NEW#x' columns=MD:q 2>&1 | sed -n 4p)" = '    "hi\n"' ] ||
	fail "only=quotes: the write is not row NEW#x: $(C lookup quotes 'NEW#x' 2>&1)"
mkdir "$MNT/made" || fail "only=quotes: mkdir at the root"
[ "$(C ls 2>&1)" = "$(printf 'other\nquotes')" ] || fail "only=quotes: mkdir at the root made a table: $(C ls 2>&1)"
echo x 2>/dev/null >"$MNT/file" && fail "only=quotes: a file at the root was written"
mv "$MNT/NEW/x/MD/q" "$MNT/NEW/x/MD/r" || fail "only=quotes: a rename"
rm -r "$MNT/NEW" "$MNT/made" || fail "only=quotes: rm -r"
[ -z "$(C read quotes prefix=NEW 2>&1)" ] || fail "only=quotes: rm -r left $(C read quotes prefix=NEW 2>&1)"
cp -a "$MNT" "$TMP/copy-t" || fail "only=quotes: cp -a out of the mount"
unmount_store

# ---- only=TABLE/PREFIX: a key directory is the root
mount_store "$db" -o only=quotes/NASDAQ
ls -A "$MNT" >"$TMP/got" 2>&1
same "ZXZZT" "ls of only=quotes/NASDAQ"
ls -A "$MNT/ZXZZT" >"$TMP/got" 2>&1
same "1426535612156
1426535612157" "ls of only=quotes/NASDAQ/ZXZZT"
[ "$(cat "$MNT/ZXZZT/1426535612157/MD/BID" 2>&1)" = 1.7 ] || fail "only=quotes/NASDAQ: cat"
[ ! -e "$MNT/NYSE" ] && [ ! -e "$MNT/NASDAQ" ] || fail "only=quotes/NASDAQ: what is above or beside it is reachable"
mkdir -p "$MNT/new/MD" && echo v >"$MNT/new/MD/q" || fail "only=quotes/NASDAQ: mkdir -p and a write"
[ "$(C lookup quotes 'NASDAQ#new' columns=MD:q 2>&1 | sed -n 4p)" = '    "v\n"' ] ||
	fail "only=quotes/NASDAQ: the write is not row NASDAQ#new: $(C lookup quotes 'NASDAQ#new' 2>&1)"
rm -r "$MNT/new" || fail "only=quotes/NASDAQ: rm -r"
cp -a "$MNT" "$TMP/copy-p" || fail "only=quotes/NASDAQ: cp -a out of the mount"
[ -d "$MNT" ] && [ "$(stat -c %i "$MNT")" = 1 ] || fail "only=quotes/NASDAQ: the root is not inode 1"
unmount_store

# ---- only=TABLE: a table made later is not shown; the table dropped leaves the root empty, made again shows
# again (what the watcher follows: polled, 60 s at most)
until_ls() { # until_ls WANT WHAT: ls -A of the root comes to print WANT
	for _ in $(seq 600); do
		[ "$(ls -A "$MNT" 2>&1)" = "$1" ] && return 0
		sleep 0.1
	done
	fail "$2: ls -A of the root: $(ls -A "$MNT" 2>&1), want $1"
}
mount_store "$db" -o only=other
until_ls r "only=other"
C createtable later families=cf >/dev/null && C set later r2 cf:q=l >/dev/null || fail "cellctl: table later"
C set other r3 cf:q=o@1426535612156000 >/dev/null || fail "cellctl: set other r3"
until_ls "r
r3" "only=other, a row added by cellctl (and a table made)"
C deletetable other >/dev/null || fail "cellctl deletetable other"
until_ls "" "only=other, the table dropped"
[ "$(stat -c %F "$MNT")" = directory ] || fail "only=other, the table dropped: the root is $(stat -c %F "$MNT" 2>&1)"
C createtable other families=cf >/dev/null && C set other r4 cf:q=o@1426535612156000 >/dev/null ||
	fail "cellctl: table other made again"
until_ls r4 "only=other, the table made again"
unmount_store
C deletetable later >/dev/null || fail "cellctl deletetable later"

# ---- cp -a back into an empty store: only=quotes, and a prefix with no rows yet (mounted empty)
# cells STORE PREFIX OUT: table quotes as cellctl reads it (the rows under PREFIX, or all)
cells() { "$CELLCTL" --db "$1" read quotes ${2:+prefix=$2} >"$3" 2>&1 || fail "cellctl read $1: $(cat "$3")"; }
db2=$TMP/db2
"$CELLCTL" --db "$db2" createtable quotes >/dev/null || exit 1
mount_store "$db2" -o only=quotes
[ -z "$(ls -A "$MNT")" ] || fail "only=quotes of an empty table: $(ls -A "$MNT")"
cp -a "$TMP/copy-t/." "$MNT/" || fail "only=quotes: cp -a into an empty table"
unmount_store
cells "$db" "" "$TMP/want"
grep -q '"1.7"' "$TMP/want" || fail "cellctl read quotes: $(cat "$TMP/want")"
cells "$db2" "" "$TMP/got"
cmp -s "$TMP/want" "$TMP/got" || fail "only=quotes: cp -a round trip: $(diff "$TMP/want" "$TMP/got")"
db3=$TMP/db3
"$CELLCTL" --db "$db3" createtable quotes families=MD >/dev/null || exit 1
mount_store "$db3" -o only=quotes/NASDAQ
[ -z "$(ls -A "$MNT")" ] || fail "only=quotes/NASDAQ with no rows: $(ls -A "$MNT")"
[ "$(stat -c %F "$MNT")" = directory ] || fail "only=quotes/NASDAQ with no rows: the root is $(stat -c %F "$MNT")"
cp -a "$TMP/copy-p/." "$MNT/" || fail "only=quotes/NASDAQ: cp -a into a prefix with no rows"
unmount_store
cells "$db" "NASDAQ#" "$TMP/want"
grep -q '"1.7"' "$TMP/want" || fail "cellctl read quotes prefix=NASDAQ#: $(cat "$TMP/want")"
cells "$db3" "" "$TMP/got"
cmp -s "$TMP/want" "$TMP/got" || fail "only=quotes/NASDAQ: cp -a round trip: $(diff "$TMP/want" "$TMP/got")"

# ---- bad values: one line, status 1, nothing mounted
# expect_fail_opts STDERR OPTION...: cellfs DB MNT -f OPTION... exits 1 printing exactly STDERR, mounts
# nothing (expect_fail, lib.sh).
expect_fail_opts() {
	local want=$1
	shift
	expect_fail "$want" "$CELLFS" "$db" "$MNT" -f "$@"
}
syntax="(give TABLE or TABLE/PREFIX, PREFIX one or more key segments as the mount names them: quotes/NASDAQ)"
expect_fail_opts "cellfs: -o only=nosuch: no table \"nosuch\" in the store" -o only=nosuch
expect_fail_opts "cellfs: -o only=quotes/: an empty segment $syntax" -o only=quotes/
expect_fail_opts "cellfs: -o only=quotes//ZXZZT: an empty segment $syntax" -o only=quotes//ZXZZT
expect_fail_opts "cellfs: -o only=: an empty table name $syntax" -o only=
expect_fail_opts "cellfs: -o only=/quotes: an empty table name $syntax" -o only=/quotes
expect_fail_opts "cellfs: -o only=no*table: \"no*table\" is not a table name (Bigtable allows [_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most 50 bytes)" \
	-o 'only=no*table'
expect_fail_opts "cellfs: -o only=quotes/NASDAQ/ZXZZT/1426535612156/MD: \"MD\" is family MD's directory, not a key segment (only= takes a table and key segments)" \
	-o only=quotes/NASDAQ/ZXZZT/1426535612156/MD
expect_fail_opts "cellfs: -o only=quotes/a%2: \"a%2\" is not the name of a key segment as the mount shows it (bytes escaped as %XX, a family's name as a segment escaped)" \
	-o only=quotes/a%2
expect_fail_opts "cellfs: -o uid=no-such-user-x: not a user id (a number) or a user's name" -o uid=no-such-user-x
expect_fail_opts "cellfs: -o gid=-1: not a group id (a number) or a group's name" -o gid=-1
expect_fail_opts "cellfs: -o file_mode=0968: not permission bits in octal (0644, 0640; at most 07777)" -o file_mode=0968
expect_fail_opts "cellfs: -o dir_mode=17777: not permission bits in octal (0755, 0750; at most 07777)" -o dir_mode=17777
# only= names a table of a store that must be there: a new path makes no store
"$CELLFS" "$TMP/nostore" "$MNT" -f -o only=quotes 2>"$TMP/err" && fail "only= on a new path mounted"
[ ! -e "$TMP/nostore" ] || fail "only= on a new path made a store"

# ---- uid=, gid=, file_mode=, dir_mode=: what stat shows
modes() { # modes WHAT WANT: stat of the root, a directory, a family directory and a file
	stat -c '%u %g %a %F' "$MNT" "$MNT/NASDAQ" "$MNT/NASDAQ/ZXZZT/1426535612156/MD" \
		"$MNT/NASDAQ/ZXZZT/1426535612156/MD/BID" >"$TMP/got" 2>&1
	same "$2" "$1"
}
mount_store "$db" -o only=quotes,uid=4242,gid=4343,file_mode=0640,dir_mode=0750
modes "uid=4242,gid=4343,file_mode=0640,dir_mode=0750" "4242 4343 750 directory
4242 4343 750 directory
4242 4343 750 directory
4242 4343 640 regular file"
f=$MNT/NASDAQ/ZXZZT/1426535612156/MD/BID
chmod 0777 "$f" && chown 1:1 "$f" && chmod 0700 "$MNT/NASDAQ" || fail "chmod and chown (as the mounting user)"
modes "after chmod and chown" "4242 4343 750 directory
4242 4343 750 directory
4242 4343 750 directory
4242 4343 640 regular file"
ls -ln "$MNT" | awk 'NR > 1 { print $1, $3, $4 }' >"$TMP/got"
same "drwxr-x--- 4242 4343
drwxr-x--- 4242 4343" "ls -ln of the root"
unmount_store
if getent passwd nobody >/dev/null && getent group nogroup >/dev/null; then
	mount_store "$db" -o uid=nobody,gid=nogroup
	stat -c '%u %g %a' "$MNT/quotes" >"$TMP/got"
	same "$(id -u nobody) $(getent group nogroup | cut -d: -f3) 755" "uid=nobody,gid=nogroup"
	unmount_store
fi
mount_store "$db"
stat -c '%u %g %a' "$MNT" "$MNT/quotes/NASDAQ/ZXZZT/1426535612156/MD/BID" >"$TMP/got"
same "$(id -u) $(id -g) 755
$(id -u) $(id -g) 644" "the default owner and modes"
unmount_store

# ---- allow_other: the kernel checks the modes shown, for another user
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP (part): allow_other needs root and setpriv"
	exit $status
fi
chmod 0711 "$TMP" # nobody passes through to the mount point
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
C dump >"$TMP/before"
unchanged() { # unchanged WHAT: the store is as dumped in $TMP/before
	C dump >"$TMP/after" && cmp -s "$TMP/before" "$TMP/after" || fail "$1: the store changed"
}
# nobody_writes WHAT: whether nobody can write a file and make a directory in the mount (both or neither)
nobody_writes() {
	local made=0
	as_nobody sh -c 'echo n >"$1/NASDAQ/ZXZZT/1426535612156/MD/new"' _ "$MNT" 2>/dev/null && made=$((made + 1))
	as_nobody mkdir "$MNT/NASDAQ/made" 2>/dev/null && made=$((made + 1))
	as_nobody sh -c 'echo n >"$1/NASDAQ/ZXZZT/1426535612156/MD/BID"' _ "$MNT" 2>/dev/null && made=$((made + 1))
	echo $made
}
mount_store "$db" -o only=quotes,allow_other,uid=0,gid=0,dir_mode=0755,file_mode=0644
grep -E "^[^ ]+ $MNT fuse.cellfs [^ ]*default_permissions" /proc/mounts >/dev/null ||
	fail "allow_other: no default_permissions in /proc/mounts: $(grep " $MNT " /proc/mounts)"
[ "$(as_nobody cat "$MNT/NASDAQ/ZXZZT/1426535612156/MD/BID" 2>&1)" = 1.5 ] || fail "dir_mode=0755 owned by root: nobody cannot read"
as_nobody ls "$MNT/NASDAQ/ZXZZT" >"$TMP/got" 2>&1
same "1426535612156
1426535612157" "dir_mode=0755 owned by root: nobody's ls"
[ "$(nobody_writes)" = 0 ] || fail "dir_mode=0755, file_mode=0644 owned by root: nobody wrote"
as_nobody chmod 0777 "$MNT/NASDAQ" 2>/dev/null && fail "nobody's chmod of root's directory succeeded"
unchanged "dir_mode=0755 owned by root, nobody writing"
unmount_store
mount_store "$db" -o only=quotes,allow_other,uid=0,gid=0,file_mode=0600
as_nobody cat "$MNT/NASDAQ/ZXZZT/1426535612156/MD/BID" >/dev/null 2>&1 && fail "file_mode=0600 owned by root: nobody reads"
unmount_store
mount_store "$db" -o only=quotes,allow_other,uid=65534,gid=65534,dir_mode=0755,file_mode=0644
[ "$(nobody_writes)" = 3 ] || fail "owned by nobody (uid=65534): nobody cannot write"
unmount_store
C lookup quotes 'NASDAQ#ZXZZT#1426535612156' columns=MD:BID >"$TMP/got" 2>&1
grep -qx '    "n\\n"' "$TMP/got" || fail "owned by nobody: nobody's write is not in the store: $(cat "$TMP/got")"
exit $status
