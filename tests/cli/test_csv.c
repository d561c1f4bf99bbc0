/* test_csv.c — the CSV reader against Go's encoding/csv behaviour (table-driven: input -> records or the
 * error), lines longer than the read buffer, the tee copy, the field writer's quoting and what it
 * carries; the JSON lines parser and writer (jsonin/jsonout) on the same convention. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "csv.h"
#include "jsonin.h"
#include "jsonout.h"

/* Read all of IN (N bytes) through a pipe; return the records as "[f1|f2]@LINE\n"... or "ERR: msg". */
static char *read_all(const char *in, size_t n)
{
	int p[2];
	csv_reader *r;
	csv_field *f;
	size_t nf;
	uint64_t line;
	char *err = NULL, *out = NULL;
	size_t outn = 0;
	FILE *o = open_memstream(&out, &outn);
	FILE *w;
	int rc;

	assert_int_equal(pipe(p), 0);
	w = fdopen(p[1], "w");
	/* A child writes so that inputs bigger than the pipe buffer work. */
	if (fork() == 0) {
		close(p[0]);
		fwrite(in, 1, n, w);
		fclose(w);
		_exit(0);
	}
	fclose(w);
	assert_int_equal(csv_open(p[0], -1, &r), 0);
	while ((rc = csv_read(r, &f, &nf, &line, &err)) > 0) {
		putc('[', o);
		for (size_t i = 0; i < nf; i++) {
			if (i)
				putc('|', o);
			fwrite(f[i].p, 1, f[i].n, o);
			assert_int_equal(f[i].p[f[i].n], 0);
		}
		fprintf(o, "]@%llu\n", (unsigned long long)line);
	}
	if (rc < 0)
		fprintf(o, "ERR: %s", err ? err : "?");
	free(err);
	csv_free(r);
	close(p[0]);
	fclose(o);
	return out;
}

static void test_csv__reads_as_go_does(void **state)
{
	static const struct {
		const char *in, *want;
		size_t inn, wantn; /* 0: strlen */
	} cases[] = {
		{ "", "", 0, 0 },
		{ "a,b\n", "[a|b]@1\n", 0, 0 },
		{ "a,b", "[a|b]@1\n", 0, 0 },
		{ "a,b\r\nc,d\r\n", "[a|b]@1\n[c|d]@2\n", 0, 0 },
		{ "a\r", "[a]@1\n", 0, 0 },
		{ "\n\na\n\n\nb\n", "[a]@3\n[b]@6\n", 0, 0 },
		{ " \n", "[ ]@1\n", 0, 0 },
		{ ",\n", "[|]@1\n", 0, 0 },
		{ "\"a,b\",\"c\"\"d\",\"\"\n", "[a,b|c\"d|]@1\n", 0, 0 },
		{ "\"multi\nline\",x\ny\n", "[multi\nline|x]@1\n[y]@3\n", 0, 0 },
		{ "\"cr\r\nlf\"\n", "[cr\nlf]@1\n", 0, 0 },
		{ "\"lone\rcr\"\n", "[lone\rcr]@1\n", 0, 0 },
		{ "\"\n\n\"\n", "[\n\n]@1\n", 0, 0 },
		{ "a\0b,c\n", "[a\0b|c]@1\n", 6, 10 },
		{ "a\"b\n", "ERR: line 1, column 2: bare \" in non-quoted-field", 0, 0 },
		{ "x,\"a\"b\n", "ERR: line 1, column 5: extraneous or missing \" in quoted-field", 0, 0 },
		{ "x,\"open\n", "ERR: line 1, column 9: extraneous or missing \" in quoted-field", 0, 0 },
		{ "ok\n\"a\nb\"c\n", "[ok]@1\nERR: line 3, column 2: extraneous or missing \" in quoted-field", 0, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t n = cases[i].inn ? cases[i].inn : strlen(cases[i].in);
		size_t wn = cases[i].wantn ? cases[i].wantn : strlen(cases[i].want);
		char *got = read_all(cases[i].in, n);

		if (!cases[i].wantn && strcmp(got, cases[i].want))
			print_error("case %zu: got \"%s\"\n", i, got);
		if (cases[i].wantn)
			assert_memory_equal(got, cases[i].want, wn);
		else
			assert_string_equal(got, cases[i].want);
		free(got);
	}
}

static void test_csv__a_record_longer_than_the_buffer(void **state)
{
	size_t big = 700 * 1024;
	char *in = malloc(2 * big + 16), *got;
	size_t n = 0;

	in[n++] = '"';
	memset(in + n, 'x', big);
	n += big;
	memcpy(in + n, "\",", 2);
	n += 2;
	memset(in + n, 'y', big);
	n += big;
	in[n++] = '\n';
	memcpy(in + n, "z\n", 2);
	n += 2;
	got = read_all(in, n);
	assert_int_equal(strlen(got), 2 * big + 12);
	assert_memory_equal(got + 1 + big, "|y", 2);
	assert_memory_equal(got + 2 * big + 2, "]@1\n[z]@2\n", 10);
	free(in);
	free(got);
}

static void test_csv__tee_copies_every_byte(void **state)
{
	char tmpl[] = "/tmp/test_csv.XXXXXX";
	int in = mkstemp(tmpl), tee;
	char copy[64];
	csv_reader *r;
	csv_field *f;
	size_t nf;
	uint64_t line;
	char *err = NULL;

	unlink(tmpl);
	assert_int_equal(write(in, "a,b\n\"c\nd\"\n", 11), 11);
	lseek(in, 0, SEEK_SET);
	strcpy(tmpl, "/tmp/test_csv.XXXXXX");
	tee = mkstemp(tmpl);
	unlink(tmpl);
	assert_int_equal(csv_open(in, tee, &r), 0);
	while (csv_read(r, &f, &nf, &line, &err) > 0)
		;
	assert_int_equal(csv_offset(r), 11);
	csv_free(r);
	assert_int_equal(pread(tee, copy, sizeof copy, 0), 11);
	assert_memory_equal(copy, "a,b\n\"c\nd\"\n", 11);
	close(in);
	close(tee);
}

static void test_csv__writer_quotes_what_needs_it(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "", "" }, { "plain", "plain" }, { "a,b", "\"a,b\"" }, { "q\"q", "\"q\"\"q\"" },
		{ "n\nl", "\"n\nl\"" }, { "c\rr", "\"c\rr\"" }, { " lead", "\" lead\"" }, { "\tlead", "\"\tlead\"" },
		{ "trail ", "trail " }, { "@1000", "@1000" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *out = NULL;
		size_t n = 0;
		FILE *f = open_memstream(&out, &n);
		csv_put_field(f, cases[i].in, strlen(cases[i].in));
		fclose(f);
		assert_string_equal(out, cases[i].want);
		free(out);
	}
	assert_true(csv_carries("a\rb\n", 4));
	assert_false(csv_carries("a\r\nb", 4));
}

static char *json_of(void (*fn)(FILE *, const void *, size_t), const void *p, size_t n)
{
	char *out = NULL;
	size_t on = 0;
	FILE *f = open_memstream(&out, &on);
	fn(f, p, n);
	fclose(f);
	return out;
}

static void field(FILE *f, const void *p, size_t n)
{
	jo_bytes_field(f, "value", p, n);
}

static void test_jsonout__utf8_strings_else_base64(void **state)
{
	char *s;

	assert_true(jo_utf8("h\xc3\xa9 \xf0\x9f\x98\x80", 9));
	assert_false(jo_utf8("\xff", 1));
	assert_false(jo_utf8("\xed\xa0\x80", 3));     /* a surrogate */
	assert_false(jo_utf8("\xc0\x80", 2));         /* overlong */
	assert_false(jo_utf8("\xf4\x90\x80\x80", 4)); /* above U+10FFFF */
	assert_false(jo_utf8("\xe2\x82", 2));         /* cut short */
	s = json_of(jo_str, "a\"\\\n\t\x01\x7f\xc3\xa9", 9);
	assert_string_equal(s, "\"a\\\"\\\\\\n\\t\\u0001\\u007f\xc3\xa9\"");
	free(s);
	s = json_of(field, "\0\xff", 2);
	assert_string_equal(s, "\"value_b64\":\"AP8=\"");
	free(s);
	s = json_of(field, "ok", 2);
	assert_string_equal(s, "\"value\":\"ok\"");
	free(s);
	s = json_of(jo_b64, "abcd", 4);
	assert_string_equal(s, "\"YWJjZA==\"");
	free(s);
}

static void test_jsonin__cells_rows_and_errors(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "{\"row\":\"r\",\"family\":\"f\",\"qualifier\":\"q\",\"ts\":5,\"value\":\"v\"}", "r f q 5 v;" },
		{ " {\"value\":\"\\u00e9\\ud83d\\ude00\\/\",\"ts\":0,\"qualifier_b64\":\"\",\"family\":\"f\",\"row_b64\":\"YQ==\"} \n",
		  "a f  0 \xc3\xa9\xf0\x9f\x98\x80/;" },
		{ "{\"cells\":[{\"family\":\"f\",\"qualifier\":\"a\",\"ts\":1,\"value\":\"x\"},{\"family\":\"g\",\"qualifier\":\"b\",\"ts\":2,\"value\":\"y\"}],\"row\":\"r\"}",
		  "r f a 1 x;r g b 2 y;" },
		{ "{\"row\":\"r\",\"cells\":[]}", "" },
		{ "{\"row\":\"r\"}", "ERR missing \"family\"" },
		{ "{\"row\":\"r\",\"family\":\"f\",\"qualifier\":\"q\",\"ts\":1e3,\"value\":\"v\"}", "ERR column 46: \"ts\" must be an integer" },
		{ "{\"row\":\"r\",\"family\":\"f\",\"qualifier\":\"q\",\"ts\":9223372036854775808,\"value\":\"v\"}", "ERR column 46: \"ts\" out of range" },
		{ "{\"row\":\"\\ud800\",\"family\":\"f\",\"qualifier\":\"q\",\"ts\":1,\"value\":\"v\"}", "ERR column 9: lone surrogate in \\u escape" },
		{ "{\"row\":\"a\\qb\"}", "ERR column 10: bad escape \\q" },
		/* Messages stay one line whatever follows a backslash; keys are quoted whole (fuzz_jsonl). */
		{ "{\"row\":\"a\\\nb\"}", "ERR column 10: bad escape \\ then byte 0x0a" },
		{ "{\"row\":\"a\\\xc3\xa9\"}", "ERR column 10: bad escape \\ then byte 0xc3" },
		{ "{\"\\u0078yz\":1}", "ERR column 2: unknown key \"\\u0078yz\"" },
		{ "{\"row_b64\":\"YQ\"}", "ERR column 12: bad base64 in \"row_b64\"" },
		{ "[]", "ERR column 1: want '{'" },
	};
	ji_parser *p;

	assert_int_equal(ji_new(&p), 0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ji_cell *c;
		size_t nc;
		char *err = NULL, *out = NULL;
		size_t on = 0;
		FILE *f = open_memstream(&out, &on);
		int rc = ji_parse_line(p, cases[i].in, strlen(cases[i].in), &c, &nc, &err);

		if (rc < 0) {
			fprintf(f, "ERR %s", err);
		} else {
			for (size_t k = 0; k < nc; k++)
				fprintf(f, "%.*s %.*s %.*s %lld %.*s;", (int)c[k].row.n, c[k].row.p, (int)c[k].family.n,
					c[k].family.p, (int)c[k].qualifier.n, c[k].qualifier.p, (long long)c[k].ts,
					(int)c[k].value.n, c[k].value.p);
		}
		fclose(f);
		if (strcmp(out, cases[i].want))
			print_error("case %zu: got %s\n", i, out);
		assert_string_equal(out, cases[i].want);
		free(out);
		free(err);
	}
	ji_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv__reads_as_go_does),
		cmocka_unit_test(test_csv__a_record_longer_than_the_buffer),
		cmocka_unit_test(test_csv__tee_copies_every_byte),
		cmocka_unit_test(test_csv__writer_quotes_what_needs_it),
		cmocka_unit_test(test_jsonout__utf8_strings_else_base64),
		cmocka_unit_test(test_jsonin__cells_rows_and_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
