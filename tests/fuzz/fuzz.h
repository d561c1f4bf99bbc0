/* fuzz.h — what every fuzz target defines, and the small helpers the targets share.
 *
 * A target checks properties of the code it drives and abort()s (through FUZZ_CHECK) when one fails, so
 * libFuzzer and the replay driver (replay.c) report it as a crash. Targets print nothing otherwise.
 */
#ifndef CELLFS_FUZZ_H
#define CELLFS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Run one input. Returns 0 (libFuzzer's convention: every input may be added to the corpus). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                                  \
	do {                                                                                              \
		if (!(cond)) {                                                                            \
			fprintf(stderr, "%s:%d: property does not hold: %s\n", __FILE__, __LINE__, #cond);  \
			abort();                                                                          \
		}                                                                                         \
	} while (0)

/* The input, consumed from the front. Taking past the end yields zeros / fewer bytes, never an error. */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	uint8_t v = 0;

	if (in->n) {
		v = in->p[0];
		in->p++;
		in->n--;
	}
	return v;
}

static inline uint64_t fuzz_u64(struct fuzz_in *in)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | fuzz_u8(in);
	return v;
}

/* Up to N bytes: *LEN gets how many there were. */
static inline const uint8_t *fuzz_take(struct fuzz_in *in, size_t n, size_t *len)
{
	const uint8_t *p = in->p;

	if (n > in->n)
		n = in->n;
	in->p += n;
	in->n -= n;
	*len = n;
	return p;
}

/* A heap copy of P (N bytes) with nothing after it, so ASan sees any read past the end. Caller frees. */
static inline uint8_t *fuzz_dup(const void *p, size_t n)
{
	uint8_t *d = malloc(n ? n : 1);

	if (!d)
		abort();
	if (n)
		memcpy(d, p, n);
	return d;
}

#endif
