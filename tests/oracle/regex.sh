#!/bin/bash
# regex.sh CELLCTL — regular expressions in cbt's dialect (RE2 over raw bytes) against cbt + the emulator.
#
# One table whose row keys and qualifiers hold ASCII, UTF-8 (é, 日本, Greek), invalid UTF-8 (\xff, \x80),
# Latin-1 bytes, other binary bytes and newlines, all made with printf from bytes; then every expression
# of the table below as `read regex=` (and a set as `columns=`), through cbt and through cellctl: the
# output must be byte-identical, or both must refuse the expression. Skips (77) without cbt or the
# emulator (lib.sh). Expressions where cellctl keeps Bigtable's behaviour and the emulator differs
# (tools/README.md, "Regular expressions") are not here.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

b() { printf "$1"; } # bytes, as in "$(b 'caf\303\251')" (where no newline ends them)

both createtable rx families=cf,meta
keys=(
	a ab abc A K k s S x_y 'a b' a.b 'a\\b' aB Ab k1 k12 123 hello 'hello world' '#tag'
	'caf\303\251' 'CAF\303\211' '\303\251' '\346\227\245\346\234\254' '\316\261\316\262\316\263' '\316\251'
	'\377' '\200' 'a\377b' '\303(' '\351' '\311' '\265' '\337' '\305' '\345' '\001\002\177' '\033[0m'
	'a\nb' 'line\n' '\nx' 'x\n' 'tab\there'
)
for k in "${keys[@]}"; do
	k=$(printf "$k."); k=${k%.} # (a final newline kept)
	both set rx "$k" cf:v=1@1000
done
# Qualifiers for columns=.
both set rx q cf:a=1@1000 cf:A=2@1000 "cf:$(b 'caf\303\251')=3@1000" "cf:$(b '\377')=4@1000" \
	"cf:$(b 'q\nz')=5@1000" "cf:$(b '\346\227\245')=6@1000" cf:ab=7@1000 meta:a=8@1000 "meta:$(b '\265')=9@1000"

# RE2 syntax POSIX lacks comes first, then the rest of RE2's syntax.
exprs=(
	# RE2 syntax POSIX lacks
	'(?i)A' '(?i)K' '(?s)a.b' '\p{L}+' '[[:^alpha:]]+' '\x{65e5}' '.*\x{65e5}.*' '(?P<n>a)b' '(?P<n>a)(?P<m>b)?'
	'\x61' '\xff' 'a\xffb' '\Qa\E' '\Qa.b\E' '\Aab\z' '\Aa.*' '.*b\z' '\pL+' '\C' '\C\C' '\C+' '[\x80-\xff]+'
	'[\p{Han}]+' 'x{1001}' '\x{e9}' '\351' '\x{0065}' '\x{10FFFF}*a'
	# bytes of the pattern above 0x7F stand for themselves; '.' is one byte
	"$(b 'caf\303\251')" 'caf.' 'caf..' 'caf\C\C' "$(b '\346\227\245\346\234\254')" '.{6}' '...' '.' '..'
	"$(b '[\303\251]+')" "$(b '\316[\261-\263]\316\262.*')"
	# newlines
	'a.b' '[^a]+' '[^\n]+' '(?m)a$\nb' 'a$' '(?m)\n^x$' '(?m)^line$\n' '(?s).*' '.*' '\n.' '.\n' 'line\n'
	'(?m)x$' '(?m)^x$\n'
	# case folding
	'(?i)café' '(?i)\xe9' '(?i)\xc9' '(?i)[k]' '(?i)\x{212A}' '(?i)\x{17F}' '(?i)\xdf' '(?i)\x{1E9E}'
	'(?i)[\x{100}-\x{10FFFF}]+' '(?i)a(?-i)b' '(?i:a)B' '(?i)[^k]' '(?i)\x{39C}' '(?i)\xb5'
	# Unicode classes over bytes
	'\p{Greek}+' '(?i)\p{Greek}' '\p{Latin}+' '\p{Common}+' '\P{L}+' '\p{Lu}+' '(?i)\p{Lu}+' '\p{Ll}\p{Ll}'
	'\p{^L}+' '\P{^L}+' '\pN+' '\p{Nd}+' '\p{Cc}+' '\p{Any}+' '[\d\p{Lu}]+' '[^\pL]+' '(?i)\P{Lu}'
	'\p{Zs}.*' '\p{Letter}' '\p{Cn}' '\p{Foo}' '\pZ' '\p' '\p{Greek'
	# Perl and POSIX classes
	'\d+' '\w+' '\s.*' '\S+' '\W+' '[[:alpha:]]+' '[[:punct:]]+' '[[:print:]]+' '[[:space:]].*' '[[:cntrl:]]+'
	'[[:xdigit:]]+' '[[:word:]]+' '[[:^print:]]+' '[[:foo:]]' '[\w.]+' '[^\w\s]+' '(?i)[[:upper:]]+'
	# anchors and boundaries
	'\bab\b' 'a\Bb' 'a\b \bb' '\b.*\b' '\B.*' '^a' 'b$' '^^a$$' '\Aa\z' 'x\z\n' '(?m)^a$'
	# repetition, alternation, groups
	'a{2,3}' '(ab){2}' 'x{0}a' 'a{1,}b*' 'k1{1,2}' '(a|ab)(c|bcd)?' 'a|b|k1' '(?:a|b)+' '(?U)a+?' 'a*?b??'
	'((a))' '()a' 'a{,2}' 'a{2' '{' 'a{0}' '(?:(?:(?:a)))' '(a|)' '|a' 'x*' '(?i)HELLO( WORLD)?'
	# refused by RE2 (and by Bigtable)
	'a\1' '(a)\1' '(?=a)' '(?!a)' '(?<=a)b' '(?<!a)b' 'a++' 'a*+' '(?>a)' '(?<n>a)' "(?'n'a)" '\Z' '\G'
	'\k<n>' '(?x)a' '(a{100}){11}' '(a{10}){10}' '[z-a]' '(' ')' '*' 'a**' 'a{2}{3}' '\8' '(?i' '\x{110000}'
	'[a' '\xg' '\e' '(?P<>a)' '(?P=n)' '(?#c)a' '\X' '\R' '\h' 'a{1000}' '(?i)(?m)(?s)(?U)a' '(?imsU-imsU)a'
	'(?-)a' '(?i-)a' '[\b]' '\cA' '\N{x}' '\o{1}' '\u0061' '[[=a=]]' '[[.a.]]'
)
for e in "${exprs[@]}"; do
	same read rx "regex=$e"
done

# columns=: a family and a qualifier pattern, each matched whole against raw bytes.
cols=(
	'cf:(?i)A' 'cf:\pL+' 'cf:\xff' 'cf:.*\n.*' 'cf:(?s).*' 'cf:caf\C\C' "cf:$(b 'caf\303\251')" 'cf:....'
	'cf:\x{65e5}' 'cf:[\x80-\xff]+' '(?i)CF:a' 'c.:a' '\pL+:\xb5' 'meta|cf:a' 'cf:(' '(:a' 'cf:a{1001}'
	'cf:\Qa\E' 'cf:(?P<x>a)b?' 'cf:[[:^alpha:]]+' 'cf:a,cf:(?i)a' 'cf:\p{Greek}' '(?i)META:\p{Greek}'
)
for c in "${cols[@]}"; do
	same read rx prefix=q "columns=$c"
	same lookup rx q "columns=$c"
done

finish
