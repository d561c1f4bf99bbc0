#!/bin/bash
# stall.sh CELLCTL CELLFS — the mount on an instance that stops answering (the emulator behind
# cutproxy.py, stalled): requests fail with EIO each within its own deadline (-o timeout), at the same
# time rather than one after another; programs waiting for the same name (the kernel sends one lookup
# of it at a time) do not wait a deadline each; unmounting works while calls hang (fusermount3 -uz; a
# plain -u is EBUSY while a program is inside a request, the kernel's rule), and the daemon ends once
# they are answered. cellctl --timeout and -o timeout refuse bad durations, naming them.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ -n "$cellfs" ] || { echo "usage: stall.sh CELLCTL CELLFS"; exit 1; }
unset CELLFS_BT_DEADLINE_MS
deadline=8 # seconds: -o timeout=8s

for t in t1 t2 t3; do
	check "createtable $t" ccb createtable $t families=f
	check "set $t" ccb set $t r f:c=$t
done

# ---- bad durations are refused, naming the value
checks=$((checks + 1))
out=$("$cellctl" --db "$bt" --timeout=5 ls 2>&1) && fail "cellctl --timeout=5 (no unit) accepted"
echo "$out" | grep -q -- "--timeout=5: a number needs a unit" || fail "cellctl --timeout=5: $out"
checks=$((checks + 1))
out=$("$cellctl" --db "$bt" -timeout 0s ls 2>&1) && fail "cellctl -timeout 0s accepted"
echo "$out" | grep -q -- "--timeout=0s: zero" || fail "cellctl -timeout 0s: $out"
check "cellctl -timeout 5s works" bash -c '[ "$("$0" --db "$1" -timeout 5s ls | sort | tr "\n" " ")" = "t1 t2 t3 " ]' "$cellctl" "$bt"
check "cellctl --timeout=1m30s works" "$cellctl" --db "$bt" --timeout=1m30s ls
checks=$((checks + 1))
mkdir -p "$tmp/bad"
out=$("$cellfs" "$bt" "$tmp/bad" -o timeout=1.5x 2>&1) && { fail "-o timeout=1.5x accepted"; fusermount3 -u "$tmp/bad"; }
echo "$out" | grep -q -- "-o timeout=1.5x: unknown unit" || fail "-o timeout=1.5x: $out"

# ---- the instance behind a proxy that can stall
python3 "$here/cutproxy.py" "$BIGTABLE_EMULATOR_HOST" 0 0 >"$tmp/proxy.addr" 2>"$tmp/proxy.log" &
proxy=$!
for _ in $(seq 100); do [ -s "$tmp/proxy.addr" ] && break; sleep 0.1; done
emulator_host=$BIGTABLE_EMULATOR_HOST
BIGTABLE_EMULATOR_HOST=$(cat "$tmp/proxy.addr")
stop_proxy() { kill "$proxy" 2>/dev/null; wait "$proxy" 2>/dev/null; }
trap 'stop_proxy; cleanup' EXIT
mnt=$tmp/mnt long=$tmp/long
check "mount" mount_store "$bt" "$mnt" -o cache_ttl=1,timeout=${deadline}s
check "mount with a long deadline" mount_store "$bt" "$long" -o cache_ttl=1,timeout=10m
[ $failures -eq 0 ] || { finish; exit; }
for t in t1 t2 t3; do
	check "read $t" bash -c '[ "$(cat "$0")" = "$1" ]' "$mnt/$t/r/f/c" $t
	check "read $t (long)" bash -c '[ "$(cat "$0")" = "$1" ]' "$long/$t/r/f/c" $t
done

kill -USR1 "$proxy"
for _ in $(seq 100); do grep -q stalled "$tmp/proxy.log" && break; sleep 0.1; done
sleep 1.5 # (past cache_ttl: what the kernel had is dropped, so the next opens ask the instance)

# cats FILE...: one cat of each at once, in the background; each leaves $tmp/cat.N.{rc,err,end}
cats() {
	local n=0
	cat_pids=()
	rm -f "$tmp"/cat.*
	for f in "$@"; do
		n=$((n + 1))
		(
			timeout 900 cat "$f" >/dev/null 2>"$tmp/cat.$n.err"
			echo $? >"$tmp/cat.$n.rc"
			date +%s%N >"$tmp/cat.$n.end"
		) &
		cat_pids+=($!)
	done
}
# all_eio WHAT: every cat ended with EIO
all_eio() {
	local n
	for n in 1 2 3; do
		checks=$((checks + 1))
		[ "$(cat "$tmp/cat.$n.rc")" = 1 ] && grep -q "Input/output error" "$tmp/cat.$n.err" ||
			fail "$1: cat $n: status $(cat "$tmp/cat.$n.rc"): $(cat "$tmp/cat.$n.err")"
	done
}
# The calls waiting at the proxy now (its last "calls N" line), and the most at any time.
calls_now() { grep '^calls ' "$tmp/proxy.log" | tail -1 | cut -d' ' -f2; }
calls_max() { grep '^calls ' "$tmp/proxy.log" | cut -d' ' -f2 | sort -n | tail -1; }

# ---- three programs on three tables at once: each fails within its own deadline, none after another's
# (here the kernel sends lookups in one directory one at a time, so the daemon answers the ones queued
# behind the first at once; where it sends them together, the calls wait together at the proxy).
# (Not a bound anyone's load could break: before, the last ended after three deadlines.)
# took_each WHAT: every cat ended within two deadlines of BEGIN
took_each() {
	local n took
	for n in 1 2 3; do
		checks=$((checks + 1))
		took=$((($(cat "$tmp/cat.$n.end") - begin) / 1000000))
		[ $took -lt $((2 * deadline * 1000)) ] ||
			fail "$1: cat $n ended after ${took} ms: it waited behind another request's deadline (${deadline} s)"
	done
}
begin=$(date +%s%N)
cats "$mnt/t1/r/f/c" "$mnt/t2/r/f/c" "$mnt/t3/r/f/c"
wait "${cat_pids[@]}"
all_eio "three tables"
took_each "three tables"
echo "(three tables: at most $(calls_max) calls waited at once at the proxy)"

# ---- three programs on one file: the kernel asks for the name once at a time; the daemon answers
# the ones queued behind the first at once (the instance just did not answer), so none waits twice.
# (Not a bound anyone's load could break: before, the last ended after three deadlines.)
sleep 4 # (past the 3 s in which calls fail at once after the ones above)
begin=$(date +%s%N)
cats "$mnt/t1/r/f/c" "$mnt/t1/r/f/c" "$mnt/t1/r/f/c"
wait "${cat_pids[@]}"
all_eio "one file"
took_each "one file"

# ---- unmounting while calls hang (the mount whose deadline is 10 minutes)
daemon=$(pgrep -f -- "$long -o cache_ttl=1,timeout=10m" | head -1)
checks=$((checks + 1))
[ -n "$daemon" ] || fail "the long mount's daemon is not found"
before=$(calls_now)
cats "$long/t1/r/f/c" "$long/t2/r/f/c" "$long/t3/r/f/c"
for _ in $(seq 600); do [ "$(calls_now)" -gt "$before" ] && break; sleep 0.1; done
checks=$((checks + 1))
[ "$(calls_now)" -gt "$before" ] || fail "the long mount's requests never reached the proxy"
check "fusermount3 -uz while calls hang" fusermount3 -uz "$long"
check "unmounted" bash -c '! grep -q " $0 " /proc/mounts' "$long"
kill -USR2 "$proxy" # the instance answers again: the waiting requests end, then the daemon
wait "${cat_pids[@]}"
checks=$((checks + 1))
for _ in $(seq 600); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$daemon" 2>/dev/null || fail "the daemon did not end after its unmount"

# ---- the instance back: the first mount serves again
check "serves again" bash -c 'for i in $(seq 100); do [ "$(cat "$0" 2>/dev/null)" = t2 ] && exit 0; sleep 0.2; done; exit 1' "$mnt/t2/r/f/c"
BIGTABLE_EMULATOR_HOST=$emulator_host
finish
