/* hash.c — XXH64 (see hash.h), following the xxHash specification (doc/xxhash_spec.md). */
#include "hash.h"

#include <string.h>

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static inline uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* Little-endian loads, whatever the host. */
static inline uint64_t rd64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t round1(uint64_t acc, uint64_t in)
{
	acc += in * P2;
	acc = rotl(acc, 31);
	return acc * P1;
}

static inline uint64_t merge(uint64_t acc, uint64_t v)
{
	acc ^= round1(0, v);
	return acc * P1 + P4;
}

uint64_t hash_xxh64(const void *data, size_t n, uint64_t seed)
{
	const uint8_t *p = data, *end = p + n;
	uint64_t h;

	if (n >= 32) {
		uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
		const uint8_t *limit = end - 32;
		do {
			v1 = round1(v1, rd64(p));
			v2 = round1(v2, rd64(p + 8));
			v3 = round1(v3, rd64(p + 16));
			v4 = round1(v4, rd64(p + 24));
			p += 32;
		} while (p <= limit);
		h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
		h = merge(h, v1);
		h = merge(h, v2);
		h = merge(h, v3);
		h = merge(h, v4);
	} else {
		h = seed + P5;
	}
	h += (uint64_t)n;
	while (p + 8 <= end) {
		h ^= round1(0, rd64(p));
		h = rotl(h, 27) * P1 + P4;
		p += 8;
	}
	if (p + 4 <= end) {
		h ^= (uint64_t)rd32(p) * P1;
		h = rotl(h, 23) * P2 + P3;
		p += 4;
	}
	while (p < end) {
		h ^= (*p) * P5;
		h = rotl(h, 11) * P1;
		p++;
	}
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}
