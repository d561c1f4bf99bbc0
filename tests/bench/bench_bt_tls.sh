#!/bin/bash
# bench_bt_tls.sh CELLCTL CELLFS [DELAY_MS] — what TLS and credentials cost the Bigtable mount at a
# distance: a table of 2,000 files (20 key directories), mounted twice through delayproxy.py at DELAY_MS
# (default 2) each way, once plaintext to the emulator, once through the TLS front (tests/bigtable/
# tlsfront.py: TLS, a service account's self-signed JWTs checked on every call); prints the fresh
# `ls -lR` time of each, three rounds (each on a fresh mount), and the calls the TLS mount made.
# By hand; figures in tests/bench/README.md.
set -u
cellctl=${1:?usage: bench_bt_tls.sh CELLCTL CELLFS [DELAY_MS]}
cellfs=${2:?usage: bench_bt_tls.sh CELLCTL CELLFS [DELAY_MS]}
delay=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../oracle/emulator.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cellfs-bench-tls.XXXXXX") || exit 1
pids=()
cleanup() {
	fusermount3 -uz "$tmp/m" 2>/dev/null
	kill "${pids[@]}" 2>/dev/null
	front_stop
	emulator_stop
	rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp" || exit 1
emulator_start emu.log || exit 1
for i in $(seq 0 1999); do echo "a$((i % 20))#$i,v$i"; done | (printf ',f\n,q\n'; cat) >in.csv
"$cellctl" --db bigtable://p/i createtable t families=f >/dev/null && "$cellctl" --db bigtable://p/i import t in.csv >/dev/null || exit 1
front_start fd --log front.log || exit 1
python3 "$here/../bigtable/delayproxy.py" "$front_addr" "$delay" >tls.addr & pids+=($!)
python3 "$here/../bigtable/delayproxy.py" "$BIGTABLE_EMULATOR_HOST" "$delay" >plain.addr & pids+=($!)
while ! [ -s tls.addr ] || ! [ -s plain.addr ]; do sleep 0.1; done
tls=$(head -1 tls.addr) plain=$(head -1 plain.addr) emu=$BIGTABLE_EMULATOR_HOST
unset BIGTABLE_EMULATOR_HOST
mkdir m
# walk NAME CELLFS-ARGS...: mount, time a fresh ls -lR, unmount.
walk() {
	local name=$1 s e
	shift
	"$@" || exit 1
	s=$(date +%s.%N)
	ls -lR m/t >/dev/null
	e=$(date +%s.%N)
	fusermount3 -u m
	printf '%s %.2f s\n' "$name" "$(echo "$e - $s" | bc)"
}
for round in 1 2 3; do
	walk plaintext env BIGTABLE_EMULATOR_HOST="$plain" "$cellfs" bigtable://p/i m -o cache_ttl=600
	n=$(wc -l <front.log)
	walk tls "$cellfs" bigtable://p/i m -o "creds=fd/sa.json,data_endpoint=$tls,admin_endpoint=$tls,cert_file=fd/ca.pem,cache_ttl=600"
	echo "tls calls: $(( $(wc -l <front.log) - n ))"
done
