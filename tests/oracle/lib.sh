# lib.sh — what the oracle scripts (oracle.sh, agg.sh, import.sh) share; sourced, not run:
#     . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"      (the script's $1 is CELLCTL)
# Finds cbt (CBT overrides) and the Bigtable emulator (CBT_EMULATOR overrides) or exits 77 (skip); makes
# tmp (removed on exit, with the emulator stopped); starts a private emulator on a free loopback port and
# points BIGTABLE_EMULATOR_HOST at it. Then:
#     cbt ARGS / cc ARGS     cbt against that emulator / cellctl against the store $tmp/store
#     both ARGS...           a write through both; they must agree on success
#     same ARGS...           a read through both under the current TZ: identical stdout, same success
#     same_now ARGS...       same, with whole-millisecond times of "now" masked
#     same_stats ARGS...     same, with include-stats=full's latency masked (it is the read's time)
#     fail "WHAT"            a check of the script's own failed (count it with checks=$((checks + 1)))
#     finish                 prints "N checks, M failures"; the script's last line (its exit status)
set -u

cellctl=${1:?usage: ${0##*/} CELLCTL}
cbt_bin=${CBT:-cbt}
. "$(dirname "${BASH_SOURCE[0]}")/emulator.sh"

if ! command -v "$cbt_bin" >/dev/null 2>&1; then
	echo "SKIP: cbt not found ($cbt_bin)"
	exit 77
fi
if ! [ -x "$emulator" ]; then
	echo "SKIP: Bigtable emulator not found ($emulator)"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cellfs-oracle-$(basename "$0" .sh).XXXXXX") || exit 1
cleanup() {
	front_stop
	emulator_stop
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

emulator_start "$tmp/emulator.log" || exit 1
mkdir "$tmp/home"

cbt() { HOME=$tmp/home command "$cbt_bin" -project oracle -instance oracle -creds /dev/null "$@"; }
# ORACLE_STORE=bigtable (the suite bigtable): cellctl's store is an instance of the same emulator, through
# the Bigtable backend, instead of a local store. ORACLE_STORE=front-creds or front-cbtrc: so, but both
# tools reach the emulator through the loopback TLS front (tests/bigtable/tlsfront.py: TLS with a test
# CA, a service account's key checked on every call) with cbt's flags -creds, -data-endpoint,
# -admin-endpoint and -cert-file, given as flags or in each one's ~/.cbtrc (cellctl --cbtrc).
case ${ORACLE_STORE:-} in
bigtable)
	cc() { "$cellctl" --db "bigtable://oracle/cellctl" "$@"; }
	;;
front-creds | front-cbtrc)
	if ! front_python >/dev/null; then
		echo "SKIP: no python3 with grpc, jwt and cryptography (python3-grpcio, python3-jwt, python3-cryptography)"
		exit 77
	fi
	front_start "$tmp/front" --log "$tmp/front.log" || exit 1
	unset BIGTABLE_EMULATOR_HOST
	via=(-creds "$tmp/front/sa.json" -data-endpoint "$front_addr" -admin-endpoint "$front_addr"
	     -cert-file "$tmp/front/ca.pem")
	if [ "$ORACLE_STORE" = front-creds ]; then
		cbt() { HOME=$tmp/home command "$cbt_bin" -project oracle -instance oracle "${via[@]}" "$@"; }
		cc() { "$cellctl" -project oracle -instance cellctl "${via[@]}" "$@"; }
	else
		mkdir -p "$tmp/home-cc"
		for i in oracle cellctl; do
			printf 'project = oracle\ninstance = %s\ncreds = %s\ndata-endpoint = %s\nadmin-endpoint = %s\ncert-file = %s\n' \
				"$i" "$tmp/front/sa.json" "$front_addr" "$front_addr" "$tmp/front/ca.pem" \
				>"$tmp/$([ $i = oracle ] && echo home || echo home-cc)/.cbtrc"
		done
		cbt() { HOME=$tmp/home command "$cbt_bin" "$@"; }
		cc() { HOME=$tmp/home-cc "$cellctl" --cbtrc "$@"; }
	fi
	;;
*)
	cc() { "$cellctl" --db "$tmp/store" "$@"; }
	;;
esac

failures=0
checks=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# both ARGS...: a write through both tools; they must agree on success (a crash of cellctl never does).
both() {
	local s1 s2
	cbt "$@" >"$tmp/cbt.out" 2>"$tmp/cbt.err"; s1=$?
	cc "$@" >"$tmp/cc.out" 2>"$tmp/cc.err"; s2=$?
	checks=$((checks + 1))
	if [ $s2 -ge 128 ] || { [ $s1 -ne 0 ] && [ $s2 -eq 0 ]; } || { [ $s1 -eq 0 ] && [ $s2 -ne 0 ]; }; then
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

# same_stats ARGS...: same(), for a read with include-stats=full: the latency line of its summary block
# ("frontend_server_latency: 0ms") is masked on both sides, being however long the read took.
same_stats() { compare stats "$@"; }

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
	elif [ "$mode" = stats ]; then
		sed -i -E 's/^(frontend_server_latency: )[0-9]+ms$/\1Nms/' "$tmp/cbt.out" "$tmp/cc.out"
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

# finish: the report; the script's exit status.
finish() {
	if [ -n "${front_addr:-}" ]; then # (both went through the front: cbt with tokens, cellctl with JWTs)
		checks=$((checks + 1))
		grep -Eq ' auth=(token|access) .*outcome=OK$' "$tmp/front.log" || fail "no call of cbt's passed the front"
		grep -q ' auth=jwt .*outcome=OK$' "$tmp/front.log" || fail "no call of cellctl's passed the front"
	fi
	echo "$checks checks, $failures failures"
	[ $failures -eq 0 ]
}
