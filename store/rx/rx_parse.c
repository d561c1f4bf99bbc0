/* rx_parse.c — the parser of cbt's regular expressions (rx_parse.h): Go's regexp/syntax parser (the one
 * in the Bigtable emulator, rsc.io/binaryregexp) step by step, so that a pattern is refused where Go
 * refuses it, with Go's words, and first for the same reason. Its tree has sets of bytes for leaves (a
 * character class, a literal, '.', \C), with case folding and Unicode classes resolved (rx_set.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rx_parse.h"
#include "mem.h"
#include "rx_set.h"

/* Go's error words (regexp/syntax ErrorCode). */
#define E_MISSING_BRACKET "missing closing ]"
#define E_MISSING_PAREN "missing closing )"
#define E_UNEXPECTED_PAREN "unexpected )"
#define E_INVALID_ESCAPE "invalid escape sequence"
#define E_TRAILING_BACKSLASH "trailing backslash at end of expression"
#define E_CHAR_RANGE "invalid character class range"
#define E_NAMED_CAPTURE "invalid named capture"
#define E_PERL_OP "invalid or unsupported Perl syntax"
#define E_REPEAT_OP "invalid nested repetition operator"
#define E_REPEAT_ARG "missing argument to repetition operator"
#define E_REPEAT_SIZE "invalid repeat count"
#define E_NESTING "expression nests too deeply"

enum { MAX_REPEAT = 1000, MAX_RUNE = 0x10FFFF, NONE = -1 };

/* Parse flags (Go's, with OneLine turned round as "multi-line"). */
enum { F_FOLD = 1, F_MULTI = 2, F_DOTNL = 4, F_UNGREEDY = 8 };

typedef rx_node node;

typedef struct parser {
	const char *s;
	size_t n;
	unsigned flags;
	node **stack;
	size_t nstack, capstack;
	node **all; /* every node, freed with the tree */
	size_t nall, capall;
	int depth;  /* open parentheses */
	cs_regex_error *err;
} parser;

static int fail(parser *p, const char *what, size_t off, size_t len)
{
	p->err->what = what;
	p->err->off = off;
	p->err->len = len;
	return -EINVAL;
}

static node *new_node(parser *p, enum rx_op op)
{
	node *nd;

	if (p->nall == p->capall) {
		size_t cap = p->capall ? 2 * p->capall : 32;
		node **a = mem_realloc(p->all, cap * sizeof *a);
		if (!a)
			return NULL;
		p->all = a;
		p->capall = cap;
	}
	if (!(nd = mem_calloc(1, sizeof *nd)))
		return NULL;
	nd->op = op;
	nd->flags = p->flags;
	p->all[p->nall++] = nd;
	return nd;
}

static int push(parser *p, node *nd)
{
	if (!nd)
		return -ENOMEM;
	if (p->nstack == p->capstack) {
		size_t cap = p->capstack ? 2 * p->capstack : 16;
		node **s = mem_realloc(p->stack, cap * sizeof *s);
		if (!s)
			return -ENOMEM;
		p->stack = s;
		p->capstack = cap;
	}
	p->stack[p->nstack++] = nd;
	return 0;
}

static int push_op(parser *p, enum rx_op op)
{
	return push(p, new_node(p, op));
}

static int push_set(parser *p, const uint8_t *set)
{
	node *nd = new_node(p, RX_OP_SET);

	if (nd)
		memcpy(nd->set, set, 32);
	return push(p, nd);
}

static int literal(parser *p, long r)
{
	uint8_t set[32] = { 0 };

	rx_set_range(set, r, r, p->flags & F_FOLD);
	return push_set(p, set);
}

/* Replace the nodes above the topmost marker by one node OP of them (Go's concat() and alternate()). */
static int collapse(parser *p, enum rx_op op)
{
	size_t i = p->nstack;
	node *nd;

	while (i > 0 && p->stack[i - 1]->op < RX_OP_PSEUDO)
		i--;
	if (p->nstack - i == 1)
		return 0;
	if (p->nstack == i) /* an empty concatenation matches the empty string (no alternation is empty) */
		return push_op(p, RX_OP_EMPTY);
	if (!(nd = new_node(p, op)) || !(nd->sub = mem_malloc((p->nstack - i) * sizeof *nd->sub)))
		return -ENOMEM;
	nd->nsub = p->nstack - i;
	memcpy(nd->sub, p->stack + i, nd->nsub * sizeof *nd->sub);
	p->nstack = i;
	return push(p, nd);
}

/* Go's swapVerticalBar(): if a '|' is below the top, move the top below it. */
static bool swap_vbar(parser *p)
{
	size_t n = p->nstack;

	if (n >= 2 && p->stack[n - 2]->op == RX_OP_VBAR) {
		node *t = p->stack[n - 1];
		p->stack[n - 1] = p->stack[n - 2];
		p->stack[n - 2] = t;
		return true;
	}
	return false;
}

static int vertical_bar(parser *p)
{
	int rc = collapse(p, RX_OP_CAT);

	if (rc == 0 && !swap_vbar(p))
		rc = push_op(p, RX_OP_VBAR);
	return rc;
}

/* Close the alternation above the topmost marker: at a ')' and at the end. */
static int close_alt(parser *p)
{
	int rc = collapse(p, RX_OP_CAT);

	if (rc)
		return rc;
	if (swap_vbar(p))
		p->nstack--;
	return collapse(p, RX_OP_ALT);
}

static int right_paren(parser *p)
{
	int rc = close_alt(p);
	node *top;

	if (rc)
		return rc;
	if (p->nstack < 2 || p->stack[p->nstack - 2]->op != RX_OP_LPAREN)
		return fail(p, E_UNEXPECTED_PAREN, 0, p->n);
	top = p->stack[--p->nstack];
	p->flags = p->stack[--p->nstack]->flags;
	p->depth--;
	return push(p, top);
}

static int left_paren(parser *p)
{
	if (++p->depth > RX_MAX_NEST)
		return fail(p, E_NESTING, 0, p->n);
	return push_op(p, RX_OP_LPAREN); /* remembers the flags to restore */
}

/* Go's repeatIsValid(): nested counted repetitions make at most N copies of anything. */
static bool repeat_valid(const node *nd, int n)
{
	if (nd->op == RX_OP_REP && nd->counted) {
		int m = nd->max;
		if (m == 0)
			return true;
		if (m < 0)
			m = nd->min;
		if (m > n)
			return false;
		if (m > 0)
			n /= m;
	}
	for (size_t i = 0; i < nd->nsub; i++)
		if (!repeat_valid(nd->sub[i], n))
			return false;
	return true;
}

/* Apply a repetition (Go's parser.repeat()): BEFORE is where its operator starts, *AFTER just past it. */
static int repeat(parser *p, bool counted, int min, int max, size_t before, size_t *after, long last_repeat)
{
	node *nd, *sub;

	if (*after < p->n && p->s[*after] == '?')
		(*after)++; /* non-greedy: the same strings match */
	if (last_repeat != NONE)
		return fail(p, E_REPEAT_OP, (size_t)last_repeat, *after - (size_t)last_repeat);
	if (p->nstack == 0 || p->stack[p->nstack - 1]->op >= RX_OP_PSEUDO)
		return fail(p, E_REPEAT_ARG, before, *after - before);
	sub = p->stack[p->nstack - 1];
	if (!(nd = new_node(p, RX_OP_REP)) || !(nd->sub = mem_malloc(sizeof *nd->sub)))
		return -ENOMEM;
	nd->sub[0] = sub;
	nd->nsub = 1;
	nd->counted = counted;
	nd->min = min;
	nd->max = max;
	p->stack[p->nstack - 1] = nd;
	if (counted && (min >= 2 || max >= 2) && !repeat_valid(nd, MAX_REPEAT))
		return fail(p, E_REPEAT_SIZE, before, *after - before);
	return 0;
}

/* Go's parseInt(): a decimal without leading zeros; -1 if it is 10^8 or more. */
static bool parse_int(parser *p, size_t *i, int *v)
{
	size_t t = *i;

	if (t >= p->n || p->s[t] < '0' || p->s[t] > '9')
		return false;
	if (p->n - t >= 2 && p->s[t] == '0' && p->s[t + 1] >= '0' && p->s[t + 1] <= '9')
		return false;
	*v = 0;
	for (; t < p->n && p->s[t] >= '0' && p->s[t] <= '9'; t++)
		if (*v >= 0)
			*v = *v >= 100000000 ? -1 : *v * 10 + (p->s[t] - '0');
	*i = t;
	return true;
}

/* Go's parseRepeat() at the '{' at *I: {n}, {n,} or {n,m}. False: not a repetition ('{' is a literal). */
static bool parse_repeat(parser *p, size_t *i, int *min, int *max)
{
	size_t t = *i + 1;

	if (!parse_int(p, &t, min) || t >= p->n)
		return false;
	if (p->s[t] != ',') {
		*max = *min;
	} else {
		if (++t >= p->n)
			return false;
		if (p->s[t] == '}')
			*max = -1;
		else if (!parse_int(p, &t, max))
			return false;
		else if (*max < 0)
			*min = -1;
	}
	if (t >= p->n || p->s[t] != '}')
		return false;
	*i = t + 1;
	return true;
}

static int unhex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool is_alnum(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* Go's parseEscape() at the '\' at *I: the rune it stands for. */
static int parse_escape(parser *p, size_t *i, long *r)
{
	size_t t = *i + 1;
	int c;

	if (t >= p->n)
		return fail(p, E_TRAILING_BACKSLASH, p->n, 0);
	c = (unsigned char)p->s[t++];
	switch (c) {
	case '1': case '2': case '3': case '4': case '5': case '6': case '7':
		if (t >= p->n || p->s[t] < '0' || p->s[t] > '7')
			break; /* a backreference: not supported */
		/* fall through */
	case '0':
		*r = c - '0';
		for (int k = 1; k < 3 && t < p->n && p->s[t] >= '0' && p->s[t] <= '7'; k++)
			*r = *r * 8 + (p->s[t++] - '0');
		*i = t;
		return 0;
	case 'x':
		if (t >= p->n)
			break;
		c = (unsigned char)p->s[t++];
		if (c == '{') {
			int nhex = 0;
			long v = 0;
			for (;;) {
				if (t >= p->n)
					goto bad;
				c = (unsigned char)p->s[t++];
				if (c == '}')
					break;
				if (unhex(c) < 0 || (v = v * 16 + unhex(c)) > MAX_RUNE)
					goto bad;
				nhex++;
			}
			if (nhex == 0)
				break;
			*r = v;
			*i = t;
			return 0;
		} else {
			int x = unhex(c), y = t < p->n ? unhex((unsigned char)p->s[t++]) : -1;
			if (x < 0 || y < 0)
				break;
			*r = x * 16 + y;
			*i = t;
			return 0;
		}
	case 'a': *r = '\a'; *i = t; return 0;
	case 'f': *r = '\f'; *i = t; return 0;
	case 'n': *r = '\n'; *i = t; return 0;
	case 'r': *r = '\r'; *i = t; return 0;
	case 't': *r = '\t'; *i = t; return 0;
	case 'v': *r = '\v'; *i = t; return 0;
	default:
		if (c < 0x80 && !is_alnum(c)) { /* escaped punctuation is itself (a byte >= 0x80 is not) */
			*r = c;
			*i = t;
			return 0;
		}
	}
bad:
	return fail(p, E_INVALID_ESCAPE, *i, t - *i);
}

/* Go's parseUnicodeClass() at the '\' of \pN, \p{Name}, \PN, \P{^Name} at *I. */
static int unicode_escape(parser *p, size_t *i, uint8_t *set)
{
	size_t t = *i + 2, name, namen, seqn;
	int sign = p->s[*i + 1] == 'P' ? -1 : 1;
	uint8_t g[32];

	if (t < p->n && p->s[t] == '{') {
		const char *end = memchr(p->s + *i, '}', p->n - *i);
		if (!end)
			return fail(p, E_CHAR_RANGE, *i, p->n - *i);
		seqn = (size_t)(end - p->s) + 1 - *i;
		name = *i + 3;
		namen = (size_t)(end - p->s) - name;
	} else {
		if (t < p->n)
			t++;
		seqn = t - *i;
		name = *i + 2;
		namen = t - name;
	}
	if (namen && p->s[name] == '^') {
		sign = -sign;
		name++;
		namen--;
	}
	if (!rx_set_unicode(g, p->s + name, namen, p->flags & F_FOLD))
		return fail(p, E_CHAR_RANGE, *i, seqn);
	if (sign < 0)
		rx_set_not(g);
	rx_set_or(set, g);
	*i += seqn;
	return 0;
}

/* \d \D \s \S \w \W at *I: true (and added to SET) if that is what is there. */
static bool perl_escape(parser *p, size_t *i, uint8_t *set)
{
	if (p->n - *i < 2 || p->s[*i] != '\\' || !rx_set_perl(set, p->s[*i + 1], p->flags & F_FOLD))
		return false;
	*i += 2;
	return true;
}

/* One character of a class at *T (escaped or not) into *R; START is where the class began, for the error
 * of a class left open. */
static int class_char(parser *p, size_t *t, size_t start, long *r)
{
	if (*t >= p->n)
		return fail(p, E_MISSING_BRACKET, start, p->n - start);
	if (p->s[*t] == '\\')
		return parse_escape(p, t, r);
	*r = (unsigned char)p->s[(*t)++];
	return 0;
}

/* Go's parseClass() at the '[' at *I. */
static int parse_class(parser *p, size_t *i)
{
	size_t start = *i, t = *i + 1;
	uint8_t set[32] = { 0 };
	bool negated = false, first = true;
	int rc;

	if (t < p->n && p->s[t] == '^') {
		negated = true;
		t++;
	}
	while (t >= p->n || p->s[t] != ']' || first) {
		size_t rng = t;
		long lo, hi;

		first = false;
		if (p->n - t > 2 && p->s[t] == '[' && p->s[t + 1] == ':') { /* [:alpha:], [:^alpha:] */
			const char *end = memmem(p->s + t + 2, p->n - t - 2, ":]", 2);
			if (end) {
				size_t nn = (size_t)(end - p->s) + 2 - t;
				const char *nm = p->s + t + 2;
				size_t len = nn - 4;
				int sign = 1;
				if (len && *nm == '^') {
					sign = -1;
					nm++;
					len--;
				}
				if (!rx_set_posix(set, nm, len, sign, p->flags & F_FOLD))
					return fail(p, E_CHAR_RANGE, t, nn);
				t += nn;
				continue;
			}
		}
		if (p->n - t >= 2 && p->s[t] == '\\' && (p->s[t + 1] == 'p' || p->s[t + 1] == 'P')) {
			if ((rc = unicode_escape(p, &t, set)))
				return rc;
			continue;
		}
		if (perl_escape(p, &t, set))
			continue;
		if ((rc = class_char(p, &t, start, &lo)))
			return rc;
		hi = lo;
		if (p->n - t >= 2 && p->s[t] == '-' && p->s[t + 1] != ']') {
			t++;
			if ((rc = class_char(p, &t, start, &hi)))
				return rc;
			if (hi < lo)
				return fail(p, E_CHAR_RANGE, rng, t - rng);
		}
		rx_set_range(set, lo, hi, p->flags & F_FOLD);
	}
	if (negated)
		rx_set_not(set);
	*i = t + 1;
	return push_set(p, set);
}

/* Go's parsePerlFlags() at the "(?" at *I: (?P<name>, (?flags), (?flags:. */
static int perl_flags(parser *p, size_t *i)
{
	size_t t = *i;
	unsigned set = 0, clear = 0;
	int sign = 1;
	bool saw = false;

	if (p->n - t > 4 && p->s[t + 2] == 'P' && p->s[t + 3] == '<') {
		const char *end = memchr(p->s + t, '>', p->n - t);
		size_t e;
		int rc;
		if (!end)
			return fail(p, E_NAMED_CAPTURE, t, p->n - t);
		e = (size_t)(end - p->s);
		for (size_t k = t + 4; k <= e; k++)
			if (k == e ? k == t + 4 : !is_alnum((unsigned char)p->s[k]) && p->s[k] != '_')
				return fail(p, E_NAMED_CAPTURE, t, e + 1 - t);
		if ((rc = left_paren(p)))
			return rc;
		*i = e + 1;
		return 0;
	}
	for (t += 2; t < p->n;) {
		unsigned f = 0;
		int c = (unsigned char)p->s[t++];

		switch (c) {
		case 'i': f = F_FOLD; break;
		case 'm': f = F_MULTI; break;
		case 's': f = F_DOTNL; break;
		case 'U': f = F_UNGREEDY; break;
		case '-':
			if (sign < 0)
				goto bad;
			sign = -1;
			saw = false;
			continue;
		case ':':
		case ')':
			if (sign < 0 && !saw)
				goto bad;
			if (c == ':') {
				int rc = left_paren(p);
				if (rc)
					return rc;
			}
			p->flags = (p->flags | set) & ~clear;
			*i = t;
			return 0;
		default:
			goto bad;
		}
		if (sign > 0)
			set |= f;
		else
			clear |= f;
		saw = true;
	}
bad:
	return fail(p, E_PERL_OP, *i, t - *i);
}

/* Go's Parse() with the Perl flags: the tree of P->s, or an error in P->err. */
static int parse(parser *p, node **root)
{
	size_t i = 0;
	long last_repeat = NONE;
	int rc = 0;

	while (i < p->n && rc == 0) {
		long rep = NONE;
		unsigned char c = (unsigned char)p->s[i];
		uint8_t set[32] = { 0 };
		size_t before = i, after;
		int min, max;
		long r;

		switch (c) {
		case '(':
			if (i + 1 < p->n && p->s[i + 1] == '?') {
				rc = perl_flags(p, &i);
			} else {
				rc = left_paren(p);
				i++;
			}
			break;
		case '|':
			rc = vertical_bar(p);
			i++;
			break;
		case ')':
			rc = right_paren(p);
			i++;
			break;
		case '^':
			rc = push_op(p, p->flags & F_MULTI ? RX_OP_BOL : RX_OP_BOT);
			i++;
			break;
		case '$':
			rc = push_op(p, p->flags & F_MULTI ? RX_OP_EOL : RX_OP_EOT);
			i++;
			break;
		case '.':
			rx_set_not(set);
			if (!(p->flags & F_DOTNL))
				set[1] &= (uint8_t)~(1u << 2); /* not '\n' */
			rc = push_set(p, set);
			i++;
			break;
		case '[':
			rc = parse_class(p, &i);
			break;
		case '*':
		case '+':
		case '?':
			after = i + 1;
			rc = repeat(p, false, c == '+', c == '?' ? 1 : -1, before, &after, last_repeat);
			rep = (long)before;
			i = after;
			break;
		case '{':
			after = i;
			if (!parse_repeat(p, &after, &min, &max)) {
				rc = literal(p, '{');
				i++;
				break;
			}
			if (min < 0 || min > MAX_REPEAT || max > MAX_REPEAT || (max >= 0 && min > max)) {
				rc = fail(p, E_REPEAT_SIZE, before, after - before);
				break;
			}
			rc = repeat(p, true, min, max, before, &after, last_repeat);
			rep = (long)before;
			i = after;
			break;
		case '\\':
			if (i + 1 < p->n) {
				const char *e;
				switch (p->s[i + 1]) {
				case 'A': rc = push_op(p, RX_OP_BOT); i += 2; goto next;
				case 'z': rc = push_op(p, RX_OP_EOT); i += 2; goto next;
				case 'b': rc = push_op(p, RX_OP_WB); i += 2; goto next;
				case 'B': rc = push_op(p, RX_OP_NWB); i += 2; goto next;
				case 'C':
					rx_set_not(set);
					rc = push_set(p, set);
					i += 2;
					goto next;
				case 'Q': /* \Q...\E: literal bytes */
					e = memmem(p->s + i, p->n - i, "\\E", 2);
					for (size_t k = i + 2; rc == 0 && k < (e ? (size_t)(e - p->s) : p->n); k++)
						rc = literal(p, (unsigned char)p->s[k]);
					i = e ? (size_t)(e - p->s) + 2 : p->n;
					goto next;
				case 'p':
				case 'P':
					if ((rc = unicode_escape(p, &i, set)) == 0)
						rc = push_set(p, set);
					goto next;
				}
				if (perl_escape(p, &i, set)) {
					rc = push_set(p, set);
					break;
				}
			}
			if ((rc = parse_escape(p, &i, &r)) == 0)
				rc = literal(p, r);
			break;
		default:
			rc = literal(p, c);
			i++;
		}
next:
		last_repeat = rep;
	}
	if (rc)
		return rc;
	if ((rc = close_alt(p)))
		return rc;
	if (p->nstack != 1)
		return fail(p, E_MISSING_PAREN, 0, p->n);
	*root = p->stack[0];
	return 0;
}

int rx_parse(const char *pattern, rx_parsed *out, cs_regex_error *err)
{
	parser p = { .s = pattern, .n = strlen(pattern), .err = err };
	node *root = NULL;
	int rc = parse(&p, &root);

	free(p.stack);
	out->root = rc ? NULL : root;
	out->all = p.all;
	out->n = p.nall;
	if (rc)
		rx_parse_free(out);
	return rc;
}

void rx_parse_free(rx_parsed *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->all[i]->sub);
		free(t->all[i]);
	}
	free(t->all);
	t->all = NULL;
	t->n = 0;
	t->root = NULL;
}
