#!/bin/bash
# cbtflags.sh CELLCTL [CELLFS] — cbt's global flags and ~/.cbtrc against the plain emulator
# (BIGTABLE_EMULATOR_HOST set, as cbt runs there): `cellctl -project P -instance I` in every spelling Go's
# flag package takes, `--cbtrc`, a flag winning over the file, -o FILE, the .cbtrc's timeout; what cbt
# prints, cellctl prints (cbt, when found, is the oracle); a bare cellctl stays on the local store
# whatever .cbtrc says; bad flags and bad .cbtrc lines are one clear line each and nothing is written.
# The mount reads the same .cbtrc and -o options (a bad one refuses the mount).
. "$(dirname "$0")/lib.sh"
export LC_ALL=C TZ=UTC
export HOME=$tmp/home CELLFS_DB=$tmp/local
unset CBTRC
mkdir -p "$HOME"
cbt_bin=${CBT:-cbt}
command -v "$cbt_bin" >/dev/null 2>&1 || cbt_bin=

cc() { "$cellctl" "$@"; }
# refuses WHAT PATTERN CMD...: CMD fails (status 1) with one line on stderr matching PATTERN.
refuses() {
	local what=$1 pat=$2
	shift 2
	checks=$((checks + 1))
	"$@" >"$tmp/out" 2>"$tmp/err"
	local st=$?
	if [ $st -ne 1 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q -- "$pat" "$tmp/err"; then
		fail "$what: status $st, stderr: $(cat "$tmp/err")"
	fi
}
# same_out WHAT FILE CMD...: CMD's stdout is FILE's bytes.
same_out() {
	local what=$1 want=$2
	shift 2
	checks=$((checks + 1))
	if ! "$@" >"$tmp/got" 2>"$tmp/err"; then
		fail "$what: failed: $(cat "$tmp/err")"
	elif ! cmp -s "$want" "$tmp/got"; then
		fail "$what: output differs: $(diff "$want" "$tmp/got" | head -5)"
	fi
}

check "createtable by flags" cc -project p -instance i createtable t families=f
check "set by flags" cc -project=p --instance i set t r1 f:a=1@1000 f:b=2@2000
check "set by --flags=" cc --project=p --instance=i set t r2 f:a=3@3000
cc --db bigtable://p/i read t >"$tmp/want" || fail "read by --db"
same_out "-project p -instance i is --db bigtable://p/i" "$tmp/want" cc -project p -instance i read t
if [ -n "$cbt_bin" ]; then
	# (cbt run with the same flags is the oracle; -creds /dev/null skips its credentials helper)
	same_out "cbt's read with the same flags" "$tmp/want" "$cbt_bin" -creds /dev/null -project p -instance i read t
fi
check "-o FILE" cc -project p -instance i -o "$tmp/o.txt" read t
checks=$((checks + 1))
cmp -s "$tmp/want" "$tmp/o.txt" || fail "-o FILE: the file is not the output"

# .cbtrc: --cbtrc takes the store from it; cbt reads the same file.
printf 'project = p\ninstance = i\n' >"$HOME/.cbtrc"
same_out "--cbtrc" "$tmp/want" cc --cbtrc read t
if [ -n "$cbt_bin" ]; then
	same_out "cbt with .cbtrc" "$tmp/want" "$cbt_bin" -creds /dev/null read t
fi
same_out "-project fills .cbtrc's instance in" "$tmp/want" cc -project p read t
printf 'project = p\ninstance = other\ntimeout = 20s\n' >"$HOME/.cbtrc"
same_out "a flag wins over .cbtrc" "$tmp/want" cc --cbtrc -instance i read t
CBTRC=$tmp/none.cbtrc refuses "--cbtrc without the file" "cellctl: --cbtrc: cannot read $tmp/none.cbtrc" cc --cbtrc ls
printf 'project = p\ninstance = i\n' >"$tmp/alt.cbtrc"
CBTRC=$tmp/alt.cbtrc same_out "\$CBTRC names the file" "$tmp/want" cc --cbtrc read t

# A bare cellctl is the local store, whatever .cbtrc says: nobody writes to an instance by accident.
check "bare cellctl writes locally" cc createtable local families=f
checks=$((checks + 1))
[ "$(cc ls)" = local ] || fail "bare cellctl ls: $(cc ls)"
checks=$((checks + 1))
cc -project p -instance i ls | grep -qx local && fail "the local table reached the instance"

# Bad input: one line naming what is wrong; nothing written.
refuses "a project without instance" "no instance: give -instance" env HOME="$tmp/empty" "$cellctl" -project p ls
refuses "a flag without its value" "option -instance needs a value" cc -project p -instance
refuses "--db and -project" "both name a store" cc --db "$tmp/local" -project p -instance i ls
printf 'project = p\ninstance = i\nthis line\n' >"$HOME/.cbtrc"
refuses "a .cbtrc line that is not key = value" "\.cbtrc:3: not \"key = value\"" cc --cbtrc set t r9 f:a=9
printf 'project = p\ninstance = i\ncolour = blue\n' >"$HOME/.cbtrc"
refuses "an unknown .cbtrc key" "\.cbtrc:3: colour: not a setting" cc --cbtrc set t r9 f:a=9
printf 'project = p\ninstance = i\ntimeout = soon\n' >"$HOME/.cbtrc"
refuses "a .cbtrc timeout that is no duration" "\.cbtrc:3: timeout:" cc --cbtrc set t r9 f:a=9
printf '# comments and blank lines are skipped\n\nproject = p\ninstance = i\n' >"$HOME/.cbtrc"
same_out "a .cbtrc with a comment" "$tmp/want" cc --cbtrc read t
rm -f "$HOME/.cbtrc"
refuses "an empty flag value" "option -creds=\"\": an empty value" cc -project p -instance i -creds= ls
printf '{}' >"$tmp/nokey.json"
saved=$BIGTABLE_EMULATOR_HOST
unset BIGTABLE_EMULATOR_HOST
refuses "-creds that is no key file" "is not a Google credentials JSON file" cc -project p -instance i -creds "$tmp/nokey.json" ls
refuses "-cert-file that holds no certificate" "the TLS roots file $tmp/nokey.json holds no PEM certificate" \
	cc -project p -instance i -cert-file "$tmp/nokey.json" -access-token x ls
export BIGTABLE_EMULATOR_HOST=$saved
checks=$((checks + 1))
cc -project p -instance i read t prefix=r9 | grep -q r9 && fail "a refused command wrote r9"

# The mount: -o options and .cbtrc; a bad one refuses the mount with one line.
if [ -n "$cellfs" ] && [ -e /dev/fuse ]; then
	checks=$((checks + 1))
	if "$cellfs" bigtable://p/i "$tmp/mnt0" -o creds= 2>"$tmp/err"; then
		fail "-o creds= mounted"
	else
		grep -q "cellfs: -o creds=: an empty value" "$tmp/err" || fail "-o creds=: $(cat "$tmp/err")"
	fi
	printf 'project = p\nbad line\n' >"$HOME/.cbtrc"
	mkdir -p "$tmp/mnt1"
	checks=$((checks + 1))
	if "$cellfs" bigtable://p/i "$tmp/mnt1" 2>"$tmp/err"; then
		mounts+=("$tmp/mnt1")
		fail "a bad .cbtrc mounted"
	else
		grep -q "\.cbtrc:2: not \"key = value\"" "$tmp/err" || fail "a bad .cbtrc: $(cat "$tmp/err")"
	fi
	printf 'project = p\ninstance = i\ntimeout = 20s\n' >"$HOME/.cbtrc"
	check "mount with .cbtrc and -o app_profile" mount_store bigtable://p/i "$tmp/mnt2" -o app_profile=default
	checks=$((checks + 1))
	[ "$(cat "$tmp/mnt2/t/r1/f/a" 2>&1)" = 1 ] || fail "the mount's read: $(cat "$tmp/mnt2/t/r1/f/a" 2>&1)"
fi
finish
