/* keys.c — encoding of the store's logical keys (layout in keys.h). */
#include "keys.h"

#include <errno.h>
#include <string.h>

size_t key_esc(uint8_t *out, const void *p, size_t n)
{
	const uint8_t *s = p;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		out[o++] = s[i];
		if (!s[i])
			out[o++] = 0xFF;
	}
	return o;
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
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (in[i]) {
			if (out)
				out[o] = in[i];
			o++;
			continue;
		}
		if (i + 1 >= n)
			return -EIO;
		if (in[i + 1] == 0x01) {
			*outn = o;
			return (int)(i + 2);
		}
		if (in[i + 1] != 0xFF)
			return -EIO;
		if (out)
			out[o] = 0;
		o++;
		i++;
	}
	return -EIO;
}

void key_put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

uint32_t key_get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void key_put_u64(uint8_t *p, uint64_t v)
{
	key_put_u32(p, (uint32_t)(v >> 32));
	key_put_u32(p + 4, (uint32_t)v);
}

uint64_t key_get_u64(const uint8_t *p)
{
	return (uint64_t)key_get_u32(p) << 32 | key_get_u32(p + 4);
}

size_t key_table_data(uint8_t *out, uint32_t tid)
{
	out[0] = KEY_DATA;
	key_put_u32(out + 1, tid);
	return 5;
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
	size_t dummy, o;
	const uint8_t *z;
	int r;

	if (n < 5 + 2 + 1 + 2 + 8 || k[0] != KEY_DATA)
		return -EIO;
	kp->tid = key_get_u32(k + 1);
	kp->row_off = 5;
	if ((r = key_dec(k + 5, n - 8 - 5, NULL, &dummy)) < 0 || dummy == 0)
		return -EIO;
	kp->row_len = (size_t)r;
	o = 5 + (size_t)r;
	z = memchr(k + o, 0, n - 8 - o);
	if (!z || z == k + o)
		return -EIO;
	kp->fam_off = o;
	kp->fam_len = (size_t)(z - (k + o));
	o += kp->fam_len + 1;
	if ((r = key_dec(k + o, n - 8 - o, NULL, &dummy)) < 0 || o + (size_t)r != n - 8)
		return -EIO;
	kp->q_off = o;
	kp->q_len = (size_t)r;
	if (key_get_u64(k + n - 8) > (uint64_t)INT64_MAX)
		return -EIO;
	kp->ts = INT64_MAX - (int64_t)key_get_u64(k + n - 8);
	return 0;
}
