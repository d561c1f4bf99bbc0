/* keys.c — encoding of the store's logical keys (layout in keys.h). */
#include "keys.h"

#include <errno.h>
#include <string.h>

size_t key_esc(uint8_t *out, const void *p, size_t n)
{
	const uint8_t *s = p;
	size_t i = 0, o = 0;

	if (!n)
		return 0;
	/* Copy runs between NULs whole: every cell written encodes its row and qualifier. */
	for (;;) {
		const uint8_t *z = key_find_nul(s + i, n - i, false);
		size_t run = z ? (size_t)(z - (s + i)) : n - i;
		if (run)
			memcpy(out + o, s + i, run);
		o += run;
		i += run;
		if (!z)
			return o;
		out[o++] = 0x00;
		out[o++] = 0xFF;
		i++;
	}
}

size_t key_enc(uint8_t *out, const void *p, size_t n)
{
	size_t o = key_esc(out, p, n);
	out[o++] = 0x00;
	out[o++] = 0x01;
	return o;
}

int key_dec(const uint8_t *in, size_t n, uint8_t *out, size_t *outn)
{
	return key_dec_inline(in, n, out, outn, false);
}

size_t key_table_data(uint8_t *out, uint32_t tid)
{
	out[0] = KEY_DATA;
	key_put_u32(out + 1, tid);
	return KEY_TABLE_PREFIX;
}

size_t key_row(uint8_t *out, uint32_t tid, cs_bytes row)
{
	size_t o = key_table_data(out, tid);
	return o + key_enc(out + o, row.data, row.len);
}

size_t key_family(uint8_t *out, uint32_t tid, cs_bytes row, const char *family)
{
	size_t o = key_row(out, tid, row), fl = strlen(family);
	memcpy(out + o, family, fl);
	out[o + fl] = 0;
	return o + fl + 1;
}

size_t key_column(uint8_t *out, uint32_t tid, cs_bytes row, const char *family, cs_bytes q)
{
	size_t o = key_family(out, tid, row, family);
	return o + key_enc(out + o, q.data, q.len);
}

size_t key_cell(uint8_t *out, uint32_t tid, cs_bytes row, const char *family, cs_bytes q, int64_t ts)
{
	size_t o = key_column(out, tid, row, family, q);
	key_put_u64(out + o, (uint64_t)(INT64_MAX - ts));
	return o + 8;
}

int key_parse_cell(const uint8_t *k, size_t n, key_parts *kp)
{
	size_t dummy;
	int r;

	if (n < KEY_TABLE_PREFIX + 2 + 1 + 2 + 8 || k[0] != KEY_DATA)
		return -EIO;
	if ((r = key_dec(k + KEY_TABLE_PREFIX, n - 8 - KEY_TABLE_PREFIX, NULL, &dummy)) < 0 || dummy == 0)
		return -EIO;
	return key_parse_tail(k, n, KEY_TABLE_PREFIX + (size_t)r, kp);
}
