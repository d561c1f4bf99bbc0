/* fuzz_ddbjson.c — cellctl import's DynamoDB export parser (tools/import/ddbjson.h).
 *
 * Input: one line of text. Properties:
 *   - dj_parse_line() returns an item or one clean error (-EINVAL with a one-line message), never
 *     anything else;
 *   - the item is a tree: every index in range, members after their container and each other (no
 *     cycle); set members have the set's member type; N texts are numbers' text, BOOL "true" or "false",
 *     NULL empty; every byte returned is readable;
 *   - each set, map and list's own text (its bytes), parsed again as an attribute's value, is the same
 *     tree; and the whole item written out again as DynamoDB JSON (strings with jo_str, binaries with
 *     jo_b64) parses to the same tree.
 */
#include <errno.h>

#include "ddbjson.h"
#include "fuzz.h"
#include "jsonout.h"

static bool number_text(const char *s, size_t n)
{
	size_t i = 0, d = 0;

	if (i < n && (s[i] == '-' || s[i] == '+'))
		i++;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		d++;
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			d++;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			i++;
		if (i == n || s[i] < '0' || s[i] > '9')
			return false;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	return d && i == n;
}

static bool is_set(dj_type t)
{
	return t == DJ_SS || t == DJ_NS || t == DJ_BS;
}

/* Check the chain from FIRST (members of a container of type PARENT, or the item's attributes when
 * PARENT is DJ_NULL) and return how many values it and everything below hold. */
static size_t check_chain(const dj_value *v, size_t nv, uint32_t first, uint32_t after, dj_type parent)
{
	size_t count = 0;
	uint32_t prev = after;

	for (uint32_t i = first; i != DJ_NONE; i = v[i].next) {
		const dj_value *a = &v[i];
		volatile char sink = 0;

		FUZZ_CHECK(i < nv && (prev == DJ_NONE || i > prev));
		prev = i;
		for (size_t k = 0; k < a->bytes.n; k++)
			sink ^= a->bytes.p[k];
		for (size_t k = 0; k < a->name.n; k++)
			sink ^= a->name.p[k];
		(void)sink;
		if (is_set(parent)) {
			FUZZ_CHECK(a->type == (parent == DJ_SS ? DJ_S : parent == DJ_NS ? DJ_N : DJ_B));
			FUZZ_CHECK(!a->name.n);
		}
		if (parent == DJ_L)
			FUZZ_CHECK(!a->name.n);
		if (a->type == DJ_N)
			FUZZ_CHECK(number_text(a->bytes.p, a->bytes.n));
		if (a->type == DJ_BOOL)
			FUZZ_CHECK((a->bytes.n == 4 && !memcmp(a->bytes.p, "true", 4)) ||
				   (a->bytes.n == 5 && !memcmp(a->bytes.p, "false", 5)));
		if (a->type == DJ_NULL)
			FUZZ_CHECK(!a->bytes.n);
		if (a->type >= DJ_SS) {
			FUZZ_CHECK(a->bytes.n >= 2 && a->bytes.p[0] == '{' && a->bytes.p[a->bytes.n - 1] == '}');
			if (is_set(a->type))
				FUZZ_CHECK(a->child != DJ_NONE);
			count += check_chain(v, nv, a->child, i, a->type);
		} else {
			FUZZ_CHECK(a->child == DJ_NONE);
		}
		count++;
	}
	return count;
}

/* Whether the chains from I (in A) and J (in B) hold the same values; RAW: compare containers' text too. */
static bool same(const dj_value *a, uint32_t i, const dj_value *b, uint32_t j, bool raw)
{
	for (; i != DJ_NONE && j != DJ_NONE; i = a[i].next, j = b[j].next) {
		const dj_value *x = &a[i], *y = &b[j];

		if (x->type != y->type || x->name.n != y->name.n || memcmp(x->name.p, y->name.p, x->name.n))
			return false;
		if ((x->type < DJ_SS || raw) &&
		    (x->bytes.n != y->bytes.n || memcmp(x->bytes.p, y->bytes.p, x->bytes.n)))
			return false;
		if (x->type >= DJ_SS && !same(a, x->child, b, y->child, raw))
			return false;
	}
	return i == DJ_NONE && j == DJ_NONE;
}

/* The chain from I written as DynamoDB JSON values; NAMED: as "name":value members. */
static void write_chain(FILE *m, const dj_value *v, uint32_t i, bool named)
{
	for (bool first = true; i != DJ_NONE; i = v[i].next, first = false) {
		const dj_value *a = &v[i];

		if (!first)
			putc(',', m);
		if (named) {
			jo_str(m, a->name.p, a->name.n);
			putc(':', m);
		}
		if (a->type == DJ_S || a->type == DJ_N) {
			fprintf(m, "{\"%s\":", dj_type_name(a->type));
			jo_str(m, a->bytes.p, a->bytes.n);
			putc('}', m);
			continue;
		}
		if (a->type == DJ_B) {
			fputs("{\"B\":", m);
			jo_b64(m, a->bytes.p, a->bytes.n);
			putc('}', m);
			continue;
		}
		if (a->type == DJ_BOOL || a->type == DJ_NULL) {
			fprintf(m, "{\"%s\":%.*s}", dj_type_name(a->type), a->type == DJ_NULL ? 4 : (int)a->bytes.n,
				a->type == DJ_NULL ? "true" : a->bytes.p);
			continue;
		}
		fprintf(m, "{\"%s\":%c", dj_type_name(a->type), a->type == DJ_M ? '{' : '[');
		if (is_set(a->type)) {
			for (uint32_t k = a->child; k != DJ_NONE; k = v[k].next) {
				if (k != a->child)
					putc(',', m);
				if (a->type == DJ_BS)
					jo_b64(m, v[k].bytes.p, v[k].bytes.n);
				else
					jo_str(m, v[k].bytes.p, v[k].bytes.n);
			}
		} else {
			write_chain(m, v, a->child, a->type == DJ_M);
		}
		fprintf(m, "%c}", a->type == DJ_M ? '}' : ']');
	}
}

/* Parse TEXT (LEN bytes) with Q: it must succeed and hold what the chain from I of V holds. */
static void reparse(dj_parser *q, const char *text, size_t len, const dj_value *v, uint32_t i, bool raw)
{
	const dj_value *w;
	uint32_t first;
	char *err = NULL;

	FUZZ_CHECK(dj_parse_line(q, text, len, &w, &first, &err) >= 0 && !err);
	FUZZ_CHECK(same(v, i, w, first, raw));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dj_parser *p, *q;
	const dj_value *v;
	uint32_t first;
	char *err = NULL, *text = NULL;
	size_t tlen = 0, nv;
	uint8_t *line = fuzz_dup(data, size);
	FILE *m;
	int rc;

	FUZZ_CHECK(dj_new(&p) == 0 && dj_new(&q) == 0);
	rc = dj_parse_line(p, (const char *)line, size, &v, &first, &err);
	FUZZ_CHECK(rc >= 0 || rc == -EINVAL);
	if (rc < 0) {
		FUZZ_CHECK(err && !strchr(err, '\n'));
		goto out;
	}
	FUZZ_CHECK(!err);
	nv = (size_t)rc;
	FUZZ_CHECK(check_chain(v, nv, first, DJ_NONE, DJ_NULL) == nv); /* every value in the tree, once */
	/* Each container's own text, as the only attribute of an item, is the same tree. */
	for (uint32_t i = 0; i < nv; i++) {
		const dj_value *w;
		uint32_t f;
		char *e = NULL;

		if (v[i].type < DJ_SS)
			continue;
		if (!(m = open_memstream(&text, &tlen)))
			abort();
		fprintf(m, "{\"Item\":{\"x\":%.*s}}", (int)v[i].bytes.n, v[i].bytes.p);
		fclose(m);
		FUZZ_CHECK(dj_parse_line(q, text, tlen, &w, &f, &e) > 0 && !e);
		FUZZ_CHECK(f != DJ_NONE && w[f].next == DJ_NONE && w[f].type == v[i].type);
		FUZZ_CHECK(w[f].bytes.n == v[i].bytes.n && !memcmp(w[f].bytes.p, v[i].bytes.p, v[i].bytes.n));
		FUZZ_CHECK(same(v, v[i].child, w, w[f].child, true));
		free(text);
		text = NULL;
	}
	/* The item written out again. */
	if (!(m = open_memstream(&text, &tlen)))
		abort();
	fputs("{\"Item\":{", m);
	write_chain(m, v, first, true);
	fputs("}}\n", m);
	fclose(m);
	reparse(q, text, tlen, v, first, false);
out:
	free(text);
	free(err);
	dj_free(p);
	dj_free(q);
	free(line);
	return 0;
}
