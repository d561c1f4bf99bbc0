/* rx.c — cbt's regular expressions (cellstore.h, "Regular expressions") on PCRE2, the store's only PCRE2
 * user. The parsed tree (rx_parse.h) is written out as a PCRE2 pattern using only \xHH, [...] of \xHH,
 * groups, | and quantifiers, so nothing of PCRE2's own syntax, locale tables or flags decides what
 * matches. Groups are "(" with PCRE2_NO_AUTO_CAPTURE (nested "(?:" count against a fixed PCRE2 limit of a
 * few hundred). A match is anchored at both ends: PCRE2's backtracking matcher first, for a bounded
 * number of steps, then its DFA matcher, which never backtracks (time polynomial in the subject). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "cellstore.h"
#include "mem.h"
#include "rx_parse.h"
#include "rx_set.h"

#define RX_BACKTRACK_STEPS 100000 /* steps of the backtracking matcher before the DFA matcher decides */

struct cs_regex {
	pcre2_general_context *gc;
	pcre2_code *code;
	pcre2_match_data *md;
	pcre2_match_context *mc;  /* the DFA matcher's: no limits */
	pcre2_match_context *bmc; /* the backtracking matcher's: a bounded number of steps */
	int *ws;
	size_t wsn;
};

/* ---- The PCRE2 pattern ------------------------------------------------------------------------------ */

typedef struct buf {
	char *p;
	size_t n, cap;
	bool oom;
} buf;

static void put(buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		char *q;
		while (cap < b->n + n + 1)
			cap *= 2;
		if (!(q = mem_realloc(b->p, cap))) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void puts_(buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void put_byte(buf *b, unsigned c)
{
	char x[5];

	if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) {
		x[0] = (char)c;
		put(b, x, 1);
		return;
	}
	x[0] = '\\';
	x[1] = 'x';
	x[2] = "0123456789abcdef"[c >> 4];
	x[3] = "0123456789abcdef"[c & 15];
	put(b, x, 4);
}

static void put_set(buf *b, const uint8_t *set)
{
	uint8_t s[32];
	unsigned count = 0;

	for (unsigned c = 0; c < 256; c++)
		count += rx_set_has(set, c);
	if (count == 0) {
		puts_(b, "[^\\x00-\\xff]"); /* matches no byte */
		return;
	}
	if (count == 256) {
		puts_(b, "(?s:.)");
		return;
	}
	memcpy(s, set, 32);
	if (count == 1) {
		for (unsigned c = 0; c < 256; c++)
			if (rx_set_has(s, c))
				put_byte(b, c);
		return;
	}
	puts_(b, count > 128 ? "[^" : "[");
	if (count > 128)
		rx_set_not(s);
	for (unsigned c = 0; c < 256; c++) {
		unsigned e = c;
		if (!rx_set_has(s, c))
			continue;
		while (e + 1 < 256 && rx_set_has(s, e + 1))
			e++;
		put_byte(b, c);
		if (e > c) {
			if (e > c + 1)
				puts_(b, "-");
			put_byte(b, e);
		}
		c = e;
	}
	puts_(b, "]");
}

#define WORD "[0-9A-Za-z_]"

static void emit(buf *b, const rx_node *nd)
{
	char q[32];

	switch (nd->op) {
	case RX_OP_SET: put_set(b, nd->set); break;
	case RX_OP_EMPTY: break;
	case RX_OP_BOT: puts_(b, "\\A"); break;
	case RX_OP_EOT: puts_(b, "\\z"); break;
	case RX_OP_BOL: puts_(b, "(?m:^)"); break; /* PCRE2_ALT_CIRCUMFLEX: also after a final '\n', as Go */
	case RX_OP_EOL: puts_(b, "(?m:$)"); break;
	case RX_OP_WB:
		puts_(b, "((?<=" WORD ")(?!" WORD ")|(?<!" WORD ")(?=" WORD "))");
		break;
	case RX_OP_NWB:
		puts_(b, "((?<=" WORD ")(?=" WORD ")|(?<!" WORD ")(?!" WORD "))");
		break;
	case RX_OP_CAT:
		for (size_t i = 0; i < nd->nsub; i++)
			emit(b, nd->sub[i]);
		break;
	case RX_OP_ALT:
		puts_(b, "(");
		for (size_t i = 0; i < nd->nsub; i++) {
			if (i)
				puts_(b, "|");
			emit(b, nd->sub[i]);
		}
		puts_(b, ")");
		break;
	case RX_OP_REP:
		if (nd->sub[0]->op == RX_OP_SET) {
			emit(b, nd->sub[0]);
		} else {
			puts_(b, "(");
			emit(b, nd->sub[0]);
			puts_(b, ")");
		}
		if (!nd->counted)
			puts_(b, nd->min ? "+" : nd->max == 1 ? "?" : "*");
		else if (nd->max == nd->min)
			snprintf(q, sizeof q, "{%d}", nd->min), puts_(b, q);
		else if (nd->max < 0)
			snprintf(q, sizeof q, "{%d,}", nd->min), puts_(b, q);
		else
			snprintf(q, sizeof q, "{%d,%d}", nd->min, nd->max), puts_(b, q);
		break;
	default: /* markers never reach the tree */
		break;
	}
}

static void *pcre_alloc(PCRE2_SIZE n, void *data)
{
	(void)data;
	return mem_malloc(n);
}

static void pcre_free(void *p, void *data)
{
	(void)data;
	free(p);
}

void cs_regex_free(cs_regex *re)
{
	if (!re)
		return;
	pcre2_match_data_free(re->md);
	pcre2_match_context_free(re->mc);
	pcre2_match_context_free(re->bmc);
	pcre2_code_free(re->code);
	pcre2_general_context_free(re->gc);
	free(re->ws);
	free(re);
}

int cs_regex_compile(const char *pattern, cs_regex **out, cs_regex_error *err)
{
	cs_regex_error spare;
	pcre2_compile_context *cc = NULL;
	rx_parsed t = { 0 };
	buf b = { 0 };
	cs_regex *re;
	int rc, e;
	PCRE2_SIZE eoff;

	*out = NULL;
	if (!err)
		err = &spare;
	if (!(re = mem_calloc(1, sizeof *re)))
		return -ENOMEM;
	if ((rc = rx_parse(pattern, &t, err)))
		goto out;
	/* Not PCRE2_ENDANCHORED: PCRE2 10.42's DFA matcher applies it to lookaheads too ((?=a)ab fails). */
	puts_(&b, "(");
	emit(&b, t.root);
	puts_(&b, ")\\z");
	rc = -ENOMEM;
	if (b.oom || !(re->gc = pcre2_general_context_create(pcre_alloc, pcre_free, NULL)) ||
	    !(cc = pcre2_compile_context_create(re->gc)) || !(re->mc = pcre2_match_context_create(re->gc)) ||
	    !(re->md = pcre2_match_data_create(1, re->gc)) || !(re->bmc = pcre2_match_context_create(re->gc)))
		goto out;
	pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
	pcre2_set_parens_nest_limit(cc, 4 * RX_MAX_NEST + 16);
	/* A key is at most a few KiB: what the DFA matcher does is bounded by that, not by these limits. */
	pcre2_set_match_limit(re->mc, UINT32_MAX);
	pcre2_set_depth_limit(re->mc, UINT32_MAX);
	pcre2_set_heap_limit(re->mc, UINT32_MAX);
	pcre2_set_match_limit(re->bmc, RX_BACKTRACK_STEPS);
	pcre2_set_heap_limit(re->bmc, 1024); /* KiB */
	re->code = pcre2_compile((PCRE2_SPTR)b.p, b.n, PCRE2_ANCHORED | PCRE2_ALT_CIRCUMFLEX | PCRE2_NO_AUTO_CAPTURE |
				 PCRE2_NEVER_UTF | PCRE2_NEVER_UCP | PCRE2_NO_UTF_CHECK, &e, &eoff, cc);
	if (!re->code) {
		if (e == PCRE2_ERROR_NOMEMORY || e == PCRE2_ERROR_HEAP_FAILED) {
			rc = -ENOMEM;
		} else { /* our syntax is PCRE2's: only its limits are left */
			err->what = RX_E_LARGE;
			err->off = 0;
			err->len = strlen(pattern);
			rc = -EINVAL;
		}
		goto out;
	}
	re->wsn = 1000;
	if (!(re->ws = mem_malloc(re->wsn * sizeof *re->ws)))
		goto out;
	*out = re;
	re = NULL;
	rc = 0;
out:
	rx_parse_free(&t);
	free(b.p);
	pcre2_compile_context_free(cc);
	cs_regex_free(re);
	return rc;
}

int cs_regex_match(cs_regex *re, const void *p, size_t n)
{
	/* The backtracking matcher first: it answers most patterns in a few steps where the DFA matcher, which
	 * keeps every state a counted repeat can be in, takes seconds on a 4 KiB key (a*[a-z]{0,1000}). Past
	 * its step limit (a pattern it would take exponential time on), the DFA matcher decides: both match
	 * the same anchored pattern, so they agree. */
	int rc = pcre2_match(re->code, n ? p : (const void *)"", n, 0, 0, re->md, re->bmc);

	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	if (rc == PCRE2_ERROR_NOMEMORY)
		return -ENOMEM;
	for (;;) { /* PCRE2_ERROR_MATCHLIMIT, _DEPTHLIMIT, _HEAPLIMIT */
		int *ws;

		rc = pcre2_dfa_match(re->code, n ? p : (const void *)"", n, 0, 0, re->md, re->mc, re->ws, re->wsn);

		if (rc >= 0) /* 0: more matches than the match data holds */
			return 1;
		if (rc == PCRE2_ERROR_NOMATCH)
			return 0;
		if (rc != PCRE2_ERROR_DFA_WSSIZE || re->wsn >= (1u << 26))
			return -ENOMEM;
		if (!(ws = mem_realloc(re->ws, 2 * re->wsn * sizeof *ws)))
			return -ENOMEM;
		re->ws = ws;
		re->wsn *= 2;
	}
}
