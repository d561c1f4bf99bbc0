/* jsonin.c — a strict parser for cellctl's JSON lines: one object per line, only the known keys, each
 * once; strings must be valid UTF-8 (other bytes travel as "X_b64"); "ts" an integer. Decoded bytes go
 * to one growing buffer per line, so memory follows the longest line. */
#include "jsonin.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonlex.h"

struct span {
	size_t off, n;
};

struct rawcell {
	struct span row, fam, q, val;
	int64_t ts;
};

struct ji_parser {
	jl_buf b;              /* decoded strings of the line */
	struct rawcell *rc;
	ji_cell *cells;
	size_t nc, ccap;
	const char *s, *end, *start;
	char **err;
};

int ji_new(ji_parser **out)
{
	ji_parser *p = calloc(1, sizeof(*p));

	if (!p || jl_buf_init(&p->b)) {
		free(p);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

void ji_free(ji_parser *p)
{
	if (!p)
		return;
	free(p->b.p);
	free(p->rc);
	free(p->cells);
	free(p);
}

#define fail(p, ...) jl_fail(&(p)->err, __VA_ARGS__) /* (the first error of a line wins) */

static void ws(ji_parser *p)
{
	while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
		p->s++;
}

static size_t col(const ji_parser *p)
{
	return (size_t)(p->s - p->start) + 1;
}

static bool eat(ji_parser *p, char c)
{
	ws(p);
	if (p->s < p->end && *p->s == c) {
		p->s++;
		return true;
	}
	return false;
}

/* A string literal, decoded into the buffer. */
static int string(ji_parser *p, struct span *out)
{
	jl_fault f;
	char msg[48];
	int rc;

	if (!eat(p, '"'))
		return fail(p, "column %zu: want a string", col(p));
	p->s--;
	out->off = p->b.n;
	rc = jl_string(&p->b, &p->s, p->end, &f);
	if (rc == -EINVAL)
		return fail(p, "column %zu: %s%s", (size_t)(f.at - p->start) + 1, jl_fault_text(&f, msg, sizeof msg),
			    f.kind == JL_NOT_UTF8 ? " (use the \"_b64\" form)" : "");
	if (rc)
		return rc;
	out->n = p->b.n - out->off;
	return 0;
}

/* A base64 string literal, decoded in place behind its text (the decoded bytes are never longer). */
static int b64string(ji_parser *p, const char *key, struct span *out)
{
	struct span s;
	size_t c0, n;
	int rc;

	ws(p);
	c0 = col(p);
	if ((rc = string(p, &s)))
		return rc;
	if (jl_b64_decode(p->b.p + s.off, s.n, &n) < 0)
		return fail(p, "column %zu: bad base64 in \"%s\"", c0, key);
	out->off = s.off;
	out->n = n;
	p->b.n = s.off + n;
	return 0;
}

static int integer(ji_parser *p, int64_t *out)
{
	const char *d;
	uint64_t v = 0;
	bool neg;

	ws(p);
	d = p->s;
	neg = p->s < p->end && *p->s == '-';
	if (neg)
		p->s++;
	if (p->s == p->end || *p->s < '0' || *p->s > '9')
		return fail(p, "column %zu: \"ts\" must be an integer", (size_t)(d - p->start) + 1);
	if (*p->s == '0' && p->end - p->s > 1 && p->s[1] >= '0' && p->s[1] <= '9')
		return fail(p, "column %zu: \"ts\" must be an integer", (size_t)(d - p->start) + 1);
	while (p->s < p->end && *p->s >= '0' && *p->s <= '9') {
		if (v > ((uint64_t)INT64_MAX - (uint64_t)(*p->s - '0')) / 10)
			return fail(p, "column %zu: \"ts\" out of range", (size_t)(d - p->start) + 1);
		v = v * 10 + (uint64_t)(*p->s++ - '0');
	}
	if (p->s < p->end && (*p->s == '.' || *p->s == 'e' || *p->s == 'E'))
		return fail(p, "column %zu: \"ts\" must be an integer", (size_t)(d - p->start) + 1);
	if (neg && v)
		return fail(p, "column %zu: \"ts\" must not be negative", (size_t)(d - p->start) + 1);
	*out = (int64_t)v;
	return 0;
}

enum { F_ROW = 1, F_FAM = 2, F_Q = 4, F_TS = 8, F_VAL = 16, F_CELLS = 32, F_INT = 64 };

/* One object's members into RC; TOP: the line's object (may hold "row" and "cells"). *SEEN: which. */
static int object(ji_parser *p, struct rawcell *rc, bool top, unsigned *seen, bool *has_cells);

static int add_cell(ji_parser *p, const struct rawcell *c)
{
	if (p->nc == p->ccap) {
		size_t cap = p->ccap ? 2 * p->ccap : 16;
		struct rawcell *r = realloc(p->rc, cap * sizeof *r);
		if (!r)
			return -ENOMEM;
		p->rc = r;
		ji_cell *jc = realloc(p->cells, cap * sizeof *jc);
		if (!jc)
			return -ENOMEM;
		p->cells = jc;
		p->ccap = cap;
	}
	p->rc[p->nc++] = *c;
	return 0;
}

static int cells_array(ji_parser *p, const struct span *row)
{
	int rc;

	if (!eat(p, '['))
		return fail(p, "column %zu: \"cells\" must be an array", col(p));
	if (eat(p, ']'))
		return 0;
	do {
		struct rawcell c = { 0 };
		unsigned seen = 0;
		bool dummy;
		if ((rc = object(p, &c, false, &seen, &dummy)))
			return rc;
		if (row)
			c.row = *row;
		if ((rc = add_cell(p, &c)))
			return rc;
	} while (eat(p, ','));
	if (!eat(p, ']'))
		return fail(p, "column %zu: want ',' or ']'", col(p));
	return 0;
}

static const char *missing(unsigned seen, bool top)
{
	if (top && !(seen & F_ROW))
		return "row";
	if (!(seen & F_FAM))
		return "family";
	if (!(seen & F_Q))
		return "qualifier";
	if (!(seen & F_TS))
		return "ts";
	if (!(seen & F_VAL))
		return "value";
	return NULL;
}

static int object(ji_parser *p, struct rawcell *c, bool top, unsigned *seen, bool *has_cells)
{
	const char *cells_at = NULL;
	int rc;

	*has_cells = false;
	if (!eat(p, '{'))
		return fail(p, "column %zu: want '{'", col(p));
	if (!eat(p, '}')) {
		do {
			struct span k;
			size_t kcol, save = p->b.n;
			int keylen;
			unsigned bit;
			const char *key;

			ws(p);
			kcol = col(p);
			if ((rc = string(p, &k)))
				return rc;
			/* Messages quote the key as written: escapes make it longer than the decoded k.n. */
			keylen = (int)(p->s - (p->start + kcol - 1));
			key = p->b.p + k.off; /* still there: nothing is decoded until the value */
			p->b.n = save;
			if (!eat(p, ':'))
				return fail(p, "column %zu: want ':'", col(p));
#define IS(s) (k.n == sizeof(s) - 1 && !memcmp(key, s, k.n))
			if (top && (IS("row") || IS("row_b64")))
				bit = F_ROW;
			else if (IS("family"))
				bit = F_FAM;
			else if (IS("qualifier") || IS("qualifier_b64"))
				bit = F_Q;
			else if (IS("ts"))
				bit = F_TS;
			else if (IS("value") || IS("value_b64"))
				bit = F_VAL;
			else if (top && IS("cells"))
				bit = F_CELLS;
			else if (IS("int")) /* an aggregate cell's value as a number (read --format=json): the bytes are in "value" */
				bit = F_INT;
			else
				return fail(p, "column %zu: unknown key %.*s", kcol, keylen, p->start + kcol - 1);
			if (*seen & bit)
				return fail(p, "column %zu: %.*s given twice", kcol, keylen, p->start + kcol - 1);
			*seen |= bit;
			switch (bit) {
			case F_ROW: rc = IS("row") ? string(p, &c->row) : b64string(p, "row_b64", &c->row); break;
			case F_FAM: rc = string(p, &c->fam); break;
			case F_Q: rc = IS("qualifier") ? string(p, &c->q) : b64string(p, "qualifier_b64", &c->q); break;
			case F_TS: rc = integer(p, &c->ts); break;
			case F_VAL: rc = IS("value") ? string(p, &c->val) : b64string(p, "value_b64", &c->val); break;
			case F_INT: /* an integer of any sign, not kept */
				ws(p);
				if (p->s < p->end && *p->s == '-')
					p->s++;
				if (p->s == p->end || *p->s < '0' || *p->s > '9')
					return fail(p, "column %zu: \"int\" must be an integer", col(p));
				while (p->s < p->end && *p->s >= '0' && *p->s <= '9')
					p->s++;
				break;
			default: /* "cells": parsed once "row" is known, which may come after it */
				ws(p);
				cells_at = p->s;
				rc = cells_array(p, NULL);
				p->nc = 0;
				break;
			}
#undef IS
			if (rc)
				return rc;
		} while (eat(p, ','));
		if (!eat(p, '}'))
			return fail(p, "column %zu: want ',' or '}'", col(p));
	}
	if (cells_at) {
		const char *end = p->s;
		const char *m = !(*seen & F_ROW) ? "row" : NULL;
		if (m)
			return fail(p, "missing \"%s\"", m);
		if (*seen & (F_FAM | F_Q | F_TS | F_VAL))
			return fail(p, "a row with \"cells\" holds only \"row\" and \"cells\"");
		p->s = cells_at;
		if ((rc = cells_array(p, &c->row)))
			return rc;
		p->s = end;
		*has_cells = true;
		return 0;
	}
	const char *m = missing(*seen, top);
	if (m)
		return fail(p, "missing \"%s\"", m);
	return 0;
}

int ji_parse_line(ji_parser *p, const char *line, size_t n, ji_cell **cells, size_t *ncells, char **err)
{
	struct rawcell top = { 0 };
	unsigned seen = 0;
	bool has_cells;
	int rc;

	p->s = p->start = line;
	p->end = line + n;
	p->err = err;
	p->b.n = 0;
	p->nc = 0;
	if ((rc = object(p, &top, true, &seen, &has_cells)))
		return rc;
	ws(p);
	if (p->s != p->end)
		return fail(p, "column %zu: text after the object", col(p));
	if (!has_cells && (rc = add_cell(p, &top)))
		return rc;
	for (size_t i = 0; i < p->nc; i++) {
		const struct rawcell *r = &p->rc[i];
		ji_cell *c = &p->cells[i];
		c->row = (ji_bytes){ p->b.p + r->row.off, r->row.n };
		c->family = (ji_bytes){ p->b.p + r->fam.off, r->fam.n };
		c->qualifier = (ji_bytes){ p->b.p + r->q.off, r->q.n };
		c->value = (ji_bytes){ p->b.p + r->val.off, r->val.n };
		c->ts = r->ts;
	}
	*cells = p->cells;
	*ncells = p->nc;
	return 0;
}
