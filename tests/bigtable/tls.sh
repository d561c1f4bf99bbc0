#!/bin/bash
# tls.sh CELLCTL CELLFS — the production path, offline: cellctl and the mount reach the emulator through
# the loopback TLS front (tlsfront.py: TLS with a test CA, every call's credential, routing header and
# permissions checked as Google's front end does), with a service account's key.
# - The mount works with -o creds=,data_endpoint=,admin_endpoint=,cert_file=; with JWTs of 4 s it keeps
#   working for a minute (each call's JWT unexpired: the front refuses an expired one), writing and reading.
# - A wrong CA, a disabled (expired) key, a key's JWT for another audience, and PERMISSION_DENIED on one
#   table: cellctl exits 1 with one line naming the endpoint, the reason, the call and the account (never
#   the key), and the mount refuses to start or answers EACCES, logging each distinct refusal once;
#   nothing reaches the emulator (checked there directly).
. "$(dirname "$0")/lib.sh"
export LC_ALL=C TZ=UTC HOME=$tmp/home
mkdir -p "$HOME"
if ! front_python >/dev/null; then
	echo "SKIP: no python3 with grpc, jwt and cryptography (python3-grpcio, python3-jwt, python3-cryptography)"
	exit 77
fi
[ -n "$cellfs" ] || { echo "usage: tls.sh CELLCTL CELLFS"; exit 2; }
emu=$BIGTABLE_EMULATOR_HOST
account=front-test@p.iam.gserviceaccount.com

# The data, straight into the emulator.
ccb createtable pub families=f >/dev/null && ccb set pub r1 f:a=1 >/dev/null &&
	ccb createtable secret families=f >/dev/null && ccb set secret s1 f:a=2 >/dev/null || exit 1
direct() { BIGTABLE_EMULATOR_HOST=$emu "$cellctl" --db "$bt" "$@"; }

front_start "$tmp/front" --log "$tmp/front.log" --headers --deny ReadRows:secret --deny MutateRow:secret \
	--deny MutateRows:secret --deny CheckAndMutateRow:secret || exit 1
good=$front_addr
front_start "$tmp/front" --log "$tmp/aud.log" --audience-host bigtable.googleapis.com || exit 1
aud=$front_addr
front_start "$tmp/front" --log "$tmp/renew.log" || exit 1
renew=$front_addr
unset BIGTABLE_EMULATOR_HOST
ca=$tmp/front/ca.pem
key=$tmp/front/sa.json

# cc ADDR [FLAG...] CMD...: cellctl on test/inst through the front at ADDR.
cc() {
	local addr=$1
	shift
	"$cellctl" -project test -instance inst -data-endpoint "$addr" -admin-endpoint "$addr" -cert-file "$ca" "$@"
}
# refused WHAT PATTERN... -- CMD...: CMD exits 1 with one line on stderr matching every PATTERN, and
# without the key's secret in it.
refused() {
	local what=$1 pats=() p st
	shift
	while [ "$1" != -- ]; do pats+=("$1"); shift; done
	shift
	checks=$((checks + 1))
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	st=$?
	if [ $st -ne 1 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
		fail "$what: status $st, stderr: $(cat "$tmp/err")"
		return
	fi
	for p in "${pats[@]}"; do
		grep -q -- "$p" "$tmp/err" || { fail "$what: no \"$p\" in: $(cat "$tmp/err")"; return; }
	done
	grep -q "PRIVATE KEY\|BEGIN" "$tmp/err" && fail "$what: the key's secret is in the message"
}
# absent WHAT TABLE ROW: ROW is not in TABLE, asked of the emulator directly.
absent() {
	checks=$((checks + 1))
	direct read "$2" prefix="$3" | grep -q "^$3\$" && fail "$1: $2/$3 was written"
}

# ---- cellctl
check "cellctl reads through the front" cc "$good" -creds "$key" read pub
check "cellctl writes through the front" cc "$good" -creds "$key" -user-agent tls-test/1 set pub r2 f:a=x
checks=$((checks + 1))
grep -q "user-agent.*tls-test/1" "$tmp/front.log" || fail "-user-agent: not what the front got"
checks=$((checks + 1))
direct read pub prefix=r2 | grep -q '"x"' || fail "the write through the front is not in the emulator"
refused "cellctl, a wrong CA" "$good: UNAVAILABLE: TLS handshake failed" "certificate verify failed" \
	"$tmp/front/other-ca.pem" -- cc "$good" -creds "$key" -cert-file "$tmp/front/other-ca.pem" set pub w1 f:a=x
absent "a wrong CA" pub w1
refused "cellctl, an expired key" "UNAUTHENTICATED" "$account" "key $tmp/front/sa-expired.json" -- \
	cc "$good" -creds "$tmp/front/sa-expired.json" set pub w2 f:a=x
absent "an expired key" pub w2
refused "cellctl, another audience" "$aud: UNAUTHENTICATED" "as service account $account" -- \
	cc "$aud" -creds "$key" set pub w3 f:a=x
absent "another audience" pub w3
refused "cellctl, PERMISSION_DENIED reading" "PERMISSION_DENIED: bigtable.tables.readRows permission denied" \
	"tables/secret" "(ReadRows as service account $account, key $key)" -- cc "$good" -creds "$key" read secret
refused "cellctl, PERMISSION_DENIED writing" "PERMISSION_DENIED: bigtable.tables.mutateRows" "$account" -- \
	cc "$good" -creds "$key" set secret w4 f:a=x
absent "PERMISSION_DENIED" secret w4
check "cellctl reads another table meanwhile" cc "$good" -creds "$key" read pub prefix=r1

# ---- the mount
# mount_f ADDR MNT LOG [OPTION...]: cellfs in the foreground (its log in LOG) through the front at ADDR;
# returns 1 when it exits before mounting.
mount_f() {
	local addr=$1 mnt=$2 log=$3
	shift 3
	mkdir -p "$mnt"
	"$cellfs" "$bt" "$mnt" -f -o "data_endpoint=$addr,admin_endpoint=$addr,cert_file=$ca" "$@" 2>"$log" &
	local pid=$!
	for _ in $(seq 1200); do
		mountpoint -q "$mnt" && { mounts+=("$mnt"); return 0; }
		kill -0 $pid 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# refuses_mount WHAT PATTERN... -- OPTION...: the mount does not start, and says why in one line.
refuses_mount() {
	local what=$1 pats=() p
	shift
	while [ "$1" != -- ]; do pats+=("$1"); shift; done
	shift
	checks=$((checks + 1))
	mkdir -p "$tmp/mnt-no"
	if "$cellfs" "$bt" "$tmp/mnt-no" "$@" 2>"$tmp/err"; then
		mounts+=("$tmp/mnt-no")
		fail "$what: mounted"
		return
	fi
	for p in "${pats[@]}"; do
		grep -q -- "$p" "$tmp/err" || { fail "$what: no \"$p\" in: $(cat "$tmp/err")"; return; }
	done
}
o_good="data_endpoint=$good,admin_endpoint=$good,cert_file=$ca"
refuses_mount "mount, a wrong CA" "TLS handshake failed: certificate verify failed" -- \
	-o "$o_good,creds=$key,cert_file=$tmp/front/other-ca.pem"
refuses_mount "mount, an expired key" "UNAUTHENTICATED" "$account" -- -o "$o_good,creds=$tmp/front/sa-expired.json"
refuses_mount "mount, another audience" "UNAUTHENTICATED" "$account" -- \
	-o "data_endpoint=$aud,admin_endpoint=$aud,cert_file=$ca,creds=$key"

m=$tmp/mnt
if ! mount_f "$good" "$m" "$tmp/mount.log" -o "creds=$key,cache_ttl=1"; then
	fail "mount through the front: $(cat "$tmp/mount.log")"
else
	checks=$((checks + 1))
	[ "$(cat "$m/pub/r1/f/a" 2>&1)" = 1 ] || fail "mount: pub/r1/f/a: $(cat "$m/pub/r1/f/a" 2>&1)"
	for i in 1 2 3 4 5; do
		ls "$m/secret" >/dev/null 2>"$tmp/ls.err"
		sleep 0.3
	done
	checks=$((checks + 1))
	grep -q "Permission denied" "$tmp/ls.err" || fail "mount: ls of a denied table: $(cat "$tmp/ls.err")"
	checks=$((checks + 1))
	if echo x 2>"$tmp/w.err" >"$m/secret/s1/f/w5"; then
		fail "mount: a write into a denied table succeeded"
	fi
	absent "mount, PERMISSION_DENIED" secret s1/f/w5
	checks=$((checks + 1))
	direct read secret | grep -q w5 && fail "mount: a write into the denied table reached the emulator"
	checks=$((checks + 1))
	echo y >"$m/pub/r1/f/b" && [ "$(cat "$m/pub/r1/f/b")" = y ] || fail "mount: another table stopped working"
	fusermount3 -u "$m"
	sleep 0.5
	checks=$((checks + 1))
	n=$(grep -c "permission denied: .*PERMISSION_DENIED: .*tables/secret" "$tmp/mount.log")
	dups=$(grep "permission denied: " "$tmp/mount.log" | sed 's/^cellfs: [a-z]*: //' | sort | uniq -d | wc -l)
	if [ "$n" -lt 1 ] || [ "$dups" -ne 0 ] || [ "$n" -gt 3 ]; then
		fail "mount: want each refusal logged once ($n lines, $dups repeated):"
		sed 's/^/    /' "$tmp/mount.log" | head -20
	fi
	checks=$((checks + 1))
	grep "permission denied: " "$tmp/mount.log" | grep -vq "$account" && fail "mount: a refusal without the account"
fi

# Renewal: JWTs of 4 s, a mount that lives a minute, a write and a read every 5 s.
m=$tmp/mnt-renew
if ! CELLFS_BT_TOKEN_SECONDS=4 mount_f "$renew" "$m" "$tmp/renew-mount.log" -o "creds=$key,cache_ttl=1"; then
	fail "mount for renewal: $(cat "$tmp/renew-mount.log")"
else
	for i in $(seq 12); do
		checks=$((checks + 1))
		if ! echo "v$i" >"$m/pub/r1/f/n$i" 2>"$tmp/err"; then
			fail "renewal: write $i: $(cat "$tmp/err")"
		elif [ "$(cat "$m/pub/r1/f/n$i" 2>&1)" != "v$i" ]; then
			fail "renewal: read $i: $(cat "$m/pub/r1/f/n$i" 2>&1)"
		fi
		sleep 5
	done
	fusermount3 -u "$m"
	checks=$((checks + 1))
	jwts=$(grep ' auth=jwt ' "$tmp/renew.log" | grep -o ' fp=[0-9a-f]*' | sort -u | wc -l)
	[ "$jwts" -ge 6 ] || fail "renewal: $jwts distinct JWTs over a minute of 4 s ones"
	checks=$((checks + 1))
	grep -q 'outcome=UNAUTHENTICATED' "$tmp/renew.log" && fail "renewal: a call was refused: $(grep -m1 UNAUTH "$tmp/renew.log")"
	checks=$((checks + 1))
	[ "$(direct read pub prefix=r1 | grep -c 'f:n')" -eq 12 ] || fail "renewal: not every write reached the emulator"
fi
finish
