/* bt_ahead.c — reading ahead of a walk (a store that keeps rows: CS_OPEN_CACHE). A listing too large to
 * be read whole goes level by level, jumping over each subdirectory's rows (the mount's skip scan seeks
 * past K#s#): the ranges it jumped over are that directory's subdirectories, in order, and are kept here
 * as a list (bt_ahead_children). When a scan then reads one of them (a walk entering it), the next
 * AHEAD of the list are read whole by threads of the store, at most AHEAD at once, so that the walk finds
 * them kept; a scan of a range being read ahead waits for it instead of reading it again. A plain listing
 * (`ls` of the large directory) reads nothing ahead: only a walk's first step into it does. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bt_internal.h"
#include "mem.h"

#define AHEAD 4   /* ranges read ahead of the one a scan reads, and threads reading them */
#define LISTS 8   /* lists of subdirectories kept, the newest */
#define KIDS_MAX 100000

struct kid {
	uint8_t *lo, *hi; /* [lo, hi) */
	size_t lon, hin;
};

struct kids {
	struct kids *next;
	char *table;
	int64_t expires;
	size_t n, cap;
	struct kid *v;
};

struct job {
	char *table;
	struct bt_target to;
	struct kid r;
	bool running;
};

struct bt_ahead {
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	pthread_t th[AHEAD];
	size_t nth;
	bool stop;
	bt_store *st;
	struct kids *lists; /* newest first */
	struct job q[2 * AHEAD];
	size_t nq;
};

static void kid_free(struct kid *k)
{
	free(k->lo);
	free(k->hi);
}

static void kids_free(struct kids *l)
{
	for (size_t i = 0; i < l->n; i++)
		kid_free(&l->v[i]);
	free(l->v);
	free(l->table);
	free(l);
}

static int kid_set(struct kid *k, const void *lo, size_t lon, const void *hi, size_t hin)
{
	if (!(k->lo = mem_malloc(lon + 1)) || !(k->hi = mem_malloc(hin + 1))) {
		free(k->lo);
		return -ENOMEM;
	}
	memcpy(k->lo, lo, lon);
	memcpy(k->hi, hi, hin);
	k->lon = lon;
	k->hin = hin;
	return 0;
}

static bool kid_is(const struct kid *k, const void *lo, size_t lon, const void *hi, size_t hin)
{
	return hi && !bt_key_cmp(k->lo, k->lon, lo, lon) && !bt_key_cmp(k->hi, k->hin, hi, hin);
}

int bt_ahead_new(bt_store *st, struct bt_ahead **out)
{
	struct bt_ahead *a = mem_calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->work, NULL);
	pthread_cond_init(&a->done, NULL);
	a->st = st;
	*out = a;
	return 0;
}

void bt_ahead_free(struct bt_ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->work);
	pthread_mutex_unlock(&a->lock);
	for (size_t i = 0; i < a->nth; i++)
		pthread_join(a->th[i], NULL);
	for (size_t i = 0; i < a->nq; i++) {
		free(a->q[i].table);
		kid_free(&a->q[i].r);
	}
	while (a->lists) {
		struct kids *next = a->lists->next;
		kids_free(a->lists);
		a->lists = next;
	}
	pthread_cond_destroy(&a->work);
	pthread_cond_destroy(&a->done);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

/* The index of the job for [LO, HI) of TABLE, or a->nq (under the lock). */
static size_t job_find(const struct bt_ahead *a, const char *table, const void *lo, size_t lon, const void *hi,
		       size_t hin)
{
	size_t j;
	for (j = 0; j < a->nq && !(kid_is(&a->q[j].r, lo, lon, hi, hin) && !strcmp(a->q[j].table, table)); j++)
		;
	return j;
}

/* The index of [LO, HI) in list L (sorted, without overlaps), or L->n. */
static size_t kid_find(const struct kids *l, const void *lo, size_t lon, const void *hi, size_t hin)
{
	size_t a = 0, b = l->n;
	while (a < b) {
		size_t m = (a + b) / 2;
		if (bt_key_cmp(l->v[m].lo, l->v[m].lon, lo, lon) < 0)
			a = m + 1;
		else
			b = m;
	}
	return a < l->n && kid_is(&l->v[a], lo, lon, hi, hin) ? a : l->n;
}

/* Take job I out of the queue (under the lock). */
static void job_drop(struct bt_ahead *a, size_t i)
{
	free(a->q[i].table);
	kid_free(&a->q[i].r);
	a->q[i] = a->q[--a->nq];
}

static void *run(void *arg)
{
	struct bt_ahead *a = arg;
	pthread_mutex_lock(&a->lock);
	for (;;) {
		struct job j;
		size_t i;
		for (i = 0; i < a->nq && a->q[i].running; i++)
			;
		if (a->stop)
			break;
		if (i == a->nq) {
			pthread_cond_wait(&a->work, &a->lock);
			continue;
		}
		a->q[i].running = true;
		j = a->q[i]; /* (its bytes stay the queue's until dropped, by this thread only) */
		pthread_mutex_unlock(&a->lock);
		/* AHEAD ranges at once must fit the budget together; a failure is the walk's to meet */
		bt_read_whole(a->st, j.table, &j.to, j.r.lo, j.r.lon, j.r.hi, j.r.hin, a->st->prefetch / (2 * AHEAD));
		pthread_mutex_lock(&a->lock);
		for (i = 0; i < a->nq && a->q[i].r.lo != j.r.lo; i++)
			;
		job_drop(a, i);
		pthread_cond_broadcast(&a->done);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

void bt_ahead_children(bt_store *st, const char *table, const uint8_t *blob, const size_t *off, const size_t *len,
		       size_t n)
{
	struct bt_ahead *a = st->ahead;
	struct kids *l = NULL;
	int64_t now = bt_mono_ms();

	if (!a || !n)
		return;
	pthread_mutex_lock(&a->lock);
	/* a listing resumed (each readdir request is a scan): its next subdirectories join its list */
	if (a->lists && !strcmp(a->lists->table, table) && a->lists->expires > now && a->lists->n &&
	    bt_key_cmp(a->lists->v[a->lists->n - 1].lo, a->lists->v[a->lists->n - 1].lon, blob + off[0], len[0]) < 0)
		l = a->lists;
	if (!l) {
		struct kids **pp;
		size_t k = 0;
		if (!(l = mem_calloc(1, sizeof(*l))) || !(l->table = mem_strdup(table))) {
			free(l);
			goto out;
		}
		l->next = a->lists;
		a->lists = l;
		for (pp = &a->lists; *pp && k < LISTS; pp = &(*pp)->next, k++)
			;
		while (*pp) {
			struct kids *old = *pp;
			*pp = old->next;
			kids_free(old);
		}
	}
	l->expires = now + st->ttl_ms;
	for (size_t i = 0; i + 1 < 2 * n && l->n < KIDS_MAX; i += 2) { /* (pairs: lo, hi) */
		if (l->n == l->cap) {
			size_t cap = l->cap ? 2 * l->cap : 64;
			struct kid *v = mem_realloc(l->v, cap * sizeof(*v));
			if (!v)
				break;
			l->v = v;
			l->cap = cap;
		}
		if (kid_set(&l->v[l->n], blob + off[i], len[i], blob + off[i + 1], len[i + 1]))
			break;
		l->n++;
	}
out:
	pthread_mutex_unlock(&a->lock);
}

void bt_ahead_reading(bt_store *st, const char *table, const struct bt_target *to, const void *lo, size_t lon,
		      const void *hi, size_t hin)
{
	struct bt_ahead *a = st->ahead;
	int64_t now = bt_mono_ms();
	struct kids *l;
	size_t at = 0;

	if (!a || !hi)
		return;
	pthread_mutex_lock(&a->lock);
	for (l = a->lists; l; l = l->next) {
		if (l->expires <= now || strcmp(l->table, table))
			continue;
		if ((at = kid_find(l, lo, lon, hi, hin)) < l->n)
			break;
	}
	for (size_t i = at + 1; l && i < l->n && i <= at + AHEAD && a->nq < 2 * AHEAD; i++) {
		const struct kid *k = &l->v[i];
		struct bt_cover *v;
		if (job_find(a, table, k->lo, k->lon, k->hi, k->hin) < a->nq ||
		    bt_rows_too_big(st, table, k->lo, k->lon, k->hi, k->hin))
			continue;
		if ((v = bt_rows_covered(st, table, k->lo, k->lon, k->hi, k->hin))) {
			bt_rows_cover_release(v);
			continue;
		}
		a->q[a->nq] = (struct job){ .to = *to };
		if (!(a->q[a->nq].table = mem_strdup(table)) || kid_set(&a->q[a->nq].r, k->lo, k->lon, k->hi, k->hin)) {
			free(a->q[a->nq].table);
			break;
		}
		a->nq++;
		if (a->nth < AHEAD && !pthread_create(&a->th[a->nth], NULL, run, a))
			a->nth++;
		pthread_cond_signal(&a->work);
	}
	/* the range itself: being read ahead, wait for it; queued, the caller reads it */
	for (;;) {
		size_t j = job_find(a, table, lo, lon, hi, hin);
		if (j == a->nq)
			break;
		if (!a->q[j].running) {
			job_drop(a, j);
			break;
		}
		pthread_cond_wait(&a->done, &a->lock);
	}
	pthread_mutex_unlock(&a->lock);
}
