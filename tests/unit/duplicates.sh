#!/bin/sh
# duplicates.sh SRCDIR — no code is written twice: `duplicates` (the tree's copy finder) lists no pair of
# places sharing a run of 11 or more lines of one shape, but pairs of meson.build files (test tables) and
# the pairs of files duplicates.allow names (test tables in test files, each with its reason).
# Skips (77) where `duplicates` is not installed, outside a git work tree (a release tarball), or when it
# could not read the whole tree. Fails listing every pair: share the code (a helper in the folder's lib).
src=${1:?usage: duplicates.sh SRCDIR}
LC_ALL=C
export LC_ALL
if ! command -v duplicates >/dev/null; then
	echo "SKIP: the duplicates tool is not installed"
	exit 77
fi
if ! command -v git >/dev/null || ! git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "SKIP: $src is not a git work tree"
	exit 77
fi
out=$(cd "$src" && duplicates --min-lines 11 --most 200 --seconds 600) || {
	echo "duplicates failed: $out"
	exit 1
}
if printf '%s\n' "$out" | grep -q '^incomplete:'; then
	printf 'SKIP: duplicates did not read the whole tree:\n%s\n' "$out"
	exit 77
fi
allow=$(dirname "$0")/duplicates.allow
[ -r "$allow" ] || { echo "duplicates: no $allow"; exit 1; }
rows=$(printf '%s\n' "$out" | awk -v allow="$allow" '
	BEGIN {
		while ((getline line < allow) > 0) {
			sub(/#.*/, "", line)
			if (split(line, f, " ") == 2) { ok[f[1], f[2]] = 1; ok[f[2], f[1]] = 1 }
		}
	}
	$1 !~ /^D[0-9]+$/ || $3 != "~" { next }
	{ a = $2; b = $4; sub(/:[0-9-]+$/, "", a); sub(/:[0-9-]+$/, "", b) }
	a ~ /(^|\/)meson\.build$/ && b ~ /(^|\/)meson\.build$/ { next }
	(a, b) in ok { next }
	{ print }')
if [ -n "$rows" ]; then
	echo "code written twice (share it through the folder's helper file: tests/unit/README.md, duplicates.sh):"
	printf '%s\n' "$rows"
	exit 1
fi
echo "duplicates: no run of 11 lines twice outside meson.build and test tables"
