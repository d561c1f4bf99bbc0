# lib.sh — the harness shared by cli.sh, agg.sh, import.sh and dump.sh (sourced, not run):
#     . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"      (the script's $1 is CELLCTL)
# It sets cellctl (from $1; usage names the script), tmp (a fresh directory, removed on exit), db
# ($tmp/db, not created), TZ=UTC, HOME=$tmp/home (created) and XDG_DATA_HOME=$tmp/xdg, unsets CELLFS_DB,
# and counts checks and failures.
#
# Writing a case:
#     out <<'EOF'            expected stdout of the next check (omit: none); outb '...' takes printf %b
#     ...
#     EOF
#     ok   ARGS...           must exit 0 with that stdout and nothing on stderr
#     err  'MESSAGE' ARGS... must exit 1 with no stdout and exactly MESSAGE (one line) on stderr
#     raw_ok / raw_err       the same without --db "$db"
#     run STATUS 'MESSAGE' CMD...   the general form (MESSAGE: the whole of stderr, one line, or '')
# ok and err run `cellctl --db $db ARGS...`; every command run reads its stdin from "${stdin:-/dev/null}"
# (stdin=FILE ok restore - feeds it FILE). A crash (status >= 128) is never an expected failure.
# A check of the script's own: checks=$((checks + 1)), then `failed "WHAT"` if it fails.
# The script's last line is `finish [LABEL]`: it prints "[LABEL: ]N checks, M failures" and its status
# is the script's (0 only with no failures).
set -u

cellctl=${1:?usage: ${0##*/} CELLCTL}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cellfs-$(basename "$0" .sh).XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export TZ=UTC HOME=$tmp/home XDG_DATA_HOME=$tmp/xdg
unset CELLFS_DB
mkdir "$tmp/home"
db=$tmp/db

checks=0
failures=0
: >"$tmp/want.out"

out() { cat >"$tmp/want.out"; }
outb() { printf '%b' "$1" >"$tmp/want.out"; }
failed() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# run WANT_STATUS WANT_STDERR_LINE CMD...
run() {
	local want_status=$1 want_err=$2 status what
	shift 2
	checks=$((checks + 1))
	"$@" >"$tmp/got.out" 2>"$tmp/got.err" <"${stdin:-/dev/null}"
	status=$?
	if [ -n "$want_err" ]; then
		printf '%s\n' "$want_err" >"$tmp/want.err"
	else
		: >"$tmp/want.err"
	fi
	what=$(printf '%q ' "${@:2}")
	if [ $status -ge 128 ]; then
		failed "$what: died with status $status"
	elif [ $status -ne "$want_status" ]; then
		failed "$what: exit status $status, want $want_status"
		sed 's/^/    stderr: /' "$tmp/got.err"
	elif ! cmp -s "$tmp/want.out" "$tmp/got.out"; then
		failed "$what: stdout differs (- want, + got)"
		diff -u "$tmp/want.out" "$tmp/got.out" | tail -n +3 | cat -A | head -40 | sed 's/^/    /'
	elif ! cmp -s "$tmp/want.err" "$tmp/got.err"; then
		failed "$what: stderr differs (- want, + got)"
		diff -u "$tmp/want.err" "$tmp/got.err" | tail -n +3 | cat -A | sed 's/^/    /'
	fi
	: >"$tmp/want.out"
}

ok() { run 0 "" "$cellctl" --db "$db" "$@"; }
err() { local msg=$1; shift; run 1 "$msg" "$cellctl" --db "$db" "$@"; }
raw_ok() { run 0 "" "$cellctl" "$@"; }
raw_err() { local msg=$1; shift; run 1 "$msg" "$cellctl" "$@"; }

# finish [LABEL]: the report; the script's exit status.
finish() {
	echo "${1:+$1: }$checks checks, $failures failures"
	[ $failures -eq 0 ]
}
