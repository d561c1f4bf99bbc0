/* tjson.c — a recursive-descent JSON reader into a tree (tjson.h). */
#include "tjson.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonlex.h"

#define MAX_DEPTH 64

struct parser {
	const char *s, *start, *end;
	char *err;
	size_t errlen;
};

static int bad(struct parser *p, const char *what)
{
	if (p->errlen)
		snprintf(p->err, p->errlen, "byte %zu: %s", (size_t)(p->s - p->start), what);
	return -EINVAL;
}

static void skip_ws(struct parser *p)
{
	while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
		p->s++;
}

static void value_release(tj_value *v)
{
	size_t i;

	free(v->s);
	for (i = 0; i < v->n; i++) {
		value_release(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
}

void tj_free(tj_value *v)
{
	if (!v)
		return;
	value_release(v);
	free(v);
}

/* A string at p->s (its opening quote) into *OUT (malloc'd, NUL-terminated), its length *LEN: decoded by
 * cellctl's JSON lexer (tools/import/jsonlex.c), so escapes, surrogates and UTF-8 are checked as there. */
static int string(struct parser *p, char **out, size_t *len)
{
	jl_buf b = { 0 };
	jl_fault f;
	char why[64];
	int rc = jl_string(&b, &p->s, p->end, &f);

	if (rc == -EINVAL) {
		p->s = f.at;
		rc = bad(p, jl_fault_text(&f, why, sizeof(why)));
	}
	if (!rc)
		rc = jl_put(&b, "", 1);
	if (rc) {
		free(b.p);
		return rc;
	}
	*out = b.p;
	*len = b.n - 1;
	return 0;
}

static int value(struct parser *p, tj_value *v, int depth);

static int literal(struct parser *p, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(p->end - p->s) < n || memcmp(p->s, word, n))
		return bad(p, "unexpected text");
	p->s += n;
	return 0;
}

static int number(struct parser *p, tj_value *v)
{
	const char *q = p->s;

	if (q < p->end && *q == '-')
		q++;
	if (q < p->end && *q == '0')
		q++;
	else if (q < p->end && *q >= '1' && *q <= '9')
		while (q < p->end && *q >= '0' && *q <= '9')
			q++;
	else
		return bad(p, "bad number");
	if (q < p->end && *q == '.') {
		if (++q >= p->end || *q < '0' || *q > '9')
			return bad(p, "bad fraction");
		while (q < p->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < p->end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < p->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= p->end || *q < '0' || *q > '9')
			return bad(p, "bad exponent");
		while (q < p->end && *q >= '0' && *q <= '9')
			q++;
	}
	v->type = TJ_NUMBER;
	if (!(v->s = strndup(p->s, (size_t)(q - p->s))))
		return -ENOMEM;
	v->len = (size_t)(q - p->s);
	p->s = q;
	return 0;
}

/* The items of an array or object, after its opening bracket. */
static int items(struct parser *p, tj_value *v, int depth, bool object)
{
	size_t cap = 0;
	char close = object ? '}' : ']';
	int rc;

	skip_ws(p);
	if (p->s < p->end && *p->s == close) {
		p->s++;
		return 0;
	}
	for (;;) {
		if (v->n == cap) {
			size_t nc = cap ? cap * 2 : 8;
			tj_value *ni = realloc(v->items, nc * sizeof(*ni));

			if (!ni)
				return -ENOMEM;
			v->items = ni;
			if (object) {
				char **nk = realloc(v->keys, nc * sizeof(*nk));

				if (!nk)
					return -ENOMEM;
				v->keys = nk;
			}
			cap = nc;
		}
		memset(&v->items[v->n], 0, sizeof(v->items[v->n]));
		if (object) {
			size_t klen;

			skip_ws(p);
			if (p->s >= p->end || *p->s != '"')
				return bad(p, "expected a member name");
			v->keys[v->n] = NULL;
			if ((rc = string(p, &v->keys[v->n], &klen)))
				return rc;
			skip_ws(p);
			if (p->s >= p->end || *p->s != ':') {
				v->n++; /* its key is freed with the object */
				return bad(p, "expected ':'");
			}
			p->s++;
		}
		rc = value(p, &v->items[v->n], depth + 1);
		v->n++;
		if (rc)
			return rc;
		skip_ws(p);
		if (p->s < p->end && *p->s == ',') {
			p->s++;
			continue;
		}
		if (p->s < p->end && *p->s == close) {
			p->s++;
			return 0;
		}
		return bad(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int value(struct parser *p, tj_value *v, int depth)
{
	if (depth > MAX_DEPTH)
		return bad(p, "nested too deep");
	skip_ws(p);
	if (p->s >= p->end)
		return bad(p, "expected a value");
	switch (*p->s) {
	case '{':
		p->s++;
		v->type = TJ_OBJECT;
		return items(p, v, depth, true);
	case '[':
		p->s++;
		v->type = TJ_ARRAY;
		return items(p, v, depth, false);
	case '"':
		v->type = TJ_STRING;
		return string(p, &v->s, &v->len);
	case 't':
		v->type = TJ_BOOL;
		v->b = true;
		return literal(p, "true");
	case 'f':
		v->type = TJ_BOOL;
		return literal(p, "false");
	case 'n':
		v->type = TJ_NULL;
		return literal(p, "null");
	default:
		return number(p, v);
	}
}

int tj_parse(const char *text, size_t n, tj_value **out, char *err, size_t errlen)
{
	struct parser p = { .s = text, .start = text, .end = text + n, .err = err, .errlen = errlen };
	tj_value *v = calloc(1, sizeof(*v));
	int rc;

	if (!v)
		return -ENOMEM;
	if (!(rc = value(&p, v, 0))) {
		skip_ws(&p);
		if (p.s != p.end)
			rc = bad(&p, "text after the value");
	}
	if (rc) {
		tj_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

int tj_parse_file(const char *path, tj_value **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	jl_buf b = { 0 };
	char chunk[65536];
	size_t got;
	int rc = 0;

	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if ((rc = jl_put(&b, chunk, got)))
			break;
	if (!rc && ferror(f)) {
		rc = -EIO;
		snprintf(err, errlen, "%s: read error", path);
	}
	fclose(f);
	if (!rc)
		rc = tj_parse(b.p ? b.p : "", b.n, out, err, errlen);
	free(b.p);
	return rc;
}

const tj_value *tj_get(const tj_value *v, const char *key)
{
	size_t i;

	if (!v || v->type != TJ_OBJECT)
		return NULL;
	for (i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], key))
			return &v->items[i];
	return NULL;
}
