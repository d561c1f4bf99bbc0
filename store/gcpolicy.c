/* gcpolicy.c — GC policies in cbt's syntax: a hand-written lexer and recursive-descent parser that
 * accepts exactly what cbt 1.23.2 accepts, a canonical printer, cbt's `ls` rendering, and evaluation.
 */
#include "gcpolicy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

/* cbt has no nesting limit; we cap parentheses so that parsing, printing, freeing and evaluating (all
 * recursive over parenthesised groups only) stay within a few KiB of stack whatever the input. */
#define GCP_MAX_DEPTH 64

/* cbt parses maxversions with strconv.ParseUint(s, 10, 16) and a duration's number with ParseUint(s, 10,
 * 32); a duration must also fit time.Duration (int64 nanoseconds). */
#define GCP_MAX_VERSIONS 65535u
#define GCP_MAX_DURATION_NUMBER 4294967295u

/* What gcp_parse_stored() takes: any age whose microseconds fit an int64 (gcp_collects() computes them),
 * some 292,000 years; Bigtable's GcRule.max_age (a Duration) holds up to 10,000 years. */
#define GCP_MAX_AGE_MS (INT64_MAX / 1000)


/* Invariant: a chain has n >= 2 terms and n - 1 operators, applied strictly left to right — cbt gives
 * "and" and "or" the same precedence and folds to the left, so "a or b and c" is "(a or b) and c".
 * Keeping a chain flat (rather than a left-leaning binary tree) bounds recursion by the parenthesis depth
 * instead of by the number of terms. A chain's terms are never GCP_NEVER: "never" is only ever a whole
 * policy. */
struct gcp {
	enum gcp_kind kind;
	union {
		uint32_t max_versions; /* collect version indexes >= this */
		int64_t max_age_ms;    /* collect cells older than this; >= 0 */
		struct {
			size_t n, cap;
			struct gcp **terms;
			unsigned char *ops; /* ops[i] joins the result so far with terms[i + 1] */
		} chain;
	};
};

/* ---- Growable string ---------------------------------------------------------------------------- */

struct sbuf {
	char *buf;
	size_t len, cap;
	bool oom; /* sticky: once set, every later append is a no-op and sb_finish() returns NULL */
};

static void sb_grow(struct sbuf *sb, size_t more)
{
	size_t want, cap;
	char *nb;

	if (sb->oom)
		return;
	if (more > SIZE_MAX - sb->len - 1) {
		sb->oom = true;
		return;
	}
	want = sb->len + more + 1;
	if (want <= sb->cap)
		return;
	cap = sb->cap ? sb->cap : 64;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	nb = mem_realloc(sb->buf, cap);
	if (!nb) {
		sb->oom = true;
		return;
	}
	sb->buf = nb;
	sb->cap = cap;
}

static void sb_putn(struct sbuf *sb, const char *s, size_t n)
{
	sb_grow(sb, n);
	if (sb->oom)
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

static void sb_puts(struct sbuf *sb, const char *s)
{
	sb_putn(sb, s, strlen(s));
}

static void sb_putc(struct sbuf *sb, char c)
{
	sb_putn(sb, &c, 1);
}

__attribute__((format(printf, 2, 3)))
static void sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	/* Only short numeric pieces go through here. */
	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof tmp) {
		sb->oom = true;
		return;
	}
	sb_putn(sb, tmp, (size_t)n);
}

/* Returns the string (caller frees) or NULL on ENOMEM. An empty buffer gives "". */
static char *sb_finish(struct sbuf *sb)
{
	if (!sb->oom && !sb->buf)
		sb_putn(sb, "", 0);
	if (sb->oom) {
		free(sb->buf);
		sb->buf = NULL;
		return NULL;
	}
	return sb->buf;
}

/* ---- Characters as Go's unicode package sees them ----------------------------------------------- */

/* Length of the valid UTF-8 sequence at P (NUL-terminated) and its code point, or 0 if P does not start
 * one (overlong forms, surrogates and values above U+10FFFF are invalid, as Go reads them). */
static size_t utf8_decode(const unsigned char *p, uint32_t *cp)
{
	unsigned char lo = 0x80, hi = 0xBF;
	size_t need;
	uint32_t r;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xC2 && p[0] <= 0xDF) {
		need = 2;
		r = p[0] & 0x1F;
	} else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
		need = 3;
		r = p[0] & 0x0F;
		if (p[0] == 0xE0)
			lo = 0xA0;
		else if (p[0] == 0xED)
			hi = 0x9F;
	} else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
		need = 4;
		r = p[0] & 0x07;
		if (p[0] == 0xF0)
			lo = 0x90;
		else if (p[0] == 0xF4)
			hi = 0x8F;
	} else {
		return 0;
	}
	if (p[1] < lo || p[1] > hi)
		return 0;
	r = (r << 6) | (p[1] & 0x3F);
	for (size_t i = 2; i < need; i++) {
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
		r = (r << 6) | (p[i] & 0x3F);
	}
	*cp = r;
	return need;
}

/* Go's unicode.IsSpace, which cbt's tokenizer and strings.TrimSpace use: so a no-break space or an
 * ideographic space separates tokens exactly as ' ' does. */
static bool is_go_space(uint32_t c)
{
	switch (c) {
	case '\t': case '\n': case '\v': case '\f': case '\r': case ' ':
	case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
		return true;
	default:
		return c >= 0x2000 && c <= 0x200A;
	}
}

/* Bytes of whitespace at P (one character), or 0. */
static size_t space_len(const char *p)
{
	uint32_t c;
	size_t n = utf8_decode((const unsigned char *)p, &c);

	return n && c && is_go_space(c) ? n : 0;
}

static const char *skip_space(const char *p)
{
	size_t n;

	while ((n = space_len(p)) > 0)
		p += n;
	return p;
}

static bool is_ascii_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Quote N bytes of S for a message: printable ASCII and valid non-ASCII UTF-8 as they are, the rest
 * escaped, so the message stays on one line. Long inputs are cut (on a character boundary) with "...". */
static void sb_quote(struct sbuf *sb, const char *s, size_t n)
{
	const size_t max = 64;
	size_t i = 0;

	sb_putc(sb, '"');
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		uint32_t cp;
		size_t w;

		if (i >= max) {
			sb_putc(sb, '"');
			sb_puts(sb, "...");
			return;
		}
		if (c == '"' || c == '\\') {
			sb_putc(sb, '\\');
			sb_putc(sb, (char)c);
			w = 1;
		} else if (c == '\n') {
			sb_puts(sb, "\\n");
			w = 1;
		} else if (c == '\t') {
			sb_puts(sb, "\\t");
			w = 1;
		} else if (c == '\r') {
			sb_puts(sb, "\\r");
			w = 1;
		} else if (c < 0x20 || c == 0x7F) {
			sb_printf(sb, "\\x%02x", c);
			w = 1;
		} else if (c < 0x80) {
			sb_putc(sb, (char)c);
			w = 1;
		} else if ((w = utf8_decode((const unsigned char *)s + i, &cp)) > 0 && i + w <= n &&
			   !is_go_space(cp) && !(cp >= 0x80 && cp < 0xA0)) {
			sb_putn(sb, s + i, w);
		} else {
			sb_printf(sb, "\\x%02x", c);
			w = 1;
		}
		i += w;
	}
	sb_putc(sb, '"');
}

/* ---- Lexer: cbt's tokens ------------------------------------------------------------------------ */

/* Tokens are: a run of ASCII letters and digits (keywords, numbers, durations), "=", "(", ")", "&&",
 * "||", and end of input. cbt also lets non-ASCII letters and digits into a run, but no run holding one
 * is a valid keyword, number or duration, so rejecting them as characters accepts exactly the same set. */
enum tok_kind { T_END, T_WORD, T_EQ, T_LPAREN, T_RPAREN, T_AND, T_OR };

struct tok {
	enum tok_kind kind;
	const char *s; /* into the input */
	size_t len;
};

struct parser {
	const char *text; /* the whole input, for messages */
	const char *p;    /* next unread byte */
	struct tok peeked;
	bool have_peek;
	struct sbuf msg; /* the problem, once found */
	int rc;          /* 0, or the first error */
	bool wide;       /* gcp_parse_stored(): a duration's number may be anything up to GCP_MAX_AGE_MS */
};

/* Report the problem: "%q" in FMT inserts a quoted token (struct tok *), "%Q" a quoted (char *, size_t)
 * span, "%s" a plain string and "%u" an unsigned; nothing else. */
static int failv(struct parser *ps, const char *fmt, va_list ap)
{
	if (ps->rc)
		return ps->rc;
	for (const char *f = fmt; *f; f++) {
		if (*f != '%') {
			sb_putc(&ps->msg, *f);
			continue;
		}
		switch (*++f) {
		case 'q': {
			const struct tok *t = va_arg(ap, const struct tok *);

			if (t->kind == T_END)
				sb_puts(&ps->msg, "end of input");
			else
				sb_quote(&ps->msg, t->s, t->len);
			break;
		}
		case 'Q': {
			const char *s = va_arg(ap, const char *);
			size_t n = va_arg(ap, size_t);

			sb_quote(&ps->msg, s, n);
			break;
		}
		case 's':
			sb_puts(&ps->msg, va_arg(ap, const char *));
			break;
		case 'u':
			sb_printf(&ps->msg, "%u", va_arg(ap, unsigned));
			break;
		default:
			sb_putc(&ps->msg, '%');
			f--;
			break;
		}
	}
	ps->rc = -EINVAL;
	return ps->rc;
}

static int fail(struct parser *ps, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = failv(ps, fmt, ap);
	va_end(ap);
	return rc;
}

static int lex(struct parser *ps, struct tok *t)
{
	const char *p = skip_space(ps->p);
	uint32_t cp;
	size_t w;

	t->s = p;
	t->len = 0;
	if (!*p) {
		t->kind = T_END;
		ps->p = p;
		return 0;
	}
	if (*p == '=' || *p == '(' || *p == ')') {
		t->kind = *p == '=' ? T_EQ : *p == '(' ? T_LPAREN : T_RPAREN;
		t->len = 1;
	} else if (*p == '&' || *p == '|') {
		if (p[1] != *p)
			return fail(ps, "expected \"%s\", got a single %Q", *p == '&' ? "&&" : "||", p, (size_t)1);
		t->kind = *p == '&' ? T_AND : T_OR;
		t->len = 2;
	} else if (is_ascii_alnum(*p)) {
		t->kind = T_WORD;
		while (is_ascii_alnum(p[t->len]))
			t->len++;
	} else if ((w = utf8_decode((const unsigned char *)p, &cp)) > 0) {
		return fail(ps, "unexpected character %Q", p, w);
	} else {
		return fail(ps, "invalid UTF-8 byte %Q", p, (size_t)1);
	}
	ps->p = p + t->len;
	return 0;
}

static int next(struct parser *ps, struct tok *t)
{
	if (ps->have_peek) {
		*t = ps->peeked;
		ps->have_peek = false;
		return 0;
	}
	return lex(ps, t);
}

static int peek(struct parser *ps, struct tok *t)
{
	int rc;

	if (!ps->have_peek) {
		rc = lex(ps, &ps->peeked);
		if (rc < 0)
			return rc;
		ps->have_peek = true;
	}
	*t = ps->peeked;
	return 0;
}

static bool tok_is(const struct tok *t, const char *word)
{
	return t->kind == T_WORD && t->len == strlen(word) && memcmp(t->s, word, t->len) == 0;
}

/* ---- Parser ------------------------------------------------------------------------------------- */

static gcp *node_new(enum gcp_kind kind)
{
	gcp *p = mem_calloc(1, sizeof *p);

	if (p)
		p->kind = kind;
	return p;
}

void gcp_free(gcp *p)
{
	if (!p)
		return;
	if (p->kind == GCP_CHAIN) {
		for (size_t i = 0; i < p->chain.n; i++)
			gcp_free(p->chain.terms[i]);
		free(p->chain.terms);
		free(p->chain.ops);
	}
	free(p);
}

/* Append TERM (taking ownership, even on failure) joined by OP. */
static int chain_push(gcp *c, enum gcp_op op, gcp *term)
{
	if (c->chain.n == c->chain.cap) {
		size_t cap = c->chain.cap ? c->chain.cap * 2 : 4;
		gcp **terms;
		unsigned char *ops;

		if (cap > SIZE_MAX / sizeof *terms)
			goto free_term;
		terms = mem_realloc(c->chain.terms, cap * sizeof *terms);
		if (!terms)
			goto free_term;
		c->chain.terms = terms;
		ops = mem_realloc(c->chain.ops, cap);
		if (!ops)
			goto free_term;
		c->chain.ops = ops;
		c->chain.cap = cap;
	}
	if (c->chain.n > 0)
		c->chain.ops[c->chain.n - 1] = (unsigned char)op;
	c->chain.terms[c->chain.n++] = term;
	return 0;

free_term:
	gcp_free(term);
	return -ENOMEM;
}

/* maxversions=N: N is decimal digits only (leading zeros allowed), at most 65535. */
static int parse_versions(struct parser *ps, const struct tok *v, uint32_t *out)
{
	uint32_t n = 0;

	for (size_t i = 0; i < v->len; i++) {
		if (v->s[i] < '0' || v->s[i] > '9')
			return fail(ps, "maxversions wants a whole number from 0 to %u, got %q", GCP_MAX_VERSIONS, v);
		if (n <= GCP_MAX_VERSIONS)
			n = n * 10 + (uint32_t)(v->s[i] - '0');
	}
	if (n > GCP_MAX_VERSIONS)
		return fail(ps, "maxversions %q is too large (the most is %u)", v, GCP_MAX_VERSIONS);
	*out = n;
	return 0;
}

static const struct {
	const char *name;
	int64_t ms;
	uint64_t max; /* the largest count that fits ParseUint's 32 bits and time.Duration's int64 ns */
} units[] = {
	{ "d", 86400000, 106751 },
	{ "h", 3600000, 2562047 },
	{ "m", 60000, 153722867 },
	{ "s", 1000, GCP_MAX_DURATION_NUMBER },
	{ "ms", 1, GCP_MAX_DURATION_NUMBER },
};

/* maxage=D: D is decimal digits then exactly one unit; no sign, no fraction, no space inside. */
static int parse_duration(struct parser *ps, const struct tok *v, int64_t *out_ms)
{
	size_t i = 0, ulen;
	uint64_t n = 0;
	const char *u;

	while (i < v->len && v->s[i] >= '0' && v->s[i] <= '9') {
		if (n <= UINT64_MAX / 10 - 10)
			n = n * 10 + (uint64_t)(v->s[i] - '0');
		i++;
	}
	if (i == 0)
		return fail(ps, "duration %q does not start with a number", v);
	u = v->s + i;
	ulen = v->len - i;
	if (ulen == 0) {
		/* The tokenizer stopped at the '.', so name the whole thing the user wrote. */
		if (*ps->p == '.') {
			size_t span = v->len;

			while (is_ascii_alnum(v->s[span]) || v->s[span] == '.')
				span++;
			return fail(ps, "duration %Q is not a whole number; use a smaller unit", v->s, span);
		}
		return fail(ps, "duration %q has no unit (ms, s, m, h or d)", v);
	}
	for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
		if (strlen(units[k].name) != ulen || memcmp(u, units[k].name, ulen) != 0)
			continue;
		if (ps->wide && n <= (uint64_t)(GCP_MAX_AGE_MS / units[k].ms)) {
			*out_ms = (int64_t)n * units[k].ms;
			return 0;
		}
		if (n > units[k].max)
			return fail(ps, "duration %q is too long (the most is %u%s)", v, (unsigned)units[k].max,
				    units[k].name);
		*out_ms = (int64_t)n * units[k].ms;
		return 0;
	}
	return fail(ps, "unknown duration unit %Q", u, ulen);
}

static int parse_expr(struct parser *ps, unsigned depth, gcp **out);

/* term ::= "maxversions" "=" N | "maxage" "=" D | "(" expr ")".  AFTER names what came before, for the
 * message when the term is missing. */
static int parse_term(struct parser *ps, unsigned depth, const struct tok *after, gcp **out)
{
	struct tok t, eq, v;
	gcp *p;
	int rc;

	rc = next(ps, &t);
	if (rc < 0)
		return rc;
	if (t.kind == T_LPAREN) {
		if (depth >= GCP_MAX_DEPTH)
			return fail(ps, "parentheses nested deeper than %u", (unsigned)GCP_MAX_DEPTH);
		rc = parse_expr(ps, depth + 1, &p);
		if (rc < 0)
			return rc;
		rc = next(ps, &t);
		if (rc == 0 && t.kind != T_RPAREN)
			rc = t.kind == T_END ? fail(ps, "missing \")\"") : fail(ps, "expected \")\", got %q", &t);
		if (rc < 0) {
			gcp_free(p);
			return rc;
		}
		*out = p;
		return 0;
	}
	if (tok_is(&t, "maxversions") || tok_is(&t, "maxage")) {
		bool versions = t.len == strlen("maxversions");

		rc = next(ps, &eq);
		if (rc < 0)
			return rc;
		if (eq.kind != T_EQ)
			return fail(ps, "expected \"=\" after %q, got %q", &t, &eq);
		rc = next(ps, &v);
		if (rc < 0)
			return rc;
		if (v.kind == T_END)
			return fail(ps, "missing value after \"%s=\"", versions ? "maxversions" : "maxage");
		p = node_new(versions ? GCP_MAXVERSIONS : GCP_MAXAGE);
		if (!p)
			return -ENOMEM;
		rc = versions ? parse_versions(ps, &v, &p->max_versions) : parse_duration(ps, &v, &p->max_age_ms);
		if (rc < 0) {
			gcp_free(p);
			return rc;
		}
		*out = p;
		return 0;
	}
	if (t.kind == T_END) {
		if (!after)
			return fail(ps, "empty policy");
		return fail(ps, "missing rule after %q", after);
	}
	if (tok_is(&t, "never"))
		return fail(ps, "\"never\" must be the whole policy");
	return fail(ps, "expected maxversions=N, maxage=D or \"(\", got %q", &t);
}

/* expr ::= term (op term)*, op ::= "and" | "&&" | "or" | "||", all of one precedence, left to right.
 * Stops at the first token that is not an operator and leaves it for the caller. */
static int parse_expr(struct parser *ps, unsigned depth, gcp **out)
{
	struct tok before = { T_END, NULL, 0 };
	gcp *first = NULL, *chain = NULL, *term;
	struct tok op;
	int rc;

	if (depth > 0) {
		before.kind = T_LPAREN;
		before.s = "(";
		before.len = 1;
	}
	rc = parse_term(ps, depth, depth > 0 ? &before : NULL, &first);
	if (rc < 0)
		return rc;
	for (;;) {
		enum gcp_op kind;

		rc = peek(ps, &op);
		if (rc < 0)
			goto free_all;
		if (op.kind == T_AND || tok_is(&op, "and"))
			kind = GCP_AND;
		else if (op.kind == T_OR || tok_is(&op, "or"))
			kind = GCP_OR;
		else
			break;
		ps->have_peek = false;
		rc = parse_term(ps, depth, &op, &term);
		if (rc < 0)
			goto free_all;
		if (!chain) {
			chain = node_new(GCP_CHAIN);
			rc = chain ? chain_push(chain, GCP_AND, first) : -ENOMEM;
			if (chain)
				first = NULL; /* the chain owns it now, or has freed it */
			if (rc < 0) {
				gcp_free(term);
				goto free_all;
			}
		}
		rc = chain_push(chain, kind, term);
		if (rc < 0)
			goto free_all;
	}
	*out = chain ? chain : first;
	return 0;

free_all:
	gcp_free(first);
	gcp_free(chain);
	return rc;
}

/* cbt tests the whole text, trimmed of Go whitespace, for "never" before tokenizing anything. */
static bool is_never_text(const char *text)
{
	const char *p = skip_space(text);

	return strncmp(p, "never", 5) == 0 && !*skip_space(p + 5);
}

static int parse(const char *text, bool wide, gcp **out, char **err)
{
	struct parser ps = { .text = text, .p = text, .wide = wide };
	struct tok t;
	gcp *p = NULL;
	int rc;

	*out = NULL;
	if (err)
		*err = NULL;
	if (!text) {
		rc = fail(&ps, "no policy given");
		goto message;
	}
	if (is_never_text(text)) {
		p = node_new(GCP_NEVER);
		if (!p)
			return -ENOMEM;
		*out = p;
		return 0;
	}
	rc = parse_expr(&ps, 0, &p);
	if (rc == 0) {
		rc = next(&ps, &t);
		if (rc == 0 && t.kind == T_RPAREN)
			rc = fail(&ps, "unmatched \")\"");
		else if (rc == 0 && t.kind != T_END)
			rc = fail(&ps, "expected \"and\", \"or\", \"&&\", \"||\" or end of input, got %q", &t);
	}
	if (rc == 0) {
		*out = p;
		return 0;
	}
	gcp_free(p);

message:
	if (rc == -EINVAL && err) {
		struct sbuf m = { 0 };
		char *problem = sb_finish(&ps.msg);

		sb_puts(&m, "invalid GC policy ");
		if (text)
			sb_quote(&m, text, strlen(text));
		else
			sb_puts(&m, "(null)");
		sb_puts(&m, ": ");
		if (!problem) {
			free(m.buf);
			return -ENOMEM;
		}
		sb_puts(&m, problem);
		free(problem);
		*err = sb_finish(&m);
		return *err ? -EINVAL : -ENOMEM;
	}
	free(ps.msg.buf);
	return rc;
}

int gcp_parse(const char *text, gcp **out, char **err)
{
	return parse(text, false, out, err);
}

int gcp_parse_stored(const char *text, gcp **out, char **err)
{
	return parse(text, true, out, err);
}

/* ---- Evaluation --------------------------------------------------------------------------------- */

bool gcp_collects(const gcp *p, uint32_t version, int64_t ts, int64_t now)
{
	int64_t cutoff;
	bool acc;

	if (!p)
		return false;
	switch (p->kind) {
	case GCP_MAXVERSIONS:
		return version >= p->max_versions;
	case GCP_MAXAGE:
		/* ts < now - D, without overflowing when now is near INT64_MIN (then nothing is that old). */
		if (__builtin_sub_overflow(now, p->max_age_ms * 1000, &cutoff))
			return false;
		return ts < cutoff;
	case GCP_CHAIN:
		acc = gcp_collects(p->chain.terms[0], version, ts, now);
		for (size_t i = 1; i < p->chain.n; i++) {
			if (p->chain.ops[i - 1] == GCP_AND)
				acc = acc && gcp_collects(p->chain.terms[i], version, ts, now);
			else
				acc = acc || gcp_collects(p->chain.terms[i], version, ts, now);
		}
		return acc;
	case GCP_NEVER:
	default:
		return false;
	}
}

bool gcp_is_never(const gcp *p)
{
	return !p || p->kind == GCP_NEVER;
}

enum gcp_kind gcp_kind_of(const gcp *p)
{
	return p ? p->kind : GCP_NEVER;
}

uint32_t gcp_max_versions(const gcp *p)
{
	return p->max_versions;
}

int64_t gcp_max_age_ms(const gcp *p)
{
	return p->max_age_ms;
}

size_t gcp_nterms(const gcp *p)
{
	return p->chain.n;
}

const gcp *gcp_term(const gcp *p, size_t i)
{
	return p->chain.terms[i];
}

enum gcp_op gcp_op_before(const gcp *p, size_t i)
{
	return (enum gcp_op)p->chain.ops[i - 1];
}

/* ---- Printing ----------------------------------------------------------------------------------- */

static void format_into(struct sbuf *sb, const gcp *p)
{
	switch (p->kind) {
	case GCP_NEVER:
		sb_puts(sb, "never");
		break;
	case GCP_MAXVERSIONS:
		sb_printf(sb, "maxversions=%" PRIu32, p->max_versions);
		break;
	case GCP_MAXAGE:
		/* The largest unit that divides it exactly: the number then always fits that unit's limit. */
		for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
			if (p->max_age_ms % units[k].ms == 0) {
				sb_printf(sb, "maxage=%" PRId64 "%s", p->max_age_ms / units[k].ms, units[k].name);
				break;
			}
		}
		break;
	case GCP_CHAIN:
		/* A group inside a chain keeps its parentheses, but for the first term: terms fold left, so
		 * "(a or b) and c" is "a or b and c", and one policy has one text however it was nested
		 * (Bigtable gives back binary rules nested on the left: bt_schema.c). Formatting is idempotent
		 * and the depth never grows. */
		for (size_t i = 0; i < p->chain.n; i++) {
			const gcp *t = p->chain.terms[i];
			bool group = t->kind == GCP_CHAIN && i > 0;

			if (i > 0)
				sb_puts(sb, p->chain.ops[i - 1] == GCP_AND ? " and " : " or ");
			if (group)
				sb_putc(sb, '(');
			format_into(sb, t);
			if (group)
				sb_putc(sb, ')');
		}
		break;
	}
}

char *gcp_format(const gcp *p)
{
	struct sbuf sb = { 0 };

	if (!p)
		sb_puts(&sb, "never");
	else
		format_into(&sb, p);
	return sb_finish(&sb);
}

/* As the Go client renders the rule read back from Bigtable (bigtable.GCRuleToString): the age keeps only
 * whole seconds, is shown in d, h or m when one divides it, else in microseconds with no unit; every
 * and/or is a binary node printed in parentheses, so a chain of n terms opens n - 1 of them up front. */
static void format_cbt_into(struct sbuf *sb, const gcp *p)
{
	int64_t s;

	switch (p->kind) {
	case GCP_NEVER:
		break;
	case GCP_MAXVERSIONS:
		sb_printf(sb, "versions() > %" PRIu32, p->max_versions);
		break;
	case GCP_MAXAGE:
		s = p->max_age_ms / 1000;
		if (s % 86400 == 0)
			sb_printf(sb, "age() > %" PRId64 "d", s / 86400);
		else if (s % 3600 == 0)
			sb_printf(sb, "age() > %" PRId64 "h", s / 3600);
		else if (s % 60 == 0)
			sb_printf(sb, "age() > %" PRId64 "m", s / 60);
		else
			sb_printf(sb, "age() > %" PRId64, s * 1000000);
		break;
	case GCP_CHAIN:
		for (size_t i = 1; i < p->chain.n; i++)
			sb_putc(sb, '(');
		format_cbt_into(sb, p->chain.terms[0]);
		for (size_t i = 1; i < p->chain.n; i++) {
			sb_puts(sb, p->chain.ops[i - 1] == GCP_AND ? " && " : " || ");
			format_cbt_into(sb, p->chain.terms[i]);
			sb_putc(sb, ')');
		}
		break;
	}
}

char *gcp_format_cbt(const gcp *p)
{
	struct sbuf sb = { 0 };

	if (p)
		format_cbt_into(&sb, p);
	return sb_finish(&sb);
}
