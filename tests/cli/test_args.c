/* test_args.c — cellctl's parsing of cbt's argument dialect: key=value options, Go's integers and
 * booleans, set's family:qualifier=value[@ts], columns= selectors and the CSV families= list. The cases
 * come from running the same arguments through cbt 1.23.2.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "args.h"

static void test_args__kv_last_wins_and_names_bad_args(void **state)
{
	static const char *const valid[] = { "start", "count", NULL };
	const char *vals[2];
	char *a1[] = { "count=1", "start=", "count=2" };
	char *a2[] = { "count=1", "foo" };
	char *a3[] = { "stop=x" };
	char *a4[] = { "=x" };
	char *err = NULL;

	(void)state;
	assert_int_equal(args_kv(3, a1, valid, vals, &err), 0);
	assert_string_equal(vals[0], "");
	assert_string_equal(vals[1], "2");
	assert_int_equal(args_kv(0, a1, valid, vals, &err), 0);
	assert_null(vals[0]);
	assert_null(vals[1]);

	assert_int_equal(args_kv(2, a2, valid, vals, &err), -EINVAL);
	assert_string_equal(err, "bad arg \"foo\"");
	free(err);
	assert_int_equal(args_kv(1, a3, valid, vals, &err), -EINVAL);
	assert_string_equal(err, "unknown arg key \"stop\"");
	free(err);
	assert_int_equal(args_kv(1, a4, valid, vals, &err), -EINVAL);
	assert_string_equal(err, "unknown arg key \"\"");
	free(err);
}

static void test_args__go_parse_int(void **state)
{
	static const struct {
		const char *s;
		int base, ret;
		int64_t want;
	} cases[] = {
		{ "0", 0, 0, 0 },
		{ "12345", 0, 0, 12345 },
		{ "+2000", 0, 0, 2000 },
		{ "-5000", 0, 0, -5000 },
		{ "0x10", 0, 0, 16 },
		{ "0X1f", 0, 0, 31 },
		{ "0o17000", 0, 0, 7680 },
		{ "017000", 0, 0, 7680 },
		{ "0b1111101000", 0, 0, 1000 },
		{ "1_000", 0, 0, 1000 },
		{ "0x_1F", 0, 0, 31 },
		{ "9223372036854775807", 0, 0, INT64_MAX },
		{ "-9223372036854775808", 0, 0, INT64_MIN },
		{ "9223372036854775808", 0, -ERANGE, 0 },
		{ "99999999999999999999", 0, -ERANGE, 0 },
		{ "", 0, -EINVAL, 0 },
		{ "-", 0, -EINVAL, 0 },
		{ "0x", 0, -EINVAL, 0 },
		{ "08", 0, -EINVAL, 0 },
		{ "1.5", 0, -EINVAL, 0 },
		{ "1__0", 0, -EINVAL, 0 },
		{ "_1", 0, -EINVAL, 0 },
		{ "1_", 0, -EINVAL, 0 },
		{ " 1", 0, -EINVAL, 0 },
		{ "abc", 0, -EINVAL, 0 },
		{ "+1", 10, 0, 1 },
		{ "010", 10, 0, 10 },
		{ "0x1", 10, -EINVAL, 0 },
		{ "1_0", 10, -EINVAL, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int64_t v = -42;
		int ret = go_parse_int(cases[i].s, cases[i].base, &v);

		if (ret != cases[i].ret)
			fail_msg("\"%s\" base %d: got %d, want %d", cases[i].s, cases[i].base, ret, cases[i].ret);
		if (ret == 0 && v != cases[i].want)
			fail_msg("\"%s\": got %lld", cases[i].s, (long long)v);
	}
}

static void test_args__go_parse_bool(void **state)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };
	static const char *const bad[] = { "", "yes", "tRUE", "2", "on" };
	bool b;

	(void)state;
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(go_parse_bool(yes[i], &b), 0);
		assert_true(b);
		assert_int_equal(go_parse_bool(no[i], &b), 0);
		assert_false(b);
	}
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(go_parse_bool(bad[i], &b), -EINVAL);
}

static void test_args__set_cell_as_cbt(void **state)
{
	static const struct {
		const char *arg, *fam, *qual, *val;
		bool has_ts;
		int64_t ts;
	} ok[] = {
		{ "f:q=v", "f", "q", "v", false, 0 },
		{ "f:=v@-1", "f", "", "v", true, -1 },
		{ "f:b=v@1_000", "f", "b", "v", true, 1000 },
		{ "f:d=v@0o17000", "f", "d", "v", true, 7680 },
		{ "f:h=x@@5000", "f", "h", "x@", true, 5000 },
		{ "f:i=y@", "f", "i", "y@", false, 0 },
		{ "f:j=a@b@3000", "f", "j", "a@b", true, 3000 },
		{ "f:k=v@99999999999999999999", "f", "k", "v@99999999999999999999", false, 0 },
		{ "f:l=a=b", "f", "l", "a=b", false, 0 },
		{ "f:m:n=v", "f", "m:n", "v", false, 0 },
		{ "f:o=v@1.5", "f", "o", "v@1.5", false, 0 },
		{ ":a:b=c", "a", "b", "c", false, 0 },
		{ "a=b:c=d", "a=b", "c", "d", false, 0 },
		{ "f:x=line1\nline2@5000", "f", "x", "line1", false, 0 },
		{ "f:q\nz=v", "f", "q\nz", "v", false, 0 },
		{ "f:q= sp ace @7", "f", "q", " sp ace ", true, 7 },
	};
	static const char *const bad[] = { "noeq", "f:q", ":q=v", "::=v", "", "f=q:v" };
	set_cell c;

	(void)state;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		assert_int_equal(args_set_cell(ok[i].arg, &c), 0);
		assert_string_equal(c.family, ok[i].fam);
		assert_int_equal(c.qual_len, strlen(ok[i].qual));
		assert_memory_equal(c.qual, ok[i].qual, c.qual_len);
		assert_int_equal(c.value_len, strlen(ok[i].val));
		assert_memory_equal(c.value, ok[i].val, c.value_len);
		assert_int_equal(c.has_ts, ok[i].has_ts);
		if (c.has_ts)
			assert_int_equal(c.ts, ok[i].ts);
		set_cell_release(&c);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(args_set_cell(bad[i], &c), -EINVAL);
}

static void test_args__cell_ts_truncates_to_ms(void **state)
{
	const int64_t now = 1700000000123456;
	static const struct {
		bool has_ts;
		int64_t ts;
		int ret;
		int64_t want;
	} cases[] = {
		{ false, 0, 0, 1700000000123000 },
		{ true, -1, 0, 1700000000123000 }, /* ServerTime */
		{ true, 0, 0, 0 },
		{ true, 12, 0, 0 },
		{ true, 1234567, 0, 1234000 },
		{ true, -999, 0, 0 },
		{ true, -2, 0, 0 },
		{ true, -1000, -EINVAL, 0 },
		{ true, INT64_MIN, -EINVAL, 0 },
		{ true, INT64_MAX, 0, 9223372036854775000 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		set_cell c = { .has_ts = cases[i].has_ts, .ts = cases[i].ts };
		int64_t ts = -42;

		assert_int_equal(cbt_cell_ts(&c, now, &ts), cases[i].ret);
		if (cases[i].ret == 0)
			assert_int_equal(ts, cases[i].want);
	}
}

static void test_args__columns_forms(void **state)
{
	colspec *v;
	size_t n;
	char *err = NULL;

	(void)state;
	assert_int_equal(args_columns("fa:x,fb:,:q,z,f.*:x.*", &v, &n, &err), 0);
	assert_int_equal(n, 5);
	assert_string_equal(v[0].family, "fa");
	assert_string_equal(v[0].qualifier, "x");
	assert_string_equal(v[1].family, "fb");
	assert_null(v[1].qualifier);
	assert_null(v[2].family);
	assert_string_equal(v[2].qualifier, "q");
	assert_null(v[3].family);
	assert_string_equal(v[3].qualifier, "z");
	assert_string_equal(v[4].family, "f.*");
	assert_string_equal(v[4].qualifier, "x.*");
	colspecs_free(v, n);

	assert_int_equal(args_columns(",fa:x,,", &v, &n, &err), 0);
	assert_int_equal(n, 1);
	colspecs_free(v, n);

	assert_int_equal(args_columns(":", &v, &n, &err), 0); /* FamilyFilter(""): matches nothing */
	assert_int_equal(n, 1);
	assert_string_equal(v[0].family, "");
	assert_null(v[0].qualifier);
	colspecs_free(v, n);

	assert_int_equal(args_columns("fa:x,a:b:c", &v, &n, &err), -EINVAL);
	assert_string_equal(err, "bad format for column \"a:b:c\"");
	free(err);
	assert_int_equal(args_columns(",", &v, &n, &err), -EINVAL);
	assert_non_null(err);
	free(err);
}

static void test_args__csv_record(void **state)
{
	char **f, *err = NULL;
	size_t n;

	(void)state;
	assert_int_equal(args_csv_record("a:maxage=1d,b,,c", &f, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_string_equal(f[0], "a:maxage=1d");
	assert_string_equal(f[1], "b");
	assert_string_equal(f[2], "");
	assert_string_equal(f[3], "c");
	args_strv_free(f, n);

	assert_int_equal(args_csv_record("\"x:maxage=1d\",\"y,z\",\"q\"\"t\"", &f, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(f[0], "x:maxage=1d");
	assert_string_equal(f[1], "y,z");
	assert_string_equal(f[2], "q\"t");
	args_strv_free(f, n);

	assert_int_equal(args_csv_record("\"a\"\"b\",\"\",\"x\r\ny\"\r\nz", &f, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(f[0], "a\"b");
	assert_string_equal(f[1], "");
	assert_string_equal(f[2], "x\ny");
	args_strv_free(f, n);

	assert_int_equal(args_csv_record("\n\na,b\nc,d", &f, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(f[1], "b");
	args_strv_free(f, n);

	assert_int_equal(args_csv_record("a,", &f, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(f[1], "");
	args_strv_free(f, n);

	assert_int_equal(args_csv_record("", &f, &n, &err), -EINVAL);
	assert_string_equal(err, "EOF");
	free(err);
	assert_int_equal(args_csv_record("x\"y", &f, &n, &err), -EINVAL);
	assert_string_equal(err, "parse error on line 1, column 2: bare \" in non-quoted-field");
	free(err);
	assert_int_equal(args_csv_record("\"x\"y", &f, &n, &err), -EINVAL);
	free(err);
	assert_int_equal(args_csv_record("\"open", &f, &n, &err), -EINVAL);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args__kv_last_wins_and_names_bad_args),
		cmocka_unit_test(test_args__go_parse_int),
		cmocka_unit_test(test_args__go_parse_bool),
		cmocka_unit_test(test_args__set_cell_as_cbt),
		cmocka_unit_test(test_args__cell_ts_truncates_to_ms),
		cmocka_unit_test(test_args__columns_forms),
		cmocka_unit_test(test_args__csv_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
