/* gen_awkward.c — writes the mount tests' data through the store API, which can say what cellctl cannot:
 * keys and qualifiers with any bytes, 4 KiB keys, 16 KiB qualifiers, exact timestamps.
 *
 *   gen_awkward STORE awkward   tables awk, dots, pipe, deep, empty, t-1.x (every naming edge; see below)
 *   gen_awkward STORE big       tables big (100k rows in one prefix directory), wide (a row whose families
 *                               hold 3000 and 1500 columns, some with versions) and few (100k rows whose
 *                               next segments under one prefix are only three)
 *   gen_awkward STORE backup    table bk for backup.sh: the awkward names whose full names fit NAME_MAX
 *                               (a short form cannot be restored by name), many versions, versions in one
 *                               second and on whole seconds, 3 MiB values, families with GC policies that
 *                               keep every version; and table short, which only short forms can name
 *                               (4,000-byte key segments, 16 KiB qualifiers)
 *
 * Timestamps and values are fixed (a seeded PRNG), so the data is the same on every run; only the tables'
 * creation times differ. Everything is written in one transaction. The expected view is not computed
 * here: dump_store prints the cells and mountcheck.py derives the tree from them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellstore.h"

#define T0 1426535612156000LL /* 2015-03-16, the seeds' era */
#define MIB (1u << 20)

static cs_txn *txn;
static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "gen_awkward: %s: %s\n", what, strerror(-rc));
	exit(1);
}

static void table(const char *name, char delim)
{
	int rc = cs_table_create(txn, name, delim);
	if (rc)
		die(name, rc);
}

static void family(const char *t, const char *f, const char *gc)
{
	int rc = cs_family_create(txn, t, f, gc);
	if (rc)
		die(f, rc);
}

/* One cell: row (KN bytes), family, qualifier (QN bytes), timestamp, value (VN bytes). */
static void cell(const char *t, const void *k, size_t kn, const char *f, const void *q, size_t qn, int64_t ts,
		 const void *v, size_t vn)
{
	cs_mutation m = { .op = CS_SET_CELL, .family = f, .qualifier = { q, qn }, .ts = ts, .value = { v, vn } };
	int rc = cs_row_mutate(txn, t, (cs_bytes){ k, kn }, &m, 1);
	if (rc)
		die("cell", rc);
}

/* A row key or qualifier given as a C string literal (may hold NULs): pointer and length. */
struct b {
	const char *p;
	size_t n;
};
#define B(s) { s, sizeof(s) - 1 }

/* Bytes that need escaping, and bytes that must stay raw. Used as key segments and as qualifiers. */
static const struct b awkward[] = {
	B("a/b"), B("50%"), B("at@sign"), B("nul\0byte"), B("\0"), B("ff\xff"), B("\xff\xfe"),
	B("ctl\x01\x1f\x7f"), B("\t"), B("new\nline"), B("bad\xc0\x80"), B("sur\xed\xa0\x80"),
	B("hi\xf4\x90\x80\x80"), B("trunc\xe2\x82"), B("\xe2\x82"), B("\x80" "cont"), B("\xf5\x80\x80\x80"),
	B("utf\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), B("c1\xc2\x85"), B("max\xf4\x8f\xbf\xbf"), B(" lead"),
	B("trail "), B("back\\slash"), B("quote\"'"), B("*?[glob]"), B("-dash"), B("~tilde"), B("%41"), B("%~"),
	B("%"), B("A"), B("a"), B("."), B(".."), B("..."), B(".hidden"), B("x@0000000000000001"), B("@"),
};

static void fill(char *p, size_t n, const char *pat)
{
	size_t pl = strlen(pat);
	for (size_t i = 0; i < n; i++)
		p[i] = pat[i % pl];
}

static void gen_awkward(void)
{
	static char buf[CS_MAX_QUALIFIER + 64], key[CS_MAX_ROW_KEY + 64];
	char *big;
	size_t n;

	table("awk", 0);
	family("awk", "MD", NULL);
	family("awk", "cf", "maxversions=60");
	family("awk", "meta", "maxage=36500d or maxversions=1000");
	family("awk", "x-y.z", NULL);
	family("awk", "g", "(maxversions=2 && maxage=1d) || maxversions=5");
	family("awk", "unused", "never");

	/* Escapes: each awkward string as the second segment of a row key, and as a qualifier. */
	for (size_t i = 0; i < sizeof(awkward) / sizeof(awkward[0]); i++) {
		n = (size_t)snprintf(key, sizeof(key), "esc#");
		memcpy(key + n, awkward[i].p, awkward[i].n);
		cell("awk", key, n + awkward[i].n, "cf", "v", 1, T0 + (int64_t)i, "seg", 3);
		cell("awk", "quals", 5, "cf", awkward[i].p, awkward[i].n, T0 + (int64_t)i, awkward[i].p, awkward[i].n);
		cell("awk", "quals", 5, "cf", awkward[i].p, awkward[i].n, T0 - 1000 - (int64_t)i, "old", 3);
	}
	cell("awk", "quals", 5, "cf", "", 0, T0, "empty qualifier", 15);
	cell("awk", "quals", 5, "cf", "", 0, T0 - 5, "older empty qualifier", 21);
	cell("awk", "quals", 5, "MD", "q@x", 3, T0, "", 0); /* an empty value */

	/* Empty segments, a key that is only the delimiter, a key ending in it. */
	static const struct b empties[] = { B("a##b"), B("#x"), B("#x#y"), B("y#"), B("#"), B("##"), B("e#"),
					    B("e##"), B("e###f") };
	for (size_t i = 0; i < sizeof(empties) / sizeof(empties[0]); i++)
		cell("awk", empties[i].p, empties[i].n, "cf", "v", 1, T0 + 100 + (int64_t)i, empties[i].p, empties[i].n);

	/* Segments equal to a family name (escaped), and near misses (not). */
	static const struct b fams[] = { B("MD"), B("MD#x"), B("cf#meta#cf"), B("MDX"), B("md"), B("g#x"),
					 B("x-y.z"), B("unused#1"), B("fam"), B("fam#cf"), B("fam#MD#1"), B("fam#cf2") };
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
		cell("awk", fams[i].p, fams[i].n, "MD", "BID", 3, T0 + 200 + (int64_t)i, "1.5", 3);
	cell("awk", "fam", 3, "cf", "c", 1, T0 + 300, "in cf", 5);
	cell("awk", "fam", 3, "x-y.z", "q", 1, T0 + 301, "in x-y.z", 8);
	cell("awk", "fam", 3, "meta", "", 0, T0 + 302, "meta, empty qualifier", 21);

	/* "." and ".." as segments. */
	static const struct b dots[] = { B(".#x"), B("..#y"), B("...#z"), B("z#."), B("z#.."), B("z#.#.."), B(".") };
	for (size_t i = 0; i < sizeof(dots) / sizeof(dots[0]); i++)
		cell("awk", dots[i].p, dots[i].n, "cf", "v", 1, T0 + 400 + (int64_t)i, "dot", 3);

	/* A row key that is a prefix of others: "p!" sorts between "p" and "p#1". */
	static const struct b pre[] = { B("p"), B("p!"), B("p#1"), B("p#2#3"), B("p\0"), B("q!"), B("q#1"), B("q#1!") };
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		cell("awk", pre[i].p, pre[i].n, "cf", "v", 1, T0 + 500 + (int64_t)i, pre[i].p, pre[i].n);

	/* Long keys: one 4 KiB segment; segments just under, at and over NAME_MAX when encoded; long
	 * segments whose short forms must not split a UTF-8 sequence or a %XX escape; two keys that share
	 * their short form's prefix. */
	memset(key, 'K', CS_MAX_ROW_KEY);
	cell("awk", key, CS_MAX_ROW_KEY, "cf", "v", 1, T0 + 600, "4 KiB key", 9);
	for (size_t len = 253; len <= 257; len++) {
		n = 2;
		memcpy(key, "L#", 2);
		memset(key + n, 'l', len);
		cell("awk", key, n + len, "cf", "v", 1, T0 + 600 + (int64_t)len, "long", 4);
	}
	for (size_t len = 84; len <= 86; len++) { /* 3-byte escapes: 252, 255, 258 bytes encoded */
		memcpy(key, "X#", 2);
		memset(key + 2, 1, len);
		cell("awk", key, 2 + len, "cf", "v", 1, T0 + 700 + (int64_t)len, "ctl", 3);
	}
	memcpy(key, "U#u", 3); /* "u" then 2-byte sequences: the 200-byte cut falls inside one */
	for (n = 3; n + 2 <= 1003; n += 2)
		memcpy(key + n, "\xc3\xa9", 2);
	cell("awk", key, n, "cf", "v", 1, T0 + 800, "utf8", 4);
	memcpy(key, "U#uu", 4); /* ... and with 4-byte sequences */
	for (n = 4; n + 4 <= 1004; n += 4)
		memcpy(key + n, "\xf0\x9f\x98\x80", 4);
	cell("awk", key, n, "cf", "v", 1, T0 + 801, "utf8", 4);
	memcpy(key, "U#e", 3); /* escapes: "e" then %01s, the cut falls inside one */
	memset(key + 3, 1, 400);
	cell("awk", key, 403, "cf", "v", 1, T0 + 802, "esc", 3);
	memcpy(key, "S#", 2); /* same 200-byte prefix, different tails */
	memset(key + 2, 's', 300);
	key[302] = '1';
	cell("awk", key, 303, "cf", "v", 1, T0 + 803, "s1", 2);
	key[302] = '2';
	cell("awk", key, 303, "cf", "v", 1, T0 + 804, "s2", 2);
	memcpy(key + 303, "#child", 6); /* a prefix directory with a short name, holding a row */
	cell("awk", key, 309, "cf", "v", 1, T0 + 805, "child", 5);

	/* Long qualifiers: around NAME_MAX for the bare name and for the version name (`Q@` + 16 digits),
	 * 16 KiB ones of plain and of escaped bytes, two sharing their short prefix. Each with versions. */
	static const size_t qlens[] = { 238, 239, 255, 256, 1000, CS_MAX_QUALIFIER };
	for (size_t i = 0; i < sizeof(qlens) / sizeof(qlens[0]); i++) {
		memset(buf, 'q', qlens[i]);
		for (int v = 0; v < 3; v++)
			cell("awk", "longq", 5, "cf", buf, qlens[i], T0 + v * 1000 + (int64_t)i, "lq++", 2 + (size_t)v);
	}
	for (size_t i = 0; i < CS_MAX_QUALIFIER; i++)
		buf[i] = (char)(next_rand() & 0xFF);
	for (int v = 0; v < 2; v++)
		cell("awk", "longq", 5, "MD", buf, CS_MAX_QUALIFIER, T0 + v, "random bytes", 12);
	memset(buf, 'r', CS_MAX_QUALIFIER);
	buf[CS_MAX_QUALIFIER - 1] = '1';
	cell("awk", "longq", 5, "meta", buf, CS_MAX_QUALIFIER, T0, "r1", 2);
	buf[CS_MAX_QUALIFIER - 1] = '2';
	cell("awk", "longq", 5, "meta", buf, CS_MAX_QUALIFIER, T0, "r2", 2);
	cell("awk", "longq", 5, "meta", buf, CS_MAX_QUALIFIER, T0 - 7, "r2 old", 6);

	/* Many versions; timestamps at the edges of the 16-digit padding; GC hiding old versions. */
	for (int v = 0; v < 50; v++) {
		n = (size_t)snprintf(buf, sizeof(buf), "version %d", v);
		cell("awk", "hist", 4, "cf", "h", 1, T0 + v * 1000, buf, n);
	}
	static const int64_t edge_ts[] = { 0, 1, 999999999999999LL, 9999999999999999LL, 10000000000000000LL,
					   12345678901234567LL, 999999999999999999LL };
	for (size_t i = 0; i < sizeof(edge_ts) / sizeof(edge_ts[0]); i++)
		cell("awk", "hist", 4, "meta", "edge", 4, edge_ts[i], "edge", 4);
	for (int v = 0; v < 7; v++) /* policy g keeps the 2 newest of these */
		cell("awk", "hist", 4, "g", "gc", 2, T0 + v, "gc", 2);

	/* Values: empty, ~5 MiB compressible, ~5 MiB random, odd sizes. */
	if (!(big = malloc(5 * MIB + 16))) /* (the random fill writes 8 bytes at a time) */
		die("malloc", -ENOMEM);
	cell("awk", "values", 6, "cf", "empty", 5, T0, "", 0);
	fill(big, 5 * MIB + 3, "the quick brown fox jumps over the lazy dog\n");
	cell("awk", "values", 6, "cf", "text5m", 6, T0, big, 5 * MIB + 3);
	for (size_t i = 0; i < 5 * MIB + 1; i += 8) {
		uint64_t r = next_rand();
		memcpy(big + i, &r, 8);
	}
	cell("awk", "values", 6, "cf", "random5m", 8, T0, big, 5 * MIB + 1);
	cell("awk", "values", 6, "cf", "random5m", 8, T0 - 1, big, MIB + 1); /* an older, smaller version */
	cell("awk", "values", 6, "cf", "nul", 3, T0, "\0\0\0", 3);
	free(big);

	/* Another delimiter: '.', so "." cannot be a segment but empty segments can. */
	table("dots", '.');
	family("dots", "f", NULL);
	static const struct b dk[] = { B("a.b"), B("a..b"), B(".x"), B("x."), B("f"), B("f.f"), B("a#b"), B("...") };
	for (size_t i = 0; i < sizeof(dk) / sizeof(dk[0]); i++)
		cell("dots", dk[i].p, dk[i].n, "f", "q", 1, T0 + (int64_t)i, dk[i].p, dk[i].n);

	/* '/' as the delimiter: keys read as paths. */
	table("pipe", '/');
	family("pipe", "f", NULL);
	static const struct b pk[] = { B("usr/bin/ls"), B("usr/lib"), B("/root"), B("usr#1"), B("50%/x") };
	for (size_t i = 0; i < sizeof(pk) / sizeof(pk[0]); i++)
		cell("pipe", pk[i].p, pk[i].n, "f", "q", 1, T0 + (int64_t)i, pk[i].p, pk[i].n);

	/* A 4 KiB key of 2048 segments: a path far beyond PATH_MAX. */
	table("deep", 0);
	family("deep", "f", NULL);
	for (size_t i = 0; i < CS_MAX_ROW_KEY; i += 2)
		memcpy(key + i, "d#", 2);
	cell("deep", key, CS_MAX_ROW_KEY, "f", "q", 1, T0, "bottom", 6);
	cell("deep", key, 201, "f", "q", 1, T0 + 1, "middle", 6);

	table("empty", 0);
	table("t-1.x", '|');
	family("t-1.x", "f_1", "maxversions=1");
	cell("t-1.x", "a|b", 3, "f_1", "q", 1, T0, "1", 1);
}

static void gen_big(void)
{
	char key[64], val[32];
	int n, vn;

	table("big", 0);
	family("big", "f", NULL);
	for (int i = 0; i < 100000; i++) {
		n = snprintf(key, sizeof(key), "big#%06d", i);
		vn = snprintf(val, sizeof(val), "%d", i);
		cell("big", key, (size_t)n, "f", "v", 1, T0 + i, val, (size_t)vn);
	}
	table("few", 0);
	family("few", "f", NULL);
	for (int i = 0; i < 100000; i++) {
		n = snprintf(key, sizeof(key), "pre#%c#%06d", "abc"[i % 3], i);
		cell("few", key, (size_t)n, "f", "v", 1, T0 + i, "x", 1);
	}
	/* One row's wide families, listed in pieces (fs/view.c list_columns): f keeps every version, g two */
	table("wide", 0);
	family("wide", "f", NULL);
	family("wide", "g", "maxversions=2");
	for (int i = 0; i < 3000; i++) {
		n = snprintf(key, sizeof(key), "c%05d", i);
		for (int v = 0; v < (i % 7 == 0 ? 3 : 1); v++)
			cell("wide", "w", 1, "f", key, (size_t)n, T0 + 10 * i + v, "x", 1);
		if (i % 2 == 0)
			for (int v = 0; v < 3; v++)
				cell("wide", "w", 1, "g", key, (size_t)n, T0 + 10 * i + v, "y", 1);
	}
}

/* For backup.sh: everything cp -a, tar and rsync must carry into an empty mount. Every name fits in
 * NAME_MAX in full (bare and Q@TS), and every GC policy keeps every version written here. */
static void gen_backup(void)
{
	static char buf[CS_MAX_QUALIFIER + 64], key[CS_MAX_ROW_KEY + 64];
	char *big;
	size_t n;
	const int64_t S0 = T0 / 1000000 * 1000000; /* T0's whole second */

	table("bk", 0);
	family("bk", "MD", "never");
	family("bk", "cf", "maxversions=100");
	family("bk", "meta", "maxage=36500d or maxversions=1000");
	family("bk", "x-y.z", "(maxversions=60 and maxage=1d) or maxversions=200");
	family("bk", "unused", "maxversions=3"); /* no cells: the schema alone says it exists */

	/* Escapes in key segments and qualifiers (two versions of each qualifier). */
	for (size_t i = 0; i < sizeof(awkward) / sizeof(awkward[0]); i++) {
		n = (size_t)snprintf(key, sizeof(key), "esc#");
		memcpy(key + n, awkward[i].p, awkward[i].n);
		cell("bk", key, n + awkward[i].n, "cf", "v", 1, T0 + (int64_t)i, "seg", 3);
		cell("bk", "quals", 5, "cf", awkward[i].p, awkward[i].n, T0 + (int64_t)i, awkward[i].p, awkward[i].n);
		cell("bk", "quals", 5, "cf", awkward[i].p, awkward[i].n, T0 - 1000 - (int64_t)i, "old", 3);
	}
	cell("bk", "quals", 5, "cf", "", 0, T0, "empty qualifier", 15);
	cell("bk", "quals", 5, "cf", "", 0, T0 - 5, "older empty qualifier", 21);
	cell("bk", "quals", 5, "MD", "q@x", 3, T0, "", 0); /* an empty value */
	cell("bk", "quals", 5, "MD", "q@x", 3, T0 - 1, "", 0);

	/* Empty segments. */
	static const struct b empties[] = { B("a##b"), B("#x"), B("#x#y"), B("y#"), B("#"), B("##"), B("e###f") };
	for (size_t i = 0; i < sizeof(empties) / sizeof(empties[0]); i++)
		cell("bk", empties[i].p, empties[i].n, "cf", "v", 1, T0 + 100 + (int64_t)i, empties[i].p, empties[i].n);

	/* Key segments equal to family names (escaped), near misses, a family-named segment of a family
	 * with no cells. */
	static const struct b fams[] = { B("MD"), B("MD#x"), B("cf#meta#cf"), B("MDX"), B("md"), B("x-y.z"),
					 B("unused#1"), B("fam"), B("fam#cf"), B("fam#MD#1"), B("fam#cf2") };
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
		cell("bk", fams[i].p, fams[i].n, "MD", "BID", 3, T0 + 200 + (int64_t)i, "1.5", 3);
	cell("bk", "fam", 3, "cf", "c", 1, T0 + 300, "in cf", 5);
	cell("bk", "fam", 3, "x-y.z", "q", 1, T0 + 301, "in x-y.z", 8);
	cell("bk", "fam", 3, "meta", "", 0, T0 + 302, "meta, empty qualifier", 21);

	/* "." and ".." as segments; keys that are prefixes of others. */
	static const struct b dots[] = { B(".#x"), B("..#y"), B("...#z"), B("z#."), B("z#.."), B("z#.#.."), B("."),
					 B("p"), B("p!"), B("p#1"), B("p#2#3"), B("p\0") };
	for (size_t i = 0; i < sizeof(dots) / sizeof(dots[0]); i++)
		cell("bk", dots[i].p, dots[i].n, "cf", "v", 1, T0 + 400 + (int64_t)i, dots[i].p, dots[i].n);

	/* Long names that still fit: a 255-byte segment, one of 85 escaped bytes (255 encoded); qualifiers
	 * whose version names are 255 bytes (238 plain, 79 escaped = 237, 119 two-byte UTF-8 = 238), and a
	 * 255-byte one with a single version (its Q@TS is unlisted). */
	memcpy(key, "L#", 2);
	memset(key + 2, 'l', 255);
	cell("bk", key, 257, "cf", "v", 1, T0 + 600, "long", 4);
	memcpy(key, "X#", 2);
	memset(key + 2, 1, 85);
	cell("bk", key, 87, "cf", "v", 1, T0 + 601, "ctl", 3);
	memset(buf, 'q', 255);
	for (int v = 0; v < 3; v++)
		cell("bk", "longq", 5, "cf", buf, 238, T0 + v * 1000, "lq++", 2 + (size_t)v);
	cell("bk", "longq", 5, "cf", buf, 255, T0, "255", 3);
	memset(buf, 1, 79);
	for (int v = 0; v < 2; v++)
		cell("bk", "longq", 5, "MD", buf, 79, T0 + v, "escaped", 7);
	for (n = 0; n < 238; n += 2)
		memcpy(buf + n, "\xc3\xa9", 2);
	for (int v = 0; v < 2; v++)
		cell("bk", "longq", 5, "meta", buf, 238, T0 + v, "utf8", 4);

	/* Many versions: 50 inside one second; 20 one and a half seconds apart (every other one on a whole
	 * second); a newest version 0.9 s after an older one on the whole second below it (a time rounded to
	 * seconds lands on the older one); timestamps at the edges of the 16-digit padding. */
	for (int v = 0; v < 50; v++) {
		n = (size_t)snprintf(buf, sizeof(buf), "version %d", v);
		cell("bk", "hist", 4, "cf", "h", 1, T0 + v * 1000, buf, n);
	}
	for (int v = 0; v < 20; v++) {
		n = (size_t)snprintf(buf, sizeof(buf), "sec %d", v);
		cell("bk", "hist", 4, "x-y.z", "sec", 3, S0 + v * 1500000, buf, n);
	}
	cell("bk", "hist", 4, "cf", "round", 5, S0, "older, on the second", 21);
	cell("bk", "hist", 4, "cf", "round", 5, S0 + 900000, "newest, 0.9 s later", 19);
	cell("bk", "hist", 4, "cf", "whole", 5, S0 - 1000000, "older, whole", 12);
	cell("bk", "hist", 4, "cf", "whole", 5, S0, "newest, whole", 13);
	static const int64_t edge_ts[] = { 0, 1, 999999999999999LL, 9999999999999999LL, 10000000000000000LL,
					   12345678901234567LL };
	for (size_t i = 0; i < sizeof(edge_ts) / sizeof(edge_ts[0]); i++) {
		n = (size_t)snprintf(buf, sizeof(buf), "edge %lld", (long long)edge_ts[i]);
		cell("bk", "hist", 4, "meta", "edge", 4, edge_ts[i], buf, n);
	}

	/* Values: empty, 3 MiB of text, 3 MiB random over an older 1 MiB, NULs. */
	if (!(big = malloc(3 * MIB + 16)))
		die("malloc", -ENOMEM);
	cell("bk", "values", 6, "cf", "empty", 5, T0, "", 0);
	fill(big, 3 * MIB + 3, "the quick brown fox jumps over the lazy dog\n");
	cell("bk", "values", 6, "cf", "text3m", 6, T0, big, 3 * MIB + 3);
	for (size_t i = 0; i < 3 * MIB + 1; i += 8) {
		uint64_t r = next_rand();
		memcpy(big + i, &r, 8);
	}
	cell("bk", "values", 6, "cf", "random3m", 8, T0, big, 3 * MIB + 1);
	cell("bk", "values", 6, "cf", "random3m", 8, T0 - 1, big + 7, MIB + 1);
	cell("bk", "values", 6, "meta", "nul", 3, T0, "\0\0\0", 3);
	free(big);

	/* Names only a short form can give, restored by the attribute user.cellfs.name the tools carry:
	 * 300-byte and 4,000-byte key segments (one of escaped bytes), rows below a long segment, 16 KiB
	 * qualifiers (one of two-byte UTF-8, one of escaped bytes) with older versions, two of each that
	 * share their short form's prefix. */
	table("short", 0);
	family("short", "f", NULL);
	family("short", "g", NULL);
	memset(buf, 'q', 300);
	cell("short", "row", 3, "f", buf, 300, T0, "300-byte qualifier", 18);
	memset(buf, 'q', CS_MAX_QUALIFIER);
	cell("short", "row", 3, "f", buf, CS_MAX_QUALIFIER, T0, "16 KiB qualifier", 16);
	cell("short", "row", 3, "f", buf, CS_MAX_QUALIFIER, T0 - 1000, "older", 5);
	buf[CS_MAX_QUALIFIER - 1] = 'r'; /* the same short form's prefix */
	cell("short", "row", 3, "f", buf, CS_MAX_QUALIFIER, T0, "16 KiB, last byte r", 19);
	for (size_t i = 0; i + 1 < CS_MAX_QUALIFIER; i += 2)
		memcpy(buf + i, "\xc3\xa9", 2);
	cell("short", "row", 3, "g", buf, CS_MAX_QUALIFIER, T0, "16 KiB of e-acute", 17);
	for (size_t i = 0; i < CS_MAX_QUALIFIER; i++)
		buf[i] = (char)(i % 31 + 1); /* control bytes: every one escaped */
	cell("short", "row", 3, "g", buf, CS_MAX_QUALIFIER, T0, "16 KiB of controls", 18);
	cell("short", "row", 3, "g", buf, CS_MAX_QUALIFIER, T0 + 1, "and a newer one", 15);
	memset(key, 'k', 300);
	cell("short", key, 300, "f", "q", 1, T0, "300-byte key", 12);
	memcpy(key + 300, "#child", 6);
	cell("short", key, 306, "f", "q", 1, T0, "under a 300-byte segment", 24);
	memset(key, 'k', 4000);
	cell("short", key, 4000, "f", "a", 1, T0, "4,000-byte key", 14);
	cell("short", key, 4000, "f", "a", 1, T0 - 5, "older", 5);
	key[3999] = 'j';
	cell("short", key, 4000, "g", "b", 1, T0, "4,000-byte key, last byte j", 27);
	memcpy(key, "p#", 2);
	memset(key + 2, 0xff, 1400); /* invalid UTF-8: 4,200 bytes of %FF */
	cell("short", key, 1402, "f", "c", 1, T0, "escaped segment", 15);
	memcpy(key + 1402, "#d", 2);
	cell("short", key, 1404, "f", "c", 1, T0, "below it", 8);
	cell("short", "ok", 2, "f", "q", 1, T0, "fits", 4);
}

int main(int argc, char **argv)
{
	cs_open_opts o = { .flags = CS_OPEN_CREATE };
	cs_store *st;
	int rc;

	if (argc != 3 || (strcmp(argv[2], "awkward") && strcmp(argv[2], "big") && strcmp(argv[2], "backup"))) {
		fprintf(stderr, "usage: gen_awkward STORE awkward|big|backup\n");
		return 2;
	}
	if ((rc = cs_store_open(argv[1], &o, &st)))
		die(argv[1], rc);
	if ((rc = cs_txn_begin(st, 0, &txn)))
		die("begin", rc);
	if (!strcmp(argv[2], "awkward"))
		gen_awkward();
	else if (!strcmp(argv[2], "big"))
		gen_big();
	else
		gen_backup();
	if ((rc = cs_txn_commit(txn)))
		die("commit", rc);
	cs_store_close(st);
	return 0;
}
