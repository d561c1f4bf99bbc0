#!/bin/sh
# tools_layout.sh SRCDIR — tools/'s layers are its folders (tools/README.md, "Layers"), and they hold:
#   1. the top folder holds the commands and the cellctl_core library only; every other source file lives
#      in a sub-folder (tools/import/, tools/keyviz/), and every folder's README.md names each of its
#      source files and stays short (under 200 lines); the top README's tour names every sub-folder;
#   2. includes follow the layers: the core includes only the core; a sub-folder includes its own
#      headers, the core's and cellstore.h (the import command's own part, import.h and import_ddb.c,
#      also cellctl.h and progress.h); no sub-folder includes another's; a folder's *_internal.h is
#      included from that folder only;
#   3. no function of tools/ has the shape of another one (its body of 8 lines or more the same once
#      names, numbers and string contents are set aside): shared code is written once.
# Fails naming every file or pair at fault.
src=${1:?usage: tools_layout.sh SRCDIR}
LC_ALL=C
export LC_ALL
strip_awk=$(cd "$src/tests/unit" && pwd)/cstrip.awk || exit 1
cd "$src/tools" || exit 1
status=0
bad() {
	echo "tools-layout: $*"
	status=1
}

core='args.c args.h cbtfmt.c cbtfmt.h goprint_table.c jsonfmt.c jsonfmt.h jsonout.c jsonout.h'
commands='cellctl.c cellctl.h ccremote.c ccremote.h progress.c progress.h'
import_cmd='import.h import_ddb.c'

# 1. Folders and their READMEs.
for f in *.c *.h; do
	case " $core $commands " in *" $f "*) continue ;; esac
	case $f in cmd_*.c) continue ;; esac
	bad "$f is neither a command nor part of cellctl_core: it belongs in a sub-folder (tools/README.md, \"Layers\")"
done
if [ ! -d import ] || [ ! -d keyviz ]; then
	bad "the importers and the key visualizer have no folders of their own (tools/import/, tools/keyviz/)"
fi
for d in . */; do
	[ -d "$d" ] || continue
	d=${d%/}
	name=tools/${d#.}
	[ -f "$d/README.md" ] || { bad "$name has no README.md"; continue; }
	n=$(wc -l <"$d/README.md")
	[ "$n" -lt 200 ] || bad "${name%/}/README.md has $n lines (keep it under 200: what is where, and where to change it)"
	for f in "$d"/*.c "$d"/*.h; do
		[ -e "$f" ] || continue
		stem=${f##*/}
		stem=${stem%.?}
		grep -Eq "(^|[^A-Za-z0-9_])$stem\.[ch]([^A-Za-z0-9_]|$)" "$d/README.md" ||
			bad "${name%/}/README.md does not name ${f##*/}"
	done
done
for d in */; do
	[ -d "$d" ] || continue
	sed -n '/^## Source layout/,/^## [^S]/p' ../README.md | grep -q "tools/$d" ||
		bad "the top README's \"Source layout\" does not name tools/$d"
done

# 2. Includes. "file header" pairs: every #include "..." of every source file.
edges=$(mktemp "${TMPDIR:-/tmp}/tools_layout.XXXXXX") || exit 1
trap 'rm -f "$edges"' EXIT
for f in *.c *.h */*.c */*.h; do
	[ -e "$f" ] || continue
	sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r h; do
		printf '%s %s\n' "$f" "$h"
	done
done >"$edges"
where() { # the folder of header $1 included from folder $2 (".": the top; "store": the store's header)
	case $1 in
	cellstore.h) echo store ;;
	*/*) [ -f "$1" ] && echo "${1%/*}" || echo "?" ;;
	*) if [ -f "$2/$1" ]; then echo "$2"; elif [ -f "$1" ]; then echo .; else echo "?"; fi ;;
	esac
}
while read -r f h; do
	from=$(dirname "$f")
	to=$(where "$h" "$from")
	base=${f##*/}
	h=${h##*/}
	case $to in
	"?") bad "$f includes \"$h\", which no folder of tools/ holds"; continue ;;
	store) continue ;;
	esac
	case $h in *_internal.h) [ "$to" = "$from" ] || bad "$f includes $to/$h, another folder's internal header" ;; esac
	if [ "$from" = . ]; then
		case " $core " in *" $base "*)
			case " $core " in *" $h "*) ;; *) bad "$f (cellctl_core) includes $h, which is not the core's" ;; esac
		esac
		continue
	fi
	[ "$to" = "$from" ] && continue
	[ "$to" = . ] && case " $core " in *" $h "*) continue ;; esac
	if [ "$to" = . ] && [ "$from" = import ]; then
		case " $import_cmd " in *" $base "*)
			case $h in cellctl.h|progress.h) continue ;; esac
		esac
	fi
	bad "$f includes $to/$h: a sub-folder includes its own headers, the core's and cellstore.h"
done <"$edges"

# 3. Functions of one shape: each function's body (from "{" to "}" at column 0) without comments and
# blank lines, with identifiers, numbers and the contents of string and character literals set aside.
set --
for f in *.c */*.c; do [ -e "$f" ] && set -- "$@" "$f"; done
awk -v min=8 "$(cat "$strip_awk")"'
# strip() (tests/unit/cstrip.awk): code without comments and the contents of literals.
function shape(s) {
	gsub(/[A-Za-z_][A-Za-z0-9_]*/, "x", s)
	gsub(/[0-9]+/, "0", s)
	gsub(/[ \t]+/, " ", s)
	gsub(/x( x)+/, "x", s)
	sub(/^ /, "", s)
	sub(/ $/, "", s)
	return s
}
FNR == 1 { incomment = 0; sig = ""; inbody = 0 }
{
	l = strip($0)
	if (inbody) {
		if ($0 ~ /^}/) {
			inbody = 0
			if (nl >= min) {
				if (body in seen) { print "tools-layout: " seen[body] " and " here " have one shape (share the code)"; dups++ }
				else seen[body] = here
			}
			next
		}
		l = shape(l)
		if (l != "") { body = body "\n" l; nl++ }
		next
	}
	if ($0 ~ /^{/ && sig != "") { inbody = 1; body = ""; nl = 0; here = FILENAME ":" FNR " " sig "()"; sig = ""; next }
	if (l ~ /^[A-Za-z_]/ && l ~ /\(/ && l !~ /;[ \t]*$/ && l !~ /^(typedef|struct|enum|union)[ \t]/) {
		sig = l; sub(/[ \t]*\(.*/, "", sig); sub(/.*[ \t*]/, "", sig); next
	}
	if (l ~ /;[ \t]*$/ || l ~ /^}/) sig = ""
}
END { exit dups ? 1 : 0 }' "$@" || status=1

[ $status = 0 ] && echo "tools-layout: layers, includes and function shapes as tools/README.md says"
exit $status
