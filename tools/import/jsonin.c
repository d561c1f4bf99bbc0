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

struct rawcell {
	jl_span row, fam, q, val;
	int64_t ts;
};

struct ji_parser {
	jl_lexer lx;           /* the line, its decoded strings (first: jl_parser_new()) */
	struct rawcell *rc;
	ji_cell *cells;
	size_t nc, ccap;
};

int ji_new(ji_parser **out)
{
	return (*out = jl_parser_new(sizeof(ji_parser), " (use the \"_b64\" form)")) ? 0 : -ENOMEM;
}

void ji_free(ji_parser *p)
{
	if (p) {
		free(p->rc);
		free(p->cells);
	}
	jl_parser_free(p);
}

#define fail(p, ...) jl_fail(&(p)->lx.err, __VA_ARGS__) /* (the first error of a line wins) */

static int integer(ji_parser *p, int64_t *out)
{
	jl_lexer *l = &p->lx;
	const char *d;
	uint64_t v = 0;
	bool neg;

	jl_ws(l);
	d = l->s;
	neg = l->s < l->end && *l->s == '-';
	if (neg)
		l->s++;
	if (l->s == l->end || *l->s < '0' || *l->s > '9')
		return fail(p, "column %zu: \"ts\" must be an integer", (size_t)(d - l->start) + 1);
	if (*l->s == '0' && l->end - l->s > 1 && l->s[1] >= '0' && l->s[1] <= '9')
		return fail(p, "column %zu: \"ts\" must be an integer", (size_t)(d - l->start) + 1);
	while (l->s < l->end && *l->s >= '0' && *l->s <= '9') {
		if (v > ((uint64_t)INT64_MAX - (uint64_t)(*l->s - '0')) / 10)
			return fail(p, "column %zu: \"ts\" out of range", (size_t)(d - l->start) + 1);
		v = v * 10 + (uint64_t)(*l->s++ - '0');
	}
	if (l->s < l->end && (*l->s == '.' || *l->s == 'e' || *l->s == 'E'))
		return fail(p, "column %zu: \"ts\" must be an integer", (size_t)(d - l->start) + 1);
	if (neg && v)
		return fail(p, "column %zu: \"ts\" must not be negative", (size_t)(d - l->start) + 1);
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

static int cells_array(ji_parser *p, const jl_span *row)
{
	jl_lexer *l = &p->lx;
	int rc;

	if (!jl_eat(l, '['))
		return fail(p, "column %zu: \"cells\" must be an array", jl_col(l));
	if (jl_eat(l, ']'))
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
	} while (jl_eat(l, ','));
	if (!jl_eat(l, ']'))
		return fail(p, "column %zu: want ',' or ']'", jl_col(l));
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
	jl_lexer *l = &p->lx;
	const char *cells_at = NULL;
	int rc;

	*has_cells = false;
	if (!jl_eat(l, '{'))
		return fail(p, "column %zu: want '{'", jl_col(l));
	if (!jl_eat(l, '}')) {
		do {
			jl_span k;
			size_t kcol, save = l->b.n;
			int keylen;
			unsigned bit;
			const char *key;

			jl_ws(l);
			kcol = jl_col(l);
			if ((rc = jl_str(l, &k)))
				return rc;
			/* Messages quote the key as written: escapes make it longer than the decoded k.n. */
			keylen = (int)(l->s - (l->start + kcol - 1));
			key = l->b.p + k.off; /* still there: nothing is decoded until the value */
			l->b.n = save;
			if (!jl_eat(l, ':'))
				return fail(p, "column %zu: want ':'", jl_col(l));
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
				return fail(p, "column %zu: unknown key %.*s", kcol, keylen, l->start + kcol - 1);
			if (*seen & bit)
				return fail(p, "column %zu: %.*s given twice", kcol, keylen, l->start + kcol - 1);
			*seen |= bit;
			switch (bit) {
			case F_ROW:
				rc = IS("row") ? jl_str(l, &c->row) : jl_b64str(l, "\"row_b64\"", &c->row);
				break;
			case F_FAM: rc = jl_str(l, &c->fam); break;
			case F_Q:
				rc = IS("qualifier") ? jl_str(l, &c->q) : jl_b64str(l, "\"qualifier_b64\"", &c->q);
				break;
			case F_TS: rc = integer(p, &c->ts); break;
			case F_VAL:
				rc = IS("value") ? jl_str(l, &c->val) : jl_b64str(l, "\"value_b64\"", &c->val);
				break;
			case F_INT: /* an integer of any sign, not kept */
				jl_ws(l);
				if (l->s < l->end && *l->s == '-')
					l->s++;
				if (l->s == l->end || *l->s < '0' || *l->s > '9')
					return fail(p, "column %zu: \"int\" must be an integer", jl_col(l));
				while (l->s < l->end && *l->s >= '0' && *l->s <= '9')
					l->s++;
				break;
			default: /* "cells": parsed once "row" is known, which may come after it */
				jl_ws(l);
				cells_at = l->s;
				rc = cells_array(p, NULL);
				p->nc = 0;
				break;
			}
#undef IS
			if (rc)
				return rc;
		} while (jl_eat(l, ','));
		if (!jl_eat(l, '}'))
			return fail(p, "column %zu: want ',' or '}'", jl_col(l));
	}
	if (cells_at) {
		const char *end = l->s;
		const char *m = !(*seen & F_ROW) ? "row" : NULL;
		if (m)
			return fail(p, "missing \"%s\"", m);
		if (*seen & (F_FAM | F_Q | F_TS | F_VAL))
			return fail(p, "a row with \"cells\" holds only \"row\" and \"cells\"");
		l->s = cells_at;
		if ((rc = cells_array(p, &c->row)))
			return rc;
		l->s = end;
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
	jl_lexer *l = &p->lx;
	struct rawcell top = { 0 };
	unsigned seen = 0;
	bool has_cells;
	int rc;

	jl_begin(l, line, n, err);
	p->nc = 0;
	if ((rc = object(p, &top, true, &seen, &has_cells)))
		return rc;
	jl_ws(l);
	if (l->s != l->end)
		return fail(p, "column %zu: text after the object", jl_col(l));
	if (!has_cells && (rc = add_cell(p, &top)))
		return rc;
	for (size_t i = 0; i < p->nc; i++) {
		const struct rawcell *r = &p->rc[i];
		ji_cell *c = &p->cells[i];
		c->row = (ji_bytes){ l->b.p + r->row.off, r->row.n };
		c->family = (ji_bytes){ l->b.p + r->fam.off, r->fam.n };
		c->qualifier = (ji_bytes){ l->b.p + r->q.off, r->q.n };
		c->value = (ji_bytes){ l->b.p + r->val.off, r->val.n };
		c->ts = r->ts;
	}
	*cells = p->cells;
	*ncells = p->nc;
	return 0;
}
