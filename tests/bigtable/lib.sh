# lib.sh — what the bigtable suite's scripts share; sourced, not run. The script's $1 is CELLCTL, $2 CELLFS.
# Skips (77) where the Bigtable emulator is not installed (CBT_EMULATOR overrides where it is looked for);
# makes tmp (removed on exit, mounts unmounted, the emulator stopped), starts a private emulator on a free
# loopback port and points BIGTABLE_EMULATOR_HOST at it. Then:
#     ccb ARGS / ccl ARGS   cellctl on the instance $bt / on the local store $tmp/local
#     check WHAT CMD...     run CMD; a failure counts and says WHAT
#     same_dump WHAT A B    the dumps (cellctl dump) of stores A and B are byte-identical
#     finish                "N checks, M failures"; the script's last line (its exit status)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cellctl=${1:?usage: ${0##*/} CELLCTL [CELLFS]}
cellfs=${2:-}
. "$here/../oracle/emulator.sh"
if ! [ -x "$emulator" ]; then
	echo "SKIP: Bigtable emulator not found ($emulator)"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cellfs-bigtable-$(basename "$0" .sh).XXXXXX") || exit 1
mounts=()
cleanup() {
	for m in "${mounts[@]}"; do
		fusermount3 -uz "$m" 2>/dev/null
	done
	front_stop
	emulator_stop
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
emulator_start "$tmp/emulator.log" || exit 1

bt=bigtable://test/inst
ccb() { "$cellctl" --db "$bt" "$@"; }
ccl() { "$cellctl" --db "$tmp/local" "$@"; }

failures=0
checks=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}
check() {
	local what=$1
	shift
	checks=$((checks + 1))
	if ! "$@" >"$tmp/check.out" 2>&1; then
		fail "$what"
		sed 's/^/    /' "$tmp/check.out" | head -20
		return 1
	fi
}
same_dump() {
	checks=$((checks + 1))
	"$cellctl" --db "$2" dump >"$tmp/a.dump" 2>"$tmp/a.err" || { fail "$1: dump of $2: $(cat "$tmp/a.err")"; return 1; }
	"$cellctl" --db "$3" dump >"$tmp/b.dump" 2>"$tmp/b.err" || { fail "$1: dump of $3: $(cat "$tmp/b.err")"; return 1; }
	if ! cmp -s "$tmp/a.dump" "$tmp/b.dump"; then
		fail "$1: the dumps differ ($(cmp "$tmp/a.dump" "$tmp/b.dump" 2>&1 | head -1))"
		return 1
	fi
}

# mount STORE MNT [OPTIONS...]: mount it (unmounted on exit); returns cellfs's status.
mount_store() {
	local store=$1 mnt=$2
	shift 2
	mkdir -p "$mnt"
	"$cellfs" "$store" "$mnt" "$@" || return
	mounts+=("$mnt")
}

# unbound_module PROGRAM DIR: a copy of the module PROGRAM loads ($CELLFS_MODULE_DIR's, else the build
# tree's beside it: store/remote.c) written into DIR with its cs_backend_bind symbol renamed, so a
# program given CELLFS_MODULE_DIR=DIR loads it unbound (its allocations count in a fault state of its
# own). Prints how many times the symbol's name was found; exits 1 without a module.
unbound_module() {
	local module
	if [ -n "${CELLFS_MODULE_DIR:-}" ]; then
		module=$CELLFS_MODULE_DIR/cellstore-bigtable.so
	else
		module=$(dirname "$1")/../store/bigtable/cellstore-bigtable.so
	fi
	[ -f "$module" ] || { echo "FAIL: no module at $module" >&2; exit 1; }
	mkdir -p "$2"
	python3 - "$module" "$2/cellstore-bigtable.so" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
print(data.count(b'cs_backend_bind\0'))
open(sys.argv[2], 'wb').write(data.replace(b'cs_backend_bind\0', b'cs_backend_bxnd\0'))
PY
}

finish() {
	echo "$checks checks, $failures failures"
	[ $failures -eq 0 ]
}
