/* keyviz_internal.h — what keyviz.c (feeding rows) and kzrules.c (the rules applied to what the rows
 * left) share: the accumulators behind struct kz and a few helpers. Internal to tools/.
 */
#ifndef CELLFS_KEYVIZ_INTERNAL_H
#define CELLFS_KEYVIZ_INTERNAL_H

#include "keyviz.h"

#define HLL_BITS 12
#define HLL_M (1u << HLL_BITS)
#define ENTROPY_POS 32  /* leading characters whose distribution is measured, per depth */
#define SALT_MAX 256    /* a salt has at most this many values ... */
#define SALT_LEN 3      /* ... each at most this long */

struct salt {
	unsigned char v[SALT_LEN];
	unsigned char n;
	uint64_t rows;
	cs_bytes example; /* the first row with it (owned) */
};

/* What one depth gathers beyond its public part. */
struct depth_acc {
	uint64_t *set; /* hashes of the distinct values (open addressing, 0 = empty), NULL once overflowed */
	size_t set_cap, set_n;
	bool overflow;
	uint8_t hll[HLL_M];
	uint64_t num_n, num_min, num_max; /* values of kind number or padded-number (up to 19 digits) */
	uint64_t hexish, inversions;
	cs_bytes inv_lo, inv_hi; /* the first pair: INV_LO (numerically larger) sorts before INV_HI */
	uint32_t (*pos)[256];   /* byte histogram per leading position of hex/base64 values, or NULL */
	uint64_t pos_n;
	bool salt_dead;
	size_t nsalt;
	struct salt *salts;
};

/* A family's versions rule: LIMIT versions kept (0: no versions limit). */
struct fam_acc {
	uint32_t limit;
	uint64_t at_limit; /* columns seen holding exactly LIMIT visible versions */
	size_t nex;
	struct kz_example ex[KZ_EXAMPLES];
	uint64_t collected;
	uint32_t max_versions;
};

struct heap_ent {
	int64_t ts;
	uint64_t tie;
	uint64_t ordinal;
};

struct kz {
	struct kz_opts o;
	struct kz_report r;
	struct depth_acc acc[KZ_MAX_DEPTH];
	struct fam_acc *fam;
	struct heap_ent *heap;
	size_t nheap;
	cs_bytes prev;                  /* the previous row's key (owned) */
	size_t prev_off[KZ_MAX_DEPTH + 1]; /* where its segments start (and one past the last's end + 1) */
	size_t prev_nseg;
	cs_bytes first_key, newest_key; /* owned */
	int64_t newest_ts;
	uint64_t big_rows, near_rows, big_cells, max_row, max_cell;
	struct kz_finding size_f[3];    /* examples gathered for row-size, row-limit, cell-size */
	bool finished;
};

/* printf into a new string (caller frees), or NULL on ENOMEM. */
__attribute__((format(printf, 1, 2)))
char *kz_fmt(const char *f, ...);

/* Replace *B with a copy of P (N bytes). Errors: -ENOMEM (*B unchanged). */
int kz_bytes_set(cs_bytes *b, const void *p, size_t n);

/* Append an example (ROW copied; COLUMN and NOTE taken, and freed if the KZ_EXAMPLES are taken) to EX,
 * which holds *N. Errors: -ENOMEM. */
int kz_example_add(struct kz_example *ex, size_t *n, cs_bytes row, char *column, char *note);

/* The HyperLogLog estimate of the registers REG (HLL_M of them). */
uint64_t kz_hll_estimate(const uint8_t *reg);

/* kz_finish()'s work (kzrules.c): the newest writes measured, the depths' kinds decided, the findings
 * listed. Errors: -ENOMEM. */
int kzr_apply(struct kz *z);

#endif
