/* test_jsonout.c — the JSON writer cellctl's --format=json is built on: which byte strings count as UTF-8,
 * string literal escaping, base64, and the "X" / "X_b64" choice for byte fields. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jsonout.h"

#define B(s) s, sizeof(s) - 1

/* Run FN's output into a string; caller frees. */
#define CAPTURE(out, call)                                        \
	do {                                                      \
		size_t len_;                                      \
		FILE *f = open_memstream(&(out), &len_);          \
		assert_non_null(f);                               \
		call;                                             \
		assert_int_equal(fclose(f), 0);                   \
	} while (0)

static void test_jsonout__utf8_validity(void **state)
{
	static const struct {
		const char *s;
		size_t n;
		bool ok;
	} cases[] = {
		{ B(""), true },
		{ B("plain ascii"), true },
		{ B("\x00\x01\x7f"), true },               /* controls are valid UTF-8 */
		{ B("\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80"), true },
		{ B("\xf4\x8f\xbf\xbf"), true },            /* U+10FFFF */
		{ B("\xff"), false },
		{ B("\xc3"), false },                       /* truncated */
		{ B("\xc0\xaf"), false },                   /* overlong */
		{ B("\xe0\x80\xaf"), false },               /* overlong, 3 bytes */
		{ B("\xed\xa0\x80"), false },               /* surrogate */
		{ B("\xf4\x90\x80\x80"), false },           /* past U+10FFFF */
		{ B("a\x80"), false },                      /* stray continuation */
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_int_equal(jo_utf8(cases[i].s, cases[i].n), cases[i].ok);
}

static void test_jsonout__string_literals_escape_quotes_and_controls(void **state)
{
	static const struct {
		const char *in;
		size_t n;
		const char *want;
	} cases[] = {
		{ B(""), "\"\"" },
		{ B("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"" },
		{ B("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"" },
		{ B("\x00\x01\x1f\x7f"), "\"\\u0000\\u0001\\u001f\\u007f\"" },
		{ B("\xc3\xa9\xf0\x9f\x98\x80"), "\"\xc3\xa9\xf0\x9f\x98\x80\"" },
		{ B("a\xffz"), "\"a\\ufffdz\"" }, /* not UTF-8: still valid JSON */
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *s;
		CAPTURE(s, jo_str(f, cases[i].in, cases[i].n));
		assert_string_equal(s, cases[i].want);
		free(s);
	}
}

static void test_jsonout__base64_rfc4648_vectors(void **state)
{
	static const char *const want[] = { "\"\"", "\"Zg==\"", "\"Zm8=\"", "\"Zm9v\"", "\"Zm9vYg==\"",
					    "\"Zm9vYmE=\"", "\"Zm9vYmFy\"" };
	(void)state;
	for (size_t n = 0; n <= 6; n++) {
		char *s;
		CAPTURE(s, jo_b64(f, "foobar", n));
		assert_string_equal(s, want[n]);
		free(s);
	}
	char *s;
	CAPTURE(s, jo_b64(f, "\xff\xfe\xfd\x00", 4));
	assert_string_equal(s, "\"//79AA==\"");
	free(s);
}

static void test_jsonout__bytes_field_picks_text_or_b64(void **state)
{
	char *s;
	(void)state;
	CAPTURE(s, jo_bytes_field(f, "value", B("h\xc3\xa9")));
	assert_string_equal(s, "\"value\":\"h\xc3\xa9\"");
	free(s);
	CAPTURE(s, jo_bytes_field(f, "key", B("r\xff")));
	assert_string_equal(s, "\"key_b64\":\"cv8=\"");
	free(s);
	CAPTURE(s, jo_bytes_field(f, "qualifier", "", 0));
	assert_string_equal(s, "\"qualifier\":\"\"");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jsonout__utf8_validity),
		cmocka_unit_test(test_jsonout__string_literals_escape_quotes_and_controls),
		cmocka_unit_test(test_jsonout__base64_rfc4648_vectors),
		cmocka_unit_test(test_jsonout__bytes_field_picks_text_or_b64),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
