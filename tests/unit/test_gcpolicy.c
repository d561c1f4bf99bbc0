/* test_gcpolicy.c — unit tests of store/gcpolicy: cbt's GC policy grammar (what it accepts and what it
 * rejects, with our messages), evaluation truth tables, the canonical round trip, and the strings
 * `cbt ls TABLE` shows, recorded from cbt 1.23.2 against the Bigtable emulator.
 */
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

#include "gcpolicy.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

#define US_PER_S INT64_C(1000000)
#define US_PER_DAY (86400 * US_PER_S)

/* Every input here is accepted by cbt 1.23.2 (`cbt setgcpolicy T f "INPUT"` against cbtemulator), and
 * CBT is the GC Policy column `cbt ls T` then printed, byte for byte. FORMAT is our canonical text.
 * Things worth knowing, all seen on the real thing:
 *  - "and"/"or" have ONE precedence and fold left: "a or b and c" is "((a || b) && c)".
 *  - Every and/or prints its own parentheses, so a chain of n terms opens n - 1 up front; a
 *    parenthesised single rule prints bare.
 *  - The age is read back as whole seconds only: 1500ms shows as 1s, 999ms as 0 (= "0d").
 *  - The age shows in d, h or m when one divides it (48h -> 2d, 90m stays 90m, 3600s -> 1h), otherwise
 *    in MICROseconds with no unit (59s -> 59000000).
 *  - "never" (and a family with no policy) shows as the empty string.
 *  - maxversions=0 is accepted (by cbt and the emulator).
 *  - Whitespace is Go's unicode.IsSpace: tabs, newlines, no-break and ideographic spaces all separate.
 */
static const struct valid_case {
	const char *in;
	const char *format;
	const char *cbt;
} valid_cases[] = {
	/* rule forms */
	{ "maxversions=1", "maxversions=1", "versions() > 1" },
	{ "maxversions=0", "maxversions=0", "versions() > 0" },
	{ "maxversions=65535", "maxversions=65535", "versions() > 65535" },
	{ "maxversions=01", "maxversions=1", "versions() > 1" },
	{ "maxversions=00000000000000000000001", "maxversions=1", "versions() > 1" },
	{ "never", "never", "" },
	{ " never ", "never", "" },
	{ "\t\nnever\r\n", "never", "" },
	{ "\xe3\x80\x80never\xe3\x80\x80", "never", "" }, /* U+3000 either side */
	/* every unit */
	{ "maxage=1ms", "maxage=1ms", "age() > 0d" },
	{ "maxage=999ms", "maxage=999ms", "age() > 0d" },
	{ "maxage=1000ms", "maxage=1s", "age() > 1000000" },
	{ "maxage=1500ms", "maxage=1500ms", "age() > 1000000" },
	{ "maxage=61000ms", "maxage=61s", "age() > 61000000" },
	{ "maxage=86400000ms", "maxage=1d", "age() > 1d" },
	{ "maxage=4294967295ms", "maxage=4294967295ms", "age() > 4294967000000" },
	{ "maxage=1s", "maxage=1s", "age() > 1000000" },
	{ "maxage=59s", "maxage=59s", "age() > 59000000" },
	{ "maxage=120s", "maxage=2m", "age() > 2m" },
	{ "maxage=3600s", "maxage=1h", "age() > 1h" },
	{ "maxage=3601s", "maxage=3601s", "age() > 3601000000" },
	{ "maxage=4294967295s", "maxage=4294967295s", "age() > 4294967295000000" },
	{ "maxage=1m", "maxage=1m", "age() > 1m" },
	{ "maxage=60m", "maxage=1h", "age() > 1h" },
	{ "maxage=90m", "maxage=90m", "age() > 90m" },
	{ "maxage=1440m", "maxage=1d", "age() > 1d" },
	{ "maxage=153722867m", "maxage=153722867m", "age() > 153722867m" },
	{ "maxage=1h", "maxage=1h", "age() > 1h" },
	{ "maxage=48h", "maxage=2d", "age() > 2d" },
	{ "maxage=2562047h", "maxage=2562047h", "age() > 2562047h" },
	{ "maxage=1d", "maxage=1d", "age() > 1d" },
	{ "maxage=00001d", "maxage=1d", "age() > 1d" },
	{ "maxage=106751d", "maxage=106751d", "age() > 106751d" },
	{ "maxage=0d", "maxage=0d", "age() > 0d" },
	{ "maxage=0ms", "maxage=0d", "age() > 0d" },
	{ "maxage=0s", "maxage=0d", "age() > 0d" },
	{ "maxage=0m", "maxage=0d", "age() > 0d" },
	/* whitespace */
	{ "maxage = 5d", "maxage=5d", "age() > 5d" },
	{ " maxage=5d ", "maxage=5d", "age() > 5d" },
	{ "maxversions=1\tor\nmaxage=1d", "maxversions=1 or maxage=1d", "(versions() > 1 || age() > 1d)" },
	{ "maxversions=1\v\for\rmaxage=1d", "maxversions=1 or maxage=1d", "(versions() > 1 || age() > 1d)" },
	{ "maxversions=1\xc2\xa0or\xc2\xa0maxage=1d", /* U+00A0 no-break space */
	  "maxversions=1 or maxage=1d", "(versions() > 1 || age() > 1d)" },
	{ "maxversions=1\xc2\x85or maxage=1d", /* U+0085 NEL */
	  "maxversions=1 or maxage=1d", "(versions() > 1 || age() > 1d)" },
	/* operators, each spelling */
	{ "maxversions=1 or maxage=1d", "maxversions=1 or maxage=1d", "(versions() > 1 || age() > 1d)" },
	{ "maxversions=1 || maxage=1d", "maxversions=1 or maxage=1d", "(versions() > 1 || age() > 1d)" },
	{ "maxversions=1||maxage=1d", "maxversions=1 or maxage=1d", "(versions() > 1 || age() > 1d)" },
	{ "maxversions=1 and maxage=1d", "maxversions=1 and maxage=1d", "(versions() > 1 && age() > 1d)" },
	{ "maxversions=1&&maxage=1d", "maxversions=1 and maxage=1d", "(versions() > 1 && age() > 1d)" },
	/* precedence: none — left to right */
	{ "maxversions=1 or maxversions=2 or maxversions=3", "maxversions=1 or maxversions=2 or maxversions=3",
	  "((versions() > 1 || versions() > 2) || versions() > 3)" },
	{ "maxversions=1 and maxversions=2 and maxversions=3", "maxversions=1 and maxversions=2 and maxversions=3",
	  "((versions() > 1 && versions() > 2) && versions() > 3)" },
	{ "maxversions=1 or maxversions=2 and maxversions=3", "maxversions=1 or maxversions=2 and maxversions=3",
	  "((versions() > 1 || versions() > 2) && versions() > 3)" },
	{ "maxversions=1 and maxversions=2 or maxversions=3", "maxversions=1 and maxversions=2 or maxversions=3",
	  "((versions() > 1 && versions() > 2) || versions() > 3)" },
	/* parentheses */
	{ "(maxversions=1)", "maxversions=1", "versions() > 1" },
	{ "((maxversions=1))", "maxversions=1", "versions() > 1" },
	{ "(maxversions=1 or maxage=1d)", "maxversions=1 or maxage=1d", "(versions() > 1 || age() > 1d)" },
	{ "maxversions=1 or (maxversions=2 and maxversions=3)", "maxversions=1 or (maxversions=2 and maxversions=3)",
	  "(versions() > 1 || (versions() > 2 && versions() > 3))" },
	{ "maxage=30d || (maxage=3d && maxversions=100)", "maxage=30d or (maxage=3d and maxversions=100)",
	  "(age() > 30d || (age() > 3d && versions() > 100))" },
	{ "(maxversions=1 or maxversions=2) and (maxversions=3 or maxversions=4)",
	  "maxversions=1 or maxversions=2 and (maxversions=3 or maxversions=4)",
	  "((versions() > 1 || versions() > 2) && (versions() > 3 || versions() > 4))" },
	/* a group first needs no parentheses (left to right): one text for one policy, however nested */
	{ "(maxage=365d or maxversions=2) and maxage=10000d", "maxage=365d or maxversions=2 and maxage=10000d",
	  "((age() > 365d || versions() > 2) && age() > 10000d)" },
	{ "((maxversions=1 and maxversions=2) or maxversions=3) and maxversions=4",
	  "maxversions=1 and maxversions=2 or maxversions=3 and maxversions=4",
	  "(((versions() > 1 && versions() > 2) || versions() > 3) && versions() > 4)" },
	/* ages of 50 days and more: the largest whole unit */
	{ "maxage=50d", "maxage=50d", "age() > 50d" },
	{ "maxage=1200h", "maxage=50d", "age() > 50d" },
	{ "maxage=4320000s", "maxage=50d", "age() > 50d" },
	{ "maxage=10000d", "maxage=10000d", "age() > 10000d" },
	{ "maxage=4294967295s", "maxage=4294967295s", "age() > 4294967295000000" },
	{ "maxversions = 3 and ( maxage = 2h or maxversions = 5 )", "maxversions=3 and (maxage=2h or maxversions=5)",
	  "(versions() > 3 && (age() > 2h || versions() > 5))" },
};

/* Every input here is rejected by cbt 1.23.2 too (its own wording is in the comment where it helps);
 * MESSAGE is what gcp_parse() puts in *err. */
static const struct invalid_case {
	const char *in;
	const char *message;
} invalid_cases[] = {
	{ "", "invalid GC policy \"\": empty policy" },
	{ "   ", "invalid GC policy \"   \": empty policy" },
	/* never is only ever the whole policy; keywords are lower case */
	{ "NEVER", "invalid GC policy \"NEVER\": expected maxversions=N, maxage=D or \"(\", got \"NEVER\"" },
	{ "Never", "invalid GC policy \"Never\": expected maxversions=N, maxage=D or \"(\", got \"Never\"" },
	{ "(never)", "invalid GC policy \"(never)\": \"never\" must be the whole policy" },
	{ "never or maxversions=1", "invalid GC policy \"never or maxversions=1\": \"never\" must be the whole policy" },
	{ "maxversions=1 or never", "invalid GC policy \"maxversions=1 or never\": \"never\" must be the whole policy" },
	{ "never never", "invalid GC policy \"never never\": \"never\" must be the whole policy" },
	{ "MaxAge=1d", "invalid GC policy \"MaxAge=1d\": expected maxversions=N, maxage=D or \"(\", got \"MaxAge\"" },
	/* maxversions: ParseUint(s, 10, 16) */
	{ "maxversions=65536",
	  "invalid GC policy \"maxversions=65536\": maxversions \"65536\" is too large (the most is 65535)" },
	{ "maxversions=-1", "invalid GC policy \"maxversions=-1\": unexpected character \"-\"" }, /* bad rune '-' */
	{ "maxversions=+1", "invalid GC policy \"maxversions=+1\": unexpected character \"+\"" },
	{ "maxversions=1x",
	  "invalid GC policy \"maxversions=1x\": maxversions wants a whole number from 0 to 65535, got \"1x\"" },
	{ "maxversions=0x10",
	  "invalid GC policy \"maxversions=0x10\": maxversions wants a whole number from 0 to 65535, got \"0x10\"" },
	{ "maxversions==1",
	  "invalid GC policy \"maxversions==1\": maxversions wants a whole number from 0 to 65535, got \"=\"" },
	{ "maxversions=", "invalid GC policy \"maxversions=\": missing value after \"maxversions=\"" },
	{ "maxversions", "invalid GC policy \"maxversions\": expected \"=\" after \"maxversions\", got end of input" },
	{ "maxversions 1", "invalid GC policy \"maxversions 1\": expected \"=\" after \"maxversions\", got \"1\"" },
	/* maxage: digits, then exactly one of ms s m h d; the number fits 32 bits, the whole an int64 of ns */
	{ "maxage", "invalid GC policy \"maxage\": expected \"=\" after \"maxage\", got end of input" },
	{ "maxage=", "invalid GC policy \"maxage=\": missing value after \"maxage=\"" },
	{ "maxage=5x", "invalid GC policy \"maxage=5x\": unknown duration unit \"x\"" },
	{ "maxage=5D", "invalid GC policy \"maxage=5D\": unknown duration unit \"D\"" },
	{ "maxage=1us", "invalid GC policy \"maxage=1us\": unknown duration unit \"us\"" },
	{ "maxage=1dd", "invalid GC policy \"maxage=1dd\": unknown duration unit \"dd\"" },
	{ "maxage=1ms1", "invalid GC policy \"maxage=1ms1\": unknown duration unit \"ms1\"" },
	{ "maxage=0", "invalid GC policy \"maxage=0\": duration \"0\" has no unit (ms, s, m, h or d)" },
	{ "maxage=5", "invalid GC policy \"maxage=5\": duration \"5\" has no unit (ms, s, m, h or d)" },
	{ "maxage=1 d", "invalid GC policy \"maxage=1 d\": duration \"1\" has no unit (ms, s, m, h or d)" },
	{ "maxage=1_000s", "invalid GC policy \"maxage=1_000s\": duration \"1\" has no unit (ms, s, m, h or d)" },
	{ "maxage=d", "invalid GC policy \"maxage=d\": duration \"d\" does not start with a number" },
	{ "maxage=1.5h",
	  "invalid GC policy \"maxage=1.5h\": duration \"1.5h\" is not a whole number; use a smaller unit" },
	{ "maxage=.5h", "invalid GC policy \"maxage=.5h\": unexpected character \".\"" },
	{ "maxage=-1d", "invalid GC policy \"maxage=-1d\": unexpected character \"-\"" },
	{ "maxage=4294967296s",
	  "invalid GC policy \"maxage=4294967296s\": duration \"4294967296s\" is too long (the most is 4294967295s)" },
	{ "maxage=4294967296ms", "invalid GC policy \"maxage=4294967296ms\": "
				 "duration \"4294967296ms\" is too long (the most is 4294967295ms)" },
	{ "maxage=153722868m",
	  "invalid GC policy \"maxage=153722868m\": duration \"153722868m\" is too long (the most is 153722867m)" },
	{ "maxage=2562048h",
	  "invalid GC policy \"maxage=2562048h\": duration \"2562048h\" is too long (the most is 2562047h)" },
	{ "maxage=106752d",
	  "invalid GC policy \"maxage=106752d\": duration \"106752d\" is too long (the most is 106751d)" },
	{ "maxage=4294967295d",
	  "invalid GC policy \"maxage=4294967295d\": duration \"4294967295d\" is too long (the most is 106751d)" },
	/* operators */
	{ "maxversions=1 AND maxage=1d", "invalid GC policy \"maxversions=1 AND maxage=1d\": "
					 "expected \"and\", \"or\", \"&&\", \"||\" or end of input, got \"AND\"" },
	{ "maxversions=1 oR maxage=1d", "invalid GC policy \"maxversions=1 oR maxage=1d\": "
					"expected \"and\", \"or\", \"&&\", \"||\" or end of input, got \"oR\"" },
	{ "maxversions=1 & maxage=1d",
	  "invalid GC policy \"maxversions=1 & maxage=1d\": expected \"&&\", got a single \"&\"" },
	{ "maxversions=1 | maxage=1d",
	  "invalid GC policy \"maxversions=1 | maxage=1d\": expected \"||\", got a single \"|\"" },
	{ "maxversions=1 &| maxage=1d",
	  "invalid GC policy \"maxversions=1 &| maxage=1d\": expected \"&&\", got a single \"&\"" },
	{ "maxversions=1 &", "invalid GC policy \"maxversions=1 &\": expected \"&&\", got a single \"&\"" },
	{ "maxversions=1 or", "invalid GC policy \"maxversions=1 or\": missing rule after \"or\"" },
	{ "maxversions=1 &&", "invalid GC policy \"maxversions=1 &&\": missing rule after \"&&\"" },
	{ "or maxversions=1",
	  "invalid GC policy \"or maxversions=1\": expected maxversions=N, maxage=D or \"(\", got \"or\"" },
	{ "maxversions=1 or or maxage=1d",
	  "invalid GC policy \"maxversions=1 or or maxage=1d\": expected maxversions=N, maxage=D or \"(\", got \"or\"" },
	{ "maxversions=1 maxage=1d", "invalid GC policy \"maxversions=1 maxage=1d\": "
				     "expected \"and\", \"or\", \"&&\", \"||\" or end of input, got \"maxage\"" },
	{ "maxversions=1 force", "invalid GC policy \"maxversions=1 force\": "
				 "expected \"and\", \"or\", \"&&\", \"||\" or end of input, got \"force\"" },
	{ "maxversions=1 andmaxage=1d", "invalid GC policy \"maxversions=1 andmaxage=1d\": "
					"expected \"and\", \"or\", \"&&\", \"||\" or end of input, got \"andmaxage\"" },
	{ "maxversions=1andmaxage=1d", "invalid GC policy \"maxversions=1andmaxage=1d\": "
				       "maxversions wants a whole number from 0 to 65535, got \"1andmaxage\"" },
	/* separators other languages use */
	{ "maxversions=1,maxage=1d", "invalid GC policy \"maxversions=1,maxage=1d\": unexpected character \",\"" },
	{ "maxversions=1:maxage=1d", "invalid GC policy \"maxversions=1:maxage=1d\": unexpected character \":\"" },
	{ "maxage=\"1d\"", "invalid GC policy \"maxage=\\\"1d\\\"\": unexpected character \"\\\"\"" },
	/* parentheses */
	{ "()", "invalid GC policy \"()\": expected maxversions=N, maxage=D or \"(\", got \")\"" },
	{ "(", "invalid GC policy \"(\": missing rule after \"(\"" },
	{ "(maxversions=1", "invalid GC policy \"(maxversions=1\": missing \")\"" },
	{ "(maxversions=1 maxage=1d)",
	  "invalid GC policy \"(maxversions=1 maxage=1d)\": expected \")\", got \"maxage\"" },
	{ "maxversions=1)", "invalid GC policy \"maxversions=1)\": unmatched \")\"" },
	{ "maxversions=1 ((", "invalid GC policy \"maxversions=1 ((\": "
			      "expected \"and\", \"or\", \"&&\", \"||\" or end of input, got \"(\"" },
	/* non-ASCII: only Go's white space is welcome; bytes that are not UTF-8 are named in hex */
	{ "maxversions=1 \xc3\xa9", "invalid GC policy \"maxversions=1 \xc3\xa9\": unexpected character \"\xc3\xa9\"" },
	{ "maxversions=\xd9\xa1", /* ARABIC-INDIC DIGIT ONE: a digit to Go, not to ParseUint */
	  "invalid GC policy \"maxversions=\xd9\xa1\": unexpected character \"\xd9\xa1\"" },
	{ "maxversions=1\xff", "invalid GC policy \"maxversions=1\\xff\": invalid UTF-8 byte \"\\xff\"" },
	{ "maxversions=1\x85or", "invalid GC policy \"maxversions=1\\x85or\": invalid UTF-8 byte \"\\x85\"" },
	{ "maxversions=1\xe0\x82\xa0or", /* an overlong U+00A0 is not a space */
	  "invalid GC policy \"maxversions=1\\xe0\\x82\\xa0or\": invalid UTF-8 byte \"\\xe0\"" },
	{ "maxversions=1\x01", "invalid GC policy \"maxversions=1\\x01\": unexpected character \"\\x01\"" },
};

static const int64_t now = INT64_C(1700000000) * US_PER_S;

static gcp *must_parse(const char *text)
{
	gcp *p = NULL;
	char *err = NULL;
	int rc = gcp_parse(text, &p, &err);

	if (rc != 0)
		fail_msg("gcp_parse(\"%s\") = %d: %s", text, rc, err ? err : "(no message)");
	assert_null(err);
	assert_non_null(p);
	return p;
}

static void test_gcpolicy__parses_every_valid_form(void **state)
{
	for (size_t i = 0; i < N_ELEMS(valid_cases); i++) {
		const struct valid_case *c = &valid_cases[i];
		gcp *p = must_parse(c->in);
		char *f = gcp_format(p);

		assert_non_null(f);
		if (strcmp(f, c->format) != 0)
			fail_msg("case %zu \"%s\": gcp_format gave \"%s\", want \"%s\"", i, c->in, f, c->format);
		free(f);
		gcp_free(p);
	}
}

static void test_gcpolicy__prints_as_cbt_ls(void **state)
{
	for (size_t i = 0; i < N_ELEMS(valid_cases); i++) {
		const struct valid_case *c = &valid_cases[i];
		gcp *p = must_parse(c->in);
		char *s = gcp_format_cbt(p);

		assert_non_null(s);
		if (strcmp(s, c->cbt) != 0)
			fail_msg("case %zu \"%s\": gcp_format_cbt gave \"%s\", cbt shows \"%s\"", i, c->in, s, c->cbt);
		free(s);
		gcp_free(p);
	}
}

static void test_gcpolicy__rejects_what_cbt_rejects(void **state)
{
	for (size_t i = 0; i < N_ELEMS(invalid_cases); i++) {
		const struct invalid_case *c = &invalid_cases[i];
		gcp *p = (gcp *)&p; /* must be reset to NULL */
		char *err = NULL;
		int rc = gcp_parse(c->in, &p, &err);

		if (rc != -EINVAL)
			fail_msg("case %zu \"%s\": rc %d, want -EINVAL", i, c->in, rc);
		assert_null(p);
		assert_non_null(err);
		if (strcmp(err, c->message) != 0)
			fail_msg("case %zu:\n got  %s\n want %s", i, err, c->message);
		assert_null(strchr(err, '\n'));
		free(err);

		/* ERR is optional. */
		p = (gcp *)&p;
		assert_int_equal(gcp_parse(c->in, &p, NULL), -EINVAL);
		assert_null(p);
	}
}

static void test_gcpolicy__message_quotes_control_bytes_and_cuts_long_input(void **state)
{
	char text[200], want[300];
	char *err = NULL;
	gcp *p;

	assert_int_equal(gcp_parse("maxversions=1\n\tand \x7f", &p, &err), -EINVAL);
	assert_string_equal(err, "invalid GC policy \"maxversions=1\\n\\tand \\x7f\": unexpected character \"\\x7f\"");
	free(err);

	/* 200 bytes of input: the message quotes the first 64 and says it cut. */
	memset(text, 'x', sizeof text - 1);
	text[sizeof text - 1] = '\0';
	assert_int_equal(gcp_parse(text, &p, &err), -EINVAL);
	snprintf(want, sizeof want,
		 "invalid GC policy \"%.64s\"...: expected maxversions=N, maxage=D or \"(\", got \"%.64s\"...", text, text);
	assert_string_equal(err, want);
	free(err);
}

/* The truth tables: one column of cells, newest first, with these (version, age) pairs. */
static const struct collects_case {
	const char *policy;
	uint32_t version;
	int64_t age_us; /* now - ts */
	bool want;
} collects_cases[] = {
	/* maxversions=N collects version indexes >= N */
	{ "maxversions=1", 0, 0, false },
	{ "maxversions=1", 1, 0, true },
	{ "maxversions=1", 7, 0, true },
	{ "maxversions=3", 2, 0, false },
	{ "maxversions=3", 3, 0, true },
	{ "maxversions=0", 0, 0, true },
	{ "maxversions=65535", 65534, 0, false },
	{ "maxversions=65535", 65535, 0, true },
	{ "maxversions=65535", UINT32_MAX, 0, true },
	/* maxage=D collects ts < now - D: exactly D old is kept */
	{ "maxage=1d", 0, US_PER_DAY - 1, false },
	{ "maxage=1d", 0, US_PER_DAY, false },
	{ "maxage=1d", 0, US_PER_DAY + 1, true },
	{ "maxage=1d", 0, -US_PER_DAY, false }, /* from the future */
	{ "maxage=90m", 0, 90 * 60 * US_PER_S, false },
	{ "maxage=90m", 0, 90 * 60 * US_PER_S + 1, true },
	{ "maxage=1500ms", 0, 1500000, false },
	{ "maxage=1500ms", 0, 1500001, true },
	{ "maxage=1ms", 0, 1000, false },
	{ "maxage=1ms", 0, 1001, true },
	{ "maxage=2h", 0, 2 * 3600 * US_PER_S + 1, true },
	{ "maxage=30s", 0, 30 * US_PER_S + 1, true },
	{ "maxage=0d", 0, 0, false },
	{ "maxage=0d", 0, 1, true },
	/* never collects nothing */
	{ "never", 0, 0, false },
	{ "never", UINT32_MAX, 100000 * US_PER_DAY, false },
	/* intersection: only when every part does */
	{ "maxversions=1 and maxage=1d", 0, 0, false },
	{ "maxversions=1 and maxage=1d", 1, 0, false },
	{ "maxversions=1 and maxage=1d", 0, 2 * US_PER_DAY, false },
	{ "maxversions=1 and maxage=1d", 1, 2 * US_PER_DAY, true },
	/* union: when any part does */
	{ "maxversions=1 or maxage=1d", 0, 0, false },
	{ "maxversions=1 or maxage=1d", 1, 0, true },
	{ "maxversions=1 or maxage=1d", 0, 2 * US_PER_DAY, true },
	{ "maxversions=1 or maxage=1d", 1, 2 * US_PER_DAY, true },
	/* left to right, no precedence: (v>=1 or age>1d) and v>=5 */
	{ "maxversions=1 or maxage=1d and maxversions=5", 0, 2 * US_PER_DAY, false },
	{ "maxversions=1 or maxage=1d and maxversions=5", 5, 0, true },
	{ "maxversions=1 or maxage=1d and maxversions=5", 3, 2 * US_PER_DAY, false },
	/* ... whereas with the parentheses C would imply: v>=1 or (age>1d and v>=5) */
	{ "maxversions=1 or (maxage=1d and maxversions=5)", 3, 0, true },
	{ "maxversions=1 or (maxage=1d and maxversions=5)", 0, 2 * US_PER_DAY, false },
	/* v>=1 and age>1d or v>=5 = ((v>=1 and age>1d) or v>=5) */
	{ "maxversions=1 and maxage=1d or maxversions=5", 5, 0, true },
	{ "maxversions=1 and maxage=1d or maxversions=5", 1, 0, false },
	{ "maxversions=1 and maxage=1d or maxversions=5", 1, 2 * US_PER_DAY, true },
	{ "maxversions=1 and (maxage=1d or maxversions=5)", 5, 0, true },
	{ "maxversions=1 and (maxage=1d or maxversions=5)", 0, 2 * US_PER_DAY, false },
	/* cbt's documented example: maxage=30d || (maxage=3d && maxversions=100) */
	{ "maxage=30d || (maxage=3d && maxversions=100)", 0, 31 * US_PER_DAY, true },
	{ "maxage=30d || (maxage=3d && maxversions=100)", 99, 4 * US_PER_DAY, false },
	{ "maxage=30d || (maxage=3d && maxversions=100)", 100, 4 * US_PER_DAY, true },
	{ "maxage=30d || (maxage=3d && maxversions=100)", 100, 2 * US_PER_DAY, false },
};

static void test_gcpolicy__collects_truth_tables(void **state)
{
	for (size_t i = 0; i < N_ELEMS(collects_cases); i++) {
		const struct collects_case *c = &collects_cases[i];
		gcp *p = must_parse(c->policy);
		bool got = gcp_collects(p, c->version, now - c->age_us, now);

		if (got != c->want)
			fail_msg("case %zu \"%s\" version %u age %" PRId64 "us: collects %d, want %d", i, c->policy,
				 c->version, c->age_us, got, c->want);
		gcp_free(p);
	}
}

/* A policy read back from where it is kept (Bigtable's GcRule as ms) takes any int64 age: 50 days are
 * 4320000000ms, over cbt's 2^32 - 1 of a unit, which a user may still not type. */
static void test_gcpolicy__stored_ages_go_past_the_syntax(void **state)
{
	static const struct {
		const char *in, *canon, *cbt;
	} ok[] = {
		{ "maxage=4320000000ms", "maxage=50d", "age() > 50d" },
		{ "maxage=31536000000ms", "maxage=365d", "age() > 365d" },
		{ "maxage=864000000000ms", "maxage=10000d", "age() > 10000d" },
		{ "maxage=4320000001ms", "maxage=4320000001ms", "age() > 50d" }, /* (cbt keeps whole seconds) */
		{ "maxage=9223372036854775ms", "maxage=9223372036854775ms", "age() > 9223372036854000000" },
		{ "maxage=4320000000ms and maxversions=2 or (maxage=864000000000ms and maxversions=1)",
		  "maxage=50d and maxversions=2 or (maxage=10000d and maxversions=1)",
		  "((age() > 50d && versions() > 2) || (age() > 10000d && versions() > 1))" },
	};
	char *err = NULL;
	gcp *p, *q;

	for (size_t i = 0; i < N_ELEMS(ok); i++) {
		char *canon, *cbt;
		assert_int_equal(gcp_parse(ok[i].in, &p, NULL), -EINVAL);
		if (gcp_parse_stored(ok[i].in, &p, &err))
			fail_msg("gcp_parse_stored(\"%s\"): %s", ok[i].in, err ? err : "?");
		assert_non_null(canon = gcp_format(p));
		assert_non_null(cbt = gcp_format_cbt(p));
		assert_string_equal(canon, ok[i].canon);
		assert_string_equal(cbt, ok[i].cbt);
		assert_int_equal(gcp_parse_stored(canon, &q, NULL), 0); /* reads its own text back */
		gcp_free(q);
		free(canon);
		free(cbt);
		gcp_free(p);
	}
	/* beyond an int64 of µs: refused, as is anything else the syntax refuses */
	assert_int_equal(gcp_parse_stored("maxage=9223372036854776ms", &p, NULL), -EINVAL);
	assert_int_equal(gcp_parse_stored("maxage=50", &p, NULL), -EINVAL);
	assert_int_equal(gcp_parse_stored("maxage=?", &p, NULL), -EINVAL);
	/* and it collects what it says: 50 days */
	assert_int_equal(gcp_parse_stored("maxage=4320000000ms", &p, NULL), 0);
	assert_false(gcp_collects(p, 0, now - 50 * US_PER_DAY, now));
	assert_true(gcp_collects(p, 0, now - 50 * US_PER_DAY - 1, now));
	gcp_free(p);
}

static void test_gcpolicy__maxage_near_the_ends_of_time(void **state)
{
	gcp *p = must_parse("maxage=106751d");

	/* now - D would underflow: nothing can be older than that. */
	assert_false(gcp_collects(p, 0, INT64_MIN, INT64_MIN + 5));
	assert_true(gcp_collects(p, 0, INT64_MIN, 0));
	assert_false(gcp_collects(p, 0, -106751 * US_PER_DAY, 0));
	assert_true(gcp_collects(p, 0, -106751 * US_PER_DAY - 1, 0));
	assert_true(gcp_collects(p, 0, INT64_MIN, INT64_MAX));
	assert_true(gcp_collects(p, 0, 0, INT64_MAX));
	gcp_free(p);

	p = must_parse("maxage=0d");
	assert_false(gcp_collects(p, 0, INT64_MIN, INT64_MIN));
	assert_true(gcp_collects(p, 0, INT64_MAX - 1, INT64_MAX));
	gcp_free(p);
}

static void test_gcpolicy__null_and_never(void **state)
{
	gcp *p;
	char *s;

	gcp_free(NULL);
	assert_false(gcp_collects(NULL, UINT32_MAX, INT64_MIN, INT64_MAX));
	assert_true(gcp_is_never(NULL));
	s = gcp_format_cbt(NULL);
	assert_string_equal(s, ""); /* as `cbt ls` shows a family created without a policy */
	free(s);
	s = gcp_format(NULL);
	assert_string_equal(s, "never");
	free(s);

	p = must_parse("never");
	assert_true(gcp_is_never(p));
	assert_false(gcp_collects(p, UINT32_MAX, INT64_MIN, INT64_MAX));
	gcp_free(p);

	p = must_parse("maxversions=0"); /* collects everything, so certainly not "never" */
	assert_false(gcp_is_never(p));
	gcp_free(p);
	p = must_parse("maxage=106751d and maxversions=65535");
	assert_false(gcp_is_never(p));
	gcp_free(p);

	p = (gcp *)&p;
	assert_int_equal(gcp_parse(NULL, &p, NULL), -EINVAL);
	assert_null(p);
}

/* gcp_parse(gcp_format(p)) is the same policy: same text again, same cbt display, same decisions. */
static void test_gcpolicy__format_round_trips(void **state)
{
	static const uint32_t versions[] = { 0, 1, 2, 3, 4, 5, 99, 100, 101, 65534, 65535, UINT32_MAX };
	static const int64_t ages[] = {
		-US_PER_DAY, 0, 999, 1000, 1001, 1499999, 1500000, 1500001, 59 * US_PER_S, 60 * US_PER_S + 1,
		5400 * US_PER_S, 5400 * US_PER_S + 1, 7200 * US_PER_S + 1, US_PER_DAY, US_PER_DAY + 1,
		2 * US_PER_DAY + 1, 4 * US_PER_DAY, 31 * US_PER_DAY, 106751 * US_PER_DAY + 1,
	};
	const char *extra[N_ELEMS(valid_cases) + N_ELEMS(collects_cases)];
	size_t n = 0;

	for (size_t i = 0; i < N_ELEMS(valid_cases); i++)
		extra[n++] = valid_cases[i].in;
	for (size_t i = 0; i < N_ELEMS(collects_cases); i++)
		extra[n++] = collects_cases[i].policy;

	for (size_t i = 0; i < n; i++) {
		gcp *p = must_parse(extra[i]), *q;
		char *f = gcp_format(p), *f2, *c1, *c2;

		assert_non_null(f);
		q = must_parse(f);
		f2 = gcp_format(q);
		c1 = gcp_format_cbt(p);
		c2 = gcp_format_cbt(q);
		if (strcmp(f, f2) != 0)
			fail_msg("\"%s\": format \"%s\" reformats as \"%s\"", extra[i], f, f2);
		assert_string_equal(c1, c2);
		assert_int_equal(gcp_is_never(p), gcp_is_never(q));
		for (size_t v = 0; v < N_ELEMS(versions); v++)
			for (size_t a = 0; a < N_ELEMS(ages); a++)
				if (gcp_collects(p, versions[v], now - ages[a], now) !=
				    gcp_collects(q, versions[v], now - ages[a], now))
					fail_msg("\"%s\" vs \"%s\" differ at version %u age %" PRId64, extra[i], f,
						 versions[v], ages[a]);
		free(f);
		free(f2);
		free(c1);
		free(c2);
		gcp_free(p);
		gcp_free(q);
	}
}

static char *nested(unsigned depth, const char *inner)
{
	size_t len = strlen(inner);
	char *s = malloc(2 * (size_t)depth + len + 1);

	assert_non_null(s);
	memset(s, '(', depth);
	memcpy(s + depth, inner, len);
	memset(s + depth + len, ')', depth);
	s[2 * (size_t)depth + len] = '\0';
	return s;
}

/* cbt has no limit; we accept 64 levels of parentheses and refuse more, before using any stack for them. */
static void test_gcpolicy__nesting_is_limited_to_64(void **state)
{
	char *s, *err = NULL;
	gcp *p;

	s = nested(64, "maxversions=1 or maxage=1d");
	p = must_parse(s);
	free(s);
	s = gcp_format_cbt(p);
	assert_string_equal(s, "(versions() > 1 || age() > 1d)");
	free(s);
	gcp_free(p);

	s = nested(65, "maxversions=1");
	assert_int_equal(gcp_parse(s, &p, &err), -EINVAL);
	assert_null(p);
	assert_true(strstr(err, ": parentheses nested deeper than 64") != NULL);
	free(err);
	free(s);

	/* Far too deep for a naive recursive parser. */
	s = nested(1000000, "maxversions=1");
	assert_int_equal(gcp_parse(s, &p, &err), -EINVAL);
	assert_true(strstr(err, ": parentheses nested deeper than 64") != NULL);
	free(err);
	free(s);

	/* 64 groups each holding a chain, the last one innermost: every level is a real node (a group of
	 * one rule would just be that rule), so the text formats back unchanged. */
	{
		size_t cap = 64 * 32 + 64, len = 0;
		char *t = malloc(cap);

		assert_non_null(t);
		for (int i = 0; i < 64; i++)
			len += (size_t)snprintf(t + len, cap - len, "maxversions=%d and (", i + 1);
		len += (size_t)snprintf(t + len, cap - len, "maxage=1d or maxversions=99");
		for (int i = 0; i < 64; i++)
			t[len++] = ')';
		t[len] = '\0';
		p = must_parse(t);
		s = gcp_format(p);
		assert_string_equal(s, t);
		assert_true(gcp_collects(p, 64, 0, now));
		assert_false(gcp_collects(p, 63, 0, now));
		free(s);
		gcp_free(p);
		free(t);
	}
}

/* cbt folds "a or b or c ..." into a left-leaning tree as deep as the chain is long; we keep it flat, so
 * a million terms need no stack, yet print exactly as cbt would. */
static void test_gcpolicy__long_chains_need_no_stack(void **state)
{
	const size_t terms = 1000000;
	const char *term = "maxversions=7 or ";
	size_t tl = strlen(term), len = 0;
	char *text = malloc(terms * tl + 1), *s;
	gcp *p;

	assert_non_null(text);
	for (size_t i = 0; i < terms; i++, len += tl)
		memcpy(text + len, term, tl);
	len -= strlen(" or ");
	text[len] = '\0';

	p = must_parse(text);
	assert_false(gcp_collects(p, 6, now, now));
	assert_true(gcp_collects(p, 7, now, now));
	s = gcp_format(p);
	assert_string_equal(s, text);
	free(s);
	s = gcp_format_cbt(p);
	assert_non_null(s);
	assert_int_equal(strspn(s, "("), terms - 1);
	assert_true(strncmp(s + terms - 1, "versions() > 7 || versions() > 7)", 33) == 0);
	assert_int_equal(strlen(s), (terms - 1) + terms * strlen("versions() > 7") + (terms - 1) * strlen(" || )"));
	free(s);
	gcp_free(p);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gcpolicy__parses_every_valid_form),
		cmocka_unit_test(test_gcpolicy__prints_as_cbt_ls),
		cmocka_unit_test(test_gcpolicy__rejects_what_cbt_rejects),
		cmocka_unit_test(test_gcpolicy__message_quotes_control_bytes_and_cuts_long_input),
		cmocka_unit_test(test_gcpolicy__collects_truth_tables),
		cmocka_unit_test(test_gcpolicy__maxage_near_the_ends_of_time),
		cmocka_unit_test(test_gcpolicy__stored_ages_go_past_the_syntax),
		cmocka_unit_test(test_gcpolicy__null_and_never),
		cmocka_unit_test(test_gcpolicy__format_round_trips),
		cmocka_unit_test(test_gcpolicy__nesting_is_limited_to_64),
		cmocka_unit_test(test_gcpolicy__long_chains_need_no_stack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
