/* keyviz.c — the key-design analysis of cellctl keyviz (keyviz.h): per-depth accumulators fed row by
 * row in bounded memory (a distinct-value set per depth that turns into a HyperLogLog sketch at
 * KZ_EXACT_CAP, a heap of the newest cells, a few copied keys). kzrules.c applies the rules to them.
 */
#include "keyviz_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbtfmt.h"

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

int kz_bytes_set(cs_bytes *b, const void *p, size_t n)
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

char *kz_fmt(const char *f, ...)
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

uint64_t kz_hll_estimate(const uint8_t *reg)
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
		s = kz_fmt("%s:%.*s", family, (int)q.len, (const char *)q.data);
	else
		s = kz_fmt("%s:%s", family, qq);
	free(qq);
	return s;
}

int kz_example_add(struct kz_example *ex, size_t *n, cs_bytes row, char *column, char *note)
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
	return kz_bytes_set(&e->row, row.data, row.len);
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
	kz_bytes_set(&s->example, row.data, row.len); /* an example missing on ENOMEM is harmless */
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
		if ((rc = kz_bytes_set(&dp->samples[dp->nsamples], p, n)) < 0)
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
			if (!a->inversions && ((rc = kz_bytes_set(&a->inv_lo, z->prev.data, z->prev.len)) < 0 ||
					       (rc = kz_bytes_set(&a->inv_hi, row->key.data, row->key.len)) < 0))
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
	if (!ordinal && (rc = kz_bytes_set(&z->first_key, k, row->key.len)) < 0)
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
			if ((rc = kz_bytes_set(&z->newest_key, k, row->key.len)) < 0)
				return rc;
		}
		if (c->value_len > z->o.cell_size) {
			z->big_cells++;
			if (c->value_len > z->max_cell)
				z->max_cell = c->value_len;
			struct kz_finding *f = &z->size_f[2];
			if (f->nexamples < KZ_EXAMPLES &&
			    (rc = kz_example_add(f->examples, &f->nexamples, row->key, column_name(c->family, c->qualifier),
					      kz_fmt("%llu bytes @%lld", (unsigned long long)c->value_len, (long long)c->ts))) < 0)
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
			    (rc = kz_example_add(fa->ex, &fa->nex, row->key, column_name(c->family, c->qualifier),
					      kz_fmt("%zu versions", run))) < 0)
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
		    (rc = kz_example_add(f->examples, &f->nexamples, row->key, NULL,
				      kz_fmt("%llu bytes", (unsigned long long)bytes))) < 0)
			return rc;
	}
	/* keep this key as the previous one */
	if ((rc = kz_bytes_set(&z->prev, k, row->key.len)) < 0)
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

int kz_finish(struct kz *z, const struct kz_report **out)
{
	int rc;

	if (z->finished)
		return -EINVAL;
	z->finished = true;
	if ((rc = kzr_apply(z)) < 0)
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
