#!/bin/bash
# oracle.sh CELLCTL — cellctl against the real thing: Google's cbt talking to the Bigtable emulator.
#
# Writes the same cells (explicit timestamps, awkward bytes) through cbt into a private emulator and
# through cellctl into a fresh store, then requires byte-identical stdout and the same success/failure
# from read (with each flag), lookup, count and ls, under several TZ settings. Skips (77) only when cbt
# or the emulator is not installed. CBT and CBT_EMULATOR override where they are looked for. The harness
# (the emulator, cbt/cc, both/same/same_now) is lib.sh's.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# ---- The data ---------------------------------------------------------------------------------------

# Plain families only: the emulator collects garbage lazily, cellfs never shows collected cells.
both createtable data families=cf,meta,x
both createtable schema "families=a:maxage=1d,b:maxversions=3||maxage=2h,c:(maxage=10d && maxversions=1) || maxversions=5,d:never,e:maxage=90s,g:maxage=5m,h"
both createtable scratch families=cf
both createtable Upper
both createfamily schema i:maxversions=2
both createfamily schema j
both setgcpolicy schema j maxversions=4 and maxage=3d
both setgcpolicy schema h 'maxversions=1 || maxage=12h' force
both setgcpolicy schema d never

# Versions and timestamps: ms multiples, µs that cbt truncates, Go integer syntax, the maximum.
both set data r1 cf:a=hello@1000 cf:a=world@2000 cf:a=again@1500000000123456 cf:a=old@1
both set data r1 'cf:b=x y "q" \ é@3000' meta:=empty@0 cf:hex=v@0x10 cf:oct=v@0o17000 cf:under=v@1_000
both set data r1 cf:max=end@9223372036854775807 cf:neg=zero@-999 cf:big=v@0b1111101000
# '@' that is not a timestamp stays in the value; '=' and ':' after the first ones belong to value/qualifier.
both set data r2 cf:mail=user@example.com@4000 cf:at=a@b@5000 cf:nots=x@@6000 cf:tail=y@@7000
both set data r2 cf:eq=a=b=c@8000 cf:col:on=v@9000 'cf:q with space=v v@10000' cf:float=v@1.5@11000
# A qualifier may hold a newline. (A value ends at its first one: see the "now" table below.)
both set data r2 $'cf:q\nz=v@13000'
# Bytes %q escapes or keeps: controls, DEL, invalid UTF-8, non-printable and printable runes.
both set data r3 $'cf:ctl=\x01\x07\x08\x09\x0b\x0c\x0d\x1b\x7f@1000' $'cf:bad=\xff\xfe\xc3(@1000'
both set data r3 $'cf:uni=\xc3\xa9\xc2\xa0\xc2\xad\xc2\xa1\xe2\x80\x8b\xef\xbb\xbf\xee\x80\x80\xf0\x9f\x98\x80\xe3\x80\x80@1000'
both set data r3 $'cf:surr=\xed\xa0\x80\xf4\x90\x80\x80\xc0\x80@1000' 'cf:back=\\ \" \\x41@1000'
both set data r3 $'cf:\xc3\xa9t\xc3\xa9=padded@1000' $'cf:\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e=cjk@1000' $'cf:\xfe=badqual@1000'
both set data r3 cf:a-qualifier-that-is-well-over-forty-runes-long=v@1000 "cf:#hash=#@1000"
# Awkward row keys.
both set data 'space key' cf:a=1@1000
both set data 'quote"key' cf:a=2@1000
both set data 'back\slash' cf:a=3@1000
both set data $'utf8-\xc3\xa9\xe6\x97\xa5' cf:a=4@1000
both set data $'inv\xffalid' cf:a=5@1000
both set data '#hash#key' cf:a=6@1000
both set data 'p/1' cf:a=7@1000 x:y=8@1000
both set data 'p/2' cf:a=9@1000 meta:m=10@2000
both set data 'q/1' x:a=11@1000
for i in 0 1 2 3 4 5 6 7 8 9; do
	both set data k0$i cf:a=v$i@$((1000 * (i + 1))) cf:a=w$i@$((100000 * (i + 1))) meta:n=$i@5000
done
both set scratch gone cf:a=1@1000
# Families and qualifiers print in byte order, whatever order they were created in.
both createtable order families=zz,B
both createfamily order a
both createfamily order Z
both set order r zz:q=1@1000 a:q=2@1000 B:q=3@1000 Z:q=4@1000 a:Q=5@1000 a:b=6@1000 $'a:\xff=7@1000' a:=8@1000
# Cells written "now" (no '@ts', ServerTime -1, or a value cut at a newline, which loses its '@ts'):
# compared with the time masked, which must still be whole milliseconds on both sides.
both createtable now families=cf
both set now r cf:a=v cf:b=v@-1 $'cf:nl=line1\nline2@5000' cf:c=w@@

# ---- Reads, under several time zones ------------------------------------------------------------------

reads() {
	same ls
	same ls data
	same ls schema
	same ls order
	same read order
	same read data
	same read data start=k03
	same read data end=k05
	same read data start=k02 end=k06
	same read data start=k06 end=k02
	same read data start=k02 end=k02
	same read data prefix=k0
	same read data prefix=p/
	same read data prefix=zz
	same read data prefix= start=p
	same read data 'regex=k0[2-4]'
	same read data 'regex=(p|q)/1'
	same read data 'regex=.*key'
	same read data regex=k0
	same read data 'regex=k\d'
	same read data 'regex=[\w/]+'
	same read data 'regex=(?:p|q)/\d'
	same read data 'regex=.*\s.*'
	same read data 'columns=cf:.'
	same read data 'columns=cf:.*' prefix=r
	same read data 'columns=cf:q\nz'
	same read data 'regex=utf8-.{5}'
	same read data 'regex=utf8-.{2}'
	same read data 'columns=cf:..t..' prefix=r3
	same read data 'columns=cf:.t.' prefix=r3
	same read data reversed=true
	same read data reversed=1 start=k02 end=k06 count=2
	same read data reversed=T prefix=p/
	same read data count=3
	same read data count=0x2 start=k05
	same read data count=0
	same read data cells-per-column=1
	same read data cells-per-column=2 prefix=r
	same read data cells-per-column=+1 start=k08
	same read data keys-only=true
	same read data keys-only=false prefix=p
	same read data columns=cf:a
	same read data columns=cf:
	same read data columns=:a
	same read data columns=a
	same read data columns=meta:,x:
	same read data columns=cf:a,cf:a
	same read data columns=cf:a,cf:a,a cells-per-column=1
	same read data columns=cf:a,cf:.*,:a
	same read data 'columns=c.*:a'
	same read data 'columns=cf:[a-c]'
	same read data columns=,cf:b,
	same read data columns=nosuch:x
	same read data columns=:
	same read data columns=meta:,cf:b cells-per-column=1 keys-only=true
	same read data regex='k.*' columns=cf:a count=2 cells-per-column=1 reversed=1
	same lookup data r1
	same lookup data r2
	same lookup data r3
	same lookup data 'quote"key'
	same lookup data $'inv\xffalid'
	same lookup data nosuchrow
	same lookup data ''
	same lookup data r1 columns=cf:a cells-per-column=1
	same lookup data r1 columns=cf:a,a
	same lookup data r1 keys-only=true columns=meta:
	same lookup data r1 columns=nosuch:
	same count data
	same count data prefix=k0
	same count data prefix=zz
	same count scratch
	same_now read now
	same_now lookup now r columns=cf:nl
	# Failures: both must fail (and cellctl in one line).
	same read nosuch
	same lookup nosuch r1
	same count nosuch
	same ls nosuch
	same ls data extra
	same read
	same lookup data
	same count
	same read data count=abc
	same read data count=-1
	same read data foo
	same read data foo=1
	same read data start=a prefix=b
	same read data limit=1
	same read data cells-per-column=x
	same read data cells-per-column=0
	same read data cells-per-column=0x1
	same read data reversed=maybe
	same read data keys-only=yes
	same read data columns=a:b:c
	same read data columns=,
	same read data 'regex=('
	same lookup data r1 start=a
	same count data foo=bar
}

for tz in UTC Asia/Kolkata; do
	export TZ=$tz
	reads
done
for tz in America/New_York :Europe/Berlin IST-5:30 ""; do
	export TZ=$tz
	same read data
	same lookup data r1
done
unset TZ
same read data
same lookup data r3

# ---- Reads that read nothing; include-stats=full -----------------------------------------------------

# cbt never sends a read of an empty range or of count=0: it succeeds whatever the table or the patterns
# (Bigtable's to check), once the arguments cbt checks itself are good.
export TZ=UTC
same read nosuch start=k06 end=k02
same read nosuch start=k02 end=k02 reversed=true
same read nosuch count=0 'regex=(' cells-per-column=0 'columns=cf:('
same read data start=$'\xff' end=$'\x01' 'regex=(' keys-only=true
same read nosuch start=k06 end=k02 count=abc
same read nosuch start=k06 end=k02 count=-1
same read nosuch start=k06 end=k02 cells-per-column=x
same read nosuch start=k06 end=k02 columns=a:b:c
same read nosuch start=k06 end=k02 keys-only=x
same read nosuch start=k02 end=k06
same read data start=k06 end=k02 include-stats=full
same read data count=0 include-stats=full
# cbt's summary block after the rows, counted as the emulator counts.
same_stats read data include-stats=full
same_stats read data include-stats=full prefix=k0 count=3
same_stats read data include-stats=full 'regex=.*1' count=2
same_stats read data include-stats=full reversed=true start=k02 end=p count=4
same_stats read data include-stats=full columns=cf:a,cf:a,a cells-per-column=1
same_stats read data include-stats=full columns=meta:,x: keys-only=true
same_stats read data include-stats=full columns=nosuch:
same_stats read data include-stats=full prefix=zz
same_stats lookup data r1 include-stats=full
same_stats lookup data r1 include-stats=full columns=cf:a,a cells-per-column=2
same_stats lookup data nosuchrow include-stats=full
same_stats lookup data '' include-stats=full
same read data include-stats=FULL
same read nosuch include-stats=full
same lookup nosuch r1 include-stats=full
unset TZ

# ---- Mutations and schema changes, then read again ---------------------------------------------------

export TZ=UTC
both set data r1 nosuchfamily:q=v
# (Not compared: "set data r1 cf:ok=v nosuchfamily:q=v". The emulator fails it but keeps cf:ok; a row
# mutation in Bigtable, and in cellfs, is atomic. tests/cli checks that cellctl writes nothing.)
both set data r1 cf:bad=v@-5000
both set data r1 noequals
both set nosuch r1 cf:a=v
both set data '' cf:a=v
both createtable data
both createfamily data cf
both createfamily nosuch f
both createfamily data k:
both setgcpolicy schema nosuch never
both setgcpolicy schema h bogus
both setgcpolicy schema h
both deletefamily data nosuch
both deletetable nosuch
both deleteallrows nosuch
both deletecolumn data r1 nosuch q
both deleterow data r1 extra
same read data
same lookup data r1

both deletecolumn data r1 cf a
both deletecolumn data r1 cf nosuchqualifier
both deleterow data k05
both deleterow data nosuchrow
both deletefamily data x
both deletefamily schema j
both deleteallrows scratch
both deletetable schema
reads

# Through the Bigtable backend, cellctl also reads what cbt wrote: the same instance, the same bytes.
if [ "${ORACLE_STORE:-}" = bigtable ]; then
	cc() { "$cellctl" --db "bigtable://oracle/oracle" "$@"; }
	for TZ in UTC Asia/Kolkata; do
		export TZ
		same ls
		same ls data
		same read data
		same read data prefix=k0 columns=cf:a cells-per-column=1
		same read data reversed=true count=3
		same lookup data r2
		same count data
	done
fi

finish
