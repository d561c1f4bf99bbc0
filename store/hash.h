/* hash.h — XXH64 (Yann Collet's xxHash, 64-bit), the checksum of dump frames. Implemented here from the
 * published specification rather than taken from zstd, whose copy is not part of its public API. */
#ifndef CELLFS_HASH_H
#define CELLFS_HASH_H

#include <stddef.h>
#include <stdint.h>

/* XXH64 of P[0..N) with SEED; equal to the reference XXH64(P, N, SEED). */
uint64_t hash_xxh64(const void *p, size_t n, uint64_t seed);

#endif
