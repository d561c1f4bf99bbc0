/* test_hash.c — XXH64 against the reference: published vectors, and the low 32 bits zstd writes as a
 * frame's content checksum (zstd --check) for an input long enough to use every stripe path. */
#include "testutil.h"

#include <string.h>

#include "hash.h"

static void test_hash__reference_vectors(void **state)
{
	static const struct {
		const char *in;
		uint64_t seed, want;
	} v[] = {
		{ "", 0, 0xEF46DB3751D8E999ull },
		{ "a", 0, 0xD24EC4F1A98C6E5Bull },
		{ "abc", 0, 0x44BC2CF5AD770999ull },
		{ "Nobody inspects the spammish repetition", 0, 0xFBCEA83C8A378BF1ull },
	};
	for (size_t i = 0; i < TU_ARRAY_SIZE(v); i++)
		assert_true(hash_xxh64(v[i].in, strlen(v[i].in), v[i].seed) == v[i].want);
}

static void test_hash__matches_zstd_content_checksum(void **state)
{
	uint8_t buf[1000];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)((i * 7 + 3) % 256);
	/* printf '...' | zstd --check: the frame ends with the low 32 bits of XXH64(content, 0). */
	assert_int_equal((uint32_t)hash_xxh64(buf, sizeof(buf), 0), 0x33F1A3FBu);
}

static void test_hash__seed_changes_hash(void **state)
{
	assert_true(hash_xxh64("abc", 3, 0) != hash_xxh64("abc", 3, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash__reference_vectors),
		cmocka_unit_test(test_hash__matches_zstd_content_checksum),
		cmocka_unit_test(test_hash__seed_changes_hash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
