/* bt_rows.c — rows read whole, kept for the store's TTL (a store opened with CS_OPEN_CACHE: the mount,
 * which reads one row again and again: its families, each family's columns, each file). A row absent
 * is kept too. This process's writes forget the rows they touch, so its own writes show at once; other
 * clients' show within the TTL. Bounded: the oldest rows go first past a byte budget. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bt.h"

#define BUCKETS 4096
#define BUDGET (32u << 20)

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
	size_t bytes;
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

int bt_rows_new(struct bt_rows **out)
{
	struct bt_rows *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
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

void bt_rows_put(bt_store *st, const char *table, const void *key, size_t keyn, const btm_row *r)
{
	struct bt_rows *c = st->rows;
	size_t n = r ? r->ncells : 0, tn = strlen(table) + 1, bytes = sizeof(struct bt_cached) + tn + keyn;
	struct bt_cached *e, *old;
	uint8_t *p;

	if (!c)
		return;
	for (size_t i = 0; i < n; i++)
		bytes += sizeof(btm_cell) + r->cells[i].family_len + 1 + r->cells[i].qualifier_len + r->cells[i].value_len;
	if (bytes > BUDGET / 16 || !(e = malloc(bytes)))
		return;
	p = (uint8_t *)(e + 1);
	e->row.cells = n ? (btm_cell *)p : NULL;
	p += n * sizeof(btm_cell);
	for (size_t i = 0; i < n; i++) {
		const btm_cell *s = &r->cells[i];
		btm_cell *d = (btm_cell *)&e->row.cells[i];
		*d = (btm_cell){ .family_len = s->family_len, .qualifier_len = s->qualifier_len, .ts = s->ts,
				 .value_len = s->value_len };
		memcpy(p, s->family, s->family_len);
		p[s->family_len] = '\0';
		d->family = (const char *)p;
		p += s->family_len + 1;
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
	e->expires = bt_mono_ms() + st->ttl_ms;
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
	while (c->bytes > BUDGET && c->oldest)
		unlink_entry(c, c->oldest);
	pthread_mutex_unlock(&c->lock);
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

void bt_rows_forget(bt_store *st, const char *table, const void *key, size_t keyn)
{
	struct bt_rows *c = st->rows;
	struct bt_cached *e, *next;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	drop_covers(c, table); /* (a write may have made a row in a range read whole) */
	if (key) {
		if ((e = find(c, hash(table, key, keyn), table, key, keyn)))
			unlink_entry(c, e);
	} else {
		for (e = c->oldest; e; e = next) {
			next = e->newer;
			if (!strcmp(e->table, table))
				unlink_entry(c, e);
		}
	}
	pthread_mutex_unlock(&c->lock);
}

static int kcmp(const void *a, size_t an, const void *b, size_t bn)
{
	int r = memcmp(a, b, an < bn ? an : bn);
	return r ? r : (an > bn) - (an < bn);
}

void bt_rows_cover(bt_store *st, const char *table, const void *lo, size_t lon, const void *hi, size_t hin,
		   const uint8_t *blob, size_t blobn, const size_t *off, const size_t *len, size_t nkeys)
{
	struct bt_rows *c = st->rows;
	struct bt_cover *v, **pp;
	size_t n = 0;

	if (!c || !(v = calloc(1, sizeof(*v))))
		return;
	v->refs = 1;
	v->expires = bt_mono_ms() + st->ttl_ms;
	v->lon = lon;
	v->hin = hin;
	v->nkeys = nkeys;
	if (!(v->table = strdup(table)) || !(v->lo = malloc(lon + 1)) || (hi && !(v->hi = malloc(hin + 1))) ||
	    !(v->off = malloc((nkeys + 1) * sizeof(size_t))) || !(v->len = malloc((nkeys + 1) * sizeof(size_t))) ||
	    !(v->blob = malloc(blobn + 1))) {
		bt_rows_cover_release(v);
		return;
	}
	memcpy(v->lo, lo, lon);
	if (hi)
		memcpy(v->hi, hi, hin);
	if (nkeys) {
		memcpy(v->off, off, nkeys * sizeof(size_t));
		memcpy(v->len, len, nkeys * sizeof(size_t));
	}
	if (blobn)
		memcpy(v->blob, blob, blobn);
	pthread_mutex_lock(&c->lock);
	v->next = c->covers;
	c->covers = v;
	for (pp = &c->covers; *pp && ++n < COVERS; pp = &(*pp)->next)
		;
	if (*pp) { /* the oldest beyond COVERS */
		struct bt_cover *old = (*pp)->next;
		(*pp)->next = NULL;
		while (old) {
			struct bt_cover *next = old->next;
			bt_rows_cover_release(old);
			old = next;
		}
	}
	pthread_mutex_unlock(&c->lock);
}

struct bt_cover *bt_rows_covered(bt_store *st, const char *table, const void *lo, size_t lon, const void *hi,
				 size_t hin)
{
	struct bt_rows *c = st->rows;
	struct bt_cover *v;
	int64_t now = bt_mono_ms();

	if (!c)
		return NULL;
	pthread_mutex_lock(&c->lock);
	for (v = c->covers; v; v = v->next)
		if (v->expires > now && !strcmp(v->table, table) && kcmp(v->lo, v->lon, lo, lon) <= 0 &&
		    (!v->hi || (hi && kcmp(hi, hin, v->hi, v->hin) <= 0)))
			break;
	if (v)
		__atomic_add_fetch(&v->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&c->lock);
	return v;
}

size_t bt_cover_find(const struct bt_cover *v, const void *key, size_t n)
{
	size_t a = 0, b = v->nkeys;
	while (a < b) {
		size_t m = (a + b) / 2;
		if (kcmp(v->blob + v->off[m], v->len[m], key, n) < 0)
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
