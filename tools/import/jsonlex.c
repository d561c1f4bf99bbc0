/* jsonlex.c — a line's cursor, JSON string literals and base64 for cellctl's line parsers (jsonlex.h). */
#include "jsonlex.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"

int jl_buf_init(jl_buf *b)
{
	if (!(b->p = malloc(256)))
		return -ENOMEM;
	b->n = 0;
	b->cap = 256;
	return 0;
}

int jl_fail(char ***err, const char *fmt, ...)
{
	va_list ap;

	if (*err) {
		va_start(ap, fmt);
		if (vasprintf(*err, fmt, ap) < 0)
			**err = NULL;
		va_end(ap);
		*err = NULL;
	}
	return -EINVAL;
}

int jl_put(jl_buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *nb;

		while (cap < b->n + n)
			cap *= 2;
		if (!(nb = realloc(b->p, cap)))
			return -ENOMEM;
		b->p = nb;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
	return 0;
}

static int fault(jl_fault *f, jl_fault_kind kind, const char *at)
{
	f->kind = kind;
	f->at = at;
	return -EINVAL;
}

/* Four hex digits at *S into *V. */
static int hex4(const char **s, const char *end, unsigned *v, jl_fault *f)
{
	*v = 0;
	if (end - *s < 4)
		return fault(f, JL_BAD_U_ESCAPE, *s);
	for (int i = 0; i < 4; i++) {
		char c = *(*s)++;

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned)(c - 'A' + 10);
		else
			return fault(f, JL_BAD_U_ESCAPE, *s - 1);
	}
	return 0;
}

static int put_utf8(jl_buf *b, unsigned cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xC0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 63));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xE0 | cp >> 12);
		u[1] = (char)(0x80 | ((cp >> 6) & 63));
		u[2] = (char)(0x80 | (cp & 63));
		n = 3;
	} else {
		u[0] = (char)(0xF0 | cp >> 18);
		u[1] = (char)(0x80 | ((cp >> 12) & 63));
		u[2] = (char)(0x80 | ((cp >> 6) & 63));
		u[3] = (char)(0x80 | (cp & 63));
		n = 4;
	}
	return jl_put(b, u, n);
}

int jl_string(jl_buf *b, const char **sp, const char *end, jl_fault *f)
{
	const char *s = *sp, *quote = s, *content;
	int rc;

	s++; /* the opening quote */
	content = s;
	for (;;) {
		const char *run = s;
		bool ascii = true;
		char e, c;
		unsigned cp, lo;

		while (s < end && *s != '"' && *s != '\\' && (unsigned char)*s >= 0x20) {
			ascii &= (unsigned char)*s < 0x80;
			s++;
		}
		if (!ascii && !jo_utf8(run, (size_t)(s - run)))
			return fault(f, JL_NOT_UTF8, content);
		if ((rc = jl_put(b, run, (size_t)(s - run))))
			return rc;
		if (s == end)
			return fault(f, JL_UNTERMINATED, quote);
		if (*s == '"') {
			*sp = s + 1;
			return 0;
		}
		if (*s != '\\')
			return fault(f, JL_CONTROL, s);
		s++;
		if (s == end)
			return fault(f, JL_UNTERMINATED, quote);
		e = *s++;
		switch (e) {
		case '"': case '\\': case '/': c = e; break;
		case 'b': c = '\b'; break;
		case 'f': c = '\f'; break;
		case 'n': c = '\n'; break;
		case 'r': c = '\r'; break;
		case 't': c = '\t'; break;
		case 'u':
			if ((rc = hex4(&s, end, &cp, f)))
				return rc;
			if (cp >= 0xDC00 && cp <= 0xDFFF)
				return fault(f, JL_LONE_SURROGATE, s - 6);
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (end - s < 6 || s[0] != '\\' || s[1] != 'u')
					return fault(f, JL_LONE_SURROGATE, s - 6);
				s += 2;
				if ((rc = hex4(&s, end, &lo, f)))
					return rc;
				if (lo < 0xDC00 || lo > 0xDFFF)
					return fault(f, JL_LONE_SURROGATE, s - 12);
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			}
			if ((rc = put_utf8(b, cp)))
				return rc;
			continue;
		default:
			f->escape = e;
			return fault(f, JL_BAD_ESCAPE, s - 2);
		}
		if ((rc = jl_put(b, &c, 1)))
			return rc;
	}
}

const char *jl_fault_text(const jl_fault *f, char *buf, size_t n)
{
	switch (f->kind) {
	case JL_NOT_UTF8: return "a string that is not valid UTF-8";
	case JL_UNTERMINATED: return "unterminated string";
	case JL_CONTROL: return "control character in a string";
	case JL_BAD_U_ESCAPE: return "bad \\u escape";
	case JL_LONE_SURROGATE: return "lone surrogate in \\u escape";
	case JL_BAD_ESCAPE: /* the message stays one line, whatever byte followed the backslash */
		if (f->escape > 0x20 && f->escape < 0x7f)
			snprintf(buf, n, "bad escape \\%c", f->escape);
		else
			snprintf(buf, n, "bad escape \\ then byte 0x%02x", (unsigned char)f->escape);
		return buf;
	}
	return "bad string";
}

static int b64val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int jl_b64_decode(char *p, size_t n, size_t *out)
{
	size_t o = 0, pad = 0;
	uint32_t acc = 0;

	if (n % 4)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) { /* writes stay behind reads: 3 bytes for every 4 read */
		int v = b64val(p[i]);

		if (p[i] == '=' && i >= n - 2) {
			pad++;
			v = 0;
		} else if (v < 0 || pad) {
			return -EINVAL;
		}
		acc = acc << 6 | (uint32_t)v;
		if (i % 4 == 3) {
			p[o++] = (char)(acc >> 16);
			p[o++] = (char)(acc >> 8);
			p[o++] = (char)acc;
			acc = 0;
		}
	}
	*out = o - pad;
	return 0;
}

int jl_lexer_init(jl_lexer *l, const char *hint)
{
	l->utf8_hint = hint;
	return jl_buf_init(&l->b);
}

void jl_lexer_release(jl_lexer *l)
{
	free(l->b.p);
	l->b.p = NULL;
}

void *jl_parser_new(size_t size, const char *hint)
{
	jl_lexer *l = calloc(1, size);

	if (l && jl_lexer_init(l, hint)) {
		free(l);
		return NULL;
	}
	return l;
}

void jl_parser_free(void *parser)
{
	if (parser) {
		jl_lexer_release(parser);
		free(parser);
	}
}

void jl_begin(jl_lexer *l, const char *line, size_t n, char **err)
{
	l->s = l->start = line;
	l->end = line + n;
	l->err = err;
	l->b.n = 0;
}

void jl_ws(jl_lexer *l)
{
	while (l->s < l->end && (*l->s == ' ' || *l->s == '\t' || *l->s == '\n' || *l->s == '\r'))
		l->s++;
}

size_t jl_col(const jl_lexer *l)
{
	return (size_t)(l->s - l->start) + 1;
}

bool jl_eat(jl_lexer *l, char c)
{
	jl_ws(l);
	if (l->s < l->end && *l->s == c) {
		l->s++;
		return true;
	}
	return false;
}

int jl_str(jl_lexer *l, jl_span *out)
{
	jl_fault f;
	char msg[48];
	int rc;

	if (!jl_eat(l, '"'))
		return jl_fail(&l->err, "column %zu: want a string", jl_col(l));
	l->s--;
	out->off = l->b.n;
	rc = jl_string(&l->b, &l->s, l->end, &f);
	if (rc == -EINVAL)
		return jl_fail(&l->err, "column %zu: %s%s", (size_t)(f.at - l->start) + 1,
			       jl_fault_text(&f, msg, sizeof msg), f.kind == JL_NOT_UTF8 ? l->utf8_hint : "");
	if (rc)
		return rc;
	out->n = l->b.n - out->off;
	return 0;
}

int jl_b64str(jl_lexer *l, const char *what, jl_span *out)
{
	jl_span s;
	size_t c0, n;
	int rc;

	jl_ws(l);
	c0 = jl_col(l);
	if ((rc = jl_str(l, &s)))
		return rc;
	if (jl_b64_decode(l->b.p + s.off, s.n, &n) < 0)
		return jl_fail(&l->err, "column %zu: bad base64 in %s", c0, what);
	out->off = s.off;
	out->n = n;
	l->b.n = s.off + n;
	return 0;
}
