/* name.c — the %XX name codec of name.h: stored bytes <-> path components, a bijection.
 *
 * Decoding never judges a name by hand: it unescapes, re-encodes and compares, so the canonical-form rule
 * holds by construction and the encoder is the only place the escaping rules live.
 */
#include "name.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define HASH_DIGITS 16
#define SHORT_TAIL (2 + HASH_DIGITS) /* "%~" and the hash */
#define TS_PAD 16

static const char hexdig[16] = "0123456789ABCDEF";

uint64_t name_hash(const void *b, size_t n)
{
	const unsigned char *p = b;
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1; /* lower case is never canonical, so it need not be read */
}

static bool ident_start(unsigned char c)
{
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Whether B matches the table/family name pattern [_a-zA-Z0-9][-_.a-zA-Z0-9]*. */
static bool is_ident(const unsigned char *b, size_t n)
{
	if (n == 0 || !ident_start(b[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!ident_start(b[i]) && b[i] != '-' && b[i] != '.')
			return false;
	return true;
}

/* Length of the valid UTF-8 sequence (2..4 bytes) at B, N bytes available, or 0 if B[0] does not start
 * one. Unicode table 3-7, which excludes overlongs, surrogates and code points above U+10FFFF. */
static size_t utf8_len(const unsigned char *b, size_t n)
{
	unsigned char c = b[0], lo = 0x80, hi = 0xBF;
	size_t len;

	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4;
	else
		return 0;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (n < len || b[1] < lo || b[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (b[i] < 0x80 || b[i] > 0xBF)
			return 0;
	return len;
}

/* Write the units of B (N bytes) to OUT: each a raw ASCII byte, a raw valid UTF-8 sequence or one %XX.
 * The first FORCE bytes are escaped whatever they are (rules 3 and 4). Stops before the unit that would
 * take the output past CAP. Returns the bytes of B consumed (N if everything fitted); *OUTLEN gets the
 * bytes written and, if CUT is not NULL, *CUT the output length at the last unit boundary within
 * NAME_SHORT_PREFIX. */
static size_t put_units(const unsigned char *b, size_t n, bool qual, size_t force, char *out, size_t cap,
			size_t *outlen, size_t *cut)
{
	size_t i = 0, len = 0;

	while (i < n) {
		unsigned char c = b[i];
		size_t k = 1;
		bool raw;

		if (c < 0x80)
			raw = c >= 0x20 && c != 0x7F && c != '/' && c != '%' && !(qual && c == '@');
		else
			raw = (k = utf8_len(b + i, n - i)) != 0;
		if (i < force || !raw) {
			raw = false;
			k = 1;
		}
		if (len + (raw ? k : 3) > cap)
			break;
		if (raw) {
			memcpy(out + len, b + i, k);
			len += k;
		} else {
			out[len++] = '%';
			out[len++] = hexdig[c >> 4];
			out[len++] = hexdig[c & 15];
		}
		i += k;
		if (cut && len <= NAME_SHORT_PREFIX)
			*cut = len;
	}
	*outlen = len;
	return i;
}

/* Encode segment or qualifier B into OUT (NAME_BUFSZ bytes, not NUL-terminated): the full form if it is
 * at most LIMIT bytes, else the short form. Returns the length, or -EINVAL (delimiter in a segment). */
static int encode_part(enum name_kind kind, const unsigned char *b, size_t n, const name_segctx *ctx,
		       size_t limit, char *out)
{
	size_t force = 0, len, cut = 0;
	uint64_t h;

	if (n == 0) {
		out[0] = '%';
		return 1;
	}
	if (kind == NAME_SEGMENT && ctx) {
		if (ctx->delim >= 0 && memchr(b, ctx->delim, n))
			return -EINVAL;
		if (ctx->is_family && is_ident(b, n) && ctx->is_family(ctx->arg, (const char *)b, n))
			force = 1;
	}
	if ((n == 1 && b[0] == '.') || (n == 2 && b[0] == '.' && b[1] == '.'))
		force = n;
	if (put_units(b, n, kind == NAME_QUALIFIER, force, out, limit, &len, &cut) == n)
		return (int)len;
	h = name_hash(b, n);
	out[cut] = '%';
	out[cut + 1] = '~';
	for (size_t d = 0; d < HASH_DIGITS; d++)
		out[cut + 2 + d] = hexdig[(h >> (60 - 4 * d)) & 15];
	return (int)(cut + SHORT_TAIL);
}

/* Unescape S (LEN bytes) into OUT (at least LEN bytes). Returns the byte count, or -ENOENT if a '%' is
 * not followed by two upper-case hex digits. */
static int unescape(const char *s, size_t len, unsigned char *out)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] != '%') {
			out[n++] = (unsigned char)s[i];
			continue;
		}
		if (len - i < 3 || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0)
			return -ENOENT;
		out[n++] = (unsigned char)(hexval(s[i + 1]) << 4 | hexval(s[i + 2]));
		i += 2;
	}
	return (int)n;
}

/* Decode the segment or qualifier part S (LEN bytes) whose full form may be at most LIMIT bytes. */
static int decode_part(enum name_kind kind, const char *s, size_t len, const name_segctx *ctx, size_t limit,
		       name_result *res)
{
	char buf[NAME_BUFSZ];
	size_t plen = len, outlen, maxforce;
	int n;

	res->partial = false;
	res->hash = 0;
	res->kind = kind;
	res->limit = limit;
	if (len == 0 || len > limit)
		return -ENOENT;
	res->formlen = len;
	memcpy(res->form, s, len);
	if (len == 1 && s[0] == '%') {
		res->len = 0;
		return 0;
	}
	if (len >= SHORT_TAIL && s[len - SHORT_TAIL] == '%' && s[len - SHORT_TAIL + 1] == '~') {
		plen = len - SHORT_TAIL;
		res->partial = true;
		for (size_t d = 0; d < HASH_DIGITS; d++) {
			int v = hexval(s[plen + 2 + d]);
			if (v < 0)
				return -ENOENT;
			res->hash = res->hash << 4 | (uint64_t)v;
		}
		/* The longest prefix within NAME_SHORT_PREFIX of an encoding longer than that: the unit after
		 * it (at most 4 bytes) did not fit. */
		if (plen + 4 <= NAME_SHORT_PREFIX || plen > NAME_SHORT_PREFIX)
			return -ENOENT;
	}
	n = unescape(s, plen, res->bytes);
	if (n < 0)
		return n;
	res->len = (size_t)n;
	if (!res->partial) {
		n = encode_part(kind, res->bytes, res->len, ctx, limit, buf);
		return n == (int)len && memcmp(buf, s, len) == 0 ? 0 : -ENOENT;
	}
	/* A prefix cannot be judged by the rules for whole strings (1, 3, 4): check its units, which do not
	 * depend on what follows them, and leave the rest to name_match(). Its first byte may be escaped by
	 * rule 4 if B might be a (very long) family name. */
	if (kind == NAME_SEGMENT && ctx && ctx->delim >= 0 && memchr(res->bytes, ctx->delim, res->len))
		return -ENOENT;
	maxforce = kind == NAME_SEGMENT && ctx && ctx->is_family && is_ident(res->bytes, res->len) ? 1 : 0;
	for (size_t force = 0; force <= maxforce; force++)
		if (put_units(res->bytes, res->len, kind == NAME_QUALIFIER, force, buf, plen, &outlen, NULL) ==
			    res->len && outlen == plen && memcmp(buf, s, plen) == 0)
			return 0;
	return -ENOENT;
}

int name_encode(enum name_kind kind, const void *b, size_t n, const name_segctx *ctx, char *out,
		size_t outcap)
{
	char buf[NAME_BUFSZ];
	int len;

	if (kind == NAME_TABLE || kind == NAME_FAMILY) {
		if (!is_ident(b, n))
			return -EINVAL;
		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(buf, b, n);
		len = (int)n;
	} else {
		len = encode_part(kind, b, n, ctx, NAME_MAX, buf);
		if (len < 0)
			return len;
	}
	if ((size_t)len >= outcap)
		return -ERANGE;
	memcpy(out, buf, (size_t)len);
	out[len] = '\0';
	return len;
}

int name_decode(enum name_kind kind, const char *name, const name_segctx *ctx, name_result *res)
{
	size_t len = strlen(name);

	if (len > NAME_MAX)
		return -ENAMETOOLONG;
	if (kind == NAME_SEGMENT || kind == NAME_QUALIFIER)
		return decode_part(kind, name, len, ctx, NAME_MAX, res);
	if (!is_ident((const unsigned char *)name, len))
		return -ENOENT;
	res->partial = false;
	res->hash = 0;
	res->kind = kind;
	res->limit = NAME_MAX;
	res->len = res->formlen = len;
	memcpy(res->bytes, name, len);
	memcpy(res->form, name, len);
	return 0;
}

int name_encode_version(const void *q, size_t qn, int64_t ts, char *out, size_t outcap)
{
	char buf[NAME_BUFSZ], tsbuf[24];
	int tslen, len;

	if (ts < 0)
		return -EINVAL;
	tslen = snprintf(tsbuf, sizeof(tsbuf), "%0*" PRId64, TS_PAD, ts);
	len = encode_part(NAME_QUALIFIER, q, qn, NULL, NAME_MAX - 1 - (size_t)tslen, buf);
	if (len < 0)
		return len;
	if ((size_t)(len + 1 + tslen) >= outcap)
		return -ERANGE;
	memcpy(out, buf, (size_t)len);
	out[len] = '@';
	memcpy(out + len + 1, tsbuf, (size_t)tslen + 1);
	return len + 1 + tslen;
}

int name_decode_version(const char *name, name_result *q, int64_t *ts)
{
	size_t len = strlen(name), tslen;
	const char *at = strrchr(name, '@');
	uint64_t v = 0;

	if (len > NAME_MAX)
		return -ENAMETOOLONG;
	if (!at)
		return -ENOENT;
	tslen = len - (size_t)(at + 1 - name);
	if (tslen < TS_PAD || tslen > 19 || (tslen > TS_PAD && at[1] == '0'))
		return -ENOENT;
	for (size_t i = 1; i <= tslen; i++) {
		if (at[i] < '0' || at[i] > '9')
			return -ENOENT;
		v = v * 10 + (uint64_t)(at[i] - '0'); /* 19 digits cannot overflow 64 bits */
	}
	if (v > INT64_MAX)
		return -ENOENT;
	*ts = (int64_t)v;
	return decode_part(NAME_QUALIFIER, name, (size_t)(at - name), NULL, NAME_MAX - 1 - tslen, q);
}

bool name_match(const name_result *res, const name_segctx *ctx, const void *b, size_t n)
{
	char buf[NAME_BUFSZ];
	int len;

	if (!res->partial)
		return n == res->len && memcmp(b, res->bytes, n) == 0;
	if (n < res->len || memcmp(b, res->bytes, res->len) != 0 || name_hash(b, n) != res->hash)
		return false;
	len = encode_part(res->kind, b, n, ctx, res->limit, buf);
	return len == (int)res->formlen && memcmp(buf, res->form, res->formlen) == 0;
}
