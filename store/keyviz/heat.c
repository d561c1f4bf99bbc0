/* heat.c — the Key Visualizer's counts: bounded histograms of row keys per table and minute, counted in
 * memory by a store handle and added into 'M' records by the commits lmdb/lm_heat.c lets write them.
 *
 * A record: key "Mheat" table 0x00 minute (u64, big-endian: a table's minutes in time order); value
 * 0x01, varint n (1..CS_HEAT_RANGES), then n ranges: varint keylen (1..CS_HEAT_KEY), key, varint share
 * and varint tail (the last key: the key's first SHARE bytes and TAIL bytes that follow), varint reads,
 * varint writes; each range's key <= its last < the next range's key. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heat.h"
#include "codec.h"
#include "keys.h"
#include "mem.h"

#define ITEMS_MAX 64 /* pending minutes a handle keeps (tables x minutes); past it the oldest is lost */
#define REC_VERSION 1
static const char PREFIX[] = "Mheat";
#define PREFIXN (sizeof(PREFIX) - 1)
#define KEYMAX (PREFIXN + CS_MAX_TABLE + 1 + 8)

struct heat {
	pthread_mutex_t lock;     /* guards items .. lost */
	struct heat_item *items;  /* pending minutes, the newest first */
	size_t nitems;
	bool written;             /* a commit of this handle wrote counts, in written_minute */
	int64_t written_minute;
	uint64_t lost;
	int64_t (*now_us)(void *ctx); /* set before the handle is shared: not guarded */
	void *ctx;
};

/* ---- histograms ---- */

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t range_total(const cs_heat_range *r)
{
	return sat_add(r->reads, r->writes);
}

/* The two adjacent ranges with the smallest sum become one: [first's key, second's last]. */
static void merge_smallest(struct heat_hist *h)
{
	size_t best = 0;
	uint64_t best_sum = UINT64_MAX;

	for (size_t j = 0; j + 1 < h->n; j++) {
		uint64_t s = sat_add(range_total(&h->r[j]), range_total(&h->r[j + 1]));
		if (s < best_sum) {
			best_sum = s;
			best = j;
		}
	}
	h->r[best].reads += h->r[best + 1].reads;
	h->r[best].writes += h->r[best + 1].writes;
	memcpy(h->r[best].last, h->r[best + 1].last, h->r[best + 1].lastlen);
	h->r[best].lastlen = h->r[best + 1].lastlen;
	memmove(&h->r[best + 1], &h->r[best + 2], (h->n - best - 2) * sizeof(h->r[0]));
	h->n--;
}

/* Count READS and WRITES for keys in [LO, LAST] (bytes already cut to CS_HEAT_KEY): the ranges that
 * meet it become one with it, or it becomes a range of its own; then the bound is kept. */
static void add_span(struct heat_hist *h, const uint8_t *lo, size_t lon, const uint8_t *last, size_t lastn,
		     uint64_t reads, uint64_t writes)
{
	size_t a = 0, b = h->n, l, r;
	cs_heat_range *x;

	/* a: the first range whose last key is >= LO; b: past the last whose key is <= LAST */
	for (l = 0, r = h->n; l < r;) {
		size_t mid = (l + r) / 2;
		if (kv_key_cmp(h->r[mid].last, h->r[mid].lastlen, lo, lon) < 0)
			l = mid + 1;
		else
			r = mid;
	}
	a = l;
	for (l = a, r = h->n; l < r;) {
		size_t mid = (l + r) / 2;
		if (kv_key_cmp(h->r[mid].key, h->r[mid].keylen, last, lastn) <= 0)
			l = mid + 1;
		else
			r = mid;
	}
	b = l;
	if (a == b) { /* (meets none: a range of its own, at A) */
		memmove(&h->r[a + 1], &h->r[a], (h->n - a) * sizeof(h->r[0]));
		x = &h->r[a];
		memcpy(x->key, lo, lon);
		x->keylen = lon;
		memcpy(x->last, last, lastn);
		x->lastlen = lastn;
		x->reads = reads;
		x->writes = writes;
		h->n++;
	} else { /* ranges A .. B - 1 meet it: one range, from the least key to the greatest last key */
		x = &h->r[a];
		if (kv_key_cmp(lo, lon, x->key, x->keylen) < 0) {
			memcpy(x->key, lo, lon);
			x->keylen = lon;
		}
		for (size_t j = a + 1; j < b; j++) {
			x->reads += h->r[j].reads;
			x->writes += h->r[j].writes;
		}
		if (kv_key_cmp(last, lastn, h->r[b - 1].last, h->r[b - 1].lastlen) > 0) {
			memcpy(x->last, last, lastn);
			x->lastlen = lastn;
		} else if (b - 1 != a) {
			memcpy(x->last, h->r[b - 1].last, h->r[b - 1].lastlen);
			x->lastlen = h->r[b - 1].lastlen;
		}
		x->reads += reads;
		x->writes += writes;
		memmove(&h->r[a + 1], &h->r[b], (h->n - b) * sizeof(h->r[0]));
		h->n -= b - a - 1;
	}
	if (h->n > CS_HEAT_RANGES)
		merge_smallest(h);
}

void heat_hist_add(struct heat_hist *h, const void *key, size_t n, uint64_t reads, uint64_t writes)
{
	if (n > CS_HEAT_KEY)
		n = CS_HEAT_KEY;
	add_span(h, key, n, key, n, reads, writes);
}

void heat_hist_add_range(struct heat_hist *h, const cs_heat_range *r)
{
	add_span(h, r->key, r->keylen, r->last, r->lastlen, r->reads, r->writes);
}

void heat_hist_merge(struct heat_hist *into, const struct heat_hist *from)
{
	for (size_t i = 0; i < from->n; i++)
		heat_hist_add_range(into, &from->r[i]);
}

static uint64_t hist_total(const struct heat_hist *h)
{
	uint64_t t = 0;
	for (size_t i = 0; i < h->n; i++)
		t = sat_add(t, range_total(&h->r[i]));
	return t;
}

/* ---- a handle's pending minutes ---- */

/* A table's name into a buffer of CS_MAX_TABLE + 1 bytes (names are checked, so never cut). */
static void copy_name(char *dst, const char *name)
{
	size_t n = strnlen(name, CS_MAX_TABLE);
	memcpy(dst, name, n);
	dst[n] = 0;
}

int heat_new(struct heat **out)
{
	struct heat *h = mem_calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	pthread_mutex_init(&h->lock, NULL);
	*out = h;
	return 0;
}

static void items_free(struct heat_item *it)
{
	while (it) {
		struct heat_item *n = it->next;
		free(it);
		it = n;
	}
}

void heat_free(struct heat *h)
{
	if (!h)
		return;
	items_free(h->items);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

void heat_set_clock(struct heat *h, int64_t (*now_us)(void *ctx), void *ctx)
{
	h->now_us = now_us;
	h->ctx = ctx;
}

static int64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts); /* (as cs_now_us(), asof.c's) */
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t heat_minute(struct heat *h)
{
	int64_t us = h->now_us ? h->now_us(h->ctx) : now_us();
	int64_t m = us / 60000000;
	return us < 0 && m * 60000000 != us ? m - 1 : m;
}

bool heat_pending(struct heat *h)
{
	bool p;
	pthread_mutex_lock(&h->lock);
	p = h->items != NULL;
	pthread_mutex_unlock(&h->lock);
	return p;
}

uint64_t heat_lost(struct heat *h)
{
	uint64_t n;
	pthread_mutex_lock(&h->lock);
	n = h->lost;
	pthread_mutex_unlock(&h->lock);
	return n;
}

/* H's pending histogram of TABLE's MINUTE, made if missing (the oldest dropped past ITEMS_MAX); NULL
 * without memory. Under H's lock. */
static struct heat_item *item_get(struct heat *h, const char *table, int64_t minute)
{
	struct heat_item *it, **pp;

	for (it = h->items; it; it = it->next)
		if (it->minute == minute && !strcmp(it->table, table))
			return it;
	if (h->nitems >= ITEMS_MAX) {
		for (pp = &h->items; (*pp)->next; pp = &(*pp)->next)
			;
		h->lost += hist_total(&(*pp)->h);
		free(*pp);
		*pp = NULL;
		h->nitems--;
	}
	if (!(it = mem_calloc(1, sizeof(*it))))
		return NULL;
	copy_name(it->table, table);
	it->minute = minute;
	it->next = h->items;
	h->items = it;
	h->nitems++;
	return it;
}

/* Add item FROM's counts to H's pending minutes. Under H's lock. */
static void item_give(struct heat *h, const struct heat_item *from)
{
	struct heat_item *it = item_get(h, from->table, from->minute);
	if (it)
		heat_hist_merge(&it->h, &from->h);
	else
		h->lost += hist_total(&from->h);
}

void heat_forget(struct heat *h, const char *table)
{
	struct heat_item **pp = &h->items;

	pthread_mutex_lock(&h->lock);
	while (*pp) {
		struct heat_item *it = *pp;
		if (strcmp(it->table, table)) {
			pp = &it->next;
			continue;
		}
		*pp = it->next;
		free(it);
		h->nitems--;
	}
	pthread_mutex_unlock(&h->lock);
}

void heat_run_start(struct heat_run *r, const char *table, bool reversed)
{
	memset(r, 0, sizeof(*r));
	copy_name(r->table, table);
	r->reversed = reversed;
}

void heat_run_end(struct heat *h, struct heat_run *r)
{
	const struct heat_run_ent *e = r->ents ? r->ents : &r->one;
	struct heat_item *it;
	int64_t minute;

	if (!r->n)
		return;
	minute = heat_minute(h);
	pthread_mutex_lock(&h->lock);
	if ((it = item_get(h, r->table, minute))) {
		for (size_t i = 0; i < r->n; i++)
			add_span(&it->h, e[i].key, e[i].keyn, e[i].last, e[i].lastn, e[i].n, 0);
	} else {
		for (size_t i = 0; i < r->n; i++)
			h->lost += e[i].n;
	}
	pthread_mutex_unlock(&h->lock);
	r->n = 0;
}

void heat_run_release(struct heat *h, struct heat_run *r)
{
	heat_run_end(h, r);
	free(r->ents);
	r->ents = NULL;
}

/* Each two neighbours become one, from the lesser key to the greater last. */
static void run_halve(struct heat_run *r)
{
	for (size_t i = 0; i < r->n / 2; i++) {
		struct heat_run_ent lo = r->ents[2 * i + r->reversed], hi = r->ents[2 * i + !r->reversed];
		r->ents[i] = lo;
		memcpy(r->ents[i].last, hi.last, hi.lastn);
		r->ents[i].lastn = hi.lastn;
		r->ents[i].n = lo.n + hi.n;
	}
	r->n /= 2;
}

void heat_run_row(struct heat *h, struct heat_run *r, const void *key, size_t n)
{
	struct heat_run_ent *e;

	if (n > CS_HEAT_KEY)
		n = CS_HEAT_KEY;
	if (r->n) {
		e = r->ents ? &r->ents[r->n - 1] : &r->one;
		/* forward, keys come after the entry's last; reversed, before its first */
		int c = r->reversed ? kv_key_cmp(key, n, e->key, e->keyn) : kv_key_cmp(e->last, e->lastn, key, n);
		if (!c) {
			e->n++;
			return;
		}
		if (c > 0) { /* out of the scan's order (it was moved): count what it holds */
			heat_run_end(h, r);
		} else if (!r->ents) {
			if ((r->ents = mem_malloc(HEAT_RUN_MAX * sizeof(*r->ents))))
				r->ents[0] = r->one;
			else
				heat_run_end(h, r); /* (then one entry at a time) */
		} else if (r->n == HEAT_RUN_MAX) {
			run_halve(r);
		}
	}
	e = r->ents ? &r->ents[r->n] : &r->one;
	memcpy(e->key, key, n);
	memcpy(e->last, key, n);
	e->keyn = e->lastn = n;
	e->n = 1;
	r->n++;
}

/* The inline run of P into P's histograms. */
static void pend_spill(struct heat *h, struct heat_pend *p)
{
	struct heat_item *it;

	if (!p->n)
		return;
	for (it = p->items; it; it = it->next)
		if (!strcmp(it->table, p->table))
			break;
	if (!it && (it = mem_calloc(1, sizeof(*it)))) {
		copy_name(it->table, p->table);
		it->next = p->items;
		p->items = it;
	}
	if (it) {
		heat_hist_add(&it->h, p->key, p->keyn, 0, p->n);
	} else {
		pthread_mutex_lock(&h->lock);
		h->lost += p->n;
		pthread_mutex_unlock(&h->lock);
	}
	p->n = 0;
}

void heat_pend_note(struct heat *h, struct heat_pend *p, const char *table, const void *key, size_t n)
{
	if (n > CS_HEAT_KEY)
		n = CS_HEAT_KEY;
	if (p->n && p->keyn == n && !memcmp(p->key, key, n) && !strcmp(p->table, table)) {
		p->n++;
		return;
	}
	pend_spill(h, p);
	copy_name(p->table, table);
	memcpy(p->key, key, n);
	p->keyn = n;
	p->n = 1;
}

void heat_pend_release(struct heat_pend *p)
{
	items_free(p->items);
	p->items = NULL;
	p->n = 0;
}

bool heat_due(struct heat *h, const struct heat_pend *p)
{
	int64_t now = heat_minute(h);
	bool due;

	pthread_mutex_lock(&h->lock);
	due = (h->items || p->n || p->items) && (p->force || !h->written || h->written_minute != now);
	pthread_mutex_unlock(&h->lock);
	return due;
}

struct heat_item *heat_take(struct heat *h, struct heat_pend *p)
{
	int64_t now = heat_minute(h);
	struct heat_item *list, **tail;

	pend_spill(h, p);
	pthread_mutex_lock(&h->lock);
	list = h->items;
	h->items = NULL;
	h->nitems = 0;
	pthread_mutex_unlock(&h->lock);
	for (tail = &list; *tail; tail = &(*tail)->next)
		(*tail)->from_txn = false;
	for (struct heat_item *it = p->items; it; it = it->next) {
		it->minute = now;
		it->from_txn = true;
	}
	*tail = p->items;
	p->items = NULL;
	return list;
}

void heat_taken_done(struct heat *h, struct heat_item *items, bool ok)
{
	int64_t now = heat_minute(h);

	pthread_mutex_lock(&h->lock);
	if (ok) {
		h->written = true;
		h->written_minute = now;
	} else {
		for (struct heat_item *it = items; it; it = it->next)
			if (!it->from_txn) /* (the writes of a transaction that failed did not happen) */
				item_give(h, it);
	}
	pthread_mutex_unlock(&h->lock);
	items_free(items);
}

void heat_pend_commit(struct heat *h, struct heat_pend *p)
{
	int64_t now;
	struct heat_item *it;

	if (!p->n && !p->items)
		return;
	now = heat_minute(h);
	pthread_mutex_lock(&h->lock);
	if (p->n) {
		if ((it = item_get(h, p->table, now)))
			heat_hist_add(&it->h, p->key, p->keyn, 0, p->n);
		else
			h->lost += p->n;
	}
	for (it = p->items; it; it = it->next) {
		it->minute = now;
		item_give(h, it);
	}
	pthread_mutex_unlock(&h->lock);
	heat_pend_release(p);
}

/* ---- records ---- */

static size_t table_prefix(uint8_t *out, const char *table)
{
	size_t n = strnlen(table, CS_MAX_TABLE); /* (names are checked: the bound tells the compiler KEYMAX holds it) */
	memcpy(out, PREFIX, PREFIXN);
	memcpy(out + PREFIXN, table, n);
	out[PREFIXN + n] = 0;
	return PREFIXN + n + 1;
}

static size_t rec_key(uint8_t *out, const char *table, int64_t minute)
{
	size_t n = table_prefix(out, table);
	key_put_u64(out + n, (uint64_t)minute);
	return n + 8;
}

static size_t common(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	size_t i = 0;
	while (i < an && i < bn && a[i] == b[i])
		i++;
	return i;
}

size_t heat_hist_encode(uint8_t *out, const struct heat_hist *h)
{
	size_t n = 0;
	out[n++] = REC_VERSION;
	n += codec_put_varint(out + n, h->n);
	for (size_t i = 0; i < h->n; i++) {
		const cs_heat_range *r = &h->r[i];
		size_t share = common(r->key, r->keylen, r->last, r->lastlen);
		n += codec_put_varint(out + n, r->keylen);
		memcpy(out + n, r->key, r->keylen);
		n += r->keylen;
		n += codec_put_varint(out + n, share);
		n += codec_put_varint(out + n, r->lastlen - share);
		memcpy(out + n, r->last + share, r->lastlen - share);
		n += r->lastlen - share;
		n += codec_put_varint(out + n, r->reads);
		n += codec_put_varint(out + n, r->writes);
	}
	return n;
}

/* One varint at *P (before END) into *V, at most MAX; false if there is none. */
static bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t max, uint64_t *v)
{
	int a = codec_get_varint(*p, (size_t)(end - *p), v);
	if (a < 0 || *v > max)
		return false;
	*p += a;
	return true;
}

int heat_hist_decode(const uint8_t *v, size_t vn, struct heat_hist *h)
{
	const uint8_t *p = v, *end = v + vn;
	uint64_t n, kn, share, tail;

	h->n = 0;
	if (vn < 2 || *p++ != REC_VERSION || !get_varint(&p, end, CS_HEAT_RANGES, &n) || !n)
		return -EIO;
	for (size_t i = 0; i < n; i++) {
		cs_heat_range *r = &h->r[i];
		if (!get_varint(&p, end, CS_HEAT_KEY, &kn) || !kn || kn > (uint64_t)(end - p))
			return -EIO;
		memcpy(r->key, p, kn);
		r->keylen = kn;
		p += kn;
		if (!get_varint(&p, end, kn, &share) || !get_varint(&p, end, CS_HEAT_KEY - share, &tail) ||
		    !(share + tail) || tail > (uint64_t)(end - p))
			return -EIO;
		memcpy(r->last, r->key, share);
		memcpy(r->last + share, p, tail);
		r->lastlen = share + tail;
		p += tail;
		if (!get_varint(&p, end, UINT64_MAX, &r->reads) || !get_varint(&p, end, UINT64_MAX, &r->writes))
			return -EIO;
		if (kv_key_cmp(r->key, r->keylen, r->last, r->lastlen) > 0 ||
		    (i && kv_key_cmp(h->r[i - 1].last, h->r[i - 1].lastlen, r->key, r->keylen) >= 0))
			return -EIO;
		h->n = i + 1;
	}
	return p == end ? 0 : -EIO;
}

/* Delete the records under PFX (PN bytes) whose minute is at most LAST (all: INT64_MAX); oldest first,
 * so it stops at the first one kept. */
static int delete_upto(kv_txn *kv, const uint8_t *pfx, size_t pn, int64_t last)
{
	uint8_t k[KEYMAX];
	kv_cursor *c;
	int rc;

	if ((rc = kv_cursor_open(kv, &c)))
		return rc;
	for (;;) {
		const uint8_t *ck;
		size_t ckn;
		if ((rc = kv_seek(c, pfx, pn)))
			break;
		kv_key(c, (const void **)&ck, &ckn);
		if (ckn != pn + 8 || memcmp(ck, pfx, pn) || (int64_t)key_get_u64(ck + pn) > last)
			break;
		memcpy(k, ck, ckn);
		if ((rc = kv_del(kv, k, ckn)))
			break;
	}
	kv_cursor_close(c);
	return rc == -ENOENT ? 0 : rc;
}

int heat_write(kv_txn *kv, const char *table, int64_t minute, const struct heat_hist *hist, int64_t now)
{
	uint8_t k[KEYMAX], v[HEAT_REC_MAX];
	struct heat_hist cur;
	const void *old;
	size_t kn, oldn;
	int rc;

	if (minute >= 0 && minute > now - CS_HEAT_MINUTES && hist->n) {
		kn = rec_key(k, table, minute);
		rc = kv_get(kv, k, kn, &old, &oldn);
		if (rc && rc != -ENOENT)
			return rc;
		if (rc || heat_hist_decode(old, oldn, &cur))
			cur.n = 0; /* (a damaged record is replaced: cs_verify() reports it until then) */
		heat_hist_merge(&cur, hist);
		if ((rc = kv_put(kv, k, kn, v, heat_hist_encode(v, &cur))))
			return rc;
	}
	kn = table_prefix(k, table);
	return delete_upto(kv, k, kn, now - CS_HEAT_MINUTES);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, *(char *const *)b);
}

int heat_gc(kv_txn *kv, char *const *names, size_t n, int64_t now)
{
	uint8_t k[KEYMAX + 1];
	size_t kn = PREFIXN;
	kv_cursor *c;
	int rc;

	if ((rc = kv_cursor_open(kv, &c)))
		return rc;
	memcpy(k, PREFIX, PREFIXN);
	for (rc = kv_seek(c, k, kn); !rc; rc = kv_seek(c, k, kn)) {
		char name[CS_MAX_TABLE + 1];
		const uint8_t *ck, *z;
		size_t ckn;

		kv_key(c, (const void **)&ck, &ckn);
		if (ckn < PREFIXN || memcmp(ck, PREFIX, PREFIXN) || ckn > KEYMAX)
			break;
		memcpy(k, ck, ckn);
		kn = ckn;
		z = memchr(k + PREFIXN, 0, kn - PREFIXN);
		if (z && (size_t)(z - k) - PREFIXN <= CS_MAX_TABLE && kn == (size_t)(z - k) + 1 + 8) {
			memcpy(name, k + PREFIXN, (size_t)(z - k) - PREFIXN);
			name[(size_t)(z - k) - PREFIXN] = 0;
			if (bsearch(name, names, n, sizeof(*names), name_cmp) &&
			    (int64_t)key_get_u64(k + kn - 8) > now - CS_HEAT_MINUTES) {
				k[kn++] = 0; /* (kept: on to the next key) */
				continue;
			}
		}
		if ((rc = kv_del(kv, k, kn))) /* (a malformed one too: cs_verify() reported it) */
			break;
	}
	kv_cursor_close(c);
	return rc == -ENOENT ? 0 : rc;
}

void cs_heat_free(cs_heat *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->nminutes; i++)
		free(h->minutes[i].ranges);
	free(h->minutes);
	free(h);
}

int heat_read(kv_txn *kv, const char *table, int64_t from, cs_heat **out)
{
	uint8_t pfx[KEYMAX], start[KEYMAX];
	size_t pn = table_prefix(pfx, table), cap = 0;
	struct heat_hist hist;
	kv_cursor *c;
	cs_heat *h;
	int rc;

	if (!(h = mem_calloc(1, sizeof(*h))))
		return -ENOMEM;
	if ((rc = kv_cursor_open(kv, &c))) {
		free(h);
		return rc;
	}
	for (rc = kv_seek(c, start, rec_key(start, table, from < 0 ? 0 : from)); !rc; rc = kv_next(c)) {
		const uint8_t *k, *v;
		size_t kn, vn;
		cs_heat_minute *m;

		kv_key(c, (const void **)&k, &kn);
		if (kn < pn || memcmp(k, pfx, pn))
			break;
		if ((rc = kv_value(c, (const void **)&v, &vn)))
			break;
		if (kn != pn + 8 || heat_hist_decode(v, vn, &hist)) {
			rc = -EIO;
			break;
		}
		if (h->nminutes == cap) {
			cs_heat_minute *nm = mem_realloc(h->minutes, (cap = cap ? 2 * cap : 16) * sizeof(*nm));
			if (!nm) {
				rc = -ENOMEM;
				break;
			}
			h->minutes = nm;
		}
		m = &h->minutes[h->nminutes];
		if (!(m->ranges = mem_malloc(hist.n * sizeof(*m->ranges)))) {
			rc = -ENOMEM;
			break;
		}
		memcpy(m->ranges, hist.r, hist.n * sizeof(*m->ranges));
		m->nranges = hist.n;
		m->minute = (int64_t)key_get_u64(k + pn);
		h->nminutes++;
	}
	kv_cursor_close(c);
	if (rc && rc != -ENOENT) {
		cs_heat_free(h);
		return rc;
	}
	*out = h;
	return 0;
}

bool heat_check_record(const uint8_t *k, size_t kn, const uint8_t *v, size_t vn, const char **what)
{
	char name[CS_MAX_TABLE + 1];
	struct heat_hist hist;
	const uint8_t *z;

	if (kn < PREFIXN || memcmp(k, PREFIX, PREFIXN))
		return false;
	*what = NULL;
	z = kn > PREFIXN ? memchr(k + PREFIXN, 0, kn - PREFIXN) : NULL;
	if (!z || (size_t)(z - k) - PREFIXN > CS_MAX_TABLE || kn != (size_t)(z - k) + 1 + 8) {
		*what = "Key Visualizer record with a malformed key";
		return true;
	}
	memcpy(name, k + PREFIXN, (size_t)(z - k) - PREFIXN);
	name[(size_t)(z - k) - PREFIXN] = 0;
	if (cs_check_table_name(name))
		*what = "Key Visualizer record with an invalid table name";
	else if (heat_hist_decode(v, vn, &hist))
		*what = "Key Visualizer record does not decode";
	return true;
}

/* M's ranges and HIST's counts, into M (its ranges reallocated). Errors: -ENOMEM (M unchanged). */
static int minute_add(cs_heat_minute *m, const struct heat_hist *hist)
{
	struct heat_hist cur;
	cs_heat_range *r;

	cur.n = m->nranges;
	if (m->nranges) /* (a new minute's ranges are NULL: memcpy must not see it) */
		memcpy(cur.r, m->ranges, m->nranges * sizeof(*m->ranges));
	heat_hist_merge(&cur, hist);
	if (!(r = mem_realloc(m->ranges, cur.n * sizeof(*r))))
		return -ENOMEM;
	memcpy(r, cur.r, cur.n * sizeof(*r));
	m->ranges = r;
	m->nranges = cur.n;
	return 0;
}

int heat_add_items(cs_heat *h, const struct heat_item *items, int64_t from, int64_t now)
{
	for (const struct heat_item *it = items; it; it = it->next) {
		size_t i = h->nminutes;
		cs_heat_minute *m;
		int rc;

		if (it->minute < from || it->minute <= now - CS_HEAT_MINUTES || !it->h.n)
			continue;
		while (i && h->minutes[i - 1].minute > it->minute)
			i--;
		if (i && h->minutes[i - 1].minute == it->minute) {
			if ((rc = minute_add(&h->minutes[i - 1], &it->h)))
				return rc;
			continue;
		}
		if (!(m = mem_realloc(h->minutes, (h->nminutes + 1) * sizeof(*m))))
			return -ENOMEM;
		h->minutes = m;
		memmove(&m[i + 1], &m[i], (h->nminutes - i) * sizeof(*m));
		m[i] = (cs_heat_minute){ .minute = it->minute };
		h->nminutes++;
		if ((rc = minute_add(&m[i], &it->h))) { /* (an empty minute must not stay) */
			memmove(&m[i], &m[i + 1], (--h->nminutes - i) * sizeof(*m));
			return rc;
		}
	}
	return 0;
}
