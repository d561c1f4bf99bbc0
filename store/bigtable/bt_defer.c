/* bt_defer.c — CS_TXN_DEFER: row mutations queued per table and sent as MutateRows in batches, so that an
 * `rm -rf` of a directory costs a few calls, not one per file. A table's queue goes out 100 ms after its
 * oldest entry (a thread of the store's), when full, and before any other call on the table goes to
 * Bigtable (bt_defer_flush), so this process sees its writes in the order it made them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bigtable.pb-c.h"
#include "bt_internal.h"
#include "mem.h"

#define DEFER_MS 100             /* a queue is sent this long after its oldest entry */
#define DEFER_ROWS 1000          /* a queue holds at most this many rows, */
#define DEFER_BYTES (4u << 20)   /* this many bytes of mutations */
#define DEFER_MUTATIONS 100000   /* and mutations (Bigtable's limit per request) */
#define SLOTS 2048               /* the rows' index: open addressing, more than twice DEFER_ROWS */

/* One row's queued mutations, encoded as a MutateRowsRequest.Entry: its key (field 1), then each
 * mutation (field 2) in the order queued. */
struct dentry {
	uint8_t *p;
	size_t n, cap;
	size_t koff, keyn; /* the key's bytes in P */
	bool ok;           /* acknowledged */
	bool deletes;      /* only deletes (for the words of a failure) */
};

struct dbatch {
	struct dentry *ents;
	size_t nents, entcap;
	size_t bytes, nmut;
	uint32_t slot[SLOTS]; /* entry index + 1; 0 free */
};

/* One table's queue. */
struct dq {
	struct dq *next;        /* (never changes once linked) */
	bt_store *st;
	char table[CS_MAX_TABLE + 1];
	struct bt_target to;
	pthread_mutex_t send;   /* held while OUT is sent: a flush waits for the send in flight */
	struct dbatch *cur;     /* queued (under the store's lock) */
	struct dbatch *out;     /* being sent (under SEND) */
	btw_buf req;            /* (under SEND) */
	int64_t since;          /* when CUR's first entry was queued (monotonic ms); under lock */
	bool sending;           /* OUT is being sent; under lock */
	int err;                /* a failed send's error for the next call on the table, and its words; under lock */
	char why[600];
};

struct bt_defer {
	pthread_mutex_t lock;
	pthread_cond_t wake;    /* the thread: a queue's first entry, or closing */
	pthread_t th;
	bool started, closing;  /* under lock */
	struct dq *tables;      /* under lock */
};

static uint32_t hash(const void *key, size_t n)
{
	const uint8_t *p = key;
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* The slot of row KEY in B: its entry's (B->slot[i] != 0) or the free one where it would go. */
static size_t find_slot(const struct dbatch *b, const void *key, size_t keyn)
{
	size_t i = hash(key, keyn) & (SLOTS - 1);
	for (; b->slot[i]; i = (i + 1) & (SLOTS - 1)) {
		const struct dentry *e = &b->ents[b->slot[i] - 1];
		if (e->keyn == keyn && !memcmp(e->p + e->koff, key, keyn))
			break;
	}
	return i;
}

static void batch_reset(struct dbatch *b)
{
	for (size_t i = 0; i < b->nents; i++)
		free(b->ents[i].p);
	b->nents = b->bytes = b->nmut = 0;
	memset(b->slot, 0, sizeof(b->slot));
}

static void batch_free(struct dbatch *b)
{
	if (!b)
		return;
	batch_reset(b);
	free(b->ents);
	free(b);
}

static int append(struct dentry *e, const void *p, size_t n)
{
	if (e->n + n > e->cap) {
		size_t cap = e->cap ? e->cap : 128;
		uint8_t *q;
		while (cap < e->n + n)
			cap *= 2;
		if (!(q = mem_realloc(e->p, cap)))
			return -ENOMEM;
		e->p = q;
		e->cap = cap;
	}
	memcpy(e->p + e->n, p, n);
	e->n += n;
	return 0;
}

/* Queue row KEY's encoded mutations M (N of them: only deletes if DELETES) in B, after the row's earlier
 * ones. */
static int batch_add(struct dbatch *b, const void *key, size_t keyn, const btw_buf *m, size_t n, bool deletes)
{
	size_t i = find_slot(b, key, keyn);
	struct dentry *e;

	if (!b->slot[i]) {
		btw_buf head = { 0 };
		if (b->nents == b->entcap) {
			size_t cap = b->entcap ? 2 * b->entcap : 64;
			struct dentry *x = mem_realloc(b->ents, cap * sizeof(*x));
			if (!x)
				return -ENOMEM;
			b->ents = x;
			b->entcap = cap;
		}
		e = &b->ents[b->nents];
		*e = (struct dentry){ .deletes = true };
		btw_put_len_head(&head, 1, keyn);
		if (head.failed || append(e, head.p, head.n) || append(e, key, keyn)) {
			btw_buf_free(&head);
			free(e->p);
			return -ENOMEM;
		}
		e->koff = head.n;
		e->keyn = keyn;
		btw_buf_free(&head);
		b->slot[i] = (uint32_t)++b->nents;
		b->bytes += e->n;
	}
	e = &b->ents[b->slot[i] - 1];
	if (append(e, m->p, m->n))
		return -ENOMEM; /* (the row's entry stays as it was) */
	e->deletes = e->deletes && deletes;
	b->bytes += m->n;
	b->nmut += n;
	return 0;
}

/* ---- bt_mutate_rows()'s view of a queue's batch being sent */

static size_t out_pending(void *arg)
{
	const struct dbatch *b = ((struct dq *)arg)->out;
	size_t n = 0;
	for (size_t i = 0; i < b->nents; i++)
		n += !b->ents[i].ok;
	return n;
}

static ssize_t out_encode(void *arg, btw_buf *o, size_t *idx)
{
	struct dq *q = arg;
	const struct dbatch *b = q->out;
	size_t n = 0;

	btw_buf_reset(o);
	btw_put_mutate_rows_head(o, q->to.name, btr_app_profile(q->st->c));
	for (size_t i = 0; i < b->nents; i++) {
		if (b->ents[i].ok)
			continue;
		idx[n++] = i;
		btw_put_len_field(o, 2, b->ents[i].p, b->ents[i].n);
	}
	return o->failed ? -ENOMEM : (ssize_t)n;
}

static bool out_ack(void *arg, size_t i)
{
	struct dentry *e = &((struct dq *)arg)->out->ents[i];
	bool was = e->ok;
	e->ok = true;
	return !was;
}

/* Hand Q's kept error to this call (under the lock): the error, and the thread's words for it. */
static int take_error(struct dq *q)
{
	int rc = q->err;
	q->err = 0;
	return bt_fail(rc, NULL, q->why);
}

/* Send what Q holds, after the send in flight. A failure (the rows not acknowledged forgotten from the
 * row cache) is kept for the next call on the table if KEEP, else returned (with the thread's words). */
static int flush_q(bt_store *st, struct dq *q, bool keep)
{
	struct bt_defer *d = st->defer;
	btr_status last = { .code = GRPC_STATUS_OK };
	struct dbatch *t;
	int rc = 0;

	pthread_mutex_lock(&q->send);
	pthread_mutex_lock(&d->lock);
	t = q->out;
	q->out = q->cur;
	q->cur = t;
	q->since = 0;
	q->sending = q->out->nents > 0;
	pthread_mutex_unlock(&d->lock);
	if (q->out->nents) {
		struct bt_mrows m = { .st = st, .routing = q->to.routing, .req = &q->req, .arg = q,
				      .pending = out_pending, .encode = out_encode, .ack = out_ack };
		if ((rc = bt_mutate_rows(&m, &last))) {
			char words[sizeof(q->why)], why[sizeof(q->why)];
			size_t failed = 0;
			bool deletes = true;
			for (size_t i = 0; i < q->out->nents; i++) {
				struct dentry *e = &q->out->ents[i];
				if (e->ok)
					continue;
				failed++;
				deletes = deletes && e->deletes;
				/* (read from Bigtable again: a deleted file may come back, a written one stays) */
				bt_rows_forget(st, q->table, e->p + e->koff, e->keyn);
			}
			bt_status_text(&last, words, sizeof(words));
			snprintf(why, sizeof(why), "%zu queued %s of table %s failed: %s", failed,
				 deletes ? "deletes" : "mutations", q->table, words[0] ? words : "MutateRows failed");
			if (keep) {
				pthread_mutex_lock(&d->lock);
				if (!q->err) {
					q->err = rc;
					memcpy(q->why, why, sizeof(why));
				}
				pthread_mutex_unlock(&d->lock);
				rc = 0;
			} else {
				bt_fail(rc, NULL, why);
			}
		}
	}
	pthread_mutex_lock(&d->lock);
	batch_reset(q->out);
	q->sending = false;
	pthread_mutex_unlock(&d->lock);
	pthread_mutex_unlock(&q->send);
	return rc;
}

/* The thread: sends each queue DEFER_MS after its oldest entry. */
static void *run(void *arg)
{
	bt_store *st = arg;
	struct bt_defer *d = st->defer;

	pthread_mutex_lock(&d->lock);
	while (!d->closing) {
		struct dq *due = NULL;
		for (struct dq *q = d->tables; q; q = q->next)
			if (q->cur->nents && (!due || q->since < due->since))
				due = q;
		if (!due) {
			pthread_cond_wait(&d->wake, &d->lock);
		} else if (bt_mono_ms() >= due->since + DEFER_MS) {
			pthread_mutex_unlock(&d->lock);
			flush_q(st, due, true);
			pthread_mutex_lock(&d->lock);
		} else {
			int64_t at = due->since + DEFER_MS;
			struct timespec ts = { (time_t)(at / 1000), (long)(at % 1000) * 1000000L };
			pthread_cond_timedwait(&d->wake, &d->lock, &ts);
		}
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int bt_defer_new(struct bt_defer **out)
{
	struct bt_defer *d = mem_calloc(1, sizeof(*d));
	pthread_condattr_t ca;

	if (!d)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* (bt_mono_ms's clock) */
	pthread_cond_init(&d->wake, &ca);
	pthread_condattr_destroy(&ca);
	*out = d;
	return 0;
}

void bt_defer_free(bt_store *st)
{
	struct bt_defer *d = st ? st->defer : NULL;
	struct dq *q, *next;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->closing = true;
	pthread_cond_signal(&d->wake);
	pthread_mutex_unlock(&d->lock);
	if (d->started)
		pthread_join(d->th, NULL);
	for (q = d->tables; q; q = next) {
		next = q->next;
		flush_q(st, q, true);
		batch_free(q->cur);
		batch_free(q->out);
		btw_buf_free(&q->req);
		pthread_mutex_destroy(&q->send);
		free(q);
	}
	pthread_cond_destroy(&d->wake);
	pthread_mutex_destroy(&d->lock);
	free(d);
	st->defer = NULL;
}

/* TABLE's queue (under the lock), or NULL; made if MAKE (with target TO). */
static struct dq *table_q(bt_store *st, const char *table, const struct bt_target *to, bool make)
{
	struct bt_defer *d = st->defer;
	struct dq *q;

	for (q = d->tables; q; q = q->next)
		if (!strcmp(q->table, table))
			return q;
	if (!make || strlen(table) > CS_MAX_TABLE || !(q = mem_calloc(1, sizeof(*q))))
		return NULL;
	if (!(q->cur = mem_calloc(1, sizeof(*q->cur))) || !(q->out = mem_calloc(1, sizeof(*q->out)))) {
		free(q->cur);
		free(q);
		return NULL;
	}
	strcpy(q->table, table);
	q->st = st;
	q->to = *to;
	pthread_mutex_init(&q->send, NULL);
	q->next = d->tables;
	d->tables = q;
	return q;
}

int bt_defer_add(bt_store *st, const char *table, const struct bt_target *to, const void *key, size_t keyn,
		 struct Google__Bigtable__V2__Mutation *const *mp, size_t n)
{
	struct bt_defer *d = st->defer;
	btw_buf m = { 0 };
	uint8_t *tmp = NULL;
	size_t tmpcap = 0;
	bool deletes = true;
	struct dq *q;
	int rc = 0;

	if (n > DEFER_MUTATIONS)
		return -E2BIG;
	for (size_t i = 0; i < n && !m.failed; i++) {
		size_t size = protobuf_c_message_get_packed_size(&mp[i]->base);
		if (size > tmpcap) {
			uint8_t *x = mem_realloc(tmp, size);
			if (!x) {
				m.failed = true;
				break;
			}
			tmp = x;
			tmpcap = size;
		}
		protobuf_c_message_pack(&mp[i]->base, tmp);
		btw_put_len_field(&m, 2, tmp, size);
		deletes = deletes && mp[i]->mutation_case != GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_SET_CELL &&
			  mp[i]->mutation_case != GOOGLE__BIGTABLE__V2__MUTATION__MUTATION_ADD_TO_CELL;
	}
	free(tmp);
	if (m.failed) {
		btw_buf_free(&m);
		return -ENOMEM;
	}
	if (m.n + keyn > DEFER_BYTES / 4) { /* (a large write is no delete: sent by the caller) */
		btw_buf_free(&m);
		return -E2BIG;
	}
	/* the row kept changed as Bigtable will change it, so that the reads around an unlink, of that row,
	 * need neither the service nor the queue sent (undone below if not queued) */
	bt_rows_apply(st, table, key, keyn, mp, n);
	pthread_mutex_lock(&d->lock);
	if (!(q = table_q(st, table, to, true)))
		rc = -ENOMEM;
	while (!rc) {
		struct dbatch *b = q->cur;
		bool had = b->nents > 0;
		if (q->err) {
			rc = take_error(q);
			break;
		}
		if (b->bytes + m.n + keyn + 16 <= DEFER_BYTES && b->nmut + n <= DEFER_MUTATIONS &&
		    (b->nents < DEFER_ROWS || b->slot[find_slot(b, key, keyn)])) {
			if ((rc = batch_add(b, key, keyn, &m, n, deletes)))
				break;
			if (!had) {
				q->since = bt_mono_ms();
				pthread_cond_signal(&d->wake);
			}
			break;
		}
		pthread_mutex_unlock(&d->lock); /* full: this call sends it, and waits */
		rc = flush_q(st, q, false);
		pthread_mutex_lock(&d->lock);
	}
	if (!rc && !d->started && !d->closing) {
		if (pthread_create(&d->th, NULL, run, st)) {
			pthread_mutex_unlock(&d->lock);
			btw_buf_free(&m);
			return flush_q(st, q, false); /* (no thread to be had: sent now) */
		}
		d->started = true;
	}
	pthread_mutex_unlock(&d->lock);
	btw_buf_free(&m);
	if (rc)
		bt_rows_forget(st, table, key, keyn); /* (not queued: read it again) */
	return rc;
}

static int flush_table(bt_store *st, const char *table, bool all, const void *lo, size_t lon, const void *hi,
		       size_t hin);

/* Whether B holds a row in [LO, HI] (LON 0: from the first; HI NULL: to the last). */
static bool batch_has(const struct dbatch *b, const void *lo, size_t lon, const void *hi, size_t hin)
{
	for (size_t i = 0; i < b->nents; i++) {
		const struct dentry *e = &b->ents[i];
		if ((!lon || bt_key_cmp(e->p + e->koff, e->keyn, lo, lon) >= 0) &&
		    (!hi || bt_key_cmp(e->p + e->koff, e->keyn, hi, hin) <= 0))
			return true;
	}
	return false;
}

int bt_defer_flush(bt_store *st, const char *table)
{
	return flush_table(st, table, true, NULL, 0, NULL, 0);
}

int bt_defer_flush_range(bt_store *st, const char *table, const void *lo, size_t lon, const void *hi, size_t hin)
{
	return flush_table(st, table, false, lo, lon, hi, hin);
}

int bt_defer_check(bt_store *st, const char *table)
{
	struct bt_defer *d = st->defer;
	struct dq *q;
	int rc = 0;

	if (!d)
		return 0;
	pthread_mutex_lock(&d->lock);
	q = table_q(st, table, NULL, false);
	if (q && q->sending) { /* (its outcome is this call's to report) */
		pthread_mutex_unlock(&d->lock);
		pthread_mutex_lock(&q->send);
		pthread_mutex_unlock(&q->send);
		pthread_mutex_lock(&d->lock);
	}
	if (q && q->err)
		rc = take_error(q);
	pthread_mutex_unlock(&d->lock);
	return rc;
}

/* bt_defer_flush() if ALL, else bt_defer_flush_range(). */
static int flush_table(bt_store *st, const char *table, bool all, const void *lo, size_t lon, const void *hi,
		       size_t hin)
{
	struct bt_defer *d = st->defer;
	struct dq *q;
	int rc;

	if (!d)
		return 0;
	pthread_mutex_lock(&d->lock);
	q = table_q(st, table, NULL, false);
	if (!q || (!q->sending && !q->err && !(all ? q->cur->nents > 0 : batch_has(q->cur, lo, lon, hi, hin)))) {
		pthread_mutex_unlock(&d->lock);
		return 0;
	}
	pthread_mutex_unlock(&d->lock);
	if ((rc = flush_q(st, q, false)))
		return rc; /* (an error kept from before stays for the next call) */
	pthread_mutex_lock(&d->lock);
	if (q->err)
		rc = take_error(q);
	pthread_mutex_unlock(&d->lock);
	return rc;
}

int bt_defer_sync(bt_store *st)
{
	struct bt_defer *d = st->defer;
	struct dq *q;
	int rc = 0, r;

	bt_clear_error();
	if (!d)
		return 0;
	pthread_mutex_lock(&d->lock);
	q = d->tables;
	pthread_mutex_unlock(&d->lock);
	for (; q; q = q->next) /* (a queue is never unlinked while the store is open) */
		if ((r = bt_defer_flush(st, q->table)) && !rc)
			rc = r;
	return rc;
}
