/* ddbjson.c — a strict parser for DynamoDB JSON export lines (ddbjson.h). Decoded strings go to one
 * growing buffer per line and values to one growing array, linked by indices (both move as they grow),
 * so memory follows the longest line; pointers are made once, at the end.
 */
#include "ddbjson.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonlex.h"
#include "jsonout.h"

enum where { IN_BUF, IN_LINE, IN_STATIC };

struct node {
	dj_type type;
	jl_span name;  /* in lx.b */
	jl_span bytes; /* in lx.b, the line or the static text, as WHERE says */
	enum where where;
	const char *text;  /* IN_STATIC */
	uint32_t child, next;
	size_t column;     /* the value's */
	size_t name_col;   /* its name's, for a message */
};

struct dj_parser {
	jl_lexer lx;       /* the line, its decoded strings (first: jl_parser_new()) */
	struct node *nodes;
	size_t nn, ncap;
	dj_value *out;
	size_t outcap;
	uint32_t *idx;     /* for the duplicate-name check */
	size_t idxcap;
};

static const char *const type_names[] = { "S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS", "M", "L" };

const char *dj_type_name(dj_type t)
{
	return (unsigned)t < sizeof type_names / sizeof *type_names ? type_names[t] : "?";
}

int dj_new(dj_parser **out)
{
	return (*out = jl_parser_new(sizeof(dj_parser), "")) ? 0 : -ENOMEM;
}

void dj_free(dj_parser *p)
{
	if (p) {
		free(p->nodes);
		free(p->out);
		free(p->idx);
	}
	jl_parser_free(p);
}

#define fail(p, ...) jl_fail(&(p)->lx.err, __VA_ARGS__) /* (the first error of a line wins) */

static int grow(void **v, size_t *cap, size_t want, size_t size)
{
	size_t c = *cap ? *cap : 64;
	void *nv;

	if (want <= *cap)
		return 0;
	while (c < want)
		c *= 2;
	if (!(nv = realloc(*v, c * size)))
		return -ENOMEM;
	*v = nv;
	*cap = c;
	return 0;
}

/* A name for a message, quoted as a JSON string (one line whatever its bytes); NULL if memory ran out. */
static char *quoted(const dj_parser *p, jl_span s)
{
	char *t = NULL;
	size_t tn;
	FILE *m = open_memstream(&t, &tn);

	if (!m)
		return NULL;
	jo_str(m, p->lx.b.p + s.off, s.n);
	if (fclose(m)) {
		free(t);
		return NULL;
	}
	return t;
}

/* ---- Numbers --------------------------------------------------------------------------------------- */

/* A number's text: [+-]digits[.digits][(e|E)[+-]digits], with a digit before or after the point. */
static bool number_ok(const char *s, size_t n)
{
	size_t i = 0, d = 0;

	if (i < n && (s[i] == '-' || s[i] == '+'))
		i++;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		d++;
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			d++;
	if (!d)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			i++;
		if (i == n || s[i] < '0' || s[i] > '9')
			return false;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	return i == n;
}

static int number(dj_parser *p, const char *what, jl_span *out)
{
	jl_lexer *l = &p->lx;
	size_t c0;
	int rc;

	jl_ws(l);
	c0 = jl_col(l);
	if ((rc = jl_str(l, out)))
		return rc;
	if (!number_ok(l->b.p + out->off, out->n))
		return fail(p, "column %zu: bad number in %s (want digits, a point, an exponent, as \"-12.5E3\")", c0,
			    what);
	return 0;
}

/* ---- Values ---------------------------------------------------------------------------------------- */

static int add_node(dj_parser *p, dj_type t, size_t column, uint32_t *idx)
{
	struct node *nd;

	if (p->nn >= INT_MAX) /* indices are uint32_t, the count an int */
		return -ENOMEM;
	if (grow((void **)&p->nodes, &p->ncap, p->nn + 1, sizeof *p->nodes))
		return -ENOMEM;
	nd = &p->nodes[p->nn];
	memset(nd, 0, sizeof *nd);
	nd->type = t;
	nd->where = IN_BUF;
	nd->child = nd->next = DJ_NONE;
	nd->column = column;
	*idx = (uint32_t)p->nn++;
	return 0;
}

/* Append node I to the chain whose last member is *LAST (DJ_NONE: I is the first, stored in *FIRST). */
static void link(dj_parser *p, uint32_t *first, uint32_t *last, uint32_t i)
{
	if (*last == DJ_NONE)
		*first = i;
	else
		p->nodes[*last].next = i;
	*last = i;
}

static int literal(dj_parser *p, const char *word)
{
	jl_lexer *l = &p->lx;
	size_t n = strlen(word);

	jl_ws(l);
	if ((size_t)(l->end - l->s) < n || memcmp(l->s, word, n))
		return -1;
	l->s += n;
	return 0;
}

static int cmp_names(const void *a, const void *b, void *ctx)
{
	const dj_parser *p = ctx;
	const struct node *x = &p->nodes[*(const uint32_t *)a], *y = &p->nodes[*(const uint32_t *)b];
	size_t n = x->name.n < y->name.n ? x->name.n : y->name.n;
	int c = memcmp(p->lx.b.p + x->name.off, p->lx.b.p + y->name.off, n);

	if (c)
		return c;
	if (x->name.n != y->name.n)
		return x->name.n < y->name.n ? -1 : 1;
	return x->name_col < y->name_col ? -1 : x->name_col > y->name_col;
}

/* No two members of the chain from FIRST have one name. WHAT: "attribute" or "map key". */
static int unique_names(dj_parser *p, uint32_t first, const char *what)
{
	size_t k = 0;

	for (uint32_t i = first; i != DJ_NONE; i = p->nodes[i].next) {
		if (grow((void **)&p->idx, &p->idxcap, k + 1, sizeof *p->idx))
			return -ENOMEM;
		p->idx[k++] = i;
	}
	if (k < 2)
		return 0;
	qsort_r(p->idx, k, sizeof *p->idx, cmp_names, p);
	for (size_t j = 1; j < k; j++) {
		const struct node *a = &p->nodes[p->idx[j - 1]], *b = &p->nodes[p->idx[j]];

		if (a->name.n == b->name.n && !memcmp(p->lx.b.p + a->name.off, p->lx.b.p + b->name.off, a->name.n)) {
			char *q = quoted(p, b->name);
			int rc = fail(p, "column %zu: %s %s given twice", b->name_col, what, q ? q : "?");
			free(q);
			return rc;
		}
	}
	return 0;
}

static int value(dj_parser *p, int depth, uint32_t *out);

/* "name": value, ... } of an item or a map (the '{' eaten), as the chain *FIRST. */
static int members(dj_parser *p, int depth, const char *what, uint32_t *first)
{
	jl_lexer *l = &p->lx;
	uint32_t last = DJ_NONE, i;
	int rc;

	*first = DJ_NONE;
	if (jl_eat(l, '}'))
		return 0;
	do {
		jl_span name;
		size_t ncol;

		jl_ws(l);
		ncol = jl_col(l);
		if ((rc = jl_str(l, &name)))
			return rc;
		if (!jl_eat(l, ':'))
			return fail(p, "column %zu: want ':'", jl_col(l));
		if ((rc = value(p, depth, &i)))
			return rc;
		p->nodes[i].name = name;
		p->nodes[i].name_col = ncol;
		link(p, first, &last, i);
	} while (jl_eat(l, ','));
	if (!jl_eat(l, '}'))
		return fail(p, "column %zu: want ',' or '}'", jl_col(l));
	return unique_names(p, *first, what);
}

/* [ "member", ... ] of a set of type T. */
static int set_members(dj_parser *p, dj_type t, uint32_t *first)
{
	jl_lexer *l = &p->lx;
	static const char *const what[] = { [DJ_SS] = "a member of an \"SS\" set",
					     [DJ_NS] = "a member of an \"NS\" set",
					     [DJ_BS] = "a member of a \"BS\" set" };
	dj_type mt = t == DJ_SS ? DJ_S : t == DJ_NS ? DJ_N : DJ_B;
	uint32_t last = DJ_NONE, i;
	size_t c0;
	int rc;

	*first = DJ_NONE;
	jl_ws(l);
	c0 = jl_col(l);
	if (!jl_eat(l, '['))
		return fail(p, "column %zu: a \"%s\" set must be an array of strings", jl_col(l), dj_type_name(t));
	if (jl_eat(l, ']'))
		return fail(p, "column %zu: an empty set (DynamoDB has none)", c0);
	do {
		jl_span s;

		jl_ws(l);
		if ((rc = add_node(p, mt, jl_col(l), &i)))
			return rc;
		rc = mt == DJ_S ? jl_str(l, &s) : mt == DJ_N ? number(p, what[t], &s) : jl_b64str(l, what[t], &s);
		if (rc)
			return rc;
		p->nodes[i].bytes = s;
		link(p, first, &last, i);
	} while (jl_eat(l, ','));
	if (!jl_eat(l, ']'))
		return fail(p, "column %zu: want ',' or ']'", jl_col(l));
	return 0;
}

/* [ value, ... ] of a list. */
static int list_members(dj_parser *p, int depth, uint32_t *first)
{
	jl_lexer *l = &p->lx;
	uint32_t last = DJ_NONE, i;
	int rc;

	*first = DJ_NONE;
	if (!jl_eat(l, '['))
		return fail(p, "column %zu: an \"L\" list must be an array", jl_col(l));
	if (jl_eat(l, ']'))
		return 0;
	do {
		if ((rc = value(p, depth, &i)))
			return rc;
		link(p, first, &last, i);
	} while (jl_eat(l, ','));
	if (!jl_eat(l, ']'))
		return fail(p, "column %zu: want ',' or ']'", jl_col(l));
	return 0;
}

/* One value: {"T": ...} with T a type descriptor. DEPTH: the M and L around it. */
static int value(dj_parser *p, int depth, uint32_t *out)
{
	jl_lexer *l = &p->lx;
	const char *start;
	jl_span d, s = { 0, 0 };
	size_t c0, dcol, save;
	uint32_t i, first = DJ_NONE;
	int t, rc = 0;

	jl_ws(l);
	start = l->s;
	c0 = jl_col(l);
	if (!jl_eat(l, '{'))
		return fail(p, "column %zu: want a value: an object with a type descriptor, as {\"S\":\"text\"}", c0);
	jl_ws(l);
	if (l->s < l->end && *l->s == '}')
		return fail(p, "column %zu: a value without a type descriptor", c0);
	dcol = jl_col(l);
	save = l->b.n;
	if ((rc = jl_str(l, &d)))
		return rc;
	l->b.n = save; /* the descriptor is not kept */
	for (t = 0; t <= DJ_L; t++)
		if (strlen(type_names[t]) == d.n && !memcmp(l->b.p + d.off, type_names[t], d.n))
			break;
	if (t > DJ_L)
		return fail(p, "column %zu: unknown type descriptor %.*s (want S, N, B, BOOL, NULL, SS, NS, BS, M or L)",
			    dcol, (int)(l->s - (l->start + dcol - 1)), l->start + dcol - 1);
	if (!jl_eat(l, ':'))
		return fail(p, "column %zu: want ':'", jl_col(l));
	if ((t == DJ_M || t == DJ_L) && depth >= DJ_MAX_DEPTH)
		return fail(p, "column %zu: maps and lists nested more than %d deep", c0, DJ_MAX_DEPTH);
	if ((rc = add_node(p, (dj_type)t, c0, &i)))
		return rc;
	switch (t) {
	case DJ_S:
		rc = jl_str(l, &s);
		break;
	case DJ_N:
		rc = number(p, "an \"N\" value", &s);
		break;
	case DJ_B:
		rc = jl_b64str(l, "a \"B\" value", &s);
		break;
	case DJ_BOOL:
		if (!literal(p, "true"))
			p->nodes[i].text = "true";
		else if (!literal(p, "false"))
			p->nodes[i].text = "false";
		else
			return fail(p, "column %zu: \"BOOL\" must be true or false", jl_col(l));
		p->nodes[i].where = IN_STATIC;
		break;
	case DJ_NULL:
		if (literal(p, "true"))
			return fail(p, "column %zu: \"NULL\" must be true", jl_col(l));
		s = (jl_span){ l->b.n, 0 };
		break;
	case DJ_SS: case DJ_NS: case DJ_BS:
		rc = set_members(p, (dj_type)t, &first);
		break;
	case DJ_M:
		jl_ws(l);
		if (!jl_eat(l, '{'))
			return fail(p, "column %zu: an \"M\" map must be an object", jl_col(l));
		rc = members(p, depth + 1, "map key", &first);
		break;
	default:
		rc = list_members(p, depth + 1, &first);
		break;
	}
	if (rc)
		return rc;
	if (jl_eat(l, ','))
		return fail(p, "column %zu: a value holds one type descriptor, not more", jl_col(l) - 1);
	if (!jl_eat(l, '}'))
		return fail(p, "column %zu: want '}'", jl_col(l));
	if (t <= DJ_NULL && t != DJ_BOOL) {
		p->nodes[i].bytes = s;
	} else if (t >= DJ_SS) {
		p->nodes[i].child = first;
		p->nodes[i].where = IN_LINE;
		p->nodes[i].bytes = (jl_span){ (size_t)(start - l->start), (size_t)(l->s - start) };
	}
	*out = i;
	return 0;
}

int dj_parse_line(dj_parser *p, const char *line, size_t n, const dj_value **values, uint32_t *first,
		  char **err)
{
	jl_lexer *l = &p->lx;
	bool seen = false;
	uint32_t item = DJ_NONE;
	int rc;

	jl_begin(l, line, n, err);
	p->nn = 0;
	if (!jl_eat(l, '{'))
		return fail(p, "column %zu: want '{'", jl_col(l));
	if (!jl_eat(l, '}')) {
		do {
			jl_span k;
			size_t kcol, save = l->b.n;
			int keylen;

			jl_ws(l);
			kcol = jl_col(l);
			if ((rc = jl_str(l, &k)))
				return rc;
			keylen = (int)(l->s - (l->start + kcol - 1));
			if (k.n != 4 || memcmp(l->b.p + k.off, "Item", 4))
				return fail(p, "column %zu: unknown key %.*s (a line of a full export holds \"Item\" only)",
					    kcol, keylen, l->start + kcol - 1);
			l->b.n = save;
			if (seen)
				return fail(p, "column %zu: \"Item\" given twice", kcol);
			seen = true;
			if (!jl_eat(l, ':'))
				return fail(p, "column %zu: want ':'", jl_col(l));
			if (!jl_eat(l, '{'))
				return fail(p, "column %zu: \"Item\" must be an object of attributes", jl_col(l));
			if ((rc = members(p, 0, "attribute", &item)))
				return rc;
		} while (jl_eat(l, ','));
		if (!jl_eat(l, '}'))
			return fail(p, "column %zu: want ',' or '}'", jl_col(l));
	}
	if (!seen)
		return fail(p, "no \"Item\" (a line of a full export is {\"Item\":{...}})");
	jl_ws(l);
	if (l->s != l->end)
		return fail(p, "column %zu: text after the object", jl_col(l));
	if (grow((void **)&p->out, &p->outcap, p->nn ? p->nn : 1, sizeof *p->out))
		return -ENOMEM;
	for (size_t i = 0; i < p->nn; i++) {
		const struct node *nd = &p->nodes[i];
		dj_value *v = &p->out[i];

		v->type = nd->type;
		v->name = (dj_bytes){ l->b.p + nd->name.off, nd->name.n };
		if (nd->where == IN_STATIC)
			v->bytes = (dj_bytes){ nd->text, strlen(nd->text) };
		else if (nd->where == IN_LINE)
			v->bytes = (dj_bytes){ line + nd->bytes.off, nd->bytes.n };
		else
			v->bytes = (dj_bytes){ l->b.p + nd->bytes.off, nd->bytes.n };
		v->child = nd->child;
		v->next = nd->next;
		v->column = nd->column;
	}
	*values = p->out;
	*first = item;
	return (int)p->nn;
}
