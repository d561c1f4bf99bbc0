#!/bin/bash
# front.sh CELLCTL — tlsfront.py, the loopback stand-in for Google's front end, proven with cbt (the oracle)
# through TLS with real credentials, never with BIGTABLE_EMULATOR_HOST: -creds (the key exchanged at the
# front's token endpoint), -access-token, tokens of 3 s renewed across a long import; an expired or unknown
# key, a wrong CA, a denied method on one table and a wrong app profile fail as Google fails them, and
# nothing refused reaches the emulator (read back directly). Then the self-signed JWT path the C client
# takes (frontclient.py): accepted, and refused when expired, for another audience, of an unknown kid,
# signed by the disabled key, or without the routing header. Skips (77) without cbt or python3's grpc,
# jwt and cryptography; the emulator as lib.sh says.
self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cbt=${CBT:-/usr/bin/cbt}
if ! [ -x "$cbt" ]; then
	echo "SKIP: cbt not found ($cbt)"
	exit 77
fi
. "$self/../oracle/emulator.sh" # (front_python, front_start: the fronts lib.sh's cleanup stops)
if ! py=$(front_python); then
	echo "SKIP: no python3 with the modules grpc, jwt and cryptography (Debian: python3-grpcio python3-jwt python3-cryptography)"
	exit 77
fi
. "$self/lib.sh"
emu=$BIGTABLE_EMULATOR_HOST
unset BIGTABLE_EMULATOR_HOST GOOGLE_APPLICATION_CREDENTIALS CBT_EMULATOR_HOST
mkdir -p "$tmp/home"
export HOME=$tmp/home
dir=$tmp/keys

# start_front NAME DIR [OPTIONS...]: a front logging to $tmp/NAME.log; sets $addr to its gRPC address.
start_front() {
	local name=$1 d=$2
	shift 2
	if ! BIGTABLE_EMULATOR_HOST=$emu front_start "$d" --log "$tmp/$name.log" "$@"; then
		fail "front $name did not start"
		return 1
	fi
	addr=$front_addr
}

# cbtf ADDR FLAGS... CMD...: cbt through the front at ADDR (TLS, DIR's CA); cbtd CMD...: the emulator itself.
cbtf() {
	local a=$1
	shift
	"$cbt" -project p -instance i -data-endpoint "$a" -admin-endpoint "$a" -cert-file "$dir/ca.pem" \
		-timeout 300s "$@"
}
cbtd() { BIGTABLE_EMULATOR_HOST=$emu "$cbt" -creds /dev/null -project p -instance i "$@"; }
fc() { "$py" "$self/frontclient.py" "$@"; }

# must_fail WHAT WANT CMD...: CMD fails (status 1, not a crash or a timeout) with WANT in its output.
must_fail() {
	local what=$1 want=$2
	shift 2
	checks=$((checks + 1))
	"$@" >"$tmp/mf.out" 2>&1
	local rc=$?
	if [ $rc -ne 1 ] || ! grep -qF -- "$want" "$tmp/mf.out"; then
		fail "$what: status $rc (want 1), output without \"$want\":"
		sed 's/^/    /' "$tmp/mf.out" | head -10
		return 1
	fi
}
# same WHAT WANT CMD...: CMD succeeds and prints exactly WANT.
same() {
	local what=$1 want=$2
	shift 2
	checks=$((checks + 1))
	local got
	got=$("$@" 2>"$tmp/same.err")
	local rc=$?
	if [ $rc -ne 0 ] || [ "$got" != "$want" ]; then
		fail "$what: status $rc, got \"$got\", want \"$want\" $(head -3 "$tmp/same.err")"
		return 1
	fi
}

# has WANT CMD...: CMD succeeds and its output (stdout and stderr) has WANT; joined CMD...: CMD's output
# lines sorted, on one line; keys CMD...: the row keys in cbt read's output, on one line.
has() {
	local want=$1
	shift
	"$@" >"$tmp/has.out" 2>&1 && grep -qF -- "$want" "$tmp/has.out" || { cat "$tmp/has.out"; return 1; }
}
joined() { "$@" | sort | tr '\n' ' ' | sed 's/ $//'; }
keys() { "$@" | grep '^[^- ]' | sort | tr '\n' ' ' | sed 's/ $//'; }

token=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
start_front main "$dir" --headers --access-token "$token" --deny ReadRows:secret || { finish; exit; }
main=$addr
for f in ca.pem other-ca.pem sa.json sa-expired.json sa-unknown.json; do
	check "$f made" test -s "$dir/$f"
done
check "sa.json is a service account's key" "$py" -c '
import json, sys
k = json.load(open(sys.argv[1]))
assert k["type"] == "service_account" and k["client_email"] == "front-test@p.iam.gserviceaccount.com"
assert k["token_uri"].startswith("http://127.0.0.1:") and len(k["private_key_id"]) == 40
assert "BEGIN PRIVATE KEY" in k["private_key"] and k["project_id"] == "p"' "$dir/sa.json"

# ---- cbt -creds: the key exchanged for access tokens at the front's token endpoint
sa="-creds $dir/sa.json"
check "createtable" cbtf "$main" $sa createtable t
check "createfamily" cbtf "$main" $sa createfamily t f
check "set" cbtf "$main" $sa set t r f:c=v
check "read through the front is the emulator's read" bash -c 'diff <("$0" -project p -instance i \
	-data-endpoint "$1" -admin-endpoint "$1" -cert-file "$2/ca.pem" -creds "$2/sa.json" read t) \
	<(BIGTABLE_EMULATOR_HOST=$3 "$0" -creds /dev/null -project p -instance i read t) &&
	BIGTABLE_EMULATOR_HOST=$3 "$0" -creds /dev/null -project p -instance i read t | grep -q "\"v\""' \
	"$cbt" "$main" "$dir" "$emu"
same "ls" t cbtf "$main" $sa ls
same "count" 1 cbtf "$main" $sa count t
check "the log: token exchanges and calls with the access tokens, all OK" bash -c '
	grep -q "method=token auth=assertion .*aud=http://127.0.0.1:[0-9]*/token .*outcome=OK" "$0" &&
	grep -q "method=CreateTable table=t auth=access fp=[0-9a-f]\{8\} .*outcome=OK" "$0" &&
	grep -q "method=MutateRow table=t auth=access .*outcome=OK" "$0" &&
	grep -q "method=ReadRows table=t auth=access .*outcome=OK" "$0" &&
	grep -q "method=ListTables auth=access .*outcome=OK" "$0" &&
	! grep -v "^  headers" "$0" | grep -v "outcome=OK"' "$tmp/main.log"
check "cbt sends the routing header and a bearer" grep -q \
	"x-goog-request-params: table_name=projects%2Fp%2Finstances%2Fi%2Ftables%2Ft&app_profile_id=" "$tmp/main.log"

# ---- cbt -access-token
same "-access-token" 1 cbtf "$main" -access-token "$token" count t
check "logged as the given token" grep -q "method=ReadRows table=t auth=token .*outcome=OK" "$tmp/main.log"
must_fail "another -access-token" "Request had invalid authentication credentials" \
	cbtf "$main" -access-token "x$token" set t r2 f:c=bad

# ---- keys the front refuses, a wrong CA: cbt fails, nothing is written
check "createtable secret" cbtf "$main" $sa createtable secret
check "createfamily secret" cbtf "$main" $sa createfamily secret f
check "set secret" cbtf "$main" $sa set secret r f:c=s
must_fail "sa-expired.json set" "disabled or expired" cbtf "$main" -creds "$dir/sa-expired.json" set t r2 f:c=bad
must_fail "sa-expired.json createtable" "invalid_grant" cbtf "$main" -creds "$dir/sa-expired.json" createtable bad
must_fail "sa-unknown.json set" "unknown key id" cbtf "$main" -creds "$dir/sa-unknown.json" set t r2 f:c=bad
must_fail "sa-unknown.json read" "invalid_grant" cbtf "$main" -creds "$dir/sa-unknown.json" read t
must_fail "other-ca.pem set" "x509: certificate signed by unknown authority" \
	cbtf "$main" $sa -cert-file "$dir/other-ca.pem" set t r2 f:c=bad
must_fail "other-ca.pem ls" "x509: certificate signed by unknown authority" \
	cbtf "$main" $sa -cert-file "$dir/other-ca.pem" ls

# ---- --deny ReadRows:secret: that table's reads, not the other's, not its writes
must_fail "read of the denied table" \
	"bigtable.tables.readRows permission denied on table projects/p/instances/i/tables/secret (or it may not exist)" \
	cbtf "$main" $sa read secret
check "PermissionDenied" grep -q "code = PermissionDenied" "$tmp/mf.out"
same "read of another table" 1 cbtf "$main" $sa count t
check "a write of the denied table" cbtf "$main" $sa set secret r2 f:c=s2
check "logged" grep -q "method=ReadRows table=secret auth=access .*outcome=PERMISSION_DENIED" "$tmp/main.log"

# ---- an app profile: the front of an instance with profile prof only
start_front prof "$dir" --app-profile prof || { finish; exit; }
prof=$addr
check "read app-profile=prof" has '"v"' cbtf "$prof" $sa read t app-profile=prof
must_fail "read app-profile=other" "code = NotFound desc = App profile projects/p/instances/i/appProfiles/other not found" \
	cbtf "$prof" $sa read t app-profile=other
must_fail "read without app profile" "appProfiles/default not found" cbtf "$prof" $sa read t
must_fail "set app-profile=other" "appProfiles/other not found" cbtf "$prof" $sa set t r2 f:c=bad app-profile=other
check "admin calls need no profile" cbtf "$prof" $sa ls

# nothing refused was written (the emulator itself)
same "no row r2 in t" "r" keys cbtd read t
same "secret holds r, r2" "r r2" keys cbtd read secret
same "no table bad" "secret t" joined cbtd ls

# ---- renewal: a front whose tokens last 3 s (its own token endpoint: the keys copied to another DIR)
mkdir -p "$tmp/short"
cp "$dir"/*.pem "$dir/token-secret" "$tmp/short/"
start_front short "$tmp/short" --token-seconds 3 || { finish; exit; }
short=$addr
check "createtable renew" cbtf "$main" $sa createtable renew
check "createfamily renew" cbtf "$main" $sa createfamily renew f
{
	echo ",c"
	seq 1 300 | sed 's/.*/k&,v&/'
} >"$tmp/renew.csv"
check "an import of 300 batches with tokens of 3 s" has "Done importing 300 rows" \
	cbtf "$short" -creds "$tmp/short/sa.json" import renew "$tmp/renew.csv" column-family=f batch-size=1
same "all 300 rows arrived" 300 cbtd count renew
check "every call OK, with more than one token" bash -c '
	[ "$(grep -c "method=MutateRows table=renew auth=access .*outcome=OK" "$0")" = 300 ] &&
	[ "$(grep "method=MutateRows" "$0" | grep -o "fp=[0-9a-f]*" | sort -u | wc -l)" -ge 2 ] &&
	! grep "method=MutateRows" "$0" | grep -v "outcome=OK"' "$tmp/short.log"
echo "# the import used $(grep "method=MutateRows" "$tmp/short.log" | grep -o "fp=[0-9a-f]*" | sort -u | wc -l) tokens for 300 calls"
# a token of 3 s is refused once expired (polled: no bound on how soon)
short_token=$(fc "$short" "$tmp/short" Token)
check "a token from the endpoint" test -n "$short_token"
expired() {
	for _ in $(seq 600); do
		fc "$short" "$tmp/short" ReadRows t --bearer "$1" >/dev/null 2>"$tmp/exp.err" ||
			{ grep -q "UNAUTHENTICATED.*(access token expired" "$tmp/exp.err" && return 0; cat "$tmp/exp.err"; return 1; }
		sleep 0.1
	done
	return 1
}
check "it expires: UNAUTHENTICATED" expired "$short_token"
main_token=$(fc "$main" "$dir" Token)
check "a sibling's token (same DIR secret) is taken" fc "$short" "$tmp/short" ReadRows t --bearer "$main_token"
must_fail "a data-scoped token on the admin API" "PERMISSION_DENIED: Request had insufficient authentication scopes." \
	fc "$main" "$dir" ListTables --bearer "$main_token"
must_fail "sa-unknown.json's token exchange" '400: {"error": "invalid_grant"' fc "$main" "$dir" Token --key "$dir/sa-unknown.json"

# ---- the self-signed JWT (the C client's path): https://HOST:PORT/SERVICE, as gRPC core makes it
same "JWT ListTables" "renew secret t" joined fc "$main" "$dir" ListTables
same "JWT GetTable" projects/p/instances/i/tables/t fc "$main" "$dir" GetTable t
same "JWT ReadRows" r fc "$main" "$dir" ReadRows t
check "JWT SampleRowKeys" fc "$main" "$dir" SampleRowKeys t
same "JWT audience https://HOST/" r fc "$main" "$dir" ReadRows t --aud "https://$main/"
check "the log: auth=jwt, the audience" grep -q \
	"method=ReadRows table=t auth=jwt fp=[0-9a-f]\{8\} kid=[0-9a-f]\{8\} iat=[0-9]* exp=[0-9]* aud=https://$main/google.bigtable.v2.Bigtable outcome=OK" \
	"$tmp/main.log"
check "create table jwtw" cbtf "$main" $sa createtable jwtw
check "createfamily jwtw" cbtf "$main" $sa createfamily jwtw f
must_fail "JWT expired" "(JWT expired" fc "$main" "$dir" MutateRow jwtw --exp-in -5
must_fail "JWT for another audience" "(JWT audience https://bigtable.googleapis.com/" \
	fc "$main" "$dir" MutateRow jwtw --aud https://bigtable.googleapis.com/google.bigtable.v2.Bigtable
must_fail "JWT for the admin API on the data API" "(JWT audience https://$main/google.bigtable.admin.v2" \
	fc "$main" "$dir" MutateRow jwtw --aud "https://$main/google.bigtable.admin.v2.BigtableTableAdmin"
must_fail "JWT of a wrong kid" "(JWT signed by an unknown key: kid 0123" \
	fc "$main" "$dir" MutateRow jwtw --kid 0123456789abcdef0123456789abcdef01234567
must_fail "JWT of sa-expired.json" "disabled or expired" fc "$main" "$dir" MutateRow jwtw --key "$dir/sa-expired.json"
must_fail "JWT of sa-unknown.json" "UNAUTHENTICATED: Request had invalid authentication credentials" \
	fc "$main" "$dir" MutateRow jwtw --key "$dir/sa-unknown.json"
must_fail "JWT from the future" "in the future" fc "$main" "$dir" MutateRow jwtw --iat-in 300 --exp-in 900
must_fail "JWT of more than an hour" "more than 3600" fc "$main" "$dir" MutateRow jwtw --exp-in 4000
must_fail "no authorization" "(no authorization header)" fc "$main" "$dir" MutateRow jwtw --no-auth
must_fail "no routing header" "INVALID_ARGUMENT: Missing x-goog-request-params" \
	fc "$main" "$dir" MutateRow jwtw --routing none
must_fail "routing header of another table" "INVALID_ARGUMENT: x-goog-request-params table_name" \
	fc "$main" "$dir" MutateRow jwtw --routing wrong
must_fail "JWT on the denied table" "PERMISSION_DENIED: bigtable.tables.readRows permission denied" \
	fc "$main" "$dir" ReadRows secret
same "nothing refused was written" 0 cbtd count jwtw
same "JWT MutateRow" OK fc "$main" "$dir" MutateRow jwtw
same "... written" 1 cbtd count jwtw
# --audience-host: every JWT made for the endpoint is for another audience
start_front aud "$dir" --audience-host bigtable.googleapis.com || { finish; exit; }
must_fail "--audience-host: the endpoint's audience refused" "expected https://bigtable.googleapis.com/" \
	fc "$addr" "$dir" ReadRows t
same "--audience-host: its audience taken" r fc "$addr" "$dir" ReadRows t \
	--aud https://bigtable.googleapis.com/google.bigtable.v2.Bigtable

# the fronts end quietly on SIGTERM
front_stop
for f in "$dir"/err.* "$tmp/short"/err.*; do
	check "front ${f##*/} said nothing" bash -c '! [ -s "$0" ] || { cat "$0"; false; }' "$f"
done
finish
