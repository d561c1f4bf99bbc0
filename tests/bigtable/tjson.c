/* tjson.c — a recursive-descent JSON reader into a tree (tjson.h). */
#include "tjson.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

struct buf {
	char *p;
	size_t n, cap;
};

static int buf_put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 32;
		char *np;

		while (cap < b->n + n + 1)
			cap *= 2;
		if (!(np = realloc(b->p, cap)))
			return -ENOMEM;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
	b->p[b->n] = 0;
	return 0;
}

static int hex4(struct parser *p, unsigned *out)
{
	unsigned v = 0;
	int i;

	if (p->end - p->s < 4)
		return bad(p, "short \\u escape");
	for (i = 0; i < 4; i++) {
		char c = *p->s++;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return bad(p, "bad \\u escape");
	}
	*out = v;
	return 0;
}

static int put_utf8(struct buf *b, unsigned cp)
{
	unsigned char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (unsigned char)(0xc0 | cp >> 6);
		u[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (unsigned char)(0xe0 | cp >> 12);
		u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (unsigned char)(0xf0 | cp >> 18);
		u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return buf_put(b, u, n);
}

/* A string at p->s (after its opening quote) into *OUT (NUL-terminated), its length *LEN. */
static int string(struct parser *p, char **out, size_t *len)
{
	struct buf b = { 0 };
	int rc;

	if ((rc = buf_put(&b, "", 0)))
		return rc;
	for (;;) {
		const char *q = p->s;
		unsigned cp, lo;

		while (q < p->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
			q++;
		if ((rc = buf_put(&b, p->s, (size_t)(q - p->s))))
			goto out;
		p->s = q;
		if (p->s >= p->end) {
			rc = bad(p, "unterminated string");
			goto out;
		}
		if (*p->s == '"') {
			p->s++;
			break;
		}
		if (*p->s != '\\') {
			rc = bad(p, "control character in a string");
			goto out;
		}
		if (++p->s >= p->end) {
			rc = bad(p, "unterminated escape");
			goto out;
		}
		switch (*p->s++) {
		case '"': rc = buf_put(&b, "\"", 1); break;
		case '\\': rc = buf_put(&b, "\\", 1); break;
		case '/': rc = buf_put(&b, "/", 1); break;
		case 'b': rc = buf_put(&b, "\b", 1); break;
		case 'f': rc = buf_put(&b, "\f", 1); break;
		case 'n': rc = buf_put(&b, "\n", 1); break;
		case 'r': rc = buf_put(&b, "\r", 1); break;
		case 't': rc = buf_put(&b, "\t", 1); break;
		case 'u':
			if ((rc = hex4(p, &cp)))
				goto out;
			if (cp >= 0xd800 && cp < 0xdc00) {
				if (p->end - p->s < 2 || p->s[0] != '\\' || p->s[1] != 'u') {
					rc = bad(p, "lone high surrogate");
					goto out;
				}
				p->s += 2;
				if ((rc = hex4(p, &lo)))
					goto out;
				if (lo < 0xdc00 || lo > 0xdfff) {
					rc = bad(p, "bad low surrogate");
					goto out;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				rc = bad(p, "lone low surrogate");
				goto out;
			}
			rc = put_utf8(&b, cp);
			break;
		default:
			rc = bad(p, "unknown escape");
		}
		if (rc)
			goto out;
	}
	*out = b.p;
	*len = b.n;
	return 0;
out:
	free(b.p);
	return rc;
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
			p->s++;
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
		p->s++;
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
	struct buf b = { 0 };
	char chunk[65536];
	size_t got;
	int rc = 0;

	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if ((rc = buf_put(&b, chunk, got)))
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
