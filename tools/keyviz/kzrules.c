/* kzrules.c — the rules of Google's schema guides applied to what keyviz.c gathered (keyviz.h): where
 * the newest writes land, what each depth holds (a hash, a sequence, a salt, a kind), and the findings,
 * each with its numbers and examples. Only the numbers decide: nothing here reads the store.
 */
#include "keyviz_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbtfmt.h"

static char *human(uint64_t n)
{
	if (n >= 1ull << 30)
		return kz_fmt("%.1f GiB", (double)n / (1ull << 30));
	if (n >= 1ull << 20)
		return kz_fmt("%.1f MiB", (double)n / (1ull << 20));
	if (n >= 1ull << 10)
		return kz_fmt("%.1f KiB", (double)n / (1ull << 10));
	return kz_fmt("%llu bytes", (unsigned long long)n);
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
	return kz_example_add(f->examples, &f->nexamples, row, NULL, note ? strdup(note) : NULL);
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
	dp->distinct = a->overflow ? kz_hll_estimate(a->hll) : a->set_n;
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
	char *where = kz_fmt("of the newest %llu writes (cells by timestamp), %llu (%.0f%%) are in the last %llu "
			  "rows (%.1f%% of the key space; without a hotspot about that share)",
			  (unsigned long long)w->window, (unsigned long long)w->in_last, pct(w->in_last, w->window),
			  (unsigned long long)w->region, pct(w->region, z->r.rows));
	int rc = -ENOMEM;

	if (!where)
		return -ENOMEM;
	if (dp->kind == KZC_TIMESTAMP && dp->rows >= 2) {
		if (!(f = finding(z, KZ_TIMESTAMP_FIRST, L)) ||
		    !(f->message = kz_fmt("keys start with a timestamp (%s) at depth %d: new rows all go to the end of "
				       "the key space, where one node takes every write; put a field first "
				       "(EXCHANGE#SYMBOL#TIME) and the time last. Here, %s",
				       dp->unit, L, where)))
			goto out;
	} else if (dp->sequence && dp->distinct * 2 >= dp->rows) {
		if (!(f = finding(z, KZ_SEQUENCE_FIRST, L)) ||
		    !(f->message = kz_fmt("keys start with a sequential number at depth %d (%llu values from %llu to "
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
		    !(f->message = kz_fmt("keys start with a hash at depth %d (%s, %llu distinct values): rows are in "
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
		    !(f->message = kz_fmt("a salt at depth %d: %zu short values with %s rows each, each "
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
		    !(f->message = kz_fmt("numbers of %zu to %zu digits at depth %d are not zero-padded: keys sort as "
				       "text, so \"10\" sorts before \"9\" (%llu neighbouring rows out of numeric "
				       "order); pad them to one width (0000987654)",
				       dp->min_len, dp->max_len, d, (unsigned long long)a->inversions))) {
			free(hi);
			return -ENOMEM;
		}
		number(f, "min_digits", (double)dp->min_len);
		number(f, "max_digits", (double)dp->max_len);
		number(f, "out_of_order", (double)a->inversions);
		note = kz_fmt("sorts before %s", hi);
		free(hi);
		if (!note)
			return -ENOMEM;
		rc = kz_example_add(f->examples, &f->nexamples, a->inv_lo, NULL, note);
		if (rc < 0 || (rc = example(f, a->inv_hi, NULL)) < 0)
			return rc;
	}
	if (dp->kind == KZC_REVTS) {
		char *lead = d == L ? kz_fmt(" They lead the key: of the newest %llu writes, %llu (%.0f%%) are in the "
					  "first %llu rows (%.1f%% of the key space), where one node takes them",
					  (unsigned long long)w->window, (unsigned long long)w->in_first,
					  pct(w->in_first, w->window), (unsigned long long)w->region,
					  pct(w->region, z->r.rows))
				    : strdup("");
		if (!lead || !(f = finding(z, KZ_REVERSED_TS, d)) ||
		    !(f->message = kz_fmt("reversed timestamps (Long.MAX - %s) at depth %d: rows sort newest first, but "
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
		    !(f->message = kz_fmt("%llu rows hold over %s of values (the guide: a row under 100 MB), the "
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
		    !(f->message = kz_fmt("%llu rows hold %s or more, near the hard limit of %s a row, the largest %s: "
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
		    !(f->message = kz_fmt("%llu cells hold over %s (the guide: a cell under 10 MB), the largest %s: "
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
		    !(f->message = kz_fmt("%zu column families, more than %u: keep families few (the guide: under about "
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
		    !(f->message = kz_fmt("family %s keeps %u versions (%s) but its columns were written up to %u: %llu "
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

int kzr_apply(struct kz *z)
{
	int L = 0, rc;

	measure_writes(z);
	for (size_t d = 0; d < z->r.ndepths; d++) {
		struct depth_acc *a = &z->acc[d];
		z->r.depths[d].distinct = a->overflow ? kz_hll_estimate(a->hll) : a->set_n;
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
	return 0;
}

