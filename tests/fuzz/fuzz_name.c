/* fuzz_name.c — the name codec (fs/name.h): bytes -> name -> bytes, and name -> bytes -> name.
 *
 * Input: a flags byte (bit 0: no segment context; bit 1: no delimiter; bit 2: no families), the
 * delimiter byte, 8 bytes of timestamp, then the data, used both as the bytes B to encode and as a
 * name to decode (up to its first NUL). Properties:
 *   - every B has a name of every kind that accepts it; the name is 1..NAME_MAX bytes, holds no '/'
 *     or NUL, is not "." or "..", and decodes to B (a full form) or to a prefix and hash that
 *     name_match() accepts for B and only for B's bytes (a short form);
 *   - a version name `Q@TS` decodes to Q and TS;
 *   - a name that decodes (full form) is exactly what encoding its bytes gives (the canonical form),
 *     in every kind, and likewise for version names.
 */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"
#include "name.h"

static const char *const families[] = { "MD", "f", "cf1", "a", "_", "x.y", "METRIC" };

static bool is_family(const void *arg, const char *name, size_t n)
{
	(void)arg;
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (strlen(families[i]) == n && !memcmp(families[i], name, n))
			return true;
	return false;
}

static bool ident(const uint8_t *b, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = b[i];
		bool alnum = c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
		if (!alnum && (i == 0 || (c != '-' && c != '.')))
			return false;
	}
	return true;
}

/* B's name of KIND decodes back to B, in whichever form it took. */
static void check_encode(enum name_kind kind, const uint8_t *b, size_t n, const name_segctx *ctx)
{
	char out[NAME_BUFSZ];
	name_result res;
	int len = name_encode(kind, b, n, ctx, out, sizeof(out));

	if (kind == NAME_TABLE || kind == NAME_FAMILY) {
		if (!ident(b, n)) {
			FUZZ_CHECK(len == -EINVAL);
			return;
		}
		if (n > NAME_MAX) {
			FUZZ_CHECK(len == -ENAMETOOLONG);
			return;
		}
	}
	if (kind == NAME_SEGMENT && ctx && ctx->delim >= 0 && n && memchr(b, ctx->delim, n)) {
		FUZZ_CHECK(len == -EINVAL);
		return;
	}
	FUZZ_CHECK(len >= 1 && len <= NAME_MAX);
	FUZZ_CHECK(strlen(out) == (size_t)len);
	FUZZ_CHECK(!memchr(out, '/', (size_t)len));
	FUZZ_CHECK(strcmp(out, ".") && strcmp(out, ".."));
	if (kind == NAME_QUALIFIER)
		FUZZ_CHECK(!memchr(out, '@', (size_t)len));
	FUZZ_CHECK(name_encode(kind, b, n, ctx, out, (size_t)len) == -ERANGE);
	FUZZ_CHECK(name_decode(kind, out, ctx, &res) == 0);
	if (!res.partial) {
		FUZZ_CHECK(res.len == n && (n == 0 || !memcmp(res.bytes, b, n)));
	} else {
		FUZZ_CHECK(res.len <= NAME_SHORT_PREFIX && res.len < n && !memcmp(res.bytes, b, res.len));
		FUZZ_CHECK(res.hash == name_hash(b, n));
	}
	FUZZ_CHECK(name_match(&res, ctx, b, n));
	/* One byte more or less is another string, with another name. */
	FUZZ_CHECK(!name_match(&res, ctx, b, n ? n - 1 : 0) || n == 0);
}

/* A name that decodes is the canonical name of what it decodes to. */
static void check_decode(enum name_kind kind, const char *name, const name_segctx *ctx)
{
	char out[NAME_BUFSZ];
	name_result res;
	int rc = name_decode(kind, name, ctx, &res);

	if (strlen(name) > NAME_MAX) {
		FUZZ_CHECK(rc == -ENAMETOOLONG);
		return;
	}
	FUZZ_CHECK(rc == 0 || rc == -ENOENT);
	if (rc)
		return;
	FUZZ_CHECK(res.len <= NAME_MAX);
	if (res.partial) {
		/* A short form: a prefix within NAME_SHORT_PREFIX, then `%~` and 16 hex digits. */
		size_t len = strlen(name);
		FUZZ_CHECK(len > 18 && name[len - 18] == '%' && name[len - 17] == '~');
		FUZZ_CHECK(res.len <= NAME_SHORT_PREFIX);
		return;
	}
	FUZZ_CHECK(name_encode(kind, res.bytes, res.len, ctx, out, sizeof(out)) == (int)strlen(name));
	FUZZ_CHECK(!strcmp(out, name));
}

static void check_version(const uint8_t *b, size_t n, int64_t ts, const char *name)
{
	char out[NAME_BUFSZ];
	name_result q;
	int64_t t = -1;
	int len = name_encode_version(b, n, ts, out, sizeof(out));

	FUZZ_CHECK(len >= 18 && len <= NAME_MAX && strlen(out) == (size_t)len);
	FUZZ_CHECK(strchr(out, '@') == strrchr(out, '@') && strchr(out, '@'));
	FUZZ_CHECK(name_decode_version(out, &q, &t) == 0 && t == ts);
	FUZZ_CHECK(name_match(&q, NULL, b, n));
	if (!q.partial)
		FUZZ_CHECK(q.len == n && (n == 0 || !memcmp(q.bytes, b, n)));

	if (strlen(name) > NAME_MAX) {
		FUZZ_CHECK(name_decode_version(name, &q, &t) == -ENAMETOOLONG);
		return;
	}
	int rc = name_decode_version(name, &q, &t);
	FUZZ_CHECK(rc == 0 || rc == -ENOENT);
	if (rc || q.partial)
		return;
	FUZZ_CHECK(t >= 0);
	FUZZ_CHECK(name_encode_version(q.bytes, q.len, t, out, sizeof(out)) == (int)strlen(name));
	FUZZ_CHECK(!strcmp(out, name));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint8_t flags = fuzz_u8(&in), delim = fuzz_u8(&in);
	int64_t ts = (int64_t)(fuzz_u64(&in) & INT64_MAX);
	name_segctx sc = { .delim = flags & 2 ? -1 : delim, .is_family = flags & 4 ? NULL : is_family };
	const name_segctx *ctx = flags & 1 ? NULL : &sc;
	size_t n;
	const uint8_t *b = fuzz_take(&in, 4096, &n);
	char *name = malloc(n + 1);

	if (!name)
		abort();
	memcpy(name, b, n);
	name[n] = '\0';
	for (enum name_kind k = NAME_TABLE; k <= NAME_QUALIFIER; k++) {
		check_encode(k, b, n, ctx);
		check_decode(k, name, ctx);
	}
	check_version(b, n, ts, name);
	free(name);
	return 0;
}
