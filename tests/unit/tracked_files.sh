#!/bin/sh
# tracked_files.sh SRCDIR — what the suites leave behind in the source tree is not committed: no tracked
# file is one .gitignore ignores, and no Python bytecode (__pycache__/, *.pyc) is tracked. Skips (77)
# outside a git work tree (a release tarball).
src=${1:?usage: tracked_files.sh SRCDIR}
if ! command -v git >/dev/null || ! git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "SKIP: $src is not a git work tree"
	exit 77
fi
status=0
found=$(git -C "$src" ls-files -- ':(glob)**/__pycache__/**' ':(glob)**/*.pyc')
if [ -n "$found" ]; then
	echo "Python bytecode is committed (git rm --cached it; .gitignore ignores it):"
	echo "$found"
	status=1
fi
found=$(git -C "$src" ls-files -ci --exclude-standard)
if [ -n "$found" ]; then
	echo "committed files that .gitignore ignores:"
	echo "$found"
	status=1
fi
for probe in tests/mount/__pycache__/x.cpython-311.pyc tools/__pycache__/x.pyc; do
	git -C "$src" check-ignore -q --no-index "$probe" || {
		echo "not ignored by .gitignore: $probe"
		status=1
	}
done
exit $status
