/* keyviz.c — the key-design analysis of cellctl keyviz (keyviz.h): per-depth accumulators fed row by
 * row, then the guides' rules applied to what they hold. Bounded memory: a distinct-value set per depth
 * that turns into a HyperLogLog sketch at KZ_EXACT_CAP, a heap of the newest cells, a few copied keys.
 */
#include "keyviz.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbtfmt.h"

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

const char *kz_rule_name(enum kz_rule r)
{
	static const char *const names[KZ_NRULES] = {
		[KZ_TIMESTAMP_FIRST] = "timestamp-first", [KZ_SEQUENCE_FIRST] = "sequence-first",
		[KZ_HASHED_PREFIX] = "hashed-prefix",     [KZ_SALTED_PREFIX] = "salted-prefix",
		[KZ_UNPADDED_NUMBERS] = "unpadded-numbers", [KZ_REVERSED_TS] = "reversed-timestamp",
		[KZ_ROW_SIZE] = "row-size",               [KZ_ROW_LIMIT] = "row-limit",
		[KZ_CELL_SIZE] = "cell-size",             [KZ_FAMILIES] = "families",
		[KZ_VERSIONS] = "versions",
	};
	return (unsigned)r < KZ_NRULES ? names[r] : "?";
}

/* ---- Small tools -------------------------------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t hash_bytes(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return mix64(h ^ n);
}

static int bytes_set(cs_bytes *b, const void *p, size_t n)
{
	void *c = malloc(n ? n : 1);
	if (!c)
		return -ENOMEM;
	memcpy(c, p, n);
	free((void *)b->data);
	*b = CS_BYTES(c, n);
	return 0;
}

static void bytes_free(cs_bytes *b)
{
	free((void *)b->data);
	*b = CS_BYTES(NULL, 0);
}

__attribute__((format(printf, 1, 2)))
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* ---- Distinct values: exact set, then HyperLogLog ------------------------------------------------- */

static int distinct_add(struct depth_acc *a, uint64_t h)
{
	unsigned idx = (unsigned)(h >> (64 - HLL_BITS));
	uint64_t w = h << HLL_BITS | (1ull << (HLL_BITS - 1));
	uint8_t rank = (uint8_t)(__builtin_clzll(w) + 1);

	if (rank > a->hll[idx])
		a->hll[idx] = rank;
	if (a->overflow)
		return 0;
	if (!h)
		h = 1;
	if (2 * (a->set_n + 1) > a->set_cap) {
		size_t cap = a->set_cap ? a->set_cap * 2 : 64;
		uint64_t *s;
		if (a->set_n + 1 > KZ_EXACT_CAP) {
			free(a->set);
			a->set = NULL;
			a->overflow = true;
			return 0;
		}
		if (!(s = calloc(cap, sizeof *s)))
			return -ENOMEM;
		for (size_t i = 0; i < a->set_cap; i++) {
			if (!a->set[i])
				continue;
			size_t j = a->set[i] & (cap - 1);
			while (s[j])
				j = (j + 1) & (cap - 1);
			s[j] = a->set[i];
		}
		free(a->set);
		a->set = s;
		a->set_cap = cap;
	}
	size_t j = h & (a->set_cap - 1);
	while (a->set[j] && a->set[j] != h)
		j = (j + 1) & (a->set_cap - 1);
	if (!a->set[j]) {
		a->set[j] = h;
		a->set_n++;
		return 1;
	}
	return 0;
}

static uint64_t hll_estimate(const uint8_t *reg)
{
	double sum = 0, m = HLL_M, e;
	unsigned zeros = 0;

	for (unsigned i = 0; i < HLL_M; i++) {
		sum += ldexp(1.0, -reg[i]);
		zeros += !reg[i];
	}
	e = 0.7213 / (1 + 1.079 / m) * m * m / sum;
	if (e <= 2.5 * m && zeros)
		e = m * log(m / zeros); /* linear counting for small sets */
	return (uint64_t)llround(e);
}

/* ---- Feeding rows ------------------------------------------------------------------------------- */

int kz_new(const struct kz_opts *opts, struct kz **out)
{
	struct kz *z = calloc(1, sizeof *z);
	size_t nf = opts->info ? opts->info->nfamilies : 0;

	if (!z || !(z->heap = malloc(KZ_WINDOW_CAP * sizeof *z->heap)) ||
	    (nf && !(z->fam = calloc(nf, sizeof *z->fam)))) {
		kz_free(z);
		return -ENOMEM;
	}
	z->o = *opts;
	for (size_t i = 0; i < nf; i++) {
		/* a versions limit that always holds: maxversions=N alone or in an "or" chain (an "and" keeps
		 * more than N versions while they are young, so it is left out) */
		const char *gc = opts->info->families[i].gc, *m;
		unsigned long best = 0;
		if (!gc || strstr(gc, " and "))
			continue;
		for (m = gc; (m = strstr(m, "maxversions=")); m += 12) {
			unsigned long n = strtoul(m + 12, NULL, 10);
			if (n && (!best || n < best))
				best = n;
		}
		z->fam[i].limit = (uint32_t)best;
	}
	*out = z;
	return 0;
}

/* The family F's index in the schema (sorted by name), or -1. */
static int fam_index(const struct kz *z, const char *f)
{
	size_t lo = 0, hi = z->o.info ? z->o.info->nfamilies : 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(z->o.info->families[mid].name, f);
		if (!c)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static char *column_name(const char *family, cs_bytes q)
{
	char *qq = cbtfmt_quote_dup(q.data, q.len), *s;
	if (!qq)
		return NULL;
	/* the qualifier bare when it prints as itself, else Go-quoted */
	if (strlen(qq) == q.len + 2 && !memcmp(qq + 1, q.data, q.len))
		s = fmt("%s:%.*s", family, (int)q.len, (const char *)q.data);
	else
		s = fmt("%s:%s", family, qq);
	free(qq);
	return s;
}

static int example_add(struct kz_example *ex, size_t *n, cs_bytes row, char *column, char *note)
{
	struct kz_example *e;
	if (*n >= KZ_EXAMPLES) {
		free(column);
		free(note);
		return 0;
	}
	e = &ex[(*n)++];
	e->column = column;
	e->note = note;
	return bytes_set(&e->row, row.data, row.len);
}

static void heap_push(struct kz *z, struct heap_ent e)
{
	size_t i;
	/* a min-heap on (ts, tie): the root is the oldest of the newest cells kept */
	if (z->nheap == KZ_WINDOW_CAP) {
		struct heap_ent *r = &z->heap[0];
		if (e.ts < r->ts || (e.ts == r->ts && e.tie <= r->tie))
			return;
		i = 0;
		for (;;) {
			size_t c = 2 * i + 1, m = i;
			struct heap_ent *me = &e;
			if (c < z->nheap && (z->heap[c].ts < me->ts || (z->heap[c].ts == me->ts && z->heap[c].tie < me->tie)))
				m = c, me = &z->heap[c];
			if (c + 1 < z->nheap &&
			    (z->heap[c + 1].ts < me->ts || (z->heap[c + 1].ts == me->ts && z->heap[c + 1].tie < me->tie)))
				m = c + 1;
			if (m == i)
				break;
			z->heap[i] = z->heap[m];
			i = m;
		}
		z->heap[i] = e;
		return;
	}
	for (i = z->nheap++; i > 0; i = (i - 1) / 2) {
		struct heap_ent *p = &z->heap[(i - 1) / 2];
		if (p->ts < e.ts || (p->ts == e.ts && p->tie <= e.tie))
			break;
		z->heap[i] = *p;
	}
	z->heap[i] = e;
}

static void salt_add(struct depth_acc *a, const unsigned char *p, size_t n, cs_bytes row)
{
	if (a->salt_dead)
		return;
	if (n == 0 || n > SALT_LEN) {
		a->salt_dead = true;
		return;
	}
	for (size_t i = 0; i < a->nsalt; i++)
		if (a->salts[i].n == n && !memcmp(a->salts[i].v, p, n)) {
			a->salts[i].rows++;
			return;
		}
	if (a->nsalt == SALT_MAX || (!a->salts && !(a->salts = calloc(SALT_MAX, sizeof *a->salts)))) {
		a->salt_dead = true;
		return;
	}
	struct salt *s = &a->salts[a->nsalt++];
	memcpy(s->v, p, n);
	s->n = (unsigned char)n;
	s->rows = 1;
	bytes_set(&s->example, row.data, row.len); /* an example missing on ENOMEM is harmless */
}

static int depth_add(struct kz *z, int d, const unsigned char *p, size_t n, const cs_row *row, const size_t *off)
{
	struct kz_depth *dp = &z->r.depths[d];
	struct depth_acc *a = &z->acc[d];
	const char *unit;
	enum kzc_kind k = kzc_classify(p, n, &unit);
	uint64_t v;
	int rc;

	dp->rows++;
	dp->kinds[k]++;
	if (dp->rows == 1 || n < dp->min_len)
		dp->min_len = n;
	if (n > dp->max_len)
		dp->max_len = n;
	if ((k == KZC_TIMESTAMP || k == KZC_REVTS) && !dp->unit)
		dp->unit = unit;
	if ((rc = distinct_add(a, hash_bytes(p, n))) < 0)
		return rc;
	if (rc == 1 && dp->nsamples < KZ_SAMPLES) {
		if ((rc = bytes_set(&dp->samples[dp->nsamples], p, n)) < 0)
			return rc;
		dp->nsamples++;
	}
	if ((k == KZC_NUMBER || k == KZC_PADDED) && kzc_digits(p, n, &v)) {
		if (!a->num_n || v < a->num_min)
			a->num_min = v;
		if (!a->num_n || v > a->num_max)
			a->num_max = v;
		a->num_n++;
	}
	/* hash candidates: the distribution of their leading characters */
	bool hexish = n >= 6 && (k == KZC_HEX || ((k == KZC_NUMBER || k == KZC_PADDED) && n <= 64));
	if (hexish)
		a->hexish++;
	if (hexish || k == KZC_BASE64) {
		if (!a->pos && !(a->pos = calloc(ENTROPY_POS, sizeof *a->pos)))
			return -ENOMEM;
		for (size_t i = 0; i < n && i < ENTROPY_POS; i++)
			a->pos[i][p[i]]++;
		a->pos_n++;
	}
	salt_add(a, p, n, row->key);
	/* numbers out of numeric order: the previous row shares every segment before this one */
	if ((size_t)d < z->prev_nseg && z->prev_off[d] == off[d] && !memcmp(z->prev.data, row->key.data, off[d])) {
		const unsigned char *q = (const unsigned char *)z->prev.data + z->prev_off[d];
		size_t qn = z->prev_off[d + 1] - 1 - z->prev_off[d];
		uint64_t pv;
		if (qn != n && kzc_digits(p, n, &v) && kzc_digits(q, qn, &pv) && pv > v) {
			if (!a->inversions && ((rc = bytes_set(&a->inv_lo, z->prev.data, z->prev.len)) < 0 ||
					       (rc = bytes_set(&a->inv_hi, row->key.data, row->key.len)) < 0))
				return rc;
			a->inversions++;
		}
	}
	return 0;
}

int kz_add_row(struct kz *z, const cs_row *row)
{
	const unsigned char *k = row->key.data;
	size_t off[KZ_MAX_DEPTH + 1], nseg = 0, start = 0;
	uint64_t ordinal = z->r.rows++, bytes = 0;
	int rc = 0;

	/* the segments: off[i] where segment i starts; off[nseg] one past the end plus one */
	for (size_t i = 0; i <= row->key.len && nseg < KZ_MAX_DEPTH; i++) {
		if (i == row->key.len || k[i] == (unsigned char)z->o.delim) {
			off[nseg++] = start;
			start = i + 1;
		}
	}
	off[nseg] = start;
	if (nseg == KZ_MAX_DEPTH && start <= row->key.len)
		z->r.deeper_rows++;
	/* the last analysed segment ends at the next delimiter (or the key's end) */
	for (size_t d = 0; d < nseg; d++)
		if ((rc = depth_add(z, (int)d, k + off[d], off[d + 1] - 1 - off[d], row, off)) < 0)
			return rc;
	if (nseg > z->r.ndepths)
		z->r.ndepths = nseg;
	if (!ordinal && (rc = bytes_set(&z->first_key, k, row->key.len)) < 0)
		return rc;

	/* cells: sizes, the newest writes, versions per column */
	for (size_t i = 0, run = 0; i < row->ncells; i++) {
		const cs_cell *c = &row->cells[i];
		bool same = i && row->cells[i - 1].family == c->family &&
			    row->cells[i - 1].qualifier.len == c->qualifier.len &&
			    !memcmp(row->cells[i - 1].qualifier.data, c->qualifier.data, c->qualifier.len);

		z->r.cells++;
		z->r.value_bytes += c->value_len;
		bytes += c->value_len;
		heap_push(z, (struct heap_ent){ c->ts, mix64(ordinal * 0x9e3779b97f4a7c15ULL + i), ordinal });
		if (c->ts > z->newest_ts || !z->newest_key.data) {
			z->newest_ts = c->ts;
			if ((rc = bytes_set(&z->newest_key, k, row->key.len)) < 0)
				return rc;
		}
		if (c->value_len > z->o.cell_size) {
			z->big_cells++;
			if (c->value_len > z->max_cell)
				z->max_cell = c->value_len;
			struct kz_finding *f = &z->size_f[2];
			if (f->nexamples < KZ_EXAMPLES &&
			    (rc = example_add(f->examples, &f->nexamples, row->key, column_name(c->family, c->qualifier),
					      fmt("%llu bytes @%lld", (unsigned long long)c->value_len, (long long)c->ts))) < 0)
				return rc;
		}
		run = same ? run + 1 : 1;
		bool last_of_col = i + 1 == row->ncells || row->cells[i + 1].family != c->family ||
				   row->cells[i + 1].qualifier.len != c->qualifier.len ||
				   memcmp(row->cells[i + 1].qualifier.data, c->qualifier.data, c->qualifier.len);
		int fi;
		if (last_of_col && (fi = fam_index(z, c->family)) >= 0 && z->fam[fi].limit && run == z->fam[fi].limit) {
			struct fam_acc *fa = &z->fam[fi];
			fa->at_limit++;
			if (fa->nex < KZ_EXAMPLES &&
			    (rc = example_add(fa->ex, &fa->nex, row->key, column_name(c->family, c->qualifier),
					      fmt("%zu versions", run))) < 0)
				return rc;
		}
	}
	for (int near = 0; near < 2; near++) {
		struct kz_finding *f = &z->size_f[near];
		if (near ? !(z->o.row_limit && bytes >= z->o.row_limit / 5 * 4) : bytes <= z->o.row_size)
			continue;
		if (near)
			z->near_rows++;
		else
			z->big_rows++;
		if (bytes > z->max_row)
			z->max_row = bytes;
		if (f->nexamples < KZ_EXAMPLES &&
		    (rc = example_add(f->examples, &f->nexamples, row->key, NULL,
				      fmt("%llu bytes", (unsigned long long)bytes))) < 0)
			return rc;
	}
	/* keep this key as the previous one */
	if ((rc = bytes_set(&z->prev, k, row->key.len)) < 0)
		return rc;
	memcpy(z->prev_off, off, (nseg + 1) * sizeof *off);
	z->prev_nseg = nseg;
	return 0;
}

bool kz_wants_stats(const struct kz *z)
{
	for (size_t i = 0; z->o.info && i < z->o.info->nfamilies; i++)
		if (z->fam[i].limit)
			return true;
	return false;
}

void kz_add_stats(struct kz *z, const cs_table_stats *s)
{
	for (size_t i = 0; i < s->nfamilies; i++) {
		int fi = fam_index(z, s->families[i].name);
		if (fi >= 0) {
			z->fam[fi].collected = s->families[i].collected_cells;
			z->fam[fi].max_versions = s->families[i].max_versions;
		}
	}
	z->r.have_stats = true;
}

/* ---- The rules ---------------------------------------------------------------------------------- */

static char *human(uint64_t n)
{
	if (n >= 1ull << 30)
		return fmt("%.1f GiB", (double)n / (1ull << 30));
	if (n >= 1ull << 20)
		return fmt("%.1f MiB", (double)n / (1ull << 20));
	if (n >= 1ull << 10)
		return fmt("%.1f KiB", (double)n / (1ull << 10));
	return fmt("%llu bytes", (unsigned long long)n);
}

static struct kz_finding *finding(struct kz *z, enum kz_rule rule, int depth)
{
	struct kz_finding *f = realloc(z->r.findings, (z->r.nfindings + 1) * sizeof *f);
	if (!f)
		return NULL;
	z->r.findings = f;
	f = &f[z->r.nfindings++];
	memset(f, 0, sizeof *f);
	f->rule = rule;
	f->depth = depth;
	return f;
}

static void number(struct kz_finding *f, const char *name, double v)
{
	if (f->nnumbers < KZ_MAX_NUMBERS)
		f->numbers[f->nnumbers++] = (struct kz_number){ name, v };
}

static int example(struct kz_finding *f, cs_bytes row, const char *note)
{
	if (!row.data)
		return 0;
	return example_add(f->examples, &f->nexamples, row, NULL, note ? strdup(note) : NULL);
}

/* The share of leading characters' entropy of the hash candidates at A, against the most LEN-long
 * values of an alphabet of 2^BITS symbols could show in so many samples. */
static double entropy_ratio(const struct depth_acc *a, size_t len, double bits, double *mean_bits)
{
	double sum = 0, max;
	size_t np = len < ENTROPY_POS ? len : ENTROPY_POS;

	if (!a->pos || !np || a->pos_n < 2)
		return 0;
	for (size_t i = 0; i < np; i++) {
		double c = 0, h = 0;
		for (int b = 0; b < 256; b++)
			c += a->pos[i][b];
		for (int b = 0; b < 256; b++)
			if (a->pos[i][b])
				h -= a->pos[i][b] / c * log2(a->pos[i][b] / c);
		sum += h;
	}
	*mean_bits = sum / (double)np;
	max = fmin(bits, log2((double)a->pos_n));
	return *mean_bits / max;
}

static void classify_depth(struct kz *z, int d, bool leading)
{
	struct kz_depth *dp = &z->r.depths[d];
	struct depth_acc *a = &z->acc[d];
	uint64_t numeric = dp->kinds[KZC_NUMBER] + dp->kinds[KZC_PADDED];

	dp->distinct_exact = !a->overflow;
	dp->distinct = a->overflow ? hll_estimate(a->hll) : a->set_n;
	if (!a->overflow && dp->distinct > dp->rows)
		dp->distinct = dp->rows;
	dp->kind = KZC_NKINDS;
	for (int k = 0; k < KZC_NKINDS; k++)
		if (dp->kinds[k] * 10 >= dp->rows * 9)
			dp->kind = (enum kzc_kind)k;
	if (dp->kind == KZC_NKINDS && numeric * 10 >= dp->rows * 9)
		dp->kind = dp->kinds[KZC_PADDED] > dp->kinds[KZC_NUMBER] ? KZC_PADDED : KZC_NUMBER;
	bool is_num = dp->kind == KZC_NUMBER || dp->kind == KZC_PADDED;

	/* a hash: hex (or base64) of one length, its characters close to uniformly spread */
	double bits = 0;
	if (dp->min_len == dp->max_len && dp->min_len >= 8 && dp->rows >= 2) {
		double ratio = 0;
		if (a->hexish * 10 >= dp->rows * 9 && dp->kinds[KZC_HEX] * 2 >= dp->rows)
			ratio = entropy_ratio(a, dp->min_len, 4, &bits);
		else if (dp->kinds[KZC_BASE64] * 10 >= dp->rows * 9)
			ratio = entropy_ratio(a, dp->min_len, 6, &bits);
		dp->hash = ratio >= 0.8;
	}
	/* a sequence: numbers covering most of their range */
	if (is_num && !dp->hash && dp->distinct >= 10 && a->num_n * 10 >= dp->rows * 9 &&
	    dp->distinct * 2 >= a->num_max - a->num_min + 1)
		dp->sequence = true;
	/* a salt, at the first depth that varies: a few short values (small numbers from 0 or 1, or single
	 * characters), each with about as many rows, each followed by more key */
	if (leading && !a->salt_dead && a->nsalt >= 2 && d + 1 < KZ_MAX_DEPTH &&
	    z->r.depths[d + 1].rows * 10 >= dp->rows * 9) {
		uint64_t lo = UINT64_MAX, hi = 0, vmin = UINT64_MAX, vmax = 0, v;
		bool numbers = true, chars = true;
		for (size_t i = 0; i < a->nsalt; i++) {
			struct salt *s = &a->salts[i];
			lo = s->rows < lo ? s->rows : lo;
			hi = s->rows > hi ? s->rows : hi;
			chars &= s->n == 1;
			if (kzc_digits(s->v, s->n, &v)) {
				vmin = v < vmin ? v : vmin;
				vmax = v > vmax ? v : vmax;
			} else {
				numbers = false;
			}
		}
		numbers &= vmin <= 1 && vmax - vmin + 1 == a->nsalt;
		dp->salt = (numbers || chars) && lo >= 2 && lo * 4 >= hi;
	}
	if (is_num && !dp->hash && !dp->salt)
		dp->unpadded = a->inversions > 0;

	if (dp->salt)
		snprintf(dp->detail, sizeof dp->detail, "salt: %zu values", a->nsalt);
	else if (dp->hash)
		snprintf(dp->detail, sizeof dp->detail, "hash: %zu %s characters, %.1f bits each", dp->min_len,
			 dp->kinds[KZC_BASE64] * 2 > dp->rows ? "base64" : "hex", bits);
	else if (dp->sequence)
		snprintf(dp->detail, sizeof dp->detail, "sequence %llu..%llu", (unsigned long long)a->num_min,
			 (unsigned long long)a->num_max);
	else if (dp->kind == KZC_TIMESTAMP)
		snprintf(dp->detail, sizeof dp->detail, "timestamp (%s)", dp->unit ? dp->unit : "?");
	else if (dp->kind == KZC_REVTS)
		snprintf(dp->detail, sizeof dp->detail, "reversed timestamp (Long.MAX - %s)", dp->unit ? dp->unit : "?");
	else if (is_num && dp->min_len == dp->max_len)
		snprintf(dp->detail, sizeof dp->detail, "%snumbers, %zu digits",
			 dp->kinds[KZC_PADDED] ? "zero-padded " : "", dp->min_len);
	else if (is_num)
		snprintf(dp->detail, sizeof dp->detail, "numbers, %zu-%zu digits, not zero-padded", dp->min_len,
			 dp->max_len);
	else if (dp->kind == KZC_DOMAIN)
		snprintf(dp->detail, sizeof dp->detail, "domain names");
	else if (dp->kind == KZC_RDOMAIN)
		snprintf(dp->detail, sizeof dp->detail, "reversed domain names");
	else if (dp->kind != KZC_NKINDS && dp->min_len == dp->max_len)
		snprintf(dp->detail, sizeof dp->detail, "%s, %zu byte%s", kzc_kind_name(dp->kind), dp->min_len,
			 dp->min_len == 1 ? "" : "s");
	else if (dp->kind != KZC_NKINDS)
		snprintf(dp->detail, sizeof dp->detail, "%s, %zu-%zu bytes", kzc_kind_name(dp->kind), dp->min_len,
			 dp->max_len);
	else {
		/* mixed: the two most common kinds */
		uint64_t t1 = 0, t2 = 0;
		enum kzc_kind a1 = KZC_TEXT, a2 = KZC_TEXT;
		for (int k = 0; k < KZC_NKINDS; k++) {
			if (dp->kinds[k] > t1) {
				t2 = t1, a2 = a1;
				t1 = dp->kinds[k], a1 = (enum kzc_kind)k;
			} else if (dp->kinds[k] > t2) {
				t2 = dp->kinds[k], a2 = (enum kzc_kind)k;
			}
		}
		snprintf(dp->detail, sizeof dp->detail, "mixed: %s %.0f%%, %s %.0f%%", kzc_kind_name(a1),
			 100.0 * (double)t1 / (double)dp->rows, kzc_kind_name(a2), 100.0 * (double)t2 / (double)dp->rows);
	}
}

static int cmp_newest(const void *x, const void *y)
{
	const struct heap_ent *a = x, *b = y;
	if (a->ts != b->ts)
		return a->ts > b->ts ? -1 : 1;
	return a->tie > b->tie ? -1 : a->tie < b->tie;
}

static void measure_writes(struct kz *z)
{
	struct kz_writes *w = &z->r.writes;
	uint64_t rows = z->r.rows, cells = z->r.cells;
	double frac = 0.01;

	if (!cells)
		return;
	qsort(z->heap, z->nheap, sizeof *z->heap, cmp_newest);
	if (cells >= 1000) {
		w->window = (cells + 99) / 100;
	} else {
		w->window = cells / 4 < 10 ? cells / 4 : 10; /* a small table: 10 cells, at most a quarter */
		w->window = w->window < 1 ? 1 : w->window;
		frac = (double)w->window / (double)cells;
	}
	if (w->window > z->nheap)
		w->window = z->nheap;
	w->region = (uint64_t)llround((double)rows * frac);
	w->region = w->region < 1 ? 1 : w->region > rows ? rows : w->region;
	for (uint64_t i = 0; i < w->window; i++) {
		w->in_last += z->heap[i].ordinal >= rows - w->region;
		w->in_first += z->heap[i].ordinal < w->region;
	}
	w->newest_ts = z->heap[0].ts;
	w->window_oldest_ts = z->heap[w->window - 1].ts;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

/* The depth findings at the first depth that varies, L: timestamp, sequence, hash, salt. */
static int leading_findings(struct kz *z, int L)
{
	struct kz_depth *dp = &z->r.depths[L];
	struct depth_acc *a = &z->acc[L];
	const struct kz_writes *w = &z->r.writes;
	struct kz_finding *f = NULL;
	char *where = fmt("of the newest %llu writes (cells by timestamp), %llu (%.0f%%) are in the last %llu "
			  "rows (%.1f%% of the key space; without a hotspot about that share)",
			  (unsigned long long)w->window, (unsigned long long)w->in_last, pct(w->in_last, w->window),
			  (unsigned long long)w->region, pct(w->region, z->r.rows));
	int rc = -ENOMEM;

	if (!where)
		return -ENOMEM;
	if (dp->kind == KZC_TIMESTAMP && dp->rows >= 2) {
		if (!(f = finding(z, KZ_TIMESTAMP_FIRST, L)) ||
		    !(f->message = fmt("keys start with a timestamp (%s) at depth %d: new rows all go to the end of "
				       "the key space, where one node takes every write; put a field first "
				       "(EXCHANGE#SYMBOL#TIME) and the time last. Here, %s",
				       dp->unit, L, where)))
			goto out;
	} else if (dp->sequence && dp->distinct * 2 >= dp->rows) {
		if (!(f = finding(z, KZ_SEQUENCE_FIRST, L)) ||
		    !(f->message = fmt("keys start with a sequential number at depth %d (%llu values from %llu to "
				       "%llu): new rows all go to the end of the key space, where one node takes "
				       "every write; put a field first and the number after it. Here, %s",
				       L, (unsigned long long)dp->distinct, (unsigned long long)a->num_min,
				       (unsigned long long)a->num_max, where)))
			goto out;
		number(f, "distinct", (double)dp->distinct);
		number(f, "min", (double)a->num_min);
		number(f, "max", (double)a->num_max);
	}
	if (f) {
		number(f, "newest_cells", (double)w->window);
		number(f, "in_last_rows", (double)w->in_last);
		number(f, "last_rows", (double)w->region);
		bool newest_last = z->newest_key.len == z->prev.len &&
				   !memcmp(z->newest_key.data, z->prev.data, z->prev.len);
		if ((rc = example(f, z->first_key, "the first row")) < 0 ||
		    (rc = example(f, z->prev, "the last row: new rows go after it")) < 0 ||
		    (!newest_last && (rc = example(f, z->newest_key, "the row with the newest cell")) < 0))
			goto out;
	}
	if (dp->hash && (L == 0 || dp->distinct * 2 >= dp->rows)) {
		if (!(f = finding(z, KZ_HASHED_PREFIX, L)) ||
		    !(f->message = fmt("keys start with a hash at depth %d (%s, %llu distinct values): rows are in "
				       "no useful order, so reading a range of anything else scans the whole table; "
				       "put the field that was hashed in the key instead (field promotion)",
				       L, dp->detail, (unsigned long long)dp->distinct)))
			goto out;
		number(f, "distinct", (double)dp->distinct);
		number(f, "length", (double)dp->min_len);
		if ((rc = example(f, z->first_key, NULL)) < 0 || (rc = example(f, z->prev, NULL)) < 0)
			goto out;
	}
	if (dp->salt) {
		uint64_t lo = UINT64_MAX, hi = 0;
		char range[48];
		for (size_t i = 0; i < a->nsalt; i++) {
			lo = a->salts[i].rows < lo ? a->salts[i].rows : lo;
			hi = a->salts[i].rows > hi ? a->salts[i].rows : hi;
		}
		if (lo == hi)
			snprintf(range, sizeof range, "%llu", (unsigned long long)lo);
		else
			snprintf(range, sizeof range, "%llu to %llu", (unsigned long long)lo, (unsigned long long)hi);
		if (!(f = finding(z, KZ_SALTED_PREFIX, L)) ||
		    !(f->message = fmt("a salt at depth %d: %zu short values with %s rows each, each "
				       "followed by the same kind of key: reading a range of what follows takes %zu "
				       "scans, one per salt value; put a real field first instead (field promotion)",
				       L, a->nsalt, range, a->nsalt)))
			goto out;
		number(f, "salts", (double)a->nsalt);
		number(f, "rows_min", (double)lo);
		number(f, "rows_max", (double)hi);
		for (size_t i = 0; i < a->nsalt; i++)
			if ((rc = example(f, a->salts[i].example, NULL)) < 0)
				goto out;
	}
	rc = 0;
out:
	free(where);
	return rc;
}

static int depth_findings(struct kz *z, int d, int L)
{
	struct kz_depth *dp = &z->r.depths[d];
	struct depth_acc *a = &z->acc[d];
	const struct kz_writes *w = &z->r.writes;
	struct kz_finding *f;
	int rc;

	if (dp->unpadded) {
		char *hi = cbtfmt_quote_dup(a->inv_hi.data, a->inv_hi.len), *note;
		if (!hi || !(f = finding(z, KZ_UNPADDED_NUMBERS, d)) ||
		    !(f->message = fmt("numbers of %zu to %zu digits at depth %d are not zero-padded: keys sort as "
				       "text, so \"10\" sorts before \"9\" (%llu neighbouring rows out of numeric "
				       "order); pad them to one width (0000987654)",
				       dp->min_len, dp->max_len, d, (unsigned long long)a->inversions))) {
			free(hi);
			return -ENOMEM;
		}
		number(f, "min_digits", (double)dp->min_len);
		number(f, "max_digits", (double)dp->max_len);
		number(f, "out_of_order", (double)a->inversions);
		note = fmt("sorts before %s", hi);
		free(hi);
		if (!note)
			return -ENOMEM;
		rc = example_add(f->examples, &f->nexamples, a->inv_lo, NULL, note);
		if (rc < 0 || (rc = example(f, a->inv_hi, NULL)) < 0)
			return rc;
	}
	if (dp->kind == KZC_REVTS) {
		char *lead = d == L ? fmt(" They lead the key: of the newest %llu writes, %llu (%.0f%%) are in the "
					  "first %llu rows (%.1f%% of the key space), where one node takes them",
					  (unsigned long long)w->window, (unsigned long long)w->in_first,
					  pct(w->in_first, w->window), (unsigned long long)w->region,
					  pct(w->region, z->r.rows))
				    : strdup("");
		if (!lead || !(f = finding(z, KZ_REVERSED_TS, d)) ||
		    !(f->message = fmt("reversed timestamps (Long.MAX - %s) at depth %d: rows sort newest first, but "
				       "the keys no longer read as times; a reversed read (cellctl read T "
				       "reversed=true) gives newest first with plain timestamps.%s",
				       dp->unit, d, lead))) {
			free(lead);
			return -ENOMEM;
		}
		free(lead);
		number(f, "rows", (double)dp->rows);
		if (d == L) {
			number(f, "newest_cells", (double)w->window);
			number(f, "in_first_rows", (double)w->in_first);
			number(f, "first_rows", (double)w->region);
		}
		if ((rc = example(f, z->first_key, NULL)) < 0 || (rc = example(f, z->prev, NULL)) < 0)
			return rc;
	}
	return 0;
}

/* Move the examples gathered in G into the new finding F. */
static void take_examples(struct kz_finding *f, struct kz_finding *g)
{
	memcpy(f->examples, g->examples, sizeof g->examples);
	f->nexamples = g->nexamples;
	g->nexamples = 0;
}

static int size_findings(struct kz *z)
{
	struct kz_finding *f;
	char *a = NULL, *b = NULL, *c = NULL;
	int rc = -ENOMEM;

	if (z->big_rows) {
		if (!(a = human(z->o.row_size)) || !(b = human(z->max_row)) || !(f = finding(z, KZ_ROW_SIZE, -1)) ||
		    !(f->message = fmt("%llu rows hold over %s of values (the guide: a row under 100 MB), the "
				       "largest %s: split them into more rows (tall, narrow tables)",
				       (unsigned long long)z->big_rows, a, b)))
			goto out;
		number(f, "rows", (double)z->big_rows);
		number(f, "largest_bytes", (double)z->max_row);
		number(f, "threshold_bytes", (double)z->o.row_size);
		take_examples(f, &z->size_f[0]);
		free(a), free(b), a = b = NULL;
	}
	if (z->near_rows) {
		if (!(a = human(z->o.row_limit / 5 * 4)) || !(b = human(z->o.row_limit)) || !(c = human(z->max_row)) ||
		    !(f = finding(z, KZ_ROW_LIMIT, -1)) ||
		    !(f->message = fmt("%llu rows hold %s or more, near the hard limit of %s a row, the largest %s: "
				       "a write that takes one past it fails", (unsigned long long)z->near_rows, a, b, c)))
			goto out;
		number(f, "rows", (double)z->near_rows);
		number(f, "largest_bytes", (double)z->max_row);
		number(f, "limit_bytes", (double)z->o.row_limit);
		take_examples(f, &z->size_f[1]);
		free(a), free(b), free(c), a = b = c = NULL;
	}
	if (z->big_cells) {
		if (!(a = human(z->o.cell_size)) || !(b = human(z->max_cell)) || !(f = finding(z, KZ_CELL_SIZE, -1)) ||
		    !(f->message = fmt("%llu cells hold over %s (the guide: a cell under 10 MB), the largest %s: "
				       "keep large objects elsewhere and their names in the cell",
				       (unsigned long long)z->big_cells, a, b)))
			goto out;
		number(f, "cells", (double)z->big_cells);
		number(f, "largest_bytes", (double)z->max_cell);
		number(f, "threshold_bytes", (double)z->o.cell_size);
		take_examples(f, &z->size_f[2]);
	}
	rc = 0;
out:
	free(a), free(b), free(c);
	return rc;
}

static int schema_findings(struct kz *z)
{
	const cs_table_info *info = z->o.info;
	struct kz_finding *f;

	if (!info)
		return 0;
	if (info->nfamilies > z->o.max_families) {
		if (!(f = finding(z, KZ_FAMILIES, -1)) ||
		    !(f->message = fmt("%zu column families, more than %u: keep families few (the guide: under about "
				       "100) and group the columns read together in one family",
				       info->nfamilies, z->o.max_families)))
			return -ENOMEM;
		number(f, "families", (double)info->nfamilies);
		number(f, "threshold", z->o.max_families);
		for (size_t i = 0; i < info->nfamilies && f->nexamples < KZ_EXAMPLES; i++) {
			struct kz_example *e = &f->examples[f->nexamples++];
			if (!(e->column = strdup(info->families[i].name)))
				return -ENOMEM;
		}
	}
	for (size_t i = 0; z->r.have_stats && i < info->nfamilies; i++) {
		struct fam_acc *fa = &z->fam[i];
		if (!fa->limit || fa->max_versions <= fa->limit || !fa->collected)
			continue;
		if (!(f = finding(z, KZ_VERSIONS, -1)) ||
		    !(f->message = fmt("family %s keeps %u versions (%s) but its columns were written up to %u: %llu "
				       "cells are collected and wait for gc; write new rows rather than new "
				       "versions, unless a value's history matters",
				       info->families[i].name, fa->limit, info->families[i].gc, fa->max_versions,
				       (unsigned long long)fa->collected)))
			return -ENOMEM;
		number(f, "max_versions", fa->limit);
		number(f, "most_written", fa->max_versions);
		number(f, "collected_cells", (double)fa->collected);
		number(f, "columns_at_limit", (double)fa->at_limit);
		memcpy(f->examples, fa->ex, sizeof fa->ex);
		f->nexamples = fa->nex;
		fa->nex = 0;
	}
	return 0;
}

int kz_finish(struct kz *z, const struct kz_report **out)
{
	int L = 0, rc;

	if (z->finished)
		return -EINVAL;
	z->finished = true;
	measure_writes(z);
	for (size_t d = 0; d < z->r.ndepths; d++) {
		struct depth_acc *a = &z->acc[d];
		z->r.depths[d].distinct = a->overflow ? hll_estimate(a->hll) : a->set_n;
	}
	while ((size_t)L + 1 < z->r.ndepths && z->r.depths[L].distinct == 1)
		L++;
	for (size_t d = 0; d < z->r.ndepths; d++)
		classify_depth(z, (int)d, (int)d == L);
	if (z->r.rows && (rc = leading_findings(z, L)) < 0)
		return rc;
	for (size_t d = 0; d < z->r.ndepths; d++)
		if ((rc = depth_findings(z, (int)d, L)) < 0)
			return rc;
	if ((rc = size_findings(z)) < 0 || (rc = schema_findings(z)) < 0)
		return rc;
	*out = &z->r;
	return 0;
}

static void examples_free(struct kz_example *ex, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bytes_free(&ex[i].row);
		free(ex[i].column);
		free(ex[i].note);
	}
}

void kz_free(struct kz *z)
{
	if (!z)
		return;
	for (size_t d = 0; d < KZ_MAX_DEPTH; d++) {
		struct depth_acc *a = &z->acc[d];
		free(a->set);
		free(a->pos);
		bytes_free(&a->inv_lo);
		bytes_free(&a->inv_hi);
		for (size_t i = 0; i < a->nsalt; i++)
			bytes_free(&a->salts[i].example);
		free(a->salts);
		for (size_t i = 0; i < z->r.depths[d].nsamples; i++)
			bytes_free(&z->r.depths[d].samples[i]);
	}
	for (size_t i = 0; i < z->r.nfindings; i++) {
		free(z->r.findings[i].message);
		examples_free(z->r.findings[i].examples, z->r.findings[i].nexamples);
	}
	free(z->r.findings);
	for (size_t i = 0; z->fam && i < z->o.info->nfamilies; i++)
		examples_free(z->fam[i].ex, z->fam[i].nex);
	free(z->fam);
	for (int i = 0; i < 3; i++)
		examples_free(z->size_f[i].examples, z->size_f[i].nexamples);
	free(z->heap);
	bytes_free(&z->prev);
	bytes_free(&z->first_key);
	bytes_free(&z->newest_key);
	free(z);
}
