#!/bin/bash
# storenames.sh CELLCTL — what a store's name may be (--db, $CELLFS_DB, copy's SRC and DST): a name that
# starts like a URL (a scheme, ':' and '/') but is not SCHEME://..., or any bigtable: name that is not
# bigtable://PROJECT/INSTANCE, is refused naming it, and nothing is created; a path that only holds a
# colon (foo:bar), or starts with ./, is a directory. No Bigtable emulator is needed: the names are
# refused before anything is contacted.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export LC_ALL=C
cellctl=$(realpath "$cellctl") # (the cases run in $tmp, for the relative names)
cd "$tmp" || exit 1

bt_hint='a Bigtable store is named bigtable://PROJECT/INSTANCE (start the path with ./ to name a directory so)'
url_hint='it starts with a URL scheme cellfs does not know: a store is a directory or bigtable://PROJECT/INSTANCE (start the path with ./ to name a directory so)'

ok createtable t families=f
ok set t r f:a=1@1000

# nothing of a refused name may appear in the working directory (relative names) or anywhere under tmp
nothing_made() {
	checks=$((checks + 1))
	local left
	left=$(find "$tmp" -mindepth 1 -maxdepth 1 ! -name db ! -name home ! -name 'want.*' ! -name 'got.*' | head -3)
	[ -z "$left" ] || failed "$1: created $left"
}

# ---- copy's destination and source
run 1 "cellctl copy: cannot open store \"bigtable:/demo/x\": $bt_hint" "$cellctl" copy "$db" bigtable:/demo/x
nothing_made "copy to bigtable:/demo/x"
run 1 "cellctl copy: cannot open store \"bigtable:demo/x\": $bt_hint" "$cellctl" copy "$db" bigtable:demo/x
nothing_made "copy to bigtable:demo/x"
run 1 "cellctl copy: cannot open store \"Bigtable://demo/x\": $bt_hint" "$cellctl" copy "$db" Bigtable://demo/x
nothing_made "copy to Bigtable://demo/x"
run 1 "cellctl copy: cannot open store \"bigtable:/demo/x\": $bt_hint" "$cellctl" copy bigtable:/demo/x "$tmp/dst"
nothing_made "copy from bigtable:/demo/x"
run 1 "cellctl copy: cannot open store \"s3:/bucket/x\": $url_hint" "$cellctl" copy "$db" s3:/bucket/x
nothing_made "copy to s3:/bucket/x"
run 1 "cellctl copy: cannot open store \"HTTP://h/x\": $url_hint" "$cellctl" copy "$db" HTTP://h/x
nothing_made "copy to HTTP://h/x"

# ---- --db and $CELLFS_DB, for a command that creates its store
run 1 "cellctl createtable: cannot open store \"bigtable:/demo/x\": $bt_hint" \
	"$cellctl" --db bigtable:/demo/x createtable t
nothing_made "createtable in bigtable:/demo/x"
run 1 "cellctl createtable: cannot open store \"bigtable:\": $bt_hint" "$cellctl" --db bigtable: createtable t
nothing_made "createtable in bigtable:"
run 1 "cellctl restore: cannot open store \"file:/x\": $url_hint" \
	env CELLFS_DB=file:/x "$cellctl" restore /dev/null
nothing_made "restore into file:/x"
run 1 "cellctl ls: cannot open store \"bigtable:/demo/x\": $bt_hint" env CELLFS_DB=bigtable:/demo/x "$cellctl" ls
nothing_made "ls of bigtable:/demo/x"

# ---- what stays a directory: a colon without a slash after it; a path starting with ./
run 0 "" "$cellctl" --db foo:bar createtable t
checks=$((checks + 1))
[ -e "$tmp/foo:bar/data.mdb" ] || failed "foo:bar is not a local store"
run 0 "" "$cellctl" copy "$db" ./bigtable:/demo/x
checks=$((checks + 1))
[ -e "$tmp/bigtable:/demo/x/data.mdb" ] || failed "./bigtable:/demo/x is not a local store"
rm -rf "$tmp/foo:bar" "$tmp/bigtable:"

# ---- bigtable:// names the backend cannot parse say which part is wrong (where the backend is built)
"$cellctl" --db bigtable://demo ls >/dev/null 2>"$tmp/got.err"
if ! grep -q 'no backend for bigtable://' "$tmp/got.err"; then
	run 1 'cellctl ls: cannot open store "bigtable://demo": a bigtable:// name is bigtable://PROJECT/INSTANCE: the instance is missing' \
		"$cellctl" --db bigtable://demo ls
	run 1 'cellctl ls: cannot open store "bigtable://demo/": a bigtable:// name is bigtable://PROJECT/INSTANCE: the instance is missing or malformed' \
		"$cellctl" --db bigtable://demo/ ls
	run 1 'cellctl ls: cannot open store "bigtable:///x": a bigtable:// name is bigtable://PROJECT/INSTANCE: the project is missing or malformed' \
		"$cellctl" --db bigtable:///x ls
	run 1 'cellctl ls: cannot open store "bigtable://": a bigtable:// name is bigtable://PROJECT/INSTANCE: the project is missing or malformed' \
		"$cellctl" --db bigtable:// ls
fi
nothing_made "bigtable:// names"

finish
