#!/bin/bash
# refused.sh CELLCTL — every cellctl command that reaches a Bigtable instance, pointed at a loopback port
# where nothing listens, fails (status 1) with one line on stderr naming the cause: the address it called
# and the gRPC status (UNAVAILABLE), not a bare "Input/output error". Needs the backend module, not the
# emulator.
set -u
cellctl=${1:?usage: ${0##*/} CELLCTL}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cellfs-bigtable-refused.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C TZ=UTC

# A port nothing listens on: bound by the kernel's choice, then closed.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export BIGTABLE_EMULATOR_HOST=127.0.0.1:$port CELLFS_BT_DEADLINE_MS=2000
bt=bigtable://test/inst
"$cellctl" --db "$tmp/local" createtable t families=f >/dev/null || exit 1
"$cellctl" --db "$tmp/local" set t r f:a=1@1000 >/dev/null || exit 1
printf ',f\n,a\nr,1\n' >"$tmp/in.csv"

checks=0
failures=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}
# refused CMD ARGS...: cellctl CMD ARGS... (with --db "$bt" unless CMD is copy) fails naming the cause.
refused() {
	local db=(--db "$bt")
	[ "$1" = copy ] && db=()
	checks=$((checks + 1))
	"$cellctl" "${db[@]}" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	local st=$?
	if [ $st -ne 1 ]; then
		fail "$*: exit status $st, want 1: $(cat "$tmp/err")"
	elif [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
		fail "$*: stderr is not one line: $(cat "$tmp/err")"
	elif ! grep -q "^cellctl $1: .*127\.0\.0\.1:$port: UNAVAILABLE: " "$tmp/err"; then
		fail "$*: the error does not name the address and the status: $(cat "$tmp/err")"
	fi
}

refused ls
refused ls t
refused count t
refused lookup t r
refused read t
refused export t
refused keyviz t
refused set t r f:a=1
refused addtocell t r f:a=1
refused increment t r f:a=1
refused deleterow t r
refused deletecolumn t r f a
refused deleteallrows t
refused droprowrange t prefix=r
refused createtable t
refused createfamily t g
refused deletefamily t f
refused setgcpolicy t f maxversions=1
refused deletetable t
refused import t "$tmp/in.csv"
refused dump
refused dump t
refused stats
refused copy "$bt" "$tmp/back"
refused copy "$tmp/local" "$bt"
refused copy "$tmp/local" "$bt" t

echo "$checks checks, $failures failures"
[ $failures -eq 0 ]
