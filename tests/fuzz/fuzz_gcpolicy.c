/* fuzz_gcpolicy.c — GC policies in cbt's syntax (store/gcpolicy.h).
 *
 * Input: the policy text (up to its first NUL), and the same bytes read as a few (version, age) probes.
 * Properties:
 *   - gcp_parse() succeeds with no message, or fails with -EINVAL and one line starting
 *     "invalid GC policy ";
 *   - parse -> gcp_format() -> parse succeeds, formats to the same text (the canonical form is a fixed
 *     point), and the two policies collect exactly the same cells at every probe;
 *   - gcp_format_cbt() always gives a string; gcp_is_never() agrees between the two.
 */
#include <errno.h>

#include "fuzz.h"
#include "gcpolicy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *err = NULL, *canon, *again, *cbt;
	gcp *p = NULL, *q = NULL;
	struct fuzz_in in = { data, size };
	int rc;

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	rc = gcp_parse(text, &p, &err);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	if (rc) {
		FUZZ_CHECK(!p && err && !strncmp(err, "invalid GC policy ", 18) && !strchr(err, '\n'));
		goto out;
	}
	FUZZ_CHECK(p && !err);
	canon = gcp_format(p);
	FUZZ_CHECK(canon);
	rc = gcp_parse(canon, &q, &err);
	if (rc)
		fprintf(stderr, "canonical text %s does not parse: %s\n", canon, err ? err : "?");
	FUZZ_CHECK(rc == 0);
	again = gcp_format(q);
	FUZZ_CHECK(again && !strcmp(again, canon));
	FUZZ_CHECK(gcp_is_never(p) == gcp_is_never(q));
	cbt = gcp_format_cbt(p);
	FUZZ_CHECK(cbt);
	/* Probes: versions and ages around the units, and some taken from the input. */
	for (int i = 0; i < 64; i++) {
		static const int64_t ages[] = { 0, 1, 999, 1000, 60000, 3600000, 86400000, 86400001, (int64_t)1 << 44 };
		uint32_t version = i < 16 ? (uint32_t)i : (uint32_t)fuzz_u64(&in) & 0x1ffff;
		int64_t now = INT64_MAX / 4, age_ms = i < 32 ? ages[i % 9] : (int64_t)(fuzz_u64(&in) >> 20);
		int64_t ts = now - age_ms * 1000 - (i & 1);
		FUZZ_CHECK(gcp_collects(p, version, ts, now) == gcp_collects(q, version, ts, now));
		(void)gcp_collects(p, version, (int64_t)fuzz_u64(&in), (int64_t)fuzz_u64(&in));
	}
	if (gcp_is_never(p))
		FUZZ_CHECK(!gcp_collects(p, 1000, 0, INT64_MAX));
	free(cbt);
	free(again);
	free(canon);
out:
	gcp_free(p);
	gcp_free(q);
	free(err);
	free(text);
	return 0;
}
