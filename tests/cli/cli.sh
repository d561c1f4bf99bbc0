#!/bin/bash
# cli.sh CELLCTL — cellctl as a user sees it: every subcommand and every kind of bad argument, each case
# checking stdout, stderr and the exit status exactly (a crash never counts as an expected failure).
# The harness (out/outb, ok, err, raw_ok, raw_err, run, finish; how to write a case) is lib.sh's.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# ---- Global options, help ----------------------------------------------------------------------------

out <<'EOF'
cellctl 0.1.0
EOF
raw_ok --version
raw_err 'cellctl: no command given (see "cellctl --help")'
raw_err 'cellctl: unknown command "nosuch" (see "cellctl --help")' nosuch
raw_err 'cellctl: unknown command "\xff\n" (see "cellctl --help")' $'\xff\n'
raw_err 'cellctl: unknown option "--bogus" (see "cellctl --help")' --bogus ls
raw_err 'cellctl: unknown option "-x" (see "cellctl --help")' -x ls
raw_err 'cellctl: option --db needs a PATH' --db
raw_err 'cellctl: option --db needs a PATH' --db= ls
"$cellctl" --help >"$tmp/help1" 2>&1
"$cellctl" help >"$tmp/help2" 2>&1
"$cellctl" -h >"$tmp/help3" 2>&1
checks=$((checks + 1))
if ! cmp -s "$tmp/help1" "$tmp/help2" || ! cmp -s "$tmp/help1" "$tmp/help3" ||
	[ "$(head -1 "$tmp/help1")" != "Usage: cellctl [--db PATH] <command> [<argument>...]" ] ||
	! grep -q '^    setgcpolicy     Set the garbage-collection policy' "$tmp/help1"; then
	failed "--help, -h and help differ or lack the command list"
fi
out <<'EOF'
cellctl count <table> [prefix=<row-key-prefix>] [asof=<time>]

  prefix=<row-key-prefix>    Count only rows whose key starts with this
  asof=<time>                Count the rows as they were then (see "lookup")
EOF
raw_ok help count
out <<'EOF'
cellctl deleteallrows <table>
EOF
raw_ok --db "$tmp/unused" help deleteallrows
raw_err 'cellctl help: unknown command "nosuch"' help nosuch
raw_err 'cellctl help: usage: cellctl help [<command>]' help count read
for c in count createfamily createtable deleteallrows deletecolumn deletefamily deleterow deletetable \
	help lookup ls read set setgcpolicy; do
	checks=$((checks + 1))
	"$cellctl" help $c | head -1 | grep -q "^cellctl $c" || failed "help $c does not start with its synopsis"
done
# The store's regular expressions are RE2's syntax (store/rx/rx_parse.c parses Go's regexp/syntax): the help
# of read and lookup (which export's points to) says so, and no help says POSIX.
for c in read lookup; do
	checks=$((checks + 1))
	"$cellctl" help $c | grep -q 'RE2 syntax' || failed "help $c does not say RE2 syntax"
done
for c in $("$cellctl" help | awk '/^Commands:/ {on = 1; next} on && /^$/ {exit} on {print $1}'); do
	checks=$((checks + 1))
	"$cellctl" help $c | grep -i posix && failed "help $c says POSIX"
done
# `cellctl CMD --help` and `-h`: `cellctl help CMD`, for every command the list names, touching no store.
for c in $("$cellctl" help | awk '/^Commands:/ {on = 1; next} on && /^$/ {exit} on {print $1}'); do
	for h in --help -h; do
		"$cellctl" help "$c" >"$tmp/want.out"
		raw_ok "$c" $h
	done
done
checks=$((checks + 1))
[ -e "$XDG_DATA_HOME" ] && failed "CMD --help created the default store"

# ---- Choosing the store ------------------------------------------------------------------------------

err "cellctl ls: no store at \"$db\"" ls
err "cellctl read: no store at \"$db\"" read t
err "cellctl set: no store at \"$db\"" set t r f:q=v
checks=$((checks + 1))
[ -e "$db" ] && failed "commands other than createtable created the store at --db"
echo "not a store" >"$tmp/file"
run 1 "cellctl ls: cannot open store \"$tmp/file\": Not a directory" "$cellctl" --db "$tmp/file" ls
mkdir "$tmp/nonempty"
touch "$tmp/nonempty/f"
run 1 "cellctl createtable: cannot create a store in \"$tmp/nonempty\": the directory holds other files" \
	"$cellctl" --db "$tmp/nonempty" createtable x
# The default store is created on first use, even by a read.
raw_ok ls
checks=$((checks + 1))
[ -d "$tmp/xdg/cellfs/default" ] || failed "the default store was not created under \$XDG_DATA_HOME"
raw_ok createtable indefault
out <<'EOF'
indefault
EOF
raw_ok ls
# $CELLFS_DB names a store as --db does; --db wins over it.
export CELLFS_DB=$tmp/envdb
run 1 "cellctl ls: no store at \"$tmp/envdb\"" "$cellctl" ls
raw_ok createtable inenv
out <<'EOF'
inenv
EOF
raw_ok ls
out <<'EOF'
indefault
EOF
raw_ok --db "$tmp/xdg/cellfs/default" ls
unset CELLFS_DB

# ---- Schema: createtable, createfamily, setgcpolicy, ls, deletefamily, deletetable -------------------

err 'cellctl createtable: usage: cellctl createtable <table> [families=<family>[:<gcpolicy>[:<type>]],...] [splits=<row-key>,...]' createtable
err 'cellctl createtable: invalid table name "bad name"' createtable 'bad name'
err 'cellctl createtable: bad arg "foo"' createtable t foo
err 'cellctl createtable: unknown arg key "foo"' createtable t foo=1
err 'cellctl createtable: bad families= list "": EOF' createtable t families=
err 'cellctl createtable: bad families= list "x\"y": parse error on line 1, column 2: bare " in non-quoted-field' createtable t 'families=x"y'
err 'cellctl createtable: bad splits= list "": EOF' createtable t splits=
err 'cellctl createtable: family "a": invalid GC policy "bogus": expected maxversions=N, maxage=D or "(", got "bogus"' createtable t families=a:bogus
err 'cellctl createtable: family "a": invalid GC policy "": empty policy' createtable t families=a:
err 'cellctl createtable: family "a": value type "inthll" is not supported (only intsum, intmin and intmax)' createtable t families=a:never:inthll
err 'cellctl createtable: invalid family name "-a"' createtable t families=-a
err 'cellctl createtable: invalid family name ""' createtable t families=a,,b
checks=$((checks + 1))
[ -e "$db" ] && failed "a createtable with bad arguments created the store"
ok createtable t "families=cf1:maxversions=2,cf2:never,cf3,\"cf4:maxage=1d||maxversions=3\"" splits=a,b
ok createtable u families=a:maxversions=1,a:maxage=2h,b
ok createtable empty
err 'cellctl createtable: table "t" already exists' createtable t
out <<'EOF'
empty
t
u
EOF
ok ls
out <<'EOF'
Family Name	GC Policy				Value Type
-----------	---------				----------
cf1		versions() > 2				{}
cf2							{}
cf3							{}
cf4		(age() > 1d || versions() > 3)		{}
EOF
ok ls t
out <<'EOF'
Family Name	GC Policy	Value Type
-----------	---------	----------
a		age() > 2h	{}
b				{}
EOF
ok ls u
out <<'EOF'
Family Name	GC Policy	Value Type
-----------	---------	----------
EOF
ok ls empty
err 'cellctl ls: table "nosuch" not found' ls nosuch
err 'cellctl ls: usage: cellctl ls                List tables' ls a b

ok createfamily u c:maxversions=5
ok createfamily u d
err 'cellctl createfamily: family "c" already exists in table "u"' createfamily u c
err 'cellctl createfamily: table "nosuch" not found' createfamily nosuch c
err 'cellctl createfamily: family "e": invalid GC policy "": empty policy' createfamily u e:
err 'cellctl createfamily: invalid family name "bad fam"' createfamily u 'bad fam'
err 'cellctl createfamily: invalid table name "a/b"' createfamily a/b c
err 'cellctl createfamily: family "e": value type "inthll" is not supported (only intsum, intmin and intmax)' createfamily u e:never:inthll
err 'cellctl createfamily: usage: cellctl createfamily <table> <family>[:<gcpolicy>[:<type>]]' createfamily u
err 'cellctl createfamily: usage: cellctl createfamily <table> <family>[:<gcpolicy>[:<type>]]' createfamily u c d

ok setgcpolicy u d maxversions=4 and maxage=3d
ok setgcpolicy u b 'maxage=1d || maxversions=2' force
ok setgcpolicy u c never
err 'cellctl setgcpolicy: invalid GC policy "bogus": expected maxversions=N, maxage=D or "(", got "bogus"' setgcpolicy u c bogus
err 'cellctl setgcpolicy: invalid GC policy "maxage=1d and": missing rule after "and"' setgcpolicy u c maxage=1d and
err 'cellctl setgcpolicy: invalid GC policy "": empty policy' setgcpolicy u c force
err 'cellctl setgcpolicy: family "nosuch" not found in table "u"' setgcpolicy u nosuch never
err 'cellctl setgcpolicy: table "nosuch" not found' setgcpolicy nosuch c never
err 'cellctl setgcpolicy: usage: cellctl setgcpolicy <table> <family> ((maxage=<d> | maxversions=<n>) [(and|or) (maxage=<d> | maxversions=<n>),...] | never) [force]' setgcpolicy u c
out <<'EOF'
Family Name	GC Policy				Value Type
-----------	---------				----------
a		age() > 2h				{}
b		(age() > 1d || versions() > 2)		{}
c							{}
d		(versions() > 4 && age() > 3d)		{}
EOF
ok ls u

ok deletefamily u d
err 'cellctl deletefamily: family "d" not found in table "u"' deletefamily u d
err 'cellctl deletefamily: table "nosuch" not found' deletefamily nosuch d
err 'cellctl deletefamily: usage: cellctl deletefamily <table> <family>' deletefamily u
ok deletetable empty
err 'cellctl deletetable: table "empty" not found' deletetable empty
err 'cellctl deletetable: usage: cellctl deletetable <table>' deletetable
err 'cellctl deletetable: usage: cellctl deletetable <table>' deletetable t u
out <<'EOF'
t
u
EOF
ok ls

# ---- set ---------------------------------------------------------------------------------------------

ok set t r1 cf1:a=hello@1500000000123456 'cf1:b=x y "q" \ é@3000' cf2:=empty@0 cf3:hex=v@0x10
ok set t r1 cf3:at=user@example.com@4000 cf3:nots=x@@6000 cf3:eq=a=b@8000 cf3:col:on=v@9000
ok set t r1 $'cf3:nl=line1\nline2@5000' cf3:neg=zero@-999 cf3:max=end@9223372036854775807
# cf1 keeps two versions (maxversions=2): "oldest" is collected at once and never shown.
ok set t r1 cf1:a=older@1000 app-profile=ignored cf1:a=oldest@1
ok set t 'r2 with space' $'cf1:\xff=\x01\x7f\xc2\xa0\xe2\x80\x8b\xf0\x9f\x98\x80@1000'
ok set t k1 cf1:a=1@1000
ok set t k2 cf1:a=2@1000 cf2:b=22@2000
ok set t k3 cf1:a=3@1000
ok set t k4 cf2:b=4@1000
out <<'EOF'
----------------------------------------
r1
  cf1:a                                    @ 2017/07/14-02:40:00.123000
    "hello"
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    "older"
  cf1:b                                    @ 1970/01/01-00:00:00.003000
    "x y \"q\" \\ é"
  cf2:                                     @ 1970/01/01-00:00:00.000000
    "empty"
  cf3:at                                   @ 1970/01/01-00:00:00.004000
    "user@example.com"
  cf3:col:on                               @ 1970/01/01-00:00:00.009000
    "v"
  cf3:eq                                   @ 1970/01/01-00:00:00.008000
    "a=b"
  cf3:hex                                  @ 1970/01/01-00:00:00.000000
    "v"
  cf3:max                                  @ 294247/01/10-04:00:54.775000
    "end"
  cf3:neg                                  @ 1970/01/01-00:00:00.000000
    "zero"
  cf3:nots                                 @ 1970/01/01-00:00:00.006000
    "x@"

EOF
ok lookup t r1 columns=cf1:,cf2:,cf3:[^n].*,cf3:neg,cf3:nots
# A value ends at its first newline, and with it any '@ts': its time is now, in whole milliseconds.
checks=$((checks + 1))
line=$("$cellctl" --db "$db" lookup t r1 columns=cf3:nl | sed -n 3p)
[[ $line =~ ^\ \ cf3:nl\ +@\ 2[0-9]{3}/[0-9]{2}/[0-9]{2}-[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}000$ ]] ||
	failed "set without a timestamp: got \"$line\""

# Every argument is checked before anything is written: a bad one anywhere writes nothing.
err 'cellctl set: bad set arg "noequals"' set t r1 cf1:a=new@1 noequals
err 'cellctl set: bad set arg "cf1:q"' set t r1 cf1:q
err 'cellctl set: bad set arg ":q=v"' set t r1 :q=v
err 'cellctl set: invalid timestamp -5000 in "cf1:a=v@-5000"' set t r1 cf1:z=new@1 cf1:a=v@-5000
err 'cellctl set: family "nofam" not found in table "t" (argument "nofam:q=v")' set t r1 cf1:z=new@1 nofam:q=v
err 'cellctl set: table "nosuch" not found' set nosuch r1 cf1:a=v
err 'cellctl set: row keys must be non-empty' set t '' cf1:a=v
err 'cellctl set: row key of 4097 bytes is longer than 4096' set t "$(printf '%04097d' 0)" cf1:a=v
err 'cellctl set: row key or qualifier too long (row keys up to 4096 bytes, qualifiers up to 16384)' set t r1 cf1:z=new@1 "cf1:$(printf '%016385d' 0)=v"
err 'cellctl set: authorized views are not supported (argument "authorized-view=v")' set t r1 authorized-view=v cf1:a=v
err 'cellctl set: nothing to set' set t r1 app-profile=x
err 'cellctl set: usage: cellctl set <table> <row-key> <family>:<column>=<val>[@<timestamp>] ...' set t r1
out <<'EOF'
----------------------------------------
r1
  cf1:a                                    @ 2017/07/14-02:40:00.123000
    "hello"
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    "older"
  cf1:b                                    @ 1970/01/01-00:00:00.003000
    "x y \"q\" \\ é"

EOF
ok lookup t r1 columns=cf1:

# ---- lookup ------------------------------------------------------------------------------------------

outb '----------------------------------------\nr2 with space\n  cf1:\xff                                    @ 1970/01/01-00:00:00.001000\n    "\\x01\\x7f\\u00a0\\u200b\xf0\x9f\x98\x80"\n\n'
ok lookup t 'r2 with space'
outb '----------------------------------------\n\n\n'
ok lookup t nosuch
outb '----------------------------------------\n\n\n'
ok lookup t ''
outb '----------------------------------------\n\n\n'
ok lookup t "$(printf '%04097d' 0)"
outb '----------------------------------------\n\n\n'
ok lookup t r1 columns=nofam:
out <<'EOF'
----------------------------------------
k2
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    ""
  cf2:b                                    @ 1970/01/01-00:00:00.002000
    ""

EOF
ok lookup t k2 keys-only=true
# cbt prints a cell once for every columns= selector that matches it.
out <<'EOF'
----------------------------------------
r1
  cf1:a                                    @ 2017/07/14-02:40:00.123000
    "hello"
  cf1:a                                    @ 2017/07/14-02:40:00.123000
    "hello"

EOF
ok lookup t r1 columns=cf1:a,a cells-per-column=1
out <<'EOF'
----------------------------------------
r1
  cf1:a                                    @ 2017/07/14-08:10:00.123000
    "hello"
  cf1:b                                    @ 1970/01/01-05:30:00.003000
    "x y \"q\" \\ é"

EOF
TZ=Asia/Kolkata ok lookup t r1 columns=cf1: cells-per-column=1
# Go falls back to UTC for a TZ it finds no zone file for; so does cellctl.
out <<'EOF'
----------------------------------------
k1
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    "1"

EOF
TZ=IST-5:30 ok lookup t k1
err 'cellctl lookup: table "nosuch" not found' lookup nosuch r1
err 'cellctl lookup: table "nosuch" not found' lookup nosuch ''
err 'cellctl lookup: unknown arg key "start"' lookup t r1 start=a
err 'cellctl lookup: bad arg "columns"' lookup t r1 columns
err 'cellctl lookup: bad number of cells per column "x": invalid syntax' lookup t r1 cells-per-column=x
err 'cellctl lookup: bad number of cells per column "0": must be > 0' lookup t r1 cells-per-column=0
err 'cellctl lookup: bad number of cells per column "4294967296": must be > 0' lookup t r1 cells-per-column=4294967296
err 'cellctl lookup: bad number of cells per column "99999999999999999999": value out of range' lookup t r1 cells-per-column=99999999999999999999
err 'cellctl lookup: bad keys-only "yes": want true or false' lookup t r1 keys-only=yes
err 'cellctl lookup: bad format for column "a:b:c"' lookup t r1 columns=a:b:c
err 'cellctl lookup: no column in columns=","' lookup t r1 columns=,
err 'cellctl lookup: bad regex "(" in columns=: error parsing regexp: missing closing ): `(`' lookup t r1 'columns=cf1:('
err 'cellctl lookup: value formatting files are not supported (format-file="f.yml")' lookup t r1 format-file=f.yml
err 'cellctl lookup: usage: cellctl lookup <table> <row-key> [columns=<family>:<qualifier>,...] [cells-per-column=<n>] [keys-only=<true|false>] [asof=<time>]' lookup t

# ---- read --------------------------------------------------------------------------------------------

out <<'EOF'
----------------------------------------
k1
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    "1"

----------------------------------------
k2
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    "2"
  cf2:b                                    @ 1970/01/01-00:00:00.002000
    "22"

----------------------------------------
k3
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    "3"

----------------------------------------
k4
  cf2:b                                    @ 1970/01/01-00:00:00.001000
    "4"

EOF
ok read t prefix=k
out <<'EOF'
----------------------------------------
k3
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    "3"

----------------------------------------
k2
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    "2"
  cf2:b                                    @ 1970/01/01-00:00:00.002000
    "22"

EOF
ok read t start=k2 end=k4 reversed=true
out <<'EOF'
----------------------------------------
k2
  cf2:b                                    @ 1970/01/01-00:00:00.002000
    "22"

----------------------------------------
k4
  cf2:b                                    @ 1970/01/01-00:00:00.001000
    "4"

EOF
ok read t columns=cf2:b prefix=k
out <<'EOF'
----------------------------------------
k3
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    "3"

EOF
ok read t 'regex=k\d' start=k3 count=1 keys-only=false
out <<'EOF'
----------------------------------------
k1
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    ""

----------------------------------------
k2
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    ""
  cf2:b                                    @ 1970/01/01-00:00:00.002000
    ""

EOF
ok read t 'regex=(k1|k2)' keys-only=1 cells-per-column=1
out <<'EOF'
----------------------------------------
r1
  cf1:a                                    @ 2017/07/14-02:40:00.123000
    "hello"
  cf1:a                                    @ 2017/07/14-02:40:00.123000
    "hello"
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    "older"
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    "older"

EOF
ok read t columns=cf1:a,:a count=0x1 cells-per-column=2 prefix=r end=
ok read t count=0
ok read t start=k3 end=k2
ok read t prefix=zz
ok read t regex=k
ok read t columns=:
err 'cellctl read: table "nosuch" not found' read nosuch
err 'cellctl read: bad arg "foo"' read t foo
err 'cellctl read: unknown arg key "foo"' read t foo=1
err 'cellctl read: unknown arg key "limit"; did you mean "end"?' read t limit=1
err 'cellctl read: "start"/"end" may not be mixed with "prefix"' read t start=a prefix=b
err 'cellctl read: "start"/"end" may not be mixed with "prefix"' read t end=a prefix=b
err 'cellctl read: bad count "abc": invalid syntax' read t count=abc
err 'cellctl read: bad count "-1": row limit cannot be negative' read t count=-1
err 'cellctl read: bad count "9223372036854775808": value out of range' read t count=9223372036854775808
err 'cellctl read: bad number of cells per column "0x1": invalid syntax' read t cells-per-column=0x1
err 'cellctl read: bad reversed "maybe": want true or false' read t reversed=maybe
err 'cellctl read: bad keys-only "2": want true or false' read t keys-only=2
# Regular expressions are RE2's (cs_regex_compile(), store/include/cellstore.h), refused with Go's words as cbt reports them.
err 'cellctl read: bad regex "(" in regex=: error parsing regexp: missing closing ): `(`' read t 'regex=('
err 'cellctl read: bad regex "k1)|(x" in regex=: error parsing regexp: unexpected ): `k1)|(x`' read t 'regex=k1)|(x'
err 'cellctl read: bad regex "a\\1" in regex=: error parsing regexp: invalid escape sequence: `\1`' read t 'regex=a\1'
err 'cellctl read: bad regex "(?=a)" in regex=: error parsing regexp: invalid or unsupported Perl syntax: `(?=`' read t 'regex=(?=a)'
err 'cellctl read: bad regex "(?<!a)b" in regex=: error parsing regexp: invalid or unsupported Perl syntax: `(?<`' read t 'regex=(?<!a)b'
err 'cellctl read: bad regex "(?<n>a)" in regex=: error parsing regexp: invalid or unsupported Perl syntax: `(?<`' read t 'regex=(?<n>a)'
err 'cellctl read: bad regex "x{1001}" in regex=: error parsing regexp: invalid repeat count: `{1001}`' read t 'regex=x{1001}'
err 'cellctl read: bad regex "(a{100}){11}" in regex=: error parsing regexp: invalid repeat count: `{11}`' read t 'regex=(a{100}){11}'
err 'cellctl read: bad regex "a++" in regex=: error parsing regexp: invalid nested repetition operator: `++`' read t 'regex=a++'
err 'cellctl read: bad regex "*a" in regex=: error parsing regexp: missing argument to repetition operator: `*`' read t 'regex=*a'
err 'cellctl read: bad regex "[a" in regex=: error parsing regexp: missing closing ]: `[a`' read t 'regex=[a'
err 'cellctl read: bad regex "[z-a]" in regex=: error parsing regexp: invalid character class range: `z-a`' read t 'regex=[z-a]'
err 'cellctl read: bad regex "\\p{Foo}" in regex=: error parsing regexp: invalid character class range: `\p{Foo}`' read t 'regex=\p{Foo}'
err 'cellctl read: bad regex "[[:foo:]]" in regex=: error parsing regexp: invalid character class range: `[:foo:]`' read t 'regex=[[:foo:]]'
err 'cellctl read: bad regex "(?P<>a)" in regex=: error parsing regexp: invalid named capture: `(?P<>`' read t 'regex=(?P<>a)'
err 'cellctl read: bad regex "a\\" in regex=: error parsing regexp: trailing backslash at end of expression: ``' read t 'regex=a\'
err 'cellctl read: bad regex "\\xg" in regex=: error parsing regexp: invalid escape sequence: `\xg`' read t 'regex=\xg'
err 'cellctl read: bad regex "a\n(" in regex=: error parsing regexp: missing closing ): "a\n("' read t "regex=$(printf 'a\n(')"
err 'cellctl read: bad regex "\\\xff" in regex=: error parsing regexp: invalid escape sequence: "\\\xff"' read t "regex=$(printf '\\\377')"
err 'cellctl export: bad regex "(?=a)" in regex=: error parsing regexp: invalid or unsupported Perl syntax: `(?=`' export t 'regex=(?=a)'
err 'cellctl export: bad regex "a{2}{3}" in columns=: error parsing regexp: invalid nested repetition operator: `{2}{3}`' export t 'columns=cf1:a{2}{3}'
# What POSIX syntax lacked and RE2 has.
outb '----------------------------------------\nk1\n  cf1:a                                    @ 1970/01/01-00:00:00.001000\n    ""\n\n'
ok read t 'regex=(?i)K\x31' keys-only=true
outb '----------------------------------------\nk1\n  cf1:a                                    @ 1970/01/01-00:00:00.001000\n    ""\n\n'
ok read t 'regex=\Qk1\E' keys-only=true
outb '----------------------------------------\nk1\n  cf1:a                                    @ 1970/01/01-00:00:00.001000\n    ""\n\n'
ok read t 'regex=\A(?P<name>\pL)\p{Nd}\z' keys-only=true end=k2
ok read t 'regex=k\x{31}+\C' keys-only=true
err 'cellctl read: bad format for column "a:b:c"' read t columns=a:b:c
err 'cellctl read: authorized views are not supported (authorized-view="v")' read t authorized-view=v
err 'cellctl read: usage: cellctl read <table> [start=<row-key>] [end=<row-key>] [prefix=<row-key-prefix>] [regex=<regex>] [reversed=<true|false>] [columns=<family>:<qualifier>,...] [count=<n>] [cells-per-column=<n>] [keys-only=<true|false>] [asof=<time>]' read

# ---- reads that read nothing; include-stats=full -----------------------------------------------------

ok createtable st families=cf,g
ok set st a cf:q=1@1000 cf:q=2@2000 g:x=3@1000
ok set st b cf:q=4@1000
ok set st c g:y=5@1000 cf:z=6@1000
ok set st d cf:q=7@3000
# cbt (the Go client) never sends a read of an empty range (end= at or before start=) or count=0: it prints
# nothing and succeeds whatever the table, the patterns and cells-per-column (Bigtable's to check), once
# the arguments cbt checks itself are good.
ok read nosuch start=b end=a
ok read nosuch start=b end=b reversed=true keys-only=true
ok read nosuch count=0 'regex=(' cells-per-column=0 'columns=cf:('
ok read st start=$'\xff' end=$'\x01' 'regex=(' app-profile=x
raw_ok --db "$tmp/nostore" read t start=b end=a
checks=$((checks + 1))
[ -e "$tmp/nostore" ] && failed "an empty read made a store"
err 'cellctl read: bad count "abc": invalid syntax' read nosuch start=b end=a count=abc
err 'cellctl read: bad count "-1": row limit cannot be negative' read nosuch start=b end=a count=-1
err 'cellctl read: bad reversed "x": want true or false' read nosuch start=b end=a reversed=x
err 'cellctl read: bad number of cells per column "x": invalid syntax' read nosuch start=b end=a cells-per-column=x
err 'cellctl read: bad format for column "a:b:c"' read nosuch start=b end=a columns=a:b:c
err 'cellctl read: bad keys-only "x": want true or false' read nosuch count=0 keys-only=x
err 'cellctl read: table "nosuch" not found' read nosuch start=a end=b
err 'cellctl read: table "nosuch" not found' read nosuch start=b end=
# ... and it has no stats to print (cbt: "Stats were requested but not received.").
err 'cellctl read: stats were requested but not received: the read reads nothing (its range is empty)' read st start=b end=a include-stats=full
err 'cellctl read: stats were requested but not received: the read reads nothing (count=0)' read nosuch count=0 include-stats=full

# stats_ok ROWS_SEEN ROWS_RETURNED CELLS_SEEN CELLS_RETURNED ARGS...: ok, its stdout out's text then cbt's
# summary block of those counts, with the read's latency (whatever it took here) masked as "Nms".
stats_ok() {
	local what
	printf 'Summary Stats\n====================\nrows_seen_count: %s\nrows_returned_count: %s\n' "$1" "$2" \
		>>"$tmp/want.out"
	printf 'cells_seen_count: %s\ncells_returned_count: %s\nfrontend_server_latency: Nms\n\n' "$3" "$4" \
		>>"$tmp/want.out"
	shift 4
	what=$(printf '%q ' "$@")
	checks=$((checks + 1))
	"$cellctl" --db "$db" "$@" >"$tmp/got.out" 2>"$tmp/got.err" </dev/null ||
		failed "$what: exit status $?: $(cat "$tmp/got.err")"
	sed -i -E 's/^(frontend_server_latency: )[0-9]+ms$/\1Nms/' "$tmp/got.out"
	cmp -s "$tmp/want.out" "$tmp/got.out" || {
		failed "$what: stdout differs (- want, + got)"
		diff -u "$tmp/want.out" "$tmp/got.out" | tail -n +3 | cat -A | head -40 | sed 's/^/    /'
	}
	[ ! -s "$tmp/got.err" ] || failed "$what: stderr: $(cat "$tmp/got.err")"
	: >"$tmp/want.out"
}
# cbt's summary block, counted as the emulator counts (as cbt prints it there, byte for byte): rows seen
# up to the count= limit, every cell of each before the filters; cells returned once per columns= match.
out <<'EOF'
----------------------------------------
c
  cf:z                                     @ 1970/01/01-00:00:00.001000
    "6"
  g:y                                      @ 1970/01/01-00:00:00.001000
    "5"

EOF
stats_ok 3 1 6 2 read st include-stats=full count=1 regex=c
out <<'EOF'
----------------------------------------
d
  cf:q                                     @ 1970/01/01-00:00:00.003000
    "7"
  cf:q                                     @ 1970/01/01-00:00:00.003000
    "7"

----------------------------------------
b
  cf:q                                     @ 1970/01/01-00:00:00.001000
    "4"
  cf:q                                     @ 1970/01/01-00:00:00.001000
    "4"

EOF
stats_ok 3 2 4 4 read st include-stats=full columns=cf:q,cf:q reversed=true count=2
out <<'EOF'
----------------------------------------


EOF
stats_ok 0 0 0 0 lookup st zz include-stats=full
out <<'EOF'
----------------------------------------
a
  g:x                                      @ 1970/01/01-00:00:00.001000
    ""

EOF
stats_ok 1 1 3 1 lookup st a include-stats=full columns=g: keys-only=true
ok read st include-stats= prefix=zz
err 'cellctl read: bad include-stats value "FULL": not one of the supported stats views (full)' read st include-stats=FULL
err 'cellctl lookup: bad include-stats value "x": not one of the supported stats views (full)' lookup st a include-stats=x
err 'cellctl read: include-stats=full prints cbt'"'"'s summary block: not with --format=json' --format=json read st include-stats=full
err 'cellctl read: table "nosuch" not found' read nosuch include-stats=full
ok deletetable st

# ---- count -------------------------------------------------------------------------------------------

out <<'EOF'
6
EOF
ok count t
out <<'EOF'
4
EOF
ok count t prefix=k
out <<'EOF'
0
EOF
ok count t prefix=zz
out <<'EOF'
0
EOF
ok count u
err 'cellctl count: table "nosuch" not found' count nosuch
err 'cellctl count: unknown arg key "start"' count t start=k
err 'cellctl count: bad arg "k"' count t k
err 'cellctl count: usage: cellctl count <table> [prefix=<row-key-prefix>] [asof=<time>]' count

# ---- increment (ReadModifyWrite; cellctl's, not cbt's) ------------------------------------------------

ok createtable ctr families=c,s:never:intsum
outb '5\n-2\n'
ok increment ctr r c:n=5 c:m=-2
outb '21\n'
ok increment ctr r c:n=0x10
outb '9223372036854775807\n-9223372036854775808\n'
ok increment ctr r2 c:n=9223372036854775807 c:n=1
ok set ctr r c:txt=abc
err 'cellctl increment: the newest cell is not an 8-byte big-endian integer (argument "c:txt=1")' increment ctr r c:n=1 c:txt=1
outb '22\n'
ok increment ctr r c:n=1
err 'cellctl increment: increment takes no timestamp (argument "c:n=1@5")' increment ctr r c:n=1@5
err 'cellctl increment: bad value "x" in "c:n=x": invalid syntax (increment takes integers)' increment ctr r c:n=x
err 'cellctl increment: bad increment arg "n=1"' increment ctr r n=1
err 'cellctl increment: family "zz" not found in table "ctr" (argument "zz:a=1")' increment ctr r zz:a=1
err 'cellctl increment: family "s" of table "ctr" is an aggregate family (intsum): write it with addtocell (argument "s:a=1")' increment ctr r s:a=1
err 'cellctl increment: table "nosuch" not found' increment nosuch r c:n=1
err 'cellctl increment: row keys must be non-empty' increment ctr '' c:n=1
err 'cellctl increment: usage: cellctl increment <table> <row-key> <family>:<column>=<delta> ...' increment ctr r
ok deletetable ctr

# ---- deletecolumn, deleterow, deleteallrows ----------------------------------------------------------

ok deletecolumn t k2 cf2 b
ok deletecolumn t k2 cf2 nosuch app-profile=x
ok deleterow t k3
ok deleterow t nosuch app-profile=x
err 'cellctl deletecolumn: family "nofam" not found in table "t"' deletecolumn t k2 nofam b
err 'cellctl deletecolumn: table "nosuch" not found' deletecolumn nosuch k2 cf2 b
err 'cellctl deletecolumn: row keys must be non-empty' deletecolumn t '' cf2 b
err 'cellctl deletecolumn: usage: cellctl deletecolumn <table> <row-key> <family> <column> [app-profile=<app-profile-id>]' deletecolumn t k2 cf2
err 'cellctl deletecolumn: usage: cellctl deletecolumn <table> <row-key> <family> <column> [app-profile=<app-profile-id>]' deletecolumn t k2 cf2 b extra
err 'cellctl deleterow: table "nosuch" not found' deleterow nosuch k1
err 'cellctl deleterow: row keys must be non-empty' deleterow t ''
err 'cellctl deleterow: usage: cellctl deleterow <table> <row-key> [app-profile=<app-profile-id>]' deleterow t
err 'cellctl deleterow: usage: cellctl deleterow <table> <row-key> [app-profile=<app-profile-id>]' deleterow t k1 extra
out <<'EOF'
----------------------------------------
k1
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    "1"

----------------------------------------
k2
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    "2"

----------------------------------------
k4
  cf2:b                                    @ 1970/01/01-00:00:00.001000
    "4"

EOF
ok read t prefix=k
ok deletefamily t cf2
out <<'EOF'
----------------------------------------
k1
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    "1"

----------------------------------------
k2
  cf1:a                                    @ 1970/01/01-00:00:00.001000
    "2"

EOF
ok read t prefix=k
ok deleteallrows t
err 'cellctl deleteallrows: table "nosuch" not found' deleteallrows nosuch
err 'cellctl deleteallrows: usage: cellctl deleteallrows <table>' deleteallrows
err 'cellctl deleteallrows: usage: cellctl deleteallrows <table>' deleteallrows t u
ok read t
out <<'EOF'
0
EOF
ok count t
out <<'EOF'
t
u
EOF
ok ls

finish
