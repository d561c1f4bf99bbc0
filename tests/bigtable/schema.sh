#!/bin/bash
# schema.sh CELLCTL CELLFS BTADMIN — schemas on Bigtable (the emulator) that cbt or another client made:
# GC policies of 50 days and more (and mixed unions and intersections) read back and usable by every
# command, printed as cbt prints them, evaluated, and the same in a local store; a createtable is one
# call (all its families or nothing, also when calls fail: callproxy.py); a family with no GC rule at all (BTADMIN sends none) is "<never>"
# in ls as in cbt's, one made by cellctl looks to cbt as one cbt made; tables whose names Bigtable
# refuses (the emulator takes them) are listed by cellctl ls as by cbt ls, with a warning, left out of
# cellctl dump with a warning, and left out of the mount's root with one line each in the daemon's log.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
btadmin=${3:?usage: schema.sh CELLCTL CELLFS BTADMIN}
cbtbin=${CBT:-/usr/bin/cbt}
if ! [ -x "$cbtbin" ]; then
	echo "SKIP: cbt not found ($cbtbin)"
	exit 77
fi
cbt() { "$cbtbin" -creds /dev/null -project test -instance inst "$@"; }

# same_ls WHAT TABLE: cellctl ls TABLE and cbt ls TABLE of the instance print the same bytes
same_ls() {
	checks=$((checks + 1))
	ccb ls "$2" >"$tmp/ls.cc" 2>&1 || { fail "$1: cellctl ls $2: $(cat "$tmp/ls.cc")"; return 1; }
	cbt ls "$2" >"$tmp/ls.cbt" 2>&1 || { fail "$1: cbt ls $2: $(cat "$tmp/ls.cbt")"; return 1; }
	if ! cmp -s "$tmp/ls.cc" "$tmp/ls.cbt"; then
		fail "$1: cellctl ls $2 differs from cbt's"
		diff "$tmp/ls.cbt" "$tmp/ls.cc" | sed 's/^/    /' | head -20
		return 1
	fi
}
day=86400000000
now=$(($(date +%s) / 86400 * 86400 * 1000000)) # today, midnight (whole ms)

# ---- 15: maxage of 50 days and more
check "createtable maxage=50d" ccb createtable mx families=f:maxage=50d
check "ls" ccb ls mx
same_ls "maxage=50d" mx
check "set" ccb set mx r1 "f:old=o@$((now - 60 * day))" "f:new=n@$((now - 40 * day))"
check "read" bash -c '"$0" --db "$1" read mx >"$2" && grep -q "\"n\"" "$2"' "$cellctl" "$bt" "$tmp/read.out"
check "a cell older than 50 days is collected" bash -c '! grep -q "\"o\"" "$0"' "$tmp/read.out"
check "count" bash -c '[ "$("$0" --db "$1" count mx)" = 1 ]' "$cellctl" "$bt"
check "lookup" bash -c '"$0" --db "$1" lookup mx r1 | grep -q "\"n\""' "$cellctl" "$bt"
check "createfamily beside it" ccb createfamily mx g:maxage=365d
same_ls "maxage=50d, 365d" mx
i=0
for p in 50d 365d 10000d 106751d 4294967295s 4294967295ms "maxage=10000d and maxversions=3" \
	"(maxage=365d or maxversions=2) and maxage=10000d" "maxversions=5 or (maxage=50d and maxversions=1)" \
	"maxage=50d || maxage=1h && maxversions=2"; do
	i=$((i + 1))
	case $p in *=*) ;; *) p=maxage=$p ;; esac
	# cellctl makes it
	check "createtable p$i ($p)" ccb createtable "p$i" "families=a:$p,b"
	same_ls "cellctl's $p" "p$i"
	check "set in p$i" ccb set "p$i" r a:q=1 b:q=2
	check "count p$i" bash -c '[ "$("$0" --db "$1" count "$2")" = 1 ]' "$cellctl" "$bt" "p$i"
	# cbt makes it
	check "cbt setgcpolicy ($p)" cbt setgcpolicy "p$i" b "$p"
	same_ls "cbt's $p" "p$i"
	check "read p$i" ccb read "p$i"
	# the local store: the same policy, the same ls
	check "local createtable p$i" ccl createtable "p$i" "families=a:$p,b:$p"
	check "local ls p$i" bash -c '"$0" --db "$1" ls "$2" >"$3.l" && "$0" --db "$4" ls "$2" >"$3.b" && cmp "$3.l" "$3.b"' \
		"$cellctl" "$tmp/local" "p$i" "$tmp/lsp" "$bt"
	check "local set p$i" ccl set "p$i" r a:q=1 b:q=2
done
check "copy local -> bigtable" "$cellctl" copy "$tmp/local" bigtable://test/copied
check "copy bigtable -> local" "$cellctl" copy bigtable://test/copied "$tmp/back"
same_dump "policies through bigtable" "$tmp/local" "$tmp/back"

# createtable is one call: the table comes with every family (it failed after the first family, the
# second's schema read failing on the first's rule, and left the table with only that family)
checks=$((checks + 1))
if ! ccb createtable two "families=a:maxage=50d,b:maxversions=2" 2>"$tmp/two.err"; then
	fail "createtable two: $(cat "$tmp/two.err")"
fi
check "both families made" bash -c '"$0" --db "$1" ls two | grep -q "^b.*versions() > 2"' "$cellctl" "$bt"
same_ls "createtable two" two
# through callproxy.py, which refuses every call from the Nth on: with the second call refused the
# table is made whole (one call); with the first refused, nothing is made (an error, one line)
callproxy() {
	python3 "$here/callproxy.py" "$BIGTABLE_EMULATOR_HOST" "$1" >"$tmp/callproxy.addr" 2>"$tmp/callproxy.log" &
	proxy_pid=$!
	for _ in $(seq 100); do [ -s "$tmp/callproxy.addr" ] && break; sleep 0.1; done
}
callproxy 2
check "createtable with its second call refused" env BIGTABLE_EMULATOR_HOST="$(cat "$tmp/callproxy.addr")" \
	CELLFS_BT_DEADLINE_MS=3000 "$cellctl" --db "$bt" createtable second "families=a:maxversions=1,b,c:maxage=50d"
kill "$proxy_pid" 2>/dev/null
wait "$proxy_pid" 2>/dev/null
check "it has every family" bash -c '[ "$("$0" --db "$1" ls second | grep -c "^[abc]\s")" = 3 ]' "$cellctl" "$bt"
same_ls "createtable with its second call refused" second
callproxy 1
checks=$((checks + 1))
if env BIGTABLE_EMULATOR_HOST="$(cat "$tmp/callproxy.addr")" CELLFS_BT_DEADLINE_MS=3000 \
	"$cellctl" --db "$bt" createtable first "families=a,b" 2>"$tmp/first.err"; then
	fail "createtable with every call refused succeeded"
elif [ "$(wc -l <"$tmp/first.err")" != 1 ]; then
	fail "createtable's error is not one line: $(cat "$tmp/first.err")"
fi
kill "$proxy_pid" 2>/dev/null
wait "$proxy_pid" 2>/dev/null
check "no table is made" bash -c '! "$0" -creds /dev/null -project test -instance inst ls | grep -qx first' "$cbtbin"

# ---- 12: families with no GC rule at all, and with an empty one
check "another client makes nr (no GC rules)" "$btadmin" test inst nr f g
check "cbt ls shows <never>" bash -c '"$0" -creds /dev/null -project test -instance inst ls nr | grep -q "<never>"' "$cbtbin"
same_ls "families without a GC rule" nr
check "cellctl reads nr" ccb set nr r f:a=1
check "cbt makes cb" cbt createtable cb families=f,g:never
check "cellctl makes cr" ccb createtable cr families=f,g:never
check "cellctl createfamily / setgcpolicy never" bash -c '"$0" --db "$1" createfamily cr h && "$0" --db "$1" createfamily cr k:maxversions=1 && "$0" --db "$1" setgcpolicy cr k never' "$cellctl" "$bt"
check "cbt makes the same" bash -c '"$0" -creds /dev/null -project test -instance inst createfamily cb h && "$0" -creds /dev/null -project test -instance inst createfamily cb k && "$0" -creds /dev/null -project test -instance inst setgcpolicy cb k never' "$cbtbin"
same_ls "cellctl's never" cr
check "cbt sees cellctl's families as its own" bash -c 'cmp <("$0" -creds /dev/null -project test -instance inst ls cb) <("$0" -creds /dev/null -project test -instance inst ls cr)' "$cbtbin"

# ---- 10: tables whose names Bigtable refuses
bad=("a b" "-dash" "$(printf 'x%.0s' $(seq 51))" "$(printf 'ctl\001')" "$(printf '\303\251t\303\251')" "a%b")
for t in "${bad[@]}"; do
	check "cbt createtable $(printf %q "$t")" cbt createtable "$t"
done
check "cbt createtable ok.name" cbt createtable ok.name
checks=$((checks + 1))
if ! ccb ls >"$tmp/ls.out" 2>"$tmp/ls.err"; then
	fail "cellctl ls with odd tables: $(cat "$tmp/ls.err")"
fi
check "cellctl ls lists every table, as cbt ls" bash -c 'cmp "$0" <("$1" -creds /dev/null -project test -instance inst ls)' "$tmp/ls.out" "$cbtbin"
check "cellctl ls warns once for each odd name" bash -c '[ "$(grep -c "cannot be opened" "$0")" = 6 ] && grep -q "\"a b\"" "$0" && grep -q "\"ctl\\\\x01\"" "$0" && ! grep -q ok.name "$0"' "$tmp/ls.err"
check "cellctl ls --format json lists them" bash -c '[ "$("$0" --db "$1" --format json ls 2>/dev/null | wc -l)" = "$(wc -l <"$2")" ]' "$cellctl" "$bt" "$tmp/ls.out"
# the tables whose names are Bigtable's (and so a path's)
grep -Ev '^(a b|-dash|x{51}|ctl.|a%b)$' "$tmp/ls.out" | grep -v "^$(printf '\303\251')" >"$tmp/root.want"
checks=$((checks + 1))
if ! ccb dump >"$tmp/all.dump" 2>"$tmp/dump.err"; then
	fail "cellctl dump with odd tables: $(cat "$tmp/dump.err")"
elif [ "$(grep -c "is not dumped" "$tmp/dump.err")" != 6 ]; then
	fail "cellctl dump does not warn once for each odd table: $(cat "$tmp/dump.err")"
fi
check "the dump holds the other tables" bash -c 'cmp "$0" <(xargs -d "\n" "$1" --db "$2" dump <"$3")' "$tmp/all.dump" "$cellctl" "$bt" "$tmp/root.want"

if ! [ -e /dev/fuse ] || ! [ -n "$cellfs" ]; then
	echo "(no /dev/fuse: the mount's part is not run)"
	finish
	exit
fi
mnt=$tmp/mnt
mkdir -p "$mnt"
"$cellfs" "$bt" "$mnt" -f -o cache_ttl=1 2>"$tmp/daemon.log" &
mounts+=("$mnt")
for _ in $(seq 600); do mountpoint -q "$mnt" && break; sleep 0.1; done
check "mounted" mountpoint -q "$mnt"
check "ls -a of the root shows the other tables" bash -c 'cmp <(LC_ALL=C ls -a "$0") <(printf ".\n..\n"; LC_ALL=C sort "$1")' \
	"$mnt" "$tmp/root.want"
check "a table is there" bash -c 'ls "$0/ok.name" && ls "$0/nr/r/f"' "$mnt"
check "the root's link count" bash -c '[ "$(stat -c %h "$0")" = $((2 + $(wc -l <"$1"))) ]' "$mnt" "$tmp/root.want"
check "ls again" ls -a "$mnt"
check "one log line for each table left out" bash -c '[ "$(grep -c "is not shown" "$0")" = 6 ] && grep -q "table \"a b\" is not shown" "$0" && grep -q "table \"ctl\\\\x01\" is not shown" "$0"' "$tmp/daemon.log"
fusermount3 -u "$mnt"
finish
