#!/usr/bin/env bash
# tests/fuzz/run.sh [SECONDS] [TARGET...] — build the fuzz targets with clang's libFuzzer, ASan and UBSan
# in build-fuzz/, run each (every target if none is named) for SECONDS (default 60) over a copy of its
# saved corpus, one at a time, and print the executions per target and in total. Not part of meson test
# or tests/check.
#
#   FUZZ_CPU=1     pin the fuzzers to that CPU (taskset), so they share a machine politely
#   MERGE=1        afterwards, add to tests/fuzz/corpus/<target>/ the new inputs that reach new edges
#                  (libFuzzer's -merge=1 -use_counters=0: the saved corpus grows only by inputs that
#                  cover code it does not, not by every new hit count, so it stays small)
#
# A failing input is saved as build-fuzz/crash/<target>/crash-*; replay it with
# build/tests/fuzz/fuzz_<target> FILE (or build-fuzz/fuzz_<target> FILE). Exit status 1 if any target
# failed.
set -euo pipefail
cd "$(dirname "$0")/../.."

secs=${1:-60}
[ $# -gt 0 ] && shift
all=(name keys codec csv jsonl ddbjson gcpolicy dump btm)
targets=("${@:-${all[@]}}")
out=build-fuzz
cc=${CLANG:-clang}

if ! command -v "$cc" >/dev/null; then
	echo "run.sh: $cc not found (Debian: apt-get install clang)" >&2
	exit 1
fi

flags=(-g -O1 -std=gnu11 -D_GNU_SOURCE -fno-omit-frame-pointer -fsanitize=address,undefined
       -fno-sanitize-recover=undefined -Istore -Istore/include -Ifs -Itools -Itests/fuzz)
mkdir -p "$out/obj"

# The store library once, instrumented for coverage but without libFuzzer's main.
store_lib=$out/libcellstore-fuzz.a
if [ ! -f "$store_lib" ] || [ -n "$(find store -name '*.[ch]' -newer "$store_lib")" ]; then
	rm -f "$store_lib"
	for c in store/*.c; do
		"$cc" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$c" -o "$out/obj/$(basename "${c%.c}").o"
	done
	ar rcs "$store_lib" "$out"/obj/*.o
fi

build() { # build TARGET
	local t=$1 src=()
	case $t in
	name) src=(fs/name.c) ;;
	csv) src=(tools/import/csv.c -Itools/import) ;;
	jsonl) src=(tools/import/jsonin.c tools/import/jsonlex.c tools/jsonout.c -Itools/import) ;;
	ddbjson) src=(tools/import/ddbjson.c tools/import/jsonlex.c tools/jsonout.c -Itools/import) ;;
	btm) src=(store/bigtable/btm.c -Istore/bigtable) ;;
	keys|codec|gcpolicy|dump) src=("$store_lib" -llmdb -lzstd -lpthread) ;;
	*) echo "run.sh: unknown target $t (targets: ${all[*]})" >&2; return 1 ;;
	esac
	"$cc" "${flags[@]}" -fsanitize=fuzzer "tests/fuzz/fuzz_$t.c" "${src[@]}" -o "$out/fuzz_$t"
}

pin=()
[ -n "${FUZZ_CPU:-}" ] && command -v taskset >/dev/null && pin=(taskset -c "$FUZZ_CPU")

status=0 total=0
for t in "${targets[@]}"; do
	build "$t" || { status=1; continue; }
	mkdir -p "$out/corpus/$t" "$out/crash/$t"
	cp -n tests/fuzz/corpus/"$t"/* "$out/corpus/$t/" 2>/dev/null || true
	log=$out/$t.log
	rc=0
	"${pin[@]}" nice "$out/fuzz_$t" -max_total_time="$secs" -print_final_stats=1 -timeout=10 \
		-rss_limit_mb=2048 -artifact_prefix="$out/crash/$t/" "$out/corpus/$t" >"$log" 2>&1 || rc=$?
	execs=$(awk '/stat::number_of_executed_units:/ {print $2}' "$log" | tail -1)
	execs=${execs:-0}
	total=$((total + execs))
	if [ $rc -ne 0 ]; then
		status=1
		printf '%-10s %12s executions  FAILED (exit %d): see %s, %s\n' "$t" "$execs" "$rc" "$log" "$out/crash/$t/"
		grep -m3 -E 'ERROR|property does not hold|runtime error|Test unit written' "$log" | sed 's/^/    /' || true
	else
		printf '%-10s %12s executions in %ss\n' "$t" "$execs" "$secs"
	fi
	if [ -n "${MERGE:-}" ] && [ $rc -eq 0 ]; then
		"$out/fuzz_$t" -merge=1 -use_counters=0 "tests/fuzz/corpus/$t" "$out/corpus/$t" >"$out/$t.merge.log" 2>&1 ||
			{ echo "run.sh: merging $t failed: see $out/$t.merge.log" >&2; status=1; }
	fi
done
printf '%-10s %12s executions\n' total "$total"
exit $status
