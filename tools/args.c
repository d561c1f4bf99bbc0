/* args.c — cbt's argument dialect (see args.h). Where cbt leans on Go's strconv, regexp or
 * encoding/csv, this reproduces what those do for the inputs cbt gives them.
 */
#include "args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbtfmt.h"

__attribute__((format(printf, 2, 3)))
static int fail(char **err, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		if (vasprintf(err, fmt, ap) < 0)
			*err = NULL;
		va_end(ap);
	}
	return -EINVAL;
}

/* fail() with one Go-quoted string argument in FMT's single %s. */
static int fail_q(char **err, const char *fmt, const char *s, size_t n)
{
	char *q = cbtfmt_quote_dup(s, n);
	int ret;

	if (!q)
		return -ENOMEM;
	ret = fail(err, fmt, q);
	free(q);
	return ret;
}

int args_kv(int argc, char *const argv[], const char *const valid[], const char *vals[], char **err)
{
	size_t nvalid = 0;

	while (valid[nvalid])
		vals[nvalid++] = NULL;
	for (int i = 0; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t k;

		if (!eq)
			return fail_q(err, "bad arg %s", argv[i], strlen(argv[i]));
		for (k = 0; k < nvalid; k++)
			if (strlen(valid[k]) == (size_t)(eq - argv[i]) && !memcmp(valid[k], argv[i], eq - argv[i]))
				break;
		if (k == nvalid)
			return fail_q(err, "unknown arg key %s", argv[i], eq - argv[i]);
		vals[k] = eq + 1;
	}
	return 0;
}

/* ---- Go's strconv ------------------------------------------------------------------------------ */

static int lower(int c)
{
	return c | 0x20;
}

/* Go's underscoreOK: '_' only between digits, or between a base prefix and a digit. */
static bool underscore_ok(const char *s)
{
	char saw = '^';
	bool hex = false;
	size_t i = 0, n;

	if (*s == '+' || *s == '-')
		s++;
	n = strlen(s);
	if (n >= 2 && s[0] == '0' && (lower(s[1]) == 'b' || lower(s[1]) == 'o' || lower(s[1]) == 'x')) {
		i = 2;
		saw = '0';
		hex = lower(s[1]) == 'x';
	}
	for (; i < n; i++) {
		if ((s[i] >= '0' && s[i] <= '9') || (hex && lower(s[i]) >= 'a' && lower(s[i]) <= 'f')) {
			saw = '0';
			continue;
		}
		if (s[i] == '_') {
			if (saw != '0')
				return false;
			saw = '_';
			continue;
		}
		if (saw == '_')
			return false;
		saw = '!';
	}
	return saw != '_';
}

/* Go's ParseUint(s, base, 64) with base 0 or 10. */
static int go_parse_uint(const char *s0, int base, uint64_t *out)
{
	const char *s = s0;
	bool base0 = base == 0, underscores = false;
	uint64_t n = 0;

	if (!*s)
		return -EINVAL;
	if (base0) {
		base = 10;
		if (s[0] == '0') {
			size_t len = strlen(s);

			if (len >= 3 && lower(s[1]) == 'b') {
				base = 2;
				s += 2;
			} else if (len >= 3 && lower(s[1]) == 'o') {
				base = 8;
				s += 2;
			} else if (len >= 3 && lower(s[1]) == 'x') {
				base = 16;
				s += 2;
			} else {
				base = 8;
				s += 1;
			}
		}
	}
	for (; *s; s++) {
		unsigned d;
		int c = (unsigned char)*s;

		if (c == '_' && base0) {
			underscores = true;
			continue;
		} else if (c >= '0' && c <= '9') {
			d = c - '0';
		} else if (lower(c) >= 'a' && lower(c) <= 'z') {
			d = lower(c) - 'a' + 10;
		} else {
			return -EINVAL;
		}
		if (d >= (unsigned)base)
			return -EINVAL;
		if (__builtin_mul_overflow(n, (uint64_t)base, &n) || __builtin_add_overflow(n, d, &n))
			return -ERANGE;
	}
	if (underscores && !underscore_ok(s0))
		return -EINVAL;
	*out = n;
	return 0;
}

int go_parse_int(const char *s, int base, int64_t *out)
{
	bool neg = false;
	uint64_t u;
	int ret;

	if (!*s)
		return -EINVAL;
	if (*s == '+' || *s == '-') {
		neg = *s == '-';
		s++;
	}
	ret = go_parse_uint(s, base, &u);
	if (ret < 0)
		return ret;
	if (!neg && u > (uint64_t)INT64_MAX)
		return -ERANGE;
	if (neg && u > (uint64_t)INT64_MAX + 1)
		return -ERANGE;
	*out = neg ? (int64_t)(0 - u) : (int64_t)u;
	return 0;
}

int go_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };

	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		if (!strcmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

const char *go_num_strerror(int err)
{
	return err == -ERANGE ? "value out of range" : "invalid syntax";
}

/* ---- set ---------------------------------------------------------------------------------------- */

int args_set_cell(const char *arg, set_cell *out)
{
	const char *fam, *colon, *eq, *val, *nl, *at;
	int64_t ts;

	memset(out, 0, sizeof *out);
	/* The regexp is unanchored: the match starts at the first byte [^:]+ can take. Failing there, it
	 * fails everywhere, since any later start sees the same ':' and '='. */
	fam = arg + strspn(arg, ":");
	if (!*fam)
		return -EINVAL;
	colon = strchr(fam, ':');
	if (!colon)
		return -EINVAL;
	eq = strchr(colon + 1, '=');
	if (!eq)
		return -EINVAL;
	val = eq + 1;
	nl = strchr(val, '\n'); /* '.' does not match a newline */
	out->value = val;
	out->value_len = nl ? (size_t)(nl - val) : strlen(val);
	out->qual = colon + 1;
	out->qual_len = eq - (colon + 1);
	out->family = strndup(fam, colon - fam);
	if (!out->family)
		return -ENOMEM;

	at = memrchr(val, '@', out->value_len);
	if (at) {
		char *digits = strndup(at + 1, out->value_len - (at + 1 - val));

		if (!digits) {
			set_cell_release(out);
			return -ENOMEM;
		}
		if (go_parse_int(digits, 0, &ts) == 0) {
			out->has_ts = true;
			out->ts = ts;
			out->value_len = at - val;
		}
		free(digits);
	}
	return 0;
}

void set_cell_release(set_cell *c)
{
	if (!c)
		return;
	free(c->family);
	c->family = NULL;
}

int cbt_cell_ts(const set_cell *c, int64_t now, int64_t *ts)
{
	int64_t t;

	if (!c->has_ts || c->ts == -1) /* bigtable.Now(), or bigtable.ServerTime */
		t = now;
	else
		t = c->ts;
	t -= t % 1000; /* Timestamp.TruncateToMilliseconds(); Go's % truncates toward zero, as C's does */
	if (t < 0)
		return -EINVAL;
	*ts = t;
	return 0;
}

/* ---- columns= ----------------------------------------------------------------------------------- */

void colspecs_free(colspec *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].family);
		free(v[i].qualifier);
	}
	free(v);
}

static int colspec_parse(const char *item, size_t len, colspec *c, char **err)
{
	const char *colon = memchr(item, ':', len);

	if (colon && memchr(colon + 1, ':', len - (colon + 1 - item)))
		return fail_q(err, "bad format for column %s", item, len);
	if (!colon) { /* "q": bigtable.ColumnFilter(q) */
		c->qualifier = strndup(item, len);
		return c->qualifier ? 0 : -ENOMEM;
	}
	if (colon + 1 == item + len) { /* "f:" (and ":"): FamilyFilter(f) */
		c->family = strndup(item, colon - item);
		return c->family ? 0 : -ENOMEM;
	}
	if (colon == item) { /* ":q": ColumnFilter(q) */
		c->qualifier = strndup(colon + 1, len - 1);
		return c->qualifier ? 0 : -ENOMEM;
	}
	c->family = strndup(item, colon - item);
	c->qualifier = strndup(colon + 1, len - (colon + 1 - item));
	return c->family && c->qualifier ? 0 : -ENOMEM;
}

int args_columns(const char *val, colspec **out, size_t *n, char **err)
{
	size_t cap = 1, count = 0;
	colspec *v;
	const char *p = val;
	int ret = 0;

	for (const char *s = val; *s; s++)
		cap += *s == ',';
	v = calloc(cap, sizeof *v);
	if (!v)
		return -ENOMEM;
	while (*p) {
		size_t len = strcspn(p, ",");

		if (len > 0) { /* strings.FieldsFunc drops empty items */
			ret = colspec_parse(p, len, &v[count++], err);
			if (ret < 0)
				goto free_v;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	if (count == 0) {
		ret = fail_q(err, "no column in columns=%s", val, strlen(val));
		goto free_v;
	}
	*out = v;
	*n = count;
	return 0;
free_v:
	colspecs_free(v, count);
	return ret;
}

/* ---- CSV ---------------------------------------------------------------------------------------- */

void args_strv_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* Append FIELD (taking ownership; NULL means allocation failed) to the vector *V of *N strings. */
static int push_field(char ***v, size_t *n, char *field)
{
	char **nv;

	if (!field)
		return -ENOMEM;
	nv = realloc(*v, (*n + 1) * sizeof **v);
	if (!nv) {
		free(field);
		return -ENOMEM;
	}
	nv[(*n)++] = field;
	*v = nv;
	return 0;
}

int args_csv_record(const char *s, char ***fields, size_t *n, char **err)
{
	const char *p = s;
	char **v = NULL;
	size_t count = 0, line = 1;
	int ret;

	/* Go's csv skips empty lines before the first record. */
	for (;;) {
		if (*p == '\n') {
			p++;
			line++;
		} else if (p[0] == '\r' && p[1] == '\n') {
			p += 2;
			line++;
		} else {
			break;
		}
	}
	if (!*p)
		return fail(err, "EOF");
	for (;;) {
		const char *start = p;

		if (*p != '"') { /* an unquoted field runs to ',' or the end of the line */
			size_t len = strcspn(p, ",\n");
			const char *q = memchr(p, '"', len);

			if (q) {
				ret = fail(err, "parse error on line %zu, column %zu: bare \" in non-quoted-field",
					   line, (size_t)(q - s) + 1);
				goto free_v;
			}
			if (len > 0 && p[len] == '\n' && p[len - 1] == '\r')
				len--; /* "\r\n" ends a line as "\n" does */
			ret = push_field(&v, &count, strndup(p, len));
			if (ret < 0)
				goto free_v;
			p = start + strcspn(start, ",\n");
		} else { /* a quoted field: "" is a quote; it may span lines */
			char *buf = malloc(strlen(p) + 1);
			size_t len = 0;

			if (!buf) {
				ret = -ENOMEM;
				goto free_v;
			}
			for (p++;; p++) {
				if (*p && *p != '"') {
					if (!(p[0] == '\r' && p[1] == '\n')) /* Go reads "\r\n" as "\n" */
						buf[len++] = *p;
					continue;
				}
				if (*p && p[1] == '"') {
					buf[len++] = *p++;
					continue;
				}
				if (*p) { /* the closing quote: then ',' or the end of the line */
					p++;
					if (p[0] == '\r' && p[1] == '\n')
						p++;
					if (!*p || *p == ',' || *p == '\n')
						break;
				}
				free(buf);
				ret = fail(err, "parse error on line %zu, column %zu: extraneous or missing \" in "
					   "quoted-field", line, (size_t)(p - s) + 1);
				goto free_v;
			}
			buf[len] = '\0';
			ret = push_field(&v, &count, buf);
			if (ret < 0)
				goto free_v;
		}
		if (*p != ',')
			break;
		p++;
	}
	*fields = v;
	*n = count;
	return 0;
free_v:
	args_strv_free(v, count);
	return ret;
}
