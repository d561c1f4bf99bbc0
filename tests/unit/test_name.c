/* test_name.c — unit tests of fs/name: the %XX codec between stored bytes and path components. Tables of
 * exact names for every escape class and UTF-8 edge, the canonical-form rejections, table, family and
 * segment names, short forms at their thresholds, and version names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "name.h"
#include "nameutil.h"

#define BYTES(s) s, sizeof(s) - 1 /* a literal as (pointer, length), NULs included */

struct enc_case {
	enum name_kind kind;
	const char *b;
	size_t n;
	const char *name;
};

static void run_enc_cases(const struct enc_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct enc_case *t = &cases[i];
		char out[NAME_BUFSZ];

		nu_round_trip(t->kind, &nu_ctx, t->b, t->n, out);
		if (strcmp(out, t->name) != 0)
			fail_msg("case %zu (%s): got \"%s\", want \"%s\"", i, nu_kind_str(t->kind), out, t->name);
	}
}

/* ---- Escapes ---------------------------------------------------------------------------------------- */

static const struct enc_case escape_cases[] = {
	{ NAME_SEGMENT, BYTES("abc"), "abc" },
	{ NAME_QUALIFIER, BYTES("abc"), "abc" },
	{ NAME_SEGMENT, BYTES("NASDAQ"), "NASDAQ" },
	{ NAME_SEGMENT, BYTES("/"), "%2F" },
	{ NAME_QUALIFIER, BYTES("a/b"), "a%2Fb" },
	{ NAME_SEGMENT, BYTES("%"), "%25" },
	{ NAME_QUALIFIER, BYTES("%%"), "%25%25" },
	{ NAME_SEGMENT, BYTES("%41"), "%2541" },
	{ NAME_QUALIFIER, BYTES("\0"), "%00" },
	{ NAME_SEGMENT, BYTES("a\0b"), "a%00b" },
	{ NAME_QUALIFIER, BYTES("\x01\x1f"), "%01%1F" },
	{ NAME_SEGMENT, BYTES("\t\n\r"), "%09%0A%0D" },
	{ NAME_QUALIFIER, BYTES("\x7f"), "%7F" },
	{ NAME_SEGMENT, BYTES("\x1b[0m"), "%1B[0m" },
	{ NAME_QUALIFIER, BYTES("@"), "%40" },
	{ NAME_QUALIFIER, BYTES("a@b"), "a%40b" },
	{ NAME_QUALIFIER, BYTES("x@0000000000000001"), "x%400000000000000001" },
	{ NAME_SEGMENT, BYTES("@"), "@" },   /* '@' is escaped in qualifiers only */
	{ NAME_SEGMENT, BYTES("a@b"), "a@b" },
	{ NAME_QUALIFIER, BYTES("#"), "#" }, /* the delimiter matters in segments only */
	{ NAME_QUALIFIER, BYTES("\xff"), "%FF" },
	{ NAME_SEGMENT, BYTES("\x80"), "%80" },
	{ NAME_QUALIFIER, BYTES(" ~!\"$&'()*+,-:;<=>?[\\]^_`{|}"), " ~!\"$&'()*+,-:;<=>?[\\]^_`{|}" },
	{ NAME_SEGMENT, BYTES("-rf *"), "-rf *" },
	{ NAME_QUALIFIER, BYTES("%~"), "%25~" },
	{ NAME_SEGMENT, BYTES("a%~0123456789ABCDEF"), "a%25~0123456789ABCDEF" },
};

static void test_name__escapes_each_class(void **state)
{
	run_enc_cases(escape_cases, NU_ARRAY_SIZE(escape_cases));
}

/* Every single byte, in both kinds. */
static void test_name__every_single_byte(void **state)
{
	for (int c = 0; c < 256; c++) {
		for (int k = NAME_SEGMENT; k <= NAME_QUALIFIER; k++) {
			unsigned char b = (unsigned char)c;
			char out[NAME_BUFSZ], want[8];
			bool esc = c < 0x20 || c == 0x7f || c == '/' || c == '%' || c >= 0x80 || c == '.' ||
				   (k == NAME_QUALIFIER && c == '@');

			if (k == NAME_SEGMENT && c == '#')
				continue; /* the delimiter: no such segment */
			snprintf(want, sizeof(want), esc ? "%%%02X" : "%c", c);
			nu_round_trip((enum name_kind)k, &nu_ctx, &b, 1, out);
			if (strcmp(out, want) != 0)
				fail_msg("byte 0x%02X as %s: got \"%s\", want \"%s\"", c, nu_kind_str(k), out, want);
		}
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Every two-byte string round-trips in both kinds, and the names are all distinct. */
static void test_name__every_two_byte_string(void **state)
{
	static char names[65536][8];
	char out[NAME_BUFSZ];

	for (int k = NAME_SEGMENT; k <= NAME_QUALIFIER; k++) {
		for (unsigned v = 0; v < 65536; v++) {
			unsigned char b[2] = { (unsigned char)(v >> 8), (unsigned char)v };

			if (k == NAME_SEGMENT && (b[0] == '#' || b[1] == '#')) {
				snprintf(names[v], sizeof(names[v]), "#%04X", v); /* unique placeholder */
				continue;
			}
			nu_round_trip((enum name_kind)k, &nu_ctx, b, 2, out);
			assert_true(strlen(out) < sizeof(names[v]));
			strcpy(names[v], out);
		}
		qsort(names, 65536, sizeof(names[0]), cmp_str);
		for (unsigned v = 1; v < 65536; v++)
			assert_string_not_equal(names[v - 1], names[v]);
	}
}

/* ---- UTF-8 ------------------------------------------------------------------------------------------ */

static const struct enc_case utf8_cases[] = {
	/* valid: raw */
	{ NAME_QUALIFIER, BYTES("\xc2\xa9"), "\xc2\xa9" },                 /* U+00A9 */
	{ NAME_SEGMENT, BYTES("\xc2\x80"), "\xc2\x80" },                   /* U+0080, a C1 control: valid */
	{ NAME_QUALIFIER, BYTES("\xdf\xbf"), "\xdf\xbf" },                 /* U+07FF */
	{ NAME_SEGMENT, BYTES("\xe0\xa0\x80"), "\xe0\xa0\x80" },           /* U+0800 */
	{ NAME_QUALIFIER, BYTES("\xe2\x82\xac"), "\xe2\x82\xac" },         /* U+20AC */
	{ NAME_SEGMENT, BYTES("\xed\x9f\xbf"), "\xed\x9f\xbf" },           /* U+D7FF */
	{ NAME_QUALIFIER, BYTES("\xee\x80\x80"), "\xee\x80\x80" },         /* U+E000 */
	{ NAME_SEGMENT, BYTES("\xef\xbf\xbf"), "\xef\xbf\xbf" },           /* U+FFFF */
	{ NAME_QUALIFIER, BYTES("\xf0\x90\x80\x80"), "\xf0\x90\x80\x80" }, /* U+10000 */
	{ NAME_SEGMENT, BYTES("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80" },   /* U+1F600 */
	{ NAME_QUALIFIER, BYTES("\xf4\x8f\xbf\xbf"), "\xf4\x8f\xbf\xbf" }, /* U+10FFFF */
	{ NAME_SEGMENT, BYTES("caf\xc3\xa9/\xff"), "caf\xc3\xa9%2F%FF" },
	{ NAME_QUALIFIER, BYTES("\xe6\x97\xa5\xe6\x9c\xac@"), "\xe6\x97\xa5\xe6\x9c\xac%40" },
	/* overlong */
	{ NAME_QUALIFIER, BYTES("\xc0\x80"), "%C0%80" },
	{ NAME_SEGMENT, BYTES("\xc1\xbf"), "%C1%BF" },
	{ NAME_QUALIFIER, BYTES("\xe0\x80\x80"), "%E0%80%80" },
	{ NAME_SEGMENT, BYTES("\xe0\x9f\xbf"), "%E0%9F%BF" },
	{ NAME_QUALIFIER, BYTES("\xf0\x80\x80\x80"), "%F0%80%80%80" },
	{ NAME_SEGMENT, BYTES("\xf0\x8f\xbf\xbf"), "%F0%8F%BF%BF" },
	/* surrogates */
	{ NAME_QUALIFIER, BYTES("\xed\xa0\x80"), "%ED%A0%80" },
	{ NAME_SEGMENT, BYTES("\xed\xbf\xbf"), "%ED%BF%BF" },
	{ NAME_QUALIFIER, BYTES("\xed\xa0\xbd\xed\xb8\x80"), "%ED%A0%BD%ED%B8%80" }, /* CESU-8 U+1F600 */
	/* above U+10FFFF, bytes that never occur */
	{ NAME_SEGMENT, BYTES("\xf4\x90\x80\x80"), "%F4%90%80%80" },
	{ NAME_QUALIFIER, BYTES("\xf5\x80\x80\x80"), "%F5%80%80%80" },
	{ NAME_SEGMENT, BYTES("\xf8\x88\x80\x80\x80"), "%F8%88%80%80%80" },
	{ NAME_QUALIFIER, BYTES("\xfe\xff"), "%FE%FF" },
	/* truncated at the end */
	{ NAME_SEGMENT, BYTES("\xc3"), "%C3" },
	{ NAME_QUALIFIER, BYTES("a\xe2\x82"), "a%E2%82" },
	{ NAME_SEGMENT, BYTES("\xf0\x9f\x98"), "%F0%9F%98" },
	/* truncated mid-string */
	{ NAME_QUALIFIER, BYTES("\xe2\x82" "a"), "%E2%82a" },
	{ NAME_SEGMENT, BYTES("\xe2\x82\xe2\x82\xac"), "%E2%82\xe2\x82\xac" },
	{ NAME_QUALIFIER, BYTES("\xc3\xc3\xa9"), "%C3\xc3\xa9" },
	{ NAME_SEGMENT, BYTES("\xf0\x9f\x98" "x\xf0\x9f\x98\x80"), "%F0%9F%98x\xf0\x9f\x98\x80" },
	{ NAME_QUALIFIER, BYTES("\xe2\x82\x00"), "%E2%82%00" },
	/* lone continuation bytes */
	{ NAME_SEGMENT, BYTES("\x80"), "%80" },
	{ NAME_QUALIFIER, BYTES("a\xbf" "b"), "a%BFb" },
	{ NAME_SEGMENT, BYTES("\xc3\xa9\xa9"), "\xc3\xa9%A9" },
	{ NAME_QUALIFIER, BYTES("\x80\x80\x80\x80"), "%80%80%80%80" },
	{ NAME_SEGMENT, BYTES("\xf0\x9f\x98\x80\x80"), "\xf0\x9f\x98\x80%80" },
};

static void test_name__utf8_edges(void **state)
{
	run_enc_cases(utf8_cases, NU_ARRAY_SIZE(utf8_cases));
}

/* ---- Reserved names --------------------------------------------------------------------------------- */

static const struct enc_case dot_cases[] = {
	{ NAME_SEGMENT, BYTES("."), "%2E" },
	{ NAME_QUALIFIER, BYTES("."), "%2E" },
	{ NAME_SEGMENT, BYTES(".."), "%2E%2E" },
	{ NAME_QUALIFIER, BYTES(".."), "%2E%2E" },
	{ NAME_SEGMENT, BYTES("..."), "..." },
	{ NAME_QUALIFIER, BYTES("..."), "..." },
	{ NAME_SEGMENT, BYTES(".a"), ".a" },
	{ NAME_QUALIFIER, BYTES("a."), "a." },
	{ NAME_SEGMENT, BYTES("../x"), "..%2Fx" },
	{ NAME_QUALIFIER, BYTES(".\0"), ".%00" },
};

static void test_name__dot_and_dotdot(void **state)
{
	run_enc_cases(dot_cases, NU_ARRAY_SIZE(dot_cases));
}

static void test_name__empty_is_lone_percent(void **state)
{
	char out[NAME_BUFSZ];
	name_result res;
	int64_t ts;

	for (int k = NAME_SEGMENT; k <= NAME_QUALIFIER; k++) {
		assert_int_equal(name_encode((enum name_kind)k, NULL, 0, &nu_ctx, out, sizeof(out)), 1);
		assert_string_equal(out, "%");
		assert_int_equal(name_decode((enum name_kind)k, "%", &nu_ctx, &res), 0);
		assert_false(res.partial);
		assert_int_equal(res.len, 0);
		assert_true(name_match(&res, &nu_ctx, "", 0));
		assert_false(name_match(&res, &nu_ctx, "%", 1));
	}
	assert_int_equal(name_encode_version("", 0, 7, out, sizeof(out)), 18);
	assert_string_equal(out, "%@0000000000000007");
	assert_int_equal(name_decode_version(out, &res, &ts), 0);
	assert_int_equal(res.len, 0);
	assert_int_equal(ts, 7);
	/* "%" is not a table or family name */
	assert_int_equal(name_decode(NAME_TABLE, "%", NULL, &res), -ENOENT);
	assert_int_equal(name_decode(NAME_FAMILY, "%", NULL, &res), -ENOENT);
}

static const struct enc_case family_cases[] = {
	{ NAME_SEGMENT, BYTES("MD"), "%4DD" },
	{ NAME_SEGMENT, BYTES("METER"), "%4DETER" },
	{ NAME_SEGMENT, BYTES("0015"), "%30015" },
	{ NAME_SEGMENT, BYTES("_x"), "%5Fx" },
	{ NAME_SEGMENT, BYTES("a.b-c"), "%61.b-c" },
	{ NAME_SEGMENT, BYTES("MDX"), "MDX" }, /* not a family */
	{ NAME_SEGMENT, BYTES("M"), "M" },
	{ NAME_SEGMENT, BYTES("md"), "md" },   /* family names are case-sensitive */
	{ NAME_SEGMENT, BYTES("MD "), "MD " },
	{ NAME_QUALIFIER, BYTES("MD"), "MD" }, /* qualifiers are never family-escaped */
	{ NAME_QUALIFIER, BYTES("METER"), "METER" },
};

static void test_name__segment_equal_to_family_escapes_first_byte(void **state)
{
	name_result res;
	char out[NAME_BUFSZ];

	run_enc_cases(family_cases, NU_ARRAY_SIZE(family_cases));
	/* In a row directory "MD" is the family, never the segment; without families it is the segment. */
	assert_int_equal(name_decode(NAME_SEGMENT, "MD", &nu_ctx, &res), -ENOENT);
	assert_int_equal(name_decode(NAME_SEGMENT, "MD", NULL, &res), 0);
	assert_int_equal(name_decode(NAME_SEGMENT, "%4DD", NULL, &res), -ENOENT);
	assert_int_equal(name_decode(NAME_SEGMENT, "%4DDX", &nu_ctx, &res), -ENOENT);
	assert_int_equal(name_decode(NAME_QUALIFIER, "%4DD", &nu_ctx, &res), -ENOENT);
	/* a table whose families are unknown to the callback: plain */
	name_segctx plain = { '#', NULL, NULL };
	assert_int_equal(name_encode(NAME_SEGMENT, "MD", 2, &plain, out, sizeof(out)), 2);
	assert_string_equal(out, "MD");
}

/* A family name so long that its segment needs the short form: the escaped first byte is kept. */
static void test_name__long_family_segment_short_form(void **state)
{
	char fam[301], out[NAME_BUFSZ];
	const char *const longfams[] = { fam, NULL };
	name_segctx c = { '#', nu_is_family, longfams };
	name_result res;

	memset(fam, 'f', 300);
	fam[300] = '\0';
	assert_true(nu_round_trip(NAME_SEGMENT, &c, fam, 300, out));
	assert_memory_equal(out, "%66fff", 6);
	assert_int_equal(strlen(out), 200 + 18);
	/* the same bytes when they are not a family: no escape, so this name is not theirs */
	assert_true(nu_round_trip(NAME_SEGMENT, &nu_ctx, fam, 300, out));
	assert_memory_equal(out, "ffff", 4);
	assert_int_equal(name_decode(NAME_SEGMENT, out, &c, &res), 0);
	assert_true(res.partial);
	assert_false(name_match(&res, &c, fam, 300));
}

/* ---- Canonical form --------------------------------------------------------------------------------- */

static const struct reject_case {
	enum name_kind kind;
	const char *name;
} reject_cases[] = {
	{ NAME_SEGMENT, "" },
	{ NAME_QUALIFIER, "" },
	{ NAME_SEGMENT, "%41" },         /* 'A' needs no escape */
	{ NAME_QUALIFIER, "%41" },
	{ NAME_SEGMENT, "%2f" },         /* lower-case hex */
	{ NAME_QUALIFIER, "%2f" },
	{ NAME_SEGMENT, "%4d" },
	{ NAME_SEGMENT, "%4dD" },
	{ NAME_SEGMENT, "%4D" },         /* "M" is not a family */
	{ NAME_SEGMENT, "a/b" },         /* raw bytes that need escaping */
	{ NAME_QUALIFIER, "/" },
	{ NAME_SEGMENT, "\x01" },
	{ NAME_QUALIFIER, "a\x1f" },
	{ NAME_SEGMENT, "\x7f" },
	{ NAME_QUALIFIER, "\xff" },
	{ NAME_SEGMENT, "\x80" },
	{ NAME_QUALIFIER, "\xc0\x80" },
	{ NAME_SEGMENT, "\xed\xa0\x80" },
	{ NAME_QUALIFIER, "\xf4\x90\x80\x80" },
	{ NAME_SEGMENT, "a\xe2\x82" },
	{ NAME_QUALIFIER, "a@b" },       /* raw '@' in a qualifier */
	{ NAME_QUALIFIER, "@" },
	{ NAME_SEGMENT, "a%40b" },       /* '@' needs no escape in a segment */
	{ NAME_SEGMENT, "." },
	{ NAME_QUALIFIER, ".." },
	{ NAME_SEGMENT, "%2E." },
	{ NAME_QUALIFIER, ".%2E" },
	{ NAME_SEGMENT, "%2E%2E%2E" },   /* "..." is written raw */
	{ NAME_QUALIFIER, "%2Ea" },
	{ NAME_SEGMENT, "%C3%A9" },      /* valid UTF-8 is written raw */
	{ NAME_QUALIFIER, "%E2\x82\xac" },
	{ NAME_SEGMENT, "%E2%82%AC" },
	{ NAME_QUALIFIER, "%G0" },       /* malformed escapes */
	{ NAME_SEGMENT, "%0G" },
	{ NAME_QUALIFIER, "%4" },
	{ NAME_SEGMENT, "a%4" },
	{ NAME_QUALIFIER, "a%" },
	{ NAME_SEGMENT, "%%" },
	{ NAME_QUALIFIER, "%%41" },
	{ NAME_SEGMENT, "%a" },
	{ NAME_QUALIFIER, "% " },
	{ NAME_SEGMENT, "%~" },
	{ NAME_QUALIFIER, "a%~0123456789ABCDEF" }, /* a short form of a name that is not long */
	{ NAME_SEGMENT, "a#b" },         /* the delimiter, raw or escaped */
	{ NAME_SEGMENT, "%23" },
	{ NAME_SEGMENT, "#" },
	{ NAME_QUALIFIER, "x@0000000000000001" }, /* a version name is not a qualifier name */
	{ NAME_TABLE, "%" },
	{ NAME_TABLE, "" },
	{ NAME_TABLE, "-a" },
	{ NAME_TABLE, ".a" },
	{ NAME_TABLE, "%61" },
	{ NAME_FAMILY, "." },
	{ NAME_FAMILY, ".." },
	{ NAME_FAMILY, "a b" },
	{ NAME_FAMILY, "a@b" },
	{ NAME_FAMILY, "caf\xc3\xa9" },
};

static void test_name__rejects_noncanonical_names(void **state)
{
	for (size_t i = 0; i < NU_ARRAY_SIZE(reject_cases); i++) {
		name_result res;
		int rc = name_decode(reject_cases[i].kind, reject_cases[i].name, &nu_ctx, &res);

		if (rc != -ENOENT)
			fail_msg("case %zu (%s \"%s\"): got %d, want -ENOENT", i, nu_kind_str(reject_cases[i].kind),
				 reject_cases[i].name, rc);
	}
}

/* Short forms that no encoder output looks like. */
static void test_name__rejects_malformed_short_forms(void **state)
{
	unsigned char b[1000];
	char good[NAME_BUFSZ], bad[NAME_BUFSZ + 8];
	name_result res;
	size_t plen;

	memset(b, 'a', sizeof(b));
	assert_true(nu_round_trip(NAME_QUALIFIER, NULL, b, sizeof(b), good));
	plen = strlen(good) - 18;
	assert_int_equal(plen, NAME_SHORT_PREFIX);

	/* hash in lower case, too short, too long, not hex */
	snprintf(bad, sizeof(bad), "%.*s%%~%016" PRIx64, (int)plen, good, name_hash(b, sizeof(b)));
	assert_int_equal(name_decode(NAME_QUALIFIER, bad, NULL, &res), -ENOENT);
	snprintf(bad, sizeof(bad), "%.*s%%~%.15s", (int)plen, good, good + plen + 2);
	assert_int_equal(name_decode(NAME_QUALIFIER, bad, NULL, &res), -ENOENT);
	snprintf(bad, sizeof(bad), "%.*s%%~%s0", (int)plen, good, good + plen + 2);
	assert_int_equal(name_decode(NAME_QUALIFIER, bad, NULL, &res), -ENOENT);
	snprintf(bad, sizeof(bad), "%.*s%%~%.15sG", (int)plen, good, good + plen + 2);
	assert_int_equal(name_decode(NAME_QUALIFIER, bad, NULL, &res), -ENOENT);
	/* prefix too short (196) or too long (201): not the longest prefix within 200 bytes */
	snprintf(bad, sizeof(bad), "%.*s%s", 196, good, good + plen);
	assert_int_equal(name_decode(NAME_QUALIFIER, bad, NULL, &res), -ENOENT);
	snprintf(bad, sizeof(bad), "a%s", good);
	assert_int_equal(name_decode(NAME_QUALIFIER, bad, NULL, &res), -ENOENT);
	/* 197..200 are all possible prefix lengths */
	for (size_t p = 197; p <= 200; p++) {
		snprintf(bad, sizeof(bad), "%.*s%s", (int)p, good, good + plen);
		assert_int_equal(name_decode(NAME_QUALIFIER, bad, NULL, &res), 0);
		assert_true(res.partial);
		assert_int_equal(res.len, p);
		assert_int_equal(name_match(&res, NULL, b, sizeof(b)), p == 200);
	}
	/* a non-canonical escape in the prefix, a raw '/' */
	memcpy(bad, good, strlen(good) + 1);
	memcpy(bad + 10, "%61", 3); /* for "aaa": still a 200-byte prefix */
	assert_int_equal(name_decode(NAME_QUALIFIER, bad, NULL, &res), -ENOENT);
	memcpy(bad, good, strlen(good) + 1);
	bad[5] = '/';
	assert_int_equal(name_decode(NAME_QUALIFIER, bad, NULL, &res), -ENOENT);
	/* '@' raw in a qualifier's prefix, fine in a segment's */
	bad[5] = '@';
	assert_int_equal(name_decode(NAME_QUALIFIER, bad, NULL, &res), -ENOENT);
	assert_int_equal(name_decode(NAME_SEGMENT, bad, &nu_ctx, &res), 0);
	/* the delimiter in a segment's prefix */
	bad[5] = '#';
	assert_int_equal(name_decode(NAME_SEGMENT, bad, &nu_ctx, &res), -ENOENT);
	assert_int_equal(name_decode(NAME_QUALIFIER, bad, &nu_ctx, &res), 0);
	/* two short-form markers */
	memcpy(bad, good, strlen(good) + 1);
	memcpy(bad + 100, "%~", 2);
	assert_int_equal(name_decode(NAME_QUALIFIER, bad, NULL, &res), -ENOENT);
}

static void test_name__over_name_max_is_enametoolong(void **state)
{
	char name[NAME_MAX + 2];
	name_result res;
	int64_t ts;

	memset(name, 'a', NAME_MAX);
	name[NAME_MAX] = '\0';
	assert_int_equal(name_decode(NAME_QUALIFIER, name, NULL, &res), 0);
	assert_int_equal(res.len, NAME_MAX);
	assert_int_equal(name_decode(NAME_TABLE, name, NULL, &res), 0);
	strcat(name, "a");
	assert_int_equal(name_decode(NAME_QUALIFIER, name, NULL, &res), -ENAMETOOLONG);
	assert_int_equal(name_decode(NAME_SEGMENT, name, &nu_ctx, &res), -ENAMETOOLONG);
	assert_int_equal(name_decode(NAME_FAMILY, name, NULL, &res), -ENAMETOOLONG);
	assert_int_equal(name_decode_version(name, &res, &ts), -ENAMETOOLONG);
	memcpy(name + NAME_MAX - 16, "@0000000000000001", 17);
	assert_int_equal(name_decode_version(name, &res, &ts), -ENAMETOOLONG);
	/* 255 bytes with a 16-digit timestamp: Q may be 238 bytes */
	memset(name, 'a', NAME_MAX - 17);
	memcpy(name + NAME_MAX - 17, "@0000000000000001", 18);
	assert_int_equal(name_decode_version(name, &res, &ts), 0);
	assert_int_equal(res.len, NAME_MAX - 17);
}

/* ---- Table and family names, the delimiter, buffers -------------------------------------------------- */

static void test_name__table_and_family_names_are_never_escaped(void **state)
{
	static const char *const good[] = { "quotes", "MD", "_x", "0015", "a.b-c", "a..b", "A-", "9" };
	static const char *const bad[] = { "", "-a", ".a", ".", "..", "a/b", "a b", "a@b", "%41", "caf\xc3\xa9",
					   "a\x01" };
	char out[NAME_BUFSZ], big[300];
	name_result res;

	for (size_t i = 0; i < NU_ARRAY_SIZE(good); i++) {
		for (int k = NAME_TABLE; k <= NAME_FAMILY; k++) {
			assert_int_equal(name_encode((enum name_kind)k, good[i], strlen(good[i]), NULL, out,
						     sizeof(out)), strlen(good[i]));
			assert_string_equal(out, good[i]);
			assert_int_equal(name_decode((enum name_kind)k, good[i], NULL, &res), 0);
			assert_int_equal(res.len, strlen(good[i]));
			assert_memory_equal(res.bytes, good[i], res.len);
			assert_true(name_match(&res, NULL, good[i], strlen(good[i])));
		}
	}
	for (size_t i = 0; i < NU_ARRAY_SIZE(bad); i++) {
		for (int k = NAME_TABLE; k <= NAME_FAMILY; k++) {
			assert_int_equal(name_encode((enum name_kind)k, bad[i], strlen(bad[i]), NULL, out,
						     sizeof(out)), -EINVAL);
			assert_int_equal(name_decode((enum name_kind)k, bad[i], NULL, &res), -ENOENT);
		}
	}
	memset(big, 'x', sizeof(big));
	assert_int_equal(name_encode(NAME_FAMILY, big, NAME_MAX, NULL, out, sizeof(out)), NAME_MAX);
	assert_int_equal(name_encode(NAME_FAMILY, big, NAME_MAX + 1, NULL, out, sizeof(out)), -ENAMETOOLONG);
	assert_int_equal(name_encode(NAME_TABLE, big, sizeof(big), NULL, out, sizeof(out)), -ENAMETOOLONG);
}

static void test_name__segment_never_holds_the_delimiter(void **state)
{
	static const struct { int delim; const char *b; size_t n; int want; } cases[] = {
		{ '#', BYTES("a#b"), -EINVAL },
		{ '#', BYTES("#"), -EINVAL },
		{ '#', BYTES("a"), 1 },
		{ -1, BYTES("a#b"), 3 },
		{ '/', BYTES("a/b"), -EINVAL },
		{ '/', BYTES("a%b"), 5 },
		{ 0, BYTES("a\0b"), -EINVAL },
		{ 0, BYTES("ab"), 2 },
		{ 0xff, BYTES("\xff"), -EINVAL },
		{ 0xc3, BYTES("caf\xc3\xa9"), -EINVAL },
		{ '@', BYTES("a@b"), -EINVAL },
	};
	char out[NAME_BUFSZ];
	name_result res;

	for (size_t i = 0; i < NU_ARRAY_SIZE(cases); i++) {
		name_segctx c = { cases[i].delim, nu_is_family, nu_families };

		assert_int_equal(name_encode(NAME_SEGMENT, cases[i].b, cases[i].n, &c, out, sizeof(out)),
				 cases[i].want);
		/* qualifiers ignore the context */
		assert_true(name_encode(NAME_QUALIFIER, cases[i].b, cases[i].n, &c, out, sizeof(out)) > 0);
	}
	name_segctx slash = { '/', NULL, NULL }, nul = { 0, NULL, NULL };
	assert_int_equal(name_decode(NAME_SEGMENT, "a%2Fb", &slash, &res), -ENOENT);
	assert_int_equal(name_decode(NAME_SEGMENT, "a%00b", &nul, &res), -ENOENT);
	assert_int_equal(name_decode(NAME_SEGMENT, "a%00b", &slash, &res), 0);

	/* A long segment whose delimiter lies beyond the short form's prefix: the name decodes (the prefix
	 * is fine) but no segment matches it. */
	unsigned char b[400];
	name_segctx none = { -1, NULL, NULL };
	memset(b, 's', sizeof(b));
	b[350] = '#';
	assert_true(nu_round_trip(NAME_SEGMENT, &none, b, sizeof(b), out));
	assert_int_equal(name_decode(NAME_SEGMENT, out, &nu_ctx, &res), 0);
	assert_false(name_match(&res, &nu_ctx, b, sizeof(b)));
}

static void test_name__small_buffer_is_erange(void **state)
{
	char out[NAME_BUFSZ];

	assert_int_equal(name_encode(NAME_QUALIFIER, "a/b", 3, NULL, out, 5), -ERANGE);
	assert_int_equal(name_encode(NAME_QUALIFIER, "a/b", 3, NULL, out, 6), 5);
	assert_string_equal(out, "a%2Fb");
	assert_int_equal(name_encode(NAME_SEGMENT, "", 0, &nu_ctx, out, 1), -ERANGE);
	assert_int_equal(name_encode(NAME_SEGMENT, "", 0, &nu_ctx, out, 2), 1);
	assert_int_equal(name_encode(NAME_TABLE, "t", 1, NULL, out, 0), -ERANGE);
	assert_int_equal(name_encode(NAME_TABLE, "t", 1, NULL, out, 1), -ERANGE);
	assert_int_equal(name_encode_version("q", 1, 5, out, 18), -ERANGE);
	assert_int_equal(name_encode_version("q", 1, 5, out, 19), 18);
	assert_string_equal(out, "q@0000000000000005");
}

/* ---- Short forms ------------------------------------------------------------------------------------ */

static void test_name__hash_is_fnv1a_64(void **state)
{
	assert_true(name_hash("", 0) == UINT64_C(0xCBF29CE484222325));
	assert_true(name_hash("a", 1) == UINT64_C(0xAF63DC4C8601EC8C));
	assert_true(name_hash("foobar", 6) == UINT64_C(0x85944171F73967E8));
	assert_true(name_hash(NULL, 0) == UINT64_C(0xCBF29CE484222325));
}

/* B is REPEAT copies of UNIT then TAIL; its name is the first PREFIX bytes of the encoding then `%~`. */
static const struct threshold_case {
	enum name_kind kind;
	const char *unit;
	size_t repeat;
	const char *tail;
	int len;      /* expected name length */
	int prefix;   /* -1: full form */
} threshold_cases[] = {
	{ NAME_QUALIFIER, "a", 255, "", 255, -1 },
	{ NAME_QUALIFIER, "a", 256, "", 218, 200 },
	{ NAME_SEGMENT, "\xff", 85, "", 255, -1 },
	{ NAME_SEGMENT, "\xff", 86, "", 216, 198 },
	{ NAME_QUALIFIER, "@", 85, "", 255, -1 },
	{ NAME_SEGMENT, "@", 256, "", 218, 200 },
	{ NAME_QUALIFIER, "\xc3\xa9", 127, "a", 255, -1 },
	{ NAME_QUALIFIER, "\xc3\xa9", 128, "", 218, 200 },
	{ NAME_SEGMENT, "\xe2\x82\xac", 85, "", 255, -1 },
	{ NAME_SEGMENT, "\xe2\x82\xac", 86, "", 216, 198 },
	{ NAME_QUALIFIER, "\xf0\x9f\x98\x80", 64, "", 218, 200 },
	{ NAME_SEGMENT, "%", 85, "", 255, -1 },
	{ NAME_SEGMENT, "%", 86, "", 216, 198 },
};

static void test_name__short_form_thresholds(void **state)
{
	for (size_t i = 0; i < NU_ARRAY_SIZE(threshold_cases); i++) {
		const struct threshold_case *t = &threshold_cases[i];
		unsigned char b[2000];
		size_t n = 0, ul = strlen(t->unit);
		char out[NAME_BUFSZ], hash[17];
		bool partial;

		for (size_t r = 0; r < t->repeat; r++, n += ul)
			memcpy(b + n, t->unit, ul);
		memcpy(b + n, t->tail, strlen(t->tail));
		n += strlen(t->tail);
		partial = nu_round_trip(t->kind, &nu_ctx, b, n, out);
		if ((int)strlen(out) != t->len || partial != (t->prefix >= 0))
			fail_msg("case %zu: got %zu bytes \"%s\"", i, strlen(out), out);
		if (partial) {
			snprintf(hash, sizeof(hash), "%016" PRIX64, name_hash(b, n));
			assert_memory_equal(out + t->prefix, "%~", 2);
			assert_string_equal(out + t->prefix + 2, hash);
		}
	}
}

/* The prefix never splits an escape or a UTF-8 sequence, and keeps every whole unit that fits in 200. */
static void test_name__short_form_prefix_keeps_units_whole(void **state)
{
	static const struct { size_t as; const char *unit; size_t prefix; } cases[] = {
		{ 199, "\xff", 199 },            /* %FF would end at 202 */
		{ 198, "\xff", 198 },            /* ... at 201 */
		{ 197, "\xff", 200 },            /* ... at 200: kept */
		{ 198, "\xe2\x82\xac", 198 },    /* € would end at 201 */
		{ 197, "\xe2\x82\xac", 200 },
		{ 197, "\xf0\x9f\x98\x80", 197 }, /* the shortest possible prefix */
		{ 196, "\xf0\x9f\x98\x80", 200 },
		{ 199, "\xc3\xa9", 199 },
		{ 198, "\xc3\xa9", 200 },
	};

	for (size_t i = 0; i < NU_ARRAY_SIZE(cases); i++) {
		unsigned char b[600];
		size_t n = 0, ul = strlen(cases[i].unit);
		char out[NAME_BUFSZ];

		memset(b, 'a', cases[i].as);
		n = cases[i].as;
		while (n + ul <= sizeof(b)) {
			memcpy(b + n, cases[i].unit, ul);
			n += ul;
		}
		for (int k = NAME_SEGMENT; k <= NAME_QUALIFIER; k++) {
			assert_true(nu_round_trip((enum name_kind)k, &nu_ctx, b, n, out));
			if (strlen(out) != cases[i].prefix + 18 || memcmp(out + cases[i].prefix, "%~", 2) != 0)
				fail_msg("case %zu: \"%s\"", i, out);
		}
	}
}

/* ---- Version names ---------------------------------------------------------------------------------- */

static const struct version_case {
	const char *q;
	size_t qn;
	int64_t ts;
	const char *name;
} version_cases[] = {
	{ BYTES("BID"), INT64_C(1426535612156000), "BID@1426535612156000" },
	{ BYTES("BID"), 0, "BID@0000000000000000" },
	{ BYTES("BID"), 1, "BID@0000000000000001" },
	{ BYTES("0015"), INT64_C(1500000000000000), "0015@1500000000000000" },
	{ BYTES("x"), INT64_C(9999999999999999), "x@9999999999999999" },
	{ BYTES("x"), INT64_C(10000000000000000), "x@10000000000000000" },
	{ BYTES("x"), INT64_C(123456789012345678), "x@123456789012345678" },
	{ BYTES("x"), INT64_MAX, "x@9223372036854775807" },
	{ BYTES(""), 5, "%@0000000000000005" },
	{ BYTES("a@b"), 5, "a%40b@0000000000000005" },
	{ BYTES("@"), 5, "%40@0000000000000005" },
	{ BYTES("q@0000000000000001"), 2, "q%400000000000000001@0000000000000002" },
	{ BYTES("."), 5, "%2E@0000000000000005" },
	{ BYTES(".."), 5, "%2E%2E@0000000000000005" },
	{ BYTES("MD"), 5, "MD@0000000000000005" },
	{ BYTES("a/b\xff\xc3\xa9"), 5, "a%2Fb%FF\xc3\xa9@0000000000000005" },
};

static void test_name__version_names(void **state)
{
	char out[NAME_BUFSZ];
	name_result res;

	for (size_t i = 0; i < NU_ARRAY_SIZE(version_cases); i++) {
		const struct version_case *t = &version_cases[i];

		nu_round_trip_version(t->q, t->qn, t->ts, out);
		if (strcmp(out, t->name) != 0)
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, out, t->name);
		/* a version name is never a qualifier's name */
		assert_int_equal(name_decode(NAME_QUALIFIER, out, NULL, &res), -ENOENT);
	}
	assert_int_equal(name_encode_version("x", 1, -1, out, sizeof(out)), -EINVAL);
	assert_int_equal(name_encode_version("x", 1, INT64_MIN, out, sizeof(out)), -EINVAL);
}

static const char *const bad_versions[] = {
	"BID",
	"BID@",
	"@",
	"BID@123",
	"BID@000000000000001",       /* 15 digits */
	"BID@00000000000000001",     /* 17 digits, leading zero */
	"BID@01426535612156000",
	"BID@09223372036854775807",
	"BID@9223372036854775808",   /* above INT64_MAX */
	"BID@9999999999999999999",
	"BID@10000000000000000000",  /* 20 digits */
	"BID@+000000000000001",
	"BID@-000000000000001",
	"BID@ 000000000000001",
	"BID@000000000000000a",
	"BID@000000000000000\xd9\xa0", /* ARABIC-INDIC ZERO */
	"BID@0000000000000001 ",
	"BID@0000000000000001@",
	"@0000000000000001",          /* the empty qualifier is "%" */
	"a@b@0000000000000001",       /* a raw '@' inside Q */
	"%41@0000000000000001",       /* non-canonical Q */
	"a/b@0000000000000001",
	"%2e@0000000000000001",
	"%@%0000000000000001",
};

static void test_name__rejects_bad_version_names(void **state)
{
	for (size_t i = 0; i < NU_ARRAY_SIZE(bad_versions); i++) {
		name_result res;
		int64_t ts;
		int rc = name_decode_version(bad_versions[i], &res, &ts);

		if (rc != -ENOENT)
			fail_msg("case %zu \"%s\": got %d, want -ENOENT", i, bad_versions[i], rc);
	}
}

/* `Q@TS` must fit NAME_MAX as a whole: Q's short form starts earlier than a bare qualifier's. */
static void test_name__version_short_form_threshold(void **state)
{
	static const struct { int64_t ts; size_t qn; bool partial; } cases[] = {
		{ 1, 238, false },
		{ 1, 239, true },
		{ INT64_C(9999999999999999), 238, false },
		{ INT64_C(10000000000000000), 237, false }, /* 17 digits */
		{ INT64_C(10000000000000000), 238, true },
		{ INT64_MAX, 235, false },                  /* 19 digits */
		{ INT64_MAX, 236, true },
	};
	unsigned char q[300];
	char out[NAME_BUFSZ], bare[NAME_BUFSZ];

	memset(q, 'q', sizeof(q));
	for (size_t i = 0; i < NU_ARRAY_SIZE(cases); i++) {
		name_result res;

		if (nu_round_trip_version(q, cases[i].qn, cases[i].ts, out) != cases[i].partial)
			fail_msg("case %zu: \"%s\"", i, out);
		assert_false(nu_round_trip(NAME_QUALIFIER, NULL, q, cases[i].qn, bare));
		if (!cases[i].partial)
			continue;
		assert_int_equal(strlen(out), 218 + 1 + strlen(strrchr(out, '@') + 1));
		/* the Q part on its own is not the bare qualifier's name, and matches nothing as one */
		*strrchr(out, '@') = '\0';
		assert_int_equal(name_decode(NAME_QUALIFIER, out, NULL, &res), 0);
		assert_true(res.partial);
		assert_false(name_match(&res, NULL, q, cases[i].qn));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name__escapes_each_class),
		cmocka_unit_test(test_name__every_single_byte),
		cmocka_unit_test(test_name__every_two_byte_string),
		cmocka_unit_test(test_name__utf8_edges),
		cmocka_unit_test(test_name__dot_and_dotdot),
		cmocka_unit_test(test_name__empty_is_lone_percent),
		cmocka_unit_test(test_name__segment_equal_to_family_escapes_first_byte),
		cmocka_unit_test(test_name__long_family_segment_short_form),
		cmocka_unit_test(test_name__rejects_noncanonical_names),
		cmocka_unit_test(test_name__rejects_malformed_short_forms),
		cmocka_unit_test(test_name__over_name_max_is_enametoolong),
		cmocka_unit_test(test_name__table_and_family_names_are_never_escaped),
		cmocka_unit_test(test_name__segment_never_holds_the_delimiter),
		cmocka_unit_test(test_name__small_buffer_is_erange),
		cmocka_unit_test(test_name__hash_is_fnv1a_64),
		cmocka_unit_test(test_name__short_form_thresholds),
		cmocka_unit_test(test_name__short_form_prefix_keeps_units_whole),
		cmocka_unit_test(test_name__version_names),
		cmocka_unit_test(test_name__rejects_bad_version_names),
		cmocka_unit_test(test_name__version_short_form_threshold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

