/* rx_set.h — sets of bytes, the leaves of a parsed regular expression (rx_parse.h), and the classes Go's
 * regexp/syntax names (\d, [:alpha:], \pL) with its case folding, restricted to the runes 0-255 a byte
 * can be (rx_set.c). A set is 32 bytes; bit b & 7 of byte b >> 3 holds byte b. Internal to rx*.c. */
#ifndef CELLFS_RX_SET_H
#define CELLFS_RX_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline void rx_set_add(uint8_t *set, unsigned b)
{
	set[b >> 3] |= (uint8_t)(1u << (b & 7));
}

static inline bool rx_set_has(const uint8_t *set, unsigned b)
{
	return set[b >> 3] >> (b & 7) & 1;
}

static inline void rx_set_not(uint8_t *set)
{
	for (int i = 0; i < 32; i++)
		set[i] = (uint8_t)~set[i];
}

static inline void rx_set_or(uint8_t *dst, const uint8_t *src)
{
	for (int i = 0; i < 32; i++)
		dst[i] |= src[i];
}

/* Add the runes LO..HI (and, with FOLD, what they fold to) to SET. Runes above 0xFF match no byte. */
void rx_set_range(uint8_t *set, long lo, long hi, bool fold);

/* If C is the letter of a Perl class (\d \D \s \S \w \W), add that class to SET (folded and negated as
 * Go's appendGroup does) and return true; else false. */
bool rx_set_perl(uint8_t *set, char c, bool fold);

/* If NAME (N bytes) is a POSIX class ([:alpha:]), add it to SET (negated when SIGN < 0) and return true;
 * else false. */
bool rx_set_posix(uint8_t *set, const char *name, size_t n, int sign, bool fold);

/* SET = the bytes of \p{NAME} (N bytes: a category or script Go knows, or "Any"). False if Go has no
 * such name. */
bool rx_set_unicode(uint8_t *set, const char *name, size_t n, bool fold);

#endif
