#!/bin/sh
# contract_refs.sh SRCDIR — the mount's contract is fs/CONTRACT.md, and every citation can be followed:
# a file that says "the contract" names fs/CONTRACT.md there (on that line or the next), nothing cites a
# contract.md elsewhere (the design notes it came from are not in the tree), and each section cited as
# fs/CONTRACT.md, "Section" is a "## Section" heading of it. Reads the files git knows (tracked, or new
# and not ignored), else every file outside build*/ and .git/.
src=${1:?usage: contract_refs.sh SRCDIR}
doc=fs/CONTRACT.md
cd "$src" || exit 1
if [ ! -f "$doc" ]; then
	echo "$doc: missing (the mount's contract, which code, docs and tests cite)"
	exit 1
fi
if command -v git >/dev/null && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	files=$(git ls-files -co --exclude-standard)
else
	files=$(find . -path ./.git -prune -o -path './build*' -prune -o -type f -print | sed 's|^\./||')
fi
me=tests/unit/contract_refs.sh
sections=$(sed -n 's/^## //p' "$doc")
status=0
for f in $files; do
	case $f in "$doc" | "$me") continue ;; esac
	[ -f "$f" ] || continue
	grep -Iq . "$f" 2>/dev/null || continue # binary or empty
	grep -q 'contract' "$f" || continue
	# Each line joined with the next, comment leaders dropped, so a citation may wrap. Prints
	# "LINE<tab>bad<tab>TEXT" for a citation naming no fs/CONTRACT.md or a stale contract.md, and
	# "LINE<tab>section<tab>NAME" for each section cited.
	out=$(awk '
		function strip(s) { sub(/^[ \t]*(#+|\/\/|\/?\*+|"""|--)?[ \t]*/, "", s); return s }
		function check(n, cur, nxt,   both, rest, i) {
			both = cur " " strip(nxt)
			if ((cur ~ /([Tt]he|mount.s) contract/ || (cur ~ /([Tt]he|mount.s)$/ && strip(nxt) ~ /^contract/)) &&
			    both !~ /fs\/CONTRACT\.md/)
				printf "%d\tbad\t%s\n", n, cur
			if (cur ~ /contract\.md/)
				printf "%d\tbad\t%s\n", n, cur
			rest = cur
			while ((i = index(rest, "fs/CONTRACT.md, \"")) > 0) {
				rest = substr(rest, i + 17)
				if ((i = index(rest, "\"")) > 0)
					printf "%d\tsection\t%s\n", n, substr(rest, 1, i - 1)
				else if ((i = index(strip(nxt), "\"")) > 0)
					printf "%d\tsection\t%s\n", n, rest " " substr(strip(nxt), 1, i - 1)
			}
		}
		NR > 1 { check(NR - 1, prev, $0) }
		{ prev = $0 }
		END { if (NR) check(NR, prev, "") }
	' "$f")
	[ -n "$out" ] || continue
	while IFS='	' read -r n kind text; do
		case $kind in
		bad)
			echo "$f:$n: cites the contract without naming $doc (or cites a contract.md): $text"
			status=1
			;;
		section)
			if ! printf '%s\n' "$sections" | grep -qxF -- "$text"; then
				echo "$f:$n: cites section \"$text\" of $doc, which has no heading \"## $text\""
				status=1
			fi
			;;
		esac
	done <<EOF
$out
EOF
done
exit $status
