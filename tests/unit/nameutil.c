/* nameutil.c — what fs/name's unit tests (test_name, test_name_random) share: a table context with
 * delimiter '#' and a few families, and round trips that check every property of an encoded name. */
#include "nameutil.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const char *const nu_families[] = { "MD", "METER", "0015", "_x", "a.b-c", NULL };

bool nu_is_family(const void *arg, const char *name, size_t n)
{
	for (const char *const *f = arg; *f; f++)
		if (strlen(*f) == n && memcmp(*f, name, n) == 0)
			return true;
	return false;
}

const name_segctx nu_ctx = { '#', nu_is_family, nu_families };

const char *nu_kind_str(enum name_kind k)
{
	return k == NAME_TABLE ? "table" : k == NAME_FAMILY ? "family" : k == NAME_SEGMENT ? "segment" : "qualifier";
}

/* Every name the encoder makes: 1..NAME_MAX bytes, no NUL inside, no '/'. */
static void check_name_shape(const char *name, int len)
{
	assert_true(len >= 1 && len <= NAME_MAX);
	assert_int_equal(strlen(name), (size_t)len);
	assert_null(strchr(name, '/'));
}

bool nu_round_trip(enum name_kind kind, const name_segctx *c, const void *b, size_t n, char *out)
{
	name_result res;
	int len = name_encode(kind, b, n, c, out, NAME_BUFSZ);

	if (len < 0)
		fail_msg("encode %s of %zu bytes: %d", nu_kind_str(kind), n, len);
	check_name_shape(out, len);
	if (name_decode(kind, out, c, &res) != 0)
		fail_msg("decode %s \"%s\" failed", nu_kind_str(kind), out);
	assert_true(name_match(&res, c, b, n));
	if (!res.partial) {
		assert_int_equal(res.len, n);
		assert_memory_equal(res.bytes, b, n);
		assert_null(strstr(out, "%~"));
	} else {
		assert_true(len > NAME_SHORT_PREFIX && strstr(out, "%~") != NULL);
		assert_true(res.len < n);
		assert_memory_equal(res.bytes, b, res.len);
		assert_true(res.hash == name_hash(b, n));
	}
	return res.partial;
}

bool nu_round_trip_version(const void *q, size_t qn, int64_t ts, char *out)
{
	name_result res;
	int64_t got = -1;
	int len = name_encode_version(q, qn, ts, out, NAME_BUFSZ);

	if (len < 0)
		fail_msg("encode version of %zu bytes @%" PRId64 ": %d", qn, ts, len);
	check_name_shape(out, len);
	assert_ptr_equal(strchr(out, '@'), strrchr(out, '@'));
	if (name_decode_version(out, &res, &got) != 0)
		fail_msg("decode version \"%s\" failed", out);
	assert_true(got == ts);
	assert_true(name_match(&res, NULL, q, qn));
	if (!res.partial) {
		assert_int_equal(res.len, qn);
		assert_memory_equal(res.bytes, q, qn);
	} else {
		assert_memory_equal(res.bytes, q, res.len);
		assert_true(res.hash == name_hash(q, qn));
	}
	return res.partial;
}
