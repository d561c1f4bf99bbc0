#!/bin/bash
# agg.sh CELLCTL — aggregate families against the real thing: cbt and the Bigtable emulator. Creates the
# same aggregate tables and adds the same numbers through cbt into a private emulator and through cellctl
# into a fresh store, then requires byte-identical ls/read/lookup output and the same success or failure.
#
# The emulator (as of this SDK) implements intsum, but its intmin and intmax keep the last input instead
# of the minimum or maximum; those families are compared only where inputs arrive in an order that makes
# the last one the answer. Their real semantics (signed min and max) are tested in tests/cli/agg.sh and
# tests/unit/test_aggregate.c. Skips (77) only when cbt or the emulator is not installed.
set -u

cellctl=${1:?usage: agg.sh CELLCTL}
cbt_bin=${CBT:-cbt}
emulator=${CBT_EMULATOR:-/usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator}

if ! command -v "$cbt_bin" >/dev/null 2>&1; then
	echo "SKIP: cbt not found ($cbt_bin)"
	exit 77
fi
if ! [ -x "$emulator" ]; then
	echo "SKIP: Bigtable emulator not found ($emulator)"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cellfs-oracle.XXXXXX") || exit 1
emu_pid=
cleanup() {
	if [ -n "$emu_pid" ]; then
		kill "$emu_pid" 2>/dev/null
		wait "$emu_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# A private emulator on a free loopback port: port 0, then read back the one it bound.
"$emulator" -host 127.0.0.1 -port 0 >"$tmp/emulator.log" 2>&1 &
emu_pid=$!
addr=
for _ in $(seq 100); do
	addr=$(sed -n 's/^Cloud Bigtable emulator running on \(.*\)$/\1/p' "$tmp/emulator.log")
	[ -n "$addr" ] && break
	kill -0 "$emu_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$addr" ]; then
	echo "FAIL: the emulator did not start:"
	cat "$tmp/emulator.log"
	exit 1
fi
export BIGTABLE_EMULATOR_HOST=$addr
mkdir "$tmp/home"

cbt() { HOME=$tmp/home command "$cbt_bin" -project oracle -instance oracle -creds /dev/null "$@"; }
cc() { "$cellctl" --db "$tmp/store" "$@"; }

failures=0
checks=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# both ARGS...: a write through both tools; they must agree on success.
both() {
	local s1 s2
	cbt "$@" >"$tmp/cbt.out" 2>"$tmp/cbt.err"; s1=$?
	cc "$@" >"$tmp/cc.out" 2>"$tmp/cc.err"; s2=$?
	checks=$((checks + 1))
	if [ $s1 -ne 0 ] && [ $s2 -eq 0 ] || [ $s1 -eq 0 ] && [ $s2 -ne 0 ]; then
		fail "$(printf '%q ' "$@"): cbt exited $s1, cellctl $s2"
		sed 's/^/    cbt: /' "$tmp/cbt.err"
		sed 's/^/    cellctl: /' "$tmp/cc.err"
	fi
}

# same ARGS...: a read through both under the current TZ; stdout must be byte-identical and both must
# succeed or both fail; a failing cellctl says so in exactly one line on stderr.
same() { compare plain "$@"; }

# same_now ARGS...: same(), for output whose timestamps are "now": those must be whole milliseconds on
# both sides and are masked before comparing.
same_now() { compare now "$@"; }

compare() {
	local mode=$1 s1 s2 f what
	shift
	what="TZ=${TZ-<unset>} $(printf '%q ' "$@")"
	cbt "$@" >"$tmp/cbt.out" 2>"$tmp/cbt.err"; s1=$?
	cc "$@" >"$tmp/cc.out" 2>"$tmp/cc.err"; s2=$?
	checks=$((checks + 1))
	if [ "$mode" = now ]; then
		for f in cbt cc; do
			sed -i -E 's#@ [0-9]{4}/[0-9]{2}/[0-9]{2}-[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}000$#@ NOW#' "$tmp/$f.out"
		done
		grep -q '@ NOW$' "$tmp/cc.out" || fail "$what: no whole-millisecond time of now in cellctl's output"
	fi
	if [ $s2 -ge 128 ]; then
		fail "$what: cellctl died (status $s2)"
	elif [ $s1 -ne 0 ] && [ $s2 -eq 0 ] || [ $s1 -eq 0 ] && [ $s2 -ne 0 ]; then
		fail "$what: cbt exited $s1, cellctl $s2"
		sed 's/^/    cbt: /' "$tmp/cbt.err"
		sed 's/^/    cellctl: /' "$tmp/cc.err"
	elif ! cmp -s "$tmp/cbt.out" "$tmp/cc.out"; then
		fail "$what: output differs (- cbt, + cellctl)"
		diff -u "$tmp/cbt.out" "$tmp/cc.out" | tail -n +3 | cat -A | head -40 | sed 's/^/    /'
	elif [ $s2 -ne 0 ] && [ "$(wc -l <"$tmp/cc.err")" -ne 1 ]; then
		fail "$what: cellctl's error is not one line:"
		sed 's/^/    /' "$tmp/cc.err"
	elif [ $s2 -eq 0 ] && [ -s "$tmp/cc.err" ]; then
		fail "$what: cellctl succeeded but wrote to stderr:"
		sed 's/^/    /' "$tmp/cc.err"
	fi
}

# ---- Aggregate tables ------------------------------------------------------------------------------

export TZ=UTC
both createtable agg "families=s:never:intsum,s2:maxversions=3:intsum,mn:never:intmin,mx:never:intmax,plain"
both createfamily agg late:never:intsum
both createfamily agg late2:maxage=10d||maxversions=2:intmax
both createtable bad1 families=h:never:bogus
both createtable bad2 families=h:never:
both createfamily agg h:never:bogus
same ls
same ls agg

# Sums: several inputs to one cell in one request and across requests, separate timestamps, Go integer
# syntax, negative numbers, wrapping, truncation to milliseconds, an empty qualifier, a leading ':'.
both addtocell agg r s:a=5@1000 s:a=7@1000 s:a=3@2000
both addtocell agg r s:a=10@1000 app-profile=x
both addtocell agg r s:hex=0x10@1000 s:under=1_000@1000 s:plus=+5@1000 s:neg=-0x10@1000 s:=3@1000
both addtocell agg r :s:colon=1@1000 s:wrap=9223372036854775807@1000 s:wrap=1@1000 s:trunc=1@1234567
both addtocell agg r s:zero=1@-999 s:neg2=-3@1000 s:neg2=-4@1000 $'s:q\nz=2@1000'
both addtocell agg r s2:a=1@1000 s2:a=2@2000 s2:b=1@3000 s2:a=4@1000
both addtocell agg r late:x=1@1000 late:x=2@1000
# intmin / intmax where the emulator's last input is the true answer.
both addtocell agg r mn:a=10@1000 mn:a=5@1000 mn:a=-3@1000 mx:a=-3@1000 mx:a=5@1000 mx:a=10@1000
both addtocell agg r mn:b=7@1000 mx:b=-7@1000 mn:c=1@1000 mn:c=1@2000
both addtocell agg other s:a=1@1000
both addtocell agg other mn:a=9223372036854775807@1000 mx:a=-9223372036854775808@1000
# No timestamp: now (compared with the time masked), in a table of its own.
both createtable aggnow families=s:never:intsum
both addtocell aggnow now s:a=1 s:b=2 $'s:nl=3\n4@1000'
same_now lookup aggnow now

reads() {
	same read agg
	same read agg prefix=r
	same read agg columns=s: cells-per-column=1
	same read agg keys-only=true
	same read agg reversed=true
	same lookup agg r
	same lookup agg r columns=mn:,mx:
	same lookup agg other
	same count agg
}
reads
export TZ=Asia/Kolkata
same lookup agg r columns=s:a
export TZ=UTC

# Failures: both refuse (cellctl in one line).
both addtocell agg r s:a=x@1000
both addtocell agg r s:a=@1000
both addtocell agg r s:a=1.5@1000
both addtocell agg r 's:a= 1@1000'
both addtocell agg r s:a=9223372036854775808@1000
both addtocell agg r s:a=1@-1
both addtocell agg r s:a=1@-5000
both addtocell agg r plain:a=1@1000
both addtocell agg r nofam:a=1@1000
both addtocell nosuch r s:a=1@1000
both addtocell agg r noeq
both addtocell agg r
both addtocell agg
# (Not compared: "set agg r s:a=abc". The emulator accepts a plain write into an aggregate family;
# Bigtable and cellfs refuse it. tests/cli/agg.sh checks cellctl's refusal.)
reads

# Deleting in an aggregate family, then adding again: a new cell.
both deletecolumn agg r s a
both addtocell agg r s:a=40@1000
both deleterow agg other
both addtocell agg other s:a=2@1000
both deleteallrows agg
both addtocell agg r s:a=1@1000
reads

echo "$checks checks, $failures failures"
[ $failures -eq 0 ]
