#!/bin/bash
# verify_flips.sh CELLCTL — `cellctl verify` over many copies of a small store, each with one byte
# changed: it must never crash (run it from an ASan+UBSan build to catch memory errors too), it exits 0
# or 1, and a failure is reported on stderr in exactly one "cellctl verify: ..." line. Bytes in use
# (non-zero) are chosen mostly, since most of a small LMDB file is free space.
set -u

cellctl=${1:?usage: verify_flips.sh CELLCTL [N]}
n=${2:-200}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cellfs-flips.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C
db=$tmp/db
failures=0
failed() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

"$cellctl" --db "$db" createtable t "families=a:maxversions=2,b" >/dev/null || exit 1
"$cellctl" --db "$db" set t r1 a:x=1@1000 a:x=2@2000 a:x=3@3000 b:y=hello@5000 >/dev/null
"$cellctl" --db "$db" set t $'r\n2' "b:z=$(printf 'compress me %.0s' $(seq 50))@7000" >/dev/null
"$cellctl" --db "$db" set t "$(printf 'L%.0s' $(seq 500))" a:long=v@1000 >/dev/null
"$cellctl" --db "$db" createtable u families=f >/dev/null
"$cellctl" --db "$db" deletefamily t b >/dev/null
"$cellctl" --db "$db" verify >/dev/null || { echo "FAIL: the clean store does not verify"; exit 1; }

size=$(stat -c %s "$db/data.mdb")
mapfile -t used < <(od -An -v -tu1 -w1 "$db/data.mdb" | awk '$1 != 0 { print NR - 1 }')
seed=12345
detected=0
for ((i = 0; i < n; i++)); do
	seed=$(((seed * 1103515245 + 12345) % 2147483648))
	if ((i % 5 == 4)); then off=$((seed % size)); else off=${used[$((seed % ${#used[@]}))]}; fi
	x=$(((seed >> 8) % 255 + 1))
	rm -rf "$tmp/c"
	mkdir "$tmp/c"
	cp "$db/data.mdb" "$tmp/c/"
	b=$(od -An -tu1 -j "$off" -N1 "$tmp/c/data.mdb" | tr -d ' ')
	printf "\\$(printf %03o $((b ^ x)))" | dd of="$tmp/c/data.mdb" bs=1 seek="$off" conv=notrunc status=none
	timeout 300 "$cellctl" --db "$tmp/c" verify >"$tmp/out" 2>"$tmp/err"
	status=$?
	if grep -qE 'Sanitizer|runtime error' "$tmp/err"; then
		failed "offset $off xor $x: $(grep -m1 -E 'Sanitizer|runtime error' "$tmp/err")"
	elif [ $status -ne 0 ] && [ $status -ne 1 ]; then
		failed "offset $off xor $x: exit status $status"
	elif [ $status -eq 1 ] && { [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q '^cellctl verify: ' "$tmp/err"; }; then
		failed "offset $off xor $x: stderr is not one cellctl verify line: $(head -3 "$tmp/err")"
	elif [ $status -eq 0 ] && [ -s "$tmp/err" ]; then
		failed "offset $off xor $x: exit 0 with stderr: $(head -3 "$tmp/err")"
	fi
	[ $status -eq 1 ] && detected=$((detected + 1))
done
echo "verify_flips.sh: $n copies with one byte changed, $detected reported damaged, $failures failures"
[ "$detected" -gt 0 ] || failed "no damage detected at all"
[ $failures -eq 0 ]
