#!/bin/bash
# package.sh SRCDIR OUTDIR — the Debian package as a user meets it: packaging/build-deb builds it into
# OUTDIR, lintian finds no error, dpkg -i installs it, `man cellfs` and `man cellctl` render, cellctl's
# bash completion works in a fresh bash, a store mounts through an /etc/fstab line (a private fstab file,
# mount -T) and through `mount -t fuse.cellfs`, reads and writes go through, it unmounts, and
# `dpkg --purge cellfs` leaves none of the package's files. The EXIT trap unmounts and purges whatever
# happens, so the package is never left installed. Needs root (dpkg -i): skips (77) otherwise.
set -u
src=${1:?usage: package.sh SRCDIR OUTDIR}
out=${2:?usage: package.sh SRCDIR OUTDIR}
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: not root (installing a package needs root)"
	exit 77
fi
if dpkg-query -W -f='${Status}' cellfs 2>/dev/null | grep -q 'installed'; then
	echo "FAIL: the cellfs package is installed already; this test installs and purges it (dpkg --purge cellfs first)" >&2
	exit 1
fi
version=$(sed -n "s/^ *version : '\([^']*\)'.*/\1/p" "$src/meson.build" | head -n1)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cellfs-package.XXXXXX")
MNT=$TMP/mnt
store=$TMP/store
mkdir "$MNT"
status=0
installed=false

fail() {
	echo "FAIL: $*" >&2
	status=1
}
# is_mounted, daemon_pids (of the cellfs daemons serving MNT, which mount(8) starts)
. "$src/tests/mount/procs.sh"
cleanup() {
	local rc=$? pid
	if is_mounted; then
		umount "$MNT" 2>/dev/null || umount -l "$MNT"
	fi
	for pid in $(daemon_pids); do
		kill "$pid" 2>/dev/null
	done
	if $installed || dpkg-query -W -f='${Status}' cellfs 2>/dev/null | grep -q 'installed'; then
		dpkg --purge cellfs >/dev/null 2>&1 || echo "FAIL: dpkg --purge cellfs failed in the trap" >&2
	fi
	is_mounted || rm -rf "$TMP"
	exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# ---- Build and lint -----------------------------------------------------------------------------------
if ! deb=$("$src/packaging/build-deb" "$out"); then
	echo "FAIL: packaging/build-deb $out failed" >&2
	exit 1
fi
echo "built $deb"
depends=$(dpkg-deb -f "$deb" Depends)
for d in fuse3 libfuse3-3 liblmdb0 libzstd1 libpcre2-8-0 libc6; do
	[[ ", $depends," == *", $d"[\ ,]* ]] || fail "the package does not depend on $d: Depends: $depends"
done
# lintian: errors fail the test; warnings are printed for whoever reads the log.
# (It says, on stderr, that running as root is not recommended: dropped.)
lintian --fail-on error "$deb" 2>&1 | grep -v '^running with root privileges' >"$TMP/lintian"
if [ "${PIPESTATUS[0]}" -ne 0 ]; then
	fail "lintian found errors: $(cat "$TMP/lintian")"
elif [ -s "$TMP/lintian" ]; then
	sed 's/^/lintian: /' "$TMP/lintian"
fi

# ---- Install ------------------------------------------------------------------------------------------
installed=true
if ! dpkg -i "$deb" >"$TMP/dpkg" 2>&1; then
	echo "FAIL: dpkg -i $deb: $(cat "$TMP/dpkg")" >&2
	exit 1
fi
for p in cellfs cellctl; do
	[ "$(command -v $p)" = /usr/bin/$p ] || fail "$p on PATH is $(command -v $p), not the package's /usr/bin/$p"
done
cellfs --version 2>&1 | grep -qx "cellfs $version (libfuse [0-9.]*)" ||
	fail "cellfs --version: $(cellfs --version 2>&1)"
[ "$(cellctl --version 2>&1)" = "cellctl $version" ] || fail "cellctl --version: $(cellctl --version 2>&1)"

# ---- Man pages ----------------------------------------------------------------------------------------
# page PAGE SECTION...: `man PAGE` renders (no groff warnings) with each SECTION heading.
page() {
	local p=$1 s
	shift
	if ! MANWIDTH=80 man --nj --nh -P cat "$p" >"$TMP/$p.txt" 2>"$TMP/$p.err" || [ -s "$TMP/$p.err" ]; then
		fail "man $p: $(cat "$TMP/$p.err")"
		return
	fi
	for s in "$@"; do
		grep -qx "$s" "$TMP/$p.txt" || fail "man $p has no section $s"
	done
	man --warnings -P cat "$p" 2>&1 >/dev/null | grep . && fail "man --warnings $p: groff warns (above)"
	head -n1 "$TMP/$p.txt" | grep -q "^${p^^}(1) " || fail "man $p: first line $(head -n1 "$TMP/$p.txt")"
}
page cellfs NAME SYNOPSIS DESCRIPTION OPTIONS 'FSTAB AND SYSTEMD' ERRORS 'EXIT STATUS' ENVIRONMENT FILES \
	EXAMPLES 'SEE ALSO'
page cellctl NAME SYNOPSIS DESCRIPTION OPTIONS COMMANDS 'EXIT STATUS' ENVIRONMENT FILES EXAMPLES 'SEE ALSO'
# Every subcommand `cellctl help` lists has its entry; every -o option `cellfs --help` names is in cellfs(1).
for c in $(cellctl help | awk '/^Commands:/ {on = 1; next} on && /^$/ {exit} on {print $1}'); do
	grep -qE "^       $c( |$)" "$TMP/cellctl.txt" || fail "man cellctl has no entry for the command $c"
done
for o in $(cellfs --help | grep -o -- '-o [a-z_]*' | cut -c4- | sort -u); do
	grep -q -- "-o $o\|, $o" "$TMP/cellfs.txt" || fail "man cellfs does not name -o $o"
done

# ---- A store: the seeds' tables, small ----------------------------------------------------------------
cellctl --db "$store" createtable quotes families=MD:maxversions=3 &&
	cellctl --db "$store" set quotes NASDAQ#ZXZZT#1426535612156 MD:BID=100.25@1426535612156000 \
		MD:ASK=100.75@1426535612156000 &&
	cellctl --db "$store" createtable metrics families=METRIC:maxage=30d &&
	cellctl --db "$store" set metrics server1.bbb.com#1426535612045 METRIC:CPU/CPU1_USR=0.01 &&
	cellctl --db "$store" createtable sensor families=METER:maxversions=1 &&
	cellctl --db "$store" set sensor 0000987654#20170726 METER:0015=3 ||
	{ echo "FAIL: cellctl could not make the test store" >&2; exit 1; }

# ---- Bash completion ----------------------------------------------------------------------------------
# In a bash started here, as an interactive shell would: bash_completion loads cellctl's completion on
# demand; each line of the script's output is one completion case, "WORDS... => REPLIES".
cat >"$TMP/complete.bash" <<'EOF'
. /usr/share/bash-completion/bash_completion
__load_completion cellctl || { echo "no completion for cellctl"; exit 1; }
complete -p cellctl
try() { # try WORD... : complete the last WORD
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="${COMP_WORDS[*]}"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_cellctl cellctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	local r
	r=$(printf '%s\n' "${COMPREPLY[@]}" | sort | paste -sd ' ')
	echo "$* =>${r:+ $r}"
}
try cellctl cr
try cellctl --db "$STORE" read ''
try cellctl --db="$STORE" lookup s
try cellctl --db "$STORE" help set
try cellctl --format j
try cellctl --v
CELLFS_DB=$STORE try cellctl count ''
CELLFS_DB=$TMPDIR/nostore try cellctl count ''
EOF
STORE=$store TMPDIR=$TMP bash --norc --noprofile "$TMP/complete.bash" >"$TMP/complete.out" 2>&1
cat >"$TMP/complete.want" <<EOF
complete -F _cellctl cellctl
cellctl cr => createfamily createtable
cellctl --db $store read  => metrics quotes sensor
cellctl --db=$store lookup s => sensor
cellctl --db $store help set => set setgcpolicy
cellctl --format j => json
cellctl --v => --version
cellctl count  => metrics quotes sensor
cellctl count  =>
EOF
diff -u "$TMP/complete.want" "$TMP/complete.out" >"$TMP/complete.diff" ||
	fail "bash completion (- want, + got): $(cat "$TMP/complete.diff")"
# Every subcommand is offered after `cellctl `.
echo 'try cellctl ""' >>"$TMP/complete.bash"
want=$(cellctl help | awk '/^Commands:/ {on = 1; next} on && /^$/ {exit} on {print $1}' | sort | paste -sd ' ')
[ "$(STORE=$store TMPDIR=$TMP bash --norc --noprofile "$TMP/complete.bash" | tail -n1)" = "cellctl  => $want" ] ||
	fail "completing \"cellctl \" does not offer every subcommand"

# ---- The systemd unit ---------------------------------------------------------------------------------
if command -v systemd-analyze >/dev/null; then
	systemd-analyze verify cellfs@test.service >"$TMP/verify" 2>&1 || fail "systemd-analyze verify: $(cat "$TMP/verify")"
	[ ! -s "$TMP/verify" ] || fail "systemd-analyze verify cellfs@test.service: $(cat "$TMP/verify")"
fi

# ---- Mounting ----------------------------------------------------------------------------------------
bid=quotes/NASDAQ/ZXZZT/1426535612156/MD/BID
# mounted HOW ro|rw: the mount is there, of type fuse.cellfs with the store as its source, and reads.
mounted() {
	local line
	line=$(awk -v m="$MNT" '$2 == m' /proc/mounts)
	# shellcheck disable=SC2086 # (split into fields)
	set -- "$1" "$2" $line
	[ "$5" = fuse.cellfs ] && [ "$3" = "$store" ] && [ "${6%%,*}" = "$2" ] ||
		fail "$1: /proc/mounts says: $line; want $store $MNT fuse.cellfs $2,..."
	[ "$(cat "$MNT/$bid" 2>&1)" = 100.25 ] || fail "$1: cat $bid: $(cat "$MNT/$bid" 2>&1)"
}
# unmount HOW: umount, and the daemon goes away within 5 s.
unmount() {
	umount "$MNT" || fail "$1: umount $MNT failed"
	for _ in $(seq 500); do
		[ -z "$(daemon_pids)" ] && return
		sleep 0.01
	done
	fail "$1: cellfs still runs 5 s after umount"
}

# An /etc/fstab line with the options such lines carry (a private fstab: /etc/fstab is not touched).
printf '%s %s fuse.cellfs _netdev,noauto,nofail,x-systemd.automount,x-systemd.mount-timeout=30 0 0\n' \
	"$store" "$MNT" >"$TMP/fstab"
if mount -T "$TMP/fstab" "$MNT" 2>"$TMP/err"; then
	mounted "mount -T FSTAB" rw
	echo 12.6 >"$MNT/quotes/NASDAQ/ZXZZT/1426535612156/MD/ASK" || fail "writing MD/ASK through the mount"
	mkdir -p "$MNT/sensor/0000987655/20170727/METER" && echo 5 >"$MNT/sensor/0000987655/20170727/METER/0030" ||
		fail "writing a new sensor row through the mount"
	find "$MNT" -type f | sort >"$TMP/find"
	grep -q "^$MNT/metrics/server1.bbb.com/1426535612045/METRIC/CPU" "$TMP/find" ||
		fail "find through the mount does not show the metrics cell: $(cat "$TMP/find")"
	unmount "mount -T FSTAB"
else
	fail "mount -T FSTAB $MNT: exit status $?: $(cat "$TMP/err")"
fi
# What was written through the mount is in the store, as cellctl reads it.
cellctl --db "$store" lookup quotes NASDAQ#ZXZZT#1426535612156 columns=MD:ASK cells-per-column=1 >"$TMP/ask"
grep -q '^    "12.6' "$TMP/ask" || fail "cellctl does not read the ASK written through the mount: $(cat "$TMP/ask")"
[ "$(cellctl --db "$store" count sensor)" = 2 ] || fail "cellctl count sensor: $(cellctl --db "$store" count sensor)"

# mount -t fuse.cellfs directly, read-only.
if mount -t fuse.cellfs "$store" "$MNT" -o ro,_netdev 2>"$TMP/err"; then
	mounted "mount -t fuse.cellfs -o ro" ro
	[ "$(cat "$MNT/sensor/0000987655/20170727/METER/0030" 2>&1)" = 5 ] ||
		fail "mount -t fuse.cellfs: the row written earlier reads $(cat "$MNT/sensor/0000987655/20170727/METER/0030" 2>&1)"
	echo 1 2>"$TMP/err" >"$MNT/$bid" && fail "writing a read-only mount succeeded"
	grep -q 'Read-only file system' "$TMP/err" || fail "writing a read-only mount: $(cat "$TMP/err")"
	unmount "mount -t fuse.cellfs"
else
	fail "mount -t fuse.cellfs $store $MNT -o ro: exit status $?: $(cat "$TMP/err")"
fi

# ---- Purge --------------------------------------------------------------------------------------------
dpkg -L cellfs >"$TMP/files" || fail "dpkg -L cellfs"
while IFS= read -r f; do [ -d "$f" ] || echo "$f"; done <"$TMP/files" >"$TMP/plain"
grep -qx /usr/bin/cellfs "$TMP/plain" || fail "dpkg -L cellfs does not list /usr/bin/cellfs"
if dpkg --purge cellfs >"$TMP/dpkg" 2>&1; then
	installed=false
else
	fail "dpkg --purge cellfs: $(cat "$TMP/dpkg")"
fi
dpkg-query -W -f='${Status}' cellfs 2>/dev/null | grep -q 'installed' && fail "cellfs is still installed after the purge"
while IFS= read -r f; do
	[ -e "$f" ] || [ -L "$f" ] && fail "$f is left after dpkg --purge cellfs"
done <"$TMP/plain"
# The package's own directories go too (those another package shares stay).
while IFS= read -r f; do
	[ -d "$f" ] && ! dpkg-query -S "$f" >/dev/null 2>&1 && [ -z "$(ls -A "$f")" ] && fail "directory $f is left after the purge"
done <"$TMP/files"
[ -e /usr/share/doc/cellfs ] && fail "/usr/share/doc/cellfs is left after the purge"

[ $status -eq 0 ] && echo "package: built, lintian clean of errors, installed, man pages, completion, fstab and mount -t, purged"
exit $status
