/* test_rx.c — store/rx: cbt's regular expressions. What RE2 (Go's regexp/syntax, as the Bigtable emulator
 * parses) accepts and refuses, with Go's words and the part of the pattern they name; whole-subject
 * matches over raw bytes (one byte one character: UTF-8, invalid UTF-8, NUL, newlines); case folding
 * and Unicode classes restricted to bytes; allocation failures. The expected results are cbt's against
 * the emulator (tests/oracle/regex.sh compares the two directly). */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "cellstore.h"

/* Subjects are byte strings given with their length (sizeof - 1), so they may hold NUL. */
#define S(x) x, sizeof(x) - 1

static const struct {
	const char *re;
	const char *s;
	size_t n;
	int want;
} matches[] = {
	/* whole-subject matches only */
	{ "ab", S("ab"), 1 }, { "ab", S("abc"), 0 }, { "ab", S("xab"), 0 }, { "a|ab", S("ab"), 1 },
	{ "", S(""), 1 }, { "", S("a"), 0 }, { "a*", S(""), 1 },
	/* '.' is one byte and not a newline; (?s) and \C take any byte */
	{ "a.c", S("abc"), 1 }, { "a.c", S("a\nc"), 0 }, { "(?s)a.c", S("a\nc"), 1 }, { "a\\Cc", S("a\nc"), 1 },
	{ "caf.", S("caf\xc3\xa9"), 0 }, { "caf..", S("caf\xc3\xa9"), 1 }, { ".", S("\xff"), 1 },
	{ ".", S("\0"), 1 }, { "a\\x00b", S("a\0b"), 1 }, { "[^a]", S("\n"), 1 },
	/* pattern bytes above 0x7F stand for themselves; escapes name bytes */
	{ "caf\xc3\xa9", S("caf\xc3\xa9"), 1 }, { "\xc3\xa9+", S("\xc3\xa9\xa9"), 1 },
	{ "[\xc3\xa9]+", S("\xa9\xc3"), 1 }, { "\\xff", S("\xff"), 1 }, { "\\x{e9}", S("\xe9"), 1 },
	{ "\\351", S("\xe9"), 1 }, { "\\x61", S("a"), 1 }, { "[\\x80-\\xff]+", S("\x80\xff\xc3"), 1 },
	{ "\\x{65e5}", S("\xe6\x97\xa5"), 0 }, { "[\\p{Han}]+", S("a"), 0 }, { "[\\x{100}-\\x{10FFFF}]", S("a"), 0 },
	/* RE2 syntax */
	{ "\\Qa.b\\E", S("a.b"), 1 }, { "\\Qa.b\\E", S("axb"), 0 }, { "\\Qa.b", S("a.b"), 1 },
	{ "\\Aab\\z", S("ab"), 1 }, { "(?P<n>a)b", S("ab"), 1 }, { "(?U)a+?", S("aaa"), 1 }, { "a*?b??", S("aab"), 1 },
	{ "(?:a|b){2,3}", S("aba"), 1 }, { "(?:a|b){2,3}", S("abab"), 0 }, { "x{0}a", S("a"), 1 },
	{ "a{,2}", S("a{,2}"), 1 }, { "{", S("{"), 1 }, { "\\pL+", S("a\xe9\xb5"), 1 }, { "\\p{L}", S("1"), 0 },
	{ "[[:^alpha:]]+", S("1\xe9"), 1 }, { "[[:^alpha:]]", S("a"), 0 }, { "\\d\\s\\w", S("1\t_"), 1 },
	{ "\\s", S("\v"), 0 }, { "[[:space:]]", S("\v"), 1 }, { "\\W", S("\xe9"), 1 },
	/* anchors */
	{ "a$", S("a\n"), 0 }, { "(?m)a$\\n", S("a\n"), 1 }, { "(?m)\\n^", S("\n"), 1 }, { "^^a$$", S("a"), 1 },
	{ "(?m)a$\\n^b", S("a\nb"), 1 }, { "a\\b \\bb", S("a b"), 1 }, { "a\\Bb", S("ab"), 1 }, { "a\\bb", S("ab"), 0 },
	{ "\\b\xe9", S("\xe9"), 0 }, { "(?=a)", S(""), -EINVAL },
	/* case folding, as Go's SimpleFold, within bytes */
	{ "(?i)k", S("K"), 1 }, { "(?i)\\x{212A}", S("k"), 1 }, { "(?i)\\x{17F}", S("S"), 1 },
	{ "(?i)\\xe9", S("\xc9"), 1 }, { "(?i)\\xb5", S("\xb5"), 1 }, { "(?i)\\x{39C}", S("\xb5"), 1 },
	{ "(?i)\\xff", S("\xdf"), 0 }, { "(?i)\\x{1E9E}", S("\xdf"), 1 }, { "(?i)\\x{131}", S("I"), 0 },
	{ "(?i)a(?-i)b", S("AB"), 0 }, { "(?i)a(?-i)b", S("Ab"), 1 }, { "(?i:a)B", S("AB"), 1 }, { "(?i)[^k]", S("K"), 0 },
	{ "(?i)\\p{Lu}", S("\xdf"), 1 }, { "\\p{Lu}", S("\xdf"), 0 }, { "(?i)\\p{Greek}", S("\xb5"), 1 },
	{ "\\p{Greek}", S("\xb5"), 0 }, { "\\p{Latin}", S("\xaa"), 1 }, { "\\p{Common}", S("\xd7"), 1 },
	{ "\\P{L}", S("\xd7"), 1 }, { "\\p{^L}", S("a"), 0 }, { "\\pN\\p{Nd}", S("\xb2" "1"), 1 },
	/* subjects of any length, no backtracking blow-up */
	{ "(?:a|aa)*c", S("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"), 0 },
	{ "(?:x+x+)+y", S("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"), 0 },
};

static void test_rx__matches_whole_subject_bytes(void **state)
{
	for (size_t i = 0; i < TU_ARRAY_SIZE(matches); i++) {
		cs_regex *re = NULL;
		int rc = cs_regex_compile(matches[i].re, &re, NULL);

		if (rc < 0) {
			if (rc != matches[i].want)
				fail_msg("%s: compile %d", matches[i].re, rc);
			continue;
		}
		rc = cs_regex_match(re, matches[i].s, matches[i].n);
		if (rc != matches[i].want)
			fail_msg("%s on case %zu: got %d, want %d", matches[i].re, i, rc, matches[i].want);
		cs_regex_free(re);
	}
}

/* Refused as RE2 refuses, with Go's error words and the part of the pattern Go's error shows. */
static void test_rx__refuses_as_re2(void **state)
{
	static const struct {
		const char *re, *what, *part;
	} bad[] = {
		{ "(", "missing closing )", "(" },
		{ "a)|(b", "unexpected )", "a)|(b" },
		{ "a\\1", "invalid escape sequence", "\\1" },
		{ "\\8", "invalid escape sequence", "\\8" },
		{ "\\e", "invalid escape sequence", "\\e" },
		{ "\\\xc3\xa9", "invalid escape sequence", "\\\xc3" },
		{ "\\x{110000}", "invalid escape sequence", "\\x{110000" },
		{ "\\xg1", "invalid escape sequence", "\\xg1" },
		{ "[\\b]", "invalid escape sequence", "\\b" },
		{ "a\\", "trailing backslash at end of expression", "" },
		{ "(?=a)", "invalid or unsupported Perl syntax", "(?=" },
		{ "(?!a)", "invalid or unsupported Perl syntax", "(?!" },
		{ "(?<=a)b", "invalid or unsupported Perl syntax", "(?<" },
		{ "(?<n>a)", "invalid or unsupported Perl syntax", "(?<" },
		{ "(?>a)", "invalid or unsupported Perl syntax", "(?>" },
		{ "(?i", "invalid or unsupported Perl syntax", "(?i" },
		{ "(?-)", "invalid or unsupported Perl syntax", "(?-)" },
		{ "(?i-)", "invalid or unsupported Perl syntax", "(?i-)" },
		{ "(?P=n)", "invalid or unsupported Perl syntax", "(?P" },
		{ "(?P<>a)", "invalid named capture", "(?P<>" },
		{ "(?P<a-b>c)", "invalid named capture", "(?P<a-b>" },
		{ "(?P<n", "invalid named capture", "(?P<n" },
		{ "a++", "invalid nested repetition operator", "++" },
		{ "a*?*", "invalid nested repetition operator", "*?*" },
		{ "a{2}{3}", "invalid nested repetition operator", "{2}{3}" },
		{ "*a", "missing argument to repetition operator", "*" },
		{ "a|*", "missing argument to repetition operator", "*" },
		{ "(+)", "missing argument to repetition operator", "+" },
		{ "x{1001}", "invalid repeat count", "{1001}" },
		{ "x{2,1}", "invalid repeat count", "{2,1}" },
		{ "x{100000000}", "invalid repeat count", "{100000000}" },
		{ "(a{100}){11}", "invalid repeat count", "{11}" },
		{ "((a{10}){10}){11}", "invalid repeat count", "{11}" },
		{ "[a", "missing closing ]", "[a" },
		{ "x[]", "missing closing ]", "[]" },
		{ "[z-a]", "invalid character class range", "z-a" },
		{ "[[:foo:]]", "invalid character class range", "[:foo:]" },
		{ "\\p{Foo}", "invalid character class range", "\\p{Foo}" },
		{ "\\p{Letter}", "invalid character class range", "\\p{Letter}" },
		{ "\\pX", "invalid character class range", "\\pX" },
		{ "\\p", "invalid character class range", "\\p" },
		{ "\\p{Greek", "invalid character class range", "\\p{Greek" },
	};
	for (size_t i = 0; i < TU_ARRAY_SIZE(bad); i++) {
		cs_regex_error e = { 0 };
		cs_regex *re = (cs_regex *)1;
		int rc = cs_regex_compile(bad[i].re, &re, &e);

		if (rc != -EINVAL || re)
			fail_msg("%s: got %d", bad[i].re, rc);
		assert_string_equal(e.what, bad[i].what);
		if (e.len != strlen(bad[i].part) || memcmp(bad[i].re + e.off, bad[i].part, e.len))
			fail_msg("%s: names \"%.*s\", want \"%s\"", bad[i].re, (int)e.len, bad[i].re + e.off, bad[i].part);
	}
	/* accepted at the limits */
	static const char *const good[] = { "x{1000}", "(a{10}){100}", "(?P<n_1>a)", "(?i-m:a)", "(?)", "\\_",
					    "\\x{10FFFF}", "[\\x00-\\x{10FFFF}]", "\\C", "\\pL\\p{^Greek}\\P{^Lu}" };
	for (size_t i = 0; i < TU_ARRAY_SIZE(good); i++) {
		cs_regex *re;
		if (cs_regex_compile(good[i], &re, NULL) != 0)
			fail_msg("%s refused", good[i]);
		cs_regex_free(re);
	}
}

/* A group nested over 1000 deep is refused; 1000 is not, alternations and repetitions included. */
static void test_rx__nesting(void **state)
{
	static char re[8 * 1001];
	cs_regex_error e;
	cs_regex *r;
	char *p = re;

	/* (?:b(a|(?:b(a|...)*)...)* */
	for (int i = 0; i < 1000; i++)
		p = stpcpy(p, i % 2 ? "(a|" : "(?:b");
	for (int i = 999; i >= 0; i--)
		p = stpcpy(p, i % 2 ? ")" : ")*");
	assert_int_equal(cs_regex_compile(re, &r, &e), 0);
	assert_int_equal(cs_regex_match(r, "bab", 3), 1);
	cs_regex_free(r);

	for (int depth = 1000; depth <= 1001; depth++) {
		memset(re, '(', (size_t)depth);
		re[depth] = 'a';
		memset(re + depth + 1, ')', (size_t)depth);
		re[2 * depth + 1] = 0;
		if (depth == 1000) {
			assert_int_equal(cs_regex_compile(re, &r, &e), 0);
			assert_int_equal(cs_regex_match(r, "a", 1), 1);
			cs_regex_free(r);
		} else {
			assert_int_equal(cs_regex_compile(re, &r, &e), -EINVAL);
			assert_string_equal(e.what, "expression nests too deeply");
		}
	}
}

/* A key of the longest kind against a pattern that keeps many states alive at once (the matcher's
 * workspace grows), and the answer is right. */
static void test_rx__long_subject(void **state)
{
	static char key[CS_MAX_ROW_KEY];
	cs_regex *re;

	memset(key, 'a', sizeof key);
	assert_int_equal(cs_regex_compile("(?:a|aa)*[a-z]{0,300}(?:a{3}|b)", &re, NULL), 0);
	assert_int_equal(cs_regex_match(re, key, sizeof key), 1);
	key[sizeof key - 1] = 'c';
	assert_int_equal(cs_regex_match(re, key, sizeof key), 0);
	cs_regex_free(re);
}

/* Each allocation of a compile failing in turn: -ENOMEM and nothing leaked (ASan), or a working rx. */
static void test_rx__allocation_failures(void **state)
{
	for (uint64_t n = 1;; n++) {
		cs_regex *re = NULL;
		int rc;

		cs_fault_arm(CS_FAULT_ALLOC, n);
		rc = cs_regex_compile("(?i)a[b-d]+\\pL|(?m)^x$", &re, NULL);
		if (!cs_fault_fired()) {
			cs_fault_arm(0, 0);
			assert_int_equal(rc, 0);
			assert_int_equal(cs_regex_match(re, "ABCe", 4), 1);
			cs_regex_free(re);
			break;
		}
		cs_fault_arm(0, 0);
		if (rc != -ENOMEM)
			fail_msg("allocation %llu: got %d", (unsigned long long)n, rc);
		assert_null(re);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rx__matches_whole_subject_bytes),
		cmocka_unit_test(test_rx__refuses_as_re2),
		cmocka_unit_test(test_rx__nesting),
		cmocka_unit_test(test_rx__long_subject),
		cmocka_unit_test(test_rx__allocation_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
