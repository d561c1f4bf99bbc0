/* bt_rows.c — rows read whole, kept for the store's TTL (a store opened with CS_OPEN_CACHE: the mount,
 * which reads one row again and again: its families, each family's columns, each file), and ranges read
 * whole ("covers": which rows a key range held, so a row not among them is known absent). A row absent
 * is kept too. This process's writes are applied to what is kept (bt_rows_apply), so its own writes
 * show at once and cost no read; other clients' show within the TTL, each row and range expiring TTL
 * after it was read. Bounded: the oldest rows go first past the byte budget. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bt_internal.h"

#include "bigtable.pb-c.h"
#include "mem.h"

#define BUCKETS 4096

struct bt_cached {
	struct bt_cached *hnext;        /* in its bucket */
	struct bt_cached *older, *newer; /* in insertion order */
	uint64_t h;
	int refs;                        /* atomic; the cache holds one while the row is in it */
	int64_t expires;                 /* monotonic ms */
	size_t bytes;
	char *table;
	btm_row row;                     /* key, cells: pointers into this allocation */
};

/* A range of rows read whole from start to end: which rows it held (each kept above, as long as it is). */
struct bt_cover {
	struct bt_cover *next;
	int refs; /* atomic */
	int64_t expires;
	bool big;         /* not a cover: a range found larger than the budget when read whole */
	char *table;
	uint8_t *lo, *hi; /* [lo, hi); hi NULL: to the end */
	size_t lon, hin;
	size_t nkeys;
	size_t *off, *len; /* key I: blob[off[I] .. + len[I]), in key order */
	uint8_t *blob;
};

#define COVERS 64

struct bt_rows {
	pthread_mutex_t lock;
	struct bt_cached *bucket[BUCKETS];
	struct bt_cached *oldest, *newest;
	size_t bytes, budget;
	struct bt_cover *covers; /* newest first, at most COVERS */
};

static uint64_t hash(const char *table, const void *key, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *p = table; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const uint8_t *)key)[i]) * 1099511628211ull;
	return h;
}

int bt_rows_new(size_t budget, struct bt_rows **out)
{
	struct bt_rows *c = mem_calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->budget = budget;
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return 0;
}

void bt_rows_release(struct bt_cached *e)
{
	if (e && !__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL))
		free(e);
}

/* Take E out of the cache (under the lock). */
static void unlink_entry(struct bt_rows *c, struct bt_cached *e)
{
	struct bt_cached **pp = &c->bucket[e->h % BUCKETS];
	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	if (e->older)
		e->older->newer = e->newer;
	else
		c->oldest = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		c->newest = e->older;
	c->bytes -= e->bytes;
	bt_rows_release(e);
}

void bt_rows_cover_release(struct bt_cover *v)
{
	if (!v || __atomic_sub_fetch(&v->refs, 1, __ATOMIC_ACQ_REL))
		return;
	free(v->table);
	free(v->lo);
	free(v->hi);
	free(v->off);
	free(v->len);
	free(v->blob);
	free(v);
}

/* Drop the covers of TABLE (NULL: all), under the lock. */
static void drop_covers(struct bt_rows *c, const char *table)
{
	for (struct bt_cover **pp = &c->covers; *pp;) {
		struct bt_cover *v = *pp;
		if (!table || !strcmp(v->table, table)) {
			*pp = v->next;
			bt_rows_cover_release(v);
		} else {
			pp = &v->next;
		}
	}
}

void bt_rows_free(struct bt_rows *c)
{
	if (!c)
		return;
	drop_covers(c, NULL);
	while (c->oldest)
		unlink_entry(c, c->oldest);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static struct bt_cached *find(struct bt_rows *c, uint64_t h, const char *table, const void *key, size_t n)
{
	for (struct bt_cached *e = c->bucket[h % BUCKETS]; e; e = e->hnext)
		if (e->h == h && e->row.key_len == n && !memcmp(e->row.key, key, n) && !strcmp(e->table, table))
			return e;
	return NULL;
}

/* Whether cover V's range holds KEY. */
static bool holds(const struct bt_cover *v, const void *key, size_t n)
{
	return bt_key_cmp(v->lo, v->lon, key, n) <= 0 && (!v->hi || bt_key_cmp(key, n, v->hi, v->hin) < 0);
}

/* Whether cover V lists KEY among its rows; *AT (if not NULL): its index, or where it would go. */
static bool lists(const struct bt_cover *v, const void *key, size_t n, size_t *at)
{
	size_t i = bt_cover_find(v, key, n);
	if (at)
		*at = i;
	return i < v->nkeys && !bt_key_cmp(v->blob + v->off[i], v->len[i], key, n);
}

/* The newest fresh cover of TABLE holding KEY, or NULL (under the lock). */
static struct bt_cover *holding(struct bt_rows *c, const char *table, const void *key, size_t n, int64_t now)
{
	for (struct bt_cover *v = c->covers; v; v = v->next)
		if (!v->big && v->expires > now && !strcmp(v->table, table) && holds(v, key, n))
			return v;
	return NULL;
}

size_t bt_rows_size(size_t tablen, size_t keyn, const btm_cell *cells, size_t n)
{
	size_t bytes = sizeof(struct bt_cached) + tablen + 1 + keyn;
	for (size_t i = 0; i < n; i++)
		bytes += sizeof(btm_cell) + cells[i].family_len + 1 + cells[i].qualifier_len + cells[i].value_len;
	return bytes;
}

/* Keep row KEY of TABLE with the N cells CELLS until EXPIRES (under no lock). Returns whether it is kept. */
static bool put_row(struct bt_rows *c, const char *table, const void *key, size_t keyn, const btm_cell *cells,
		    size_t n, int64_t expires)
{
	size_t tn = strlen(table) + 1, bytes = bt_rows_size(tn - 1, keyn, cells, n);
	struct bt_cached *e, *old;
	uint8_t *p;

	if (bytes > c->budget / 16 || !(e = mem_malloc(bytes)))
		return false;
	p = (uint8_t *)(e + 1);
	e->row.cells = n ? (btm_cell *)p : NULL;
	p += n * sizeof(btm_cell);
	for (size_t i = 0; i < n; i++) {
		const btm_cell *s = &cells[i];
		btm_cell *d = (btm_cell *)&e->row.cells[i];
		*d = (btm_cell){ .family_len = s->family_len, .qualifier_len = s->qualifier_len, .ts = s->ts,
				 .value_len = s->value_len };
		memcpy(p, s->family, s->family_len);
		p[s->family_len] = '\0';
		d->family = (const char *)p;
		p += s->family_len + 1;
		if (s->qualifier_len)
			memcpy(p, s->qualifier, s->qualifier_len);
		d->qualifier = p;
		p += s->qualifier_len;
		if (s->value_len)
			memcpy(p, s->value, s->value_len);
		d->value = p;
		p += s->value_len;
	}
	memcpy(p, key, keyn);
	e->row.key = p;
	e->row.key_len = keyn;
	e->row.ncells = n;
	p += keyn;
	memcpy(p, table, tn);
	e->table = (char *)p;
	e->h = hash(table, key, keyn);
	e->refs = 1;
	e->bytes = bytes;
	e->expires = expires;
	e->hnext = NULL;
	pthread_mutex_lock(&c->lock);
	if ((old = find(c, e->h, table, key, keyn)))
		unlink_entry(c, old);
	e->hnext = c->bucket[e->h % BUCKETS];
	c->bucket[e->h % BUCKETS] = e;
	e->older = c->newest;
	e->newer = NULL;
	if (c->newest)
		c->newest->newer = e;
	else
		c->oldest = e;
	c->newest = e;
	c->bytes += bytes;
	while (c->bytes > c->budget && c->oldest)
		unlink_entry(c, c->oldest);
	pthread_mutex_unlock(&c->lock);
	return true;
}

void bt_rows_put(bt_store *st, const char *table, const void *key, size_t keyn, const btm_row *r)
{
	if (st->rows)
		put_row(st->rows, table, key, keyn, r ? r->cells : NULL, r ? r->ncells : 0, bt_mono_ms() + st->ttl_ms);
}

size_t bt_rows_bytes(bt_store *st)
{
	size_t n = 0;
	if (st->rows) {
		pthread_mutex_lock(&st->rows->lock);
		n = st->rows->bytes;
		pthread_mutex_unlock(&st->rows->lock);
	}
	return n;
}

int bt_rows_get(bt_store *st, const char *table, const void *key, size_t keyn, struct bt_cached **out,
		const btm_row **row)
{
	struct bt_rows *c = st->rows;
	struct bt_cached *e;
	int64_t now = bt_mono_ms();

	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	if ((e = find(c, hash(table, key, keyn), table, key, keyn)) && e->expires <= now) {
		unlink_entry(c, e);
		e = NULL;
	}
	if (e)
		__atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&c->lock);
	if (!e)
		return 0;
	*out = e;
	*row = &e->row;
	return 1;
}

/* Drop the covers of TABLE holding KEY (under the lock). */
static void drop_covers_of(struct bt_rows *c, const char *table, const void *key, size_t n)
{
	for (struct bt_cover **pp = &c->covers; *pp;) {
		struct bt_cover *v = *pp;
		if (!v->big && !strcmp(v->table, table) && holds(v, key, n)) {
			*pp = v->next;
			bt_rows_cover_release(v);
		} else {
			pp = &v->next;
		}
	}
}

void bt_rows_forget(bt_store *st, const char *table, const void *key, size_t keyn)
{
	struct bt_rows *c = st->rows;
	struct bt_cached *e, *next;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	if (key) {
		drop_covers_of(c, table, key, keyn); /* (its row is no longer known, nor is it known absent) */
		if ((e = find(c, hash(table, key, keyn), table, key, keyn)))
			unlink_entry(c, e);
	} else {
		drop_covers(c, table);
		for (e = c->oldest; e; e = next) {
			next = e->newer;
			if (!strcmp(e->table, table))
				unlink_entry(c, e);
		}
	}
	pthread_mutex_unlock(&c->lock);
}

/* Add V to C's covers, newest first; the oldest beyond COVERS go (under the lock). */
static void add_cover(struct bt_rows *c, struct bt_cover *v)
{
	struct bt_cover **pp;
	size_t n = 0;
	v->next = c->covers;
	c->covers = v;
	for (pp = &c->covers; *pp && ++n < COVERS; pp = &(*pp)->next)
		;
	if (*pp) {
		struct bt_cover *old = (*pp)->next;
		(*pp)->next = NULL;
		while (old) {
			struct bt_cover *next = old->next;
			bt_rows_cover_release(old);
			old = next;
		}
	}
}

/* A new cover of TABLE for [LO, HI) expiring at EXPIRES, with room for NKEYS keys and BLOBN bytes of
 * them, or NULL (-ENOMEM). */
static struct bt_cover *cover_new(const char *table, const void *lo, size_t lon, const void *hi, size_t hin,
				  size_t nkeys, size_t blobn, int64_t expires)
{
	struct bt_cover *v = mem_calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->refs = 1;
	v->expires = expires;
	v->lon = lon;
	v->hin = hin;
	if (!(v->table = mem_strdup(table)) || !(v->lo = mem_malloc(lon + 1)) || (hi && !(v->hi = mem_malloc(hin + 1))) ||
	    !(v->off = mem_malloc((nkeys + 1) * sizeof(size_t))) || !(v->len = mem_malloc((nkeys + 1) * sizeof(size_t))) ||
	    !(v->blob = mem_malloc(blobn + 1))) {
		bt_rows_cover_release(v);
		return NULL;
	}
	memcpy(v->lo, lo, lon);
	if (hi)
		memcpy(v->hi, hi, hin);
	return v;
}

void bt_rows_cover(bt_store *st, const char *table, const void *lo, size_t lon, const void *hi, size_t hin,
		   const uint8_t *blob, size_t blobn, const size_t *off, const size_t *len, size_t nkeys,
		   int64_t read_at)
{
	struct bt_rows *c = st->rows;
	struct bt_cover *v;

	if (!c || !(v = cover_new(table, lo, lon, hi, hin, nkeys, blobn, read_at + st->ttl_ms)))
		return;
	v->nkeys = nkeys;
	if (nkeys) {
		memcpy(v->off, off, nkeys * sizeof(size_t));
		memcpy(v->len, len, nkeys * sizeof(size_t));
	}
	if (blobn)
		memcpy(v->blob, blob, blobn);
	pthread_mutex_lock(&c->lock);
	add_cover(c, v);
	pthread_mutex_unlock(&c->lock);
}

void bt_rows_mark_big(bt_store *st, const char *table, const void *lo, size_t lon, const void *hi, size_t hin)
{
	struct bt_rows *c = st->rows;
	struct bt_cover *v;

	if (!c || !(v = cover_new(table, lo, lon, hi, hin, 0, 0, bt_mono_ms() + st->ttl_ms)))
		return;
	v->big = true;
	pthread_mutex_lock(&c->lock);
	add_cover(c, v);
	pthread_mutex_unlock(&c->lock);
}

/* The first fresh cover (BIG: or mark) of TABLE holding all of [LO, HI), under the lock, or NULL. */
/* Whether [ALO, AHI) holds all of [BLO, BHI) (a NULL end: unbounded). */
static bool inside(const void *alo, size_t alon, const void *ahi, size_t ahin, const void *blo, size_t blon,
		   const void *bhi, size_t bhin)
{
	return bt_key_cmp(alo, alon, blo, blon) <= 0 && (!ahi || (bhi && bt_key_cmp(bhi, bhin, ahi, ahin) <= 0));
}

/* A fresh cover of TABLE holding all of [LO, HI) (BIG false), or a mark of a range too big that
 * [LO, HI) holds all of (BIG: then [LO, HI) is too big as well), under the lock, or NULL. */
static struct bt_cover *covering(struct bt_rows *c, const char *table, const void *lo, size_t lon, const void *hi,
				 size_t hin, bool big, int64_t now)
{
	for (struct bt_cover *v = c->covers; v; v = v->next)
		if (v->big == big && v->expires > now && !strcmp(v->table, table) &&
		    (big ? inside(lo, lon, hi, hin, v->lo, v->lon, v->hi, v->hin)
			 : inside(v->lo, v->lon, v->hi, v->hin, lo, lon, hi, hin)))
			return v;
	return NULL;
}

struct bt_cover *bt_rows_covered(bt_store *st, const char *table, const void *lo, size_t lon, const void *hi,
				 size_t hin)
{
	struct bt_rows *c = st->rows;
	struct bt_cover *v;

	if (!c)
		return NULL;
	pthread_mutex_lock(&c->lock);
	if ((v = covering(c, table, lo, lon, hi, hin, false, bt_mono_ms())))
		__atomic_add_fetch(&v->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&c->lock);
	return v;
}

bool bt_rows_absent(bt_store *st, const char *table, const void *key, size_t keyn)
{
	struct bt_rows *c = st->rows;
	struct bt_cover *v;
	int64_t now = bt_mono_ms();
	bool absent = false;

	if (!c)
		return false;
	pthread_mutex_lock(&c->lock);
	if ((v = holding(c, table, key, keyn, now)))
		absent = !lists(v, key, keyn, NULL);
	pthread_mutex_unlock(&c->lock);
	return absent;
}

bool bt_rows_too_big(bt_store *st, const char *table, const void *lo, size_t lon, const void *hi, size_t hin)
{
	struct bt_rows *c = st->rows;
	bool big;

	if (!c)
		return false;
	pthread_mutex_lock(&c->lock);
	big = covering(c, table, lo, lon, hi, hin, true, bt_mono_ms()) != NULL;
	pthread_mutex_unlock(&c->lock);
	return big;
}

/* ---- this process's writes, applied ---------------------------------------------------------------------- */

/* Whether cell C is one mutation M deletes. */
static bool deletes(const Google__Bigtable__V2__Mutation *m, const btm_cell *c)
{
	switch (m->mutation_case) {
	case GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_DELETE_FROM_ROW:
		return true;
	case GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_DELETE_FROM_FAMILY:
		return !strcmp(m->delete_from_family->family_name, c->family);
	case GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_DELETE_FROM_COLUMN: {
		const Google__Bigtable__V2__Mutation__DeleteFromColumn *d = m->delete_from_column;
		const Google__Bigtable__V2__TimestampRange *tr = d->time_range;
		if (strcmp(d->family_name, c->family) ||
		    bt_key_cmp(d->column_qualifier.data, d->column_qualifier.len, c->qualifier, c->qualifier_len))
			return false;
		return !tr || (c->ts >= tr->start_timestamp_micros &&
			       (!tr->end_timestamp_micros || c->ts < tr->end_timestamp_micros));
	}
	case GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_SET_CELL: {
		const Google__Bigtable__V2__Mutation__SetCell *x = m->set_cell;
		return x->timestamp_micros == c->ts && !strcmp(x->family_name, c->family) &&
		       !bt_key_cmp(x->column_qualifier.data, x->column_qualifier.len, c->qualifier, c->qualifier_len);
	}
	default:
		return false;
	}
}

/* The cells of row OLD (NOLD cells) after the N mutations MP, in *OUT (pointing into OLD and MP; the
 * caller frees the array); -1 for a mutation that cannot be applied here (AddToCell: the server merges;
 * SetCell at the server's time), -ENOMEM. */
static int applied(const btm_cell *old, size_t nold, Google__Bigtable__V2__Mutation *const *mp, size_t n,
		   btm_cell **out, size_t *nout)
{
	btm_cell *v = mem_malloc((nold + n + 1) * sizeof(*v));
	size_t k = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < nold; i++)
		v[k++] = old[i];
	for (size_t j = 0; j < n; j++) {
		const Google__Bigtable__V2__Mutation *m = mp[j];
		size_t w = 0;
		if (m->mutation_case == GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_SET_CELL && m->set_cell->timestamp_micros < 0)
			goto cannot;
		if (m->mutation_case != GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_SET_CELL &&
		    m->mutation_case != GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_DELETE_FROM_ROW &&
		    m->mutation_case != GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_DELETE_FROM_FAMILY &&
		    m->mutation_case != GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_DELETE_FROM_COLUMN)
			goto cannot;
		for (size_t i = 0; i < k; i++) /* (a SetCell replaces the cell at its timestamp) */
			if (!deletes(m, &v[i]))
				v[w++] = v[i];
		k = w;
		if (m->mutation_case == GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_SET_CELL) {
			const Google__Bigtable__V2__Mutation__SetCell *x = m->set_cell;
			v[k++] = (btm_cell){ .family = x->family_name, .family_len = strlen(x->family_name),
					     .qualifier = x->column_qualifier.data, .qualifier_len = x->column_qualifier.len,
					     .ts = x->timestamp_micros, .value = x->value.data, .value_len = x->value.len };
		}
	}
	*out = v;
	*nout = k;
	return 0;
cannot:
	free(v);
	return -1;
}

/* A copy of cover V with KEY inserted at I (under the lock; NULL on ENOMEM). */
static struct bt_cover *cover_with(const struct bt_cover *v, size_t i, const void *key, size_t n)
{
	size_t blobn = v->nkeys ? v->off[v->nkeys - 1] + v->len[v->nkeys - 1] : 0;
	struct bt_cover *w = cover_new(v->table, v->lo, v->lon, v->hi, v->hin, v->nkeys + 1, blobn + n, v->expires);
	if (!w)
		return NULL;
	w->nkeys = v->nkeys + 1;
	memcpy(w->blob, v->blob, blobn);
	memcpy(w->blob + blobn, key, n); /* (keys are addressed by offset: the blob's order does not matter) */
	for (size_t j = 0, k = 0; j < w->nkeys; j++) {
		if (j == i) {
			w->off[j] = blobn;
			w->len[j] = n;
		} else {
			w->off[j] = v->off[k];
			w->len[j] = v->len[k++];
		}
	}
	return w;
}

void bt_rows_apply(bt_store *st, const char *table, const void *key, size_t keyn,
		   Google__Bigtable__V2__Mutation *const *mp, size_t n)
{
	struct bt_rows *c = st->rows;
	struct bt_cached *e;
	int64_t now = bt_mono_ms(), expires = 0;
	btm_cell *cells = NULL;
	size_t ncells = 0;
	bool known = false;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	if ((e = find(c, hash(table, key, keyn), table, key, keyn)) && e->expires > now) {
		__atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
		expires = e->expires; /* (what was read keeps its age: others' writes show when it was due) */
		known = true;
	} else {
		/* absent from a range read whole: known (listed there, but no longer kept: unknown) */
		struct bt_cover *v = holding(c, table, key, keyn, now);
		if (v && !lists(v, key, keyn, NULL))
			known = true, expires = v->expires;
		e = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	if (known && applied(e ? e->row.cells : NULL, e ? e->row.ncells : 0, mp, n, &cells, &ncells) == 0 &&
	    put_row(c, table, key, keyn, cells, ncells, expires)) {
		/* a row made where a range was read whole: the covers holding it list it from now on */
		pthread_mutex_lock(&c->lock);
		for (struct bt_cover **pp = &c->covers; *pp;) {
			struct bt_cover *v = *pp, *w;
			size_t i;
			if (v->big || strcmp(v->table, table) || !holds(v, key, keyn) || lists(v, key, keyn, &i)) {
				pp = &v->next;
				continue;
			}
			if ((w = cover_with(v, i, key, keyn))) {
				w->next = v->next;
				*pp = w;
				pp = &w->next;
			} else {
				*pp = v->next; /* (dropped: the row would be missing from it) */
			}
			bt_rows_cover_release(v);
		}
		pthread_mutex_unlock(&c->lock);
	} else {
		bt_rows_forget(st, table, key, keyn);
	}
	free(cells);
	bt_rows_release(e);
}

size_t bt_cover_find(const struct bt_cover *v, const void *key, size_t n)
{
	size_t a = 0, b = v->nkeys;
	while (a < b) {
		size_t m = (a + b) / 2;
		if (bt_key_cmp(v->blob + v->off[m], v->len[m], key, n) < 0)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

size_t bt_cover_count(const struct bt_cover *v)
{
	return v->nkeys;
}

const uint8_t *bt_cover_key(const struct bt_cover *v, size_t i, size_t *n)
{
	*n = v->len[i];
	return v->blob + v->off[i];
}
