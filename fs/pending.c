/* pending.c — directories held by the daemon until the store has them (see pending.h). The set stays small
 * (directories made or emptied through the mount and not yet filled or removed), so it is a list. */
#include "pending.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void pending_init(struct pending_set *p)
{
	pthread_mutex_init(&p->lock, NULL);
	p->head = NULL;
	p->count = 0;
	p->cols = NULL;
	p->ncols = 0;
	p->capcols = 0;
	p->rounds = NULL;
	p->nrounds = p->caprounds = 0;
}

static void entry_free(struct pending_dir *d)
{
	node_id_free(&d->id);
	free(d->name);
	free(d);
}

void pending_release(struct pending_set *p)
{
	while (p->head) {
		struct pending_dir *d = p->head;
		p->head = d->next;
		entry_free(d);
	}
	p->count = 0;
	free(p->cols);
	p->cols = NULL;
	p->ncols = 0;
	p->capcols = 0;
	free(p->rounds);
	p->rounds = NULL;
	p->nrounds = p->caprounds = 0;
	pthread_mutex_destroy(&p->lock);
}

/* Whether D is in the directory with inode number PARENT (by either of its numbers, see pending_rewrite) */
static bool in_parent(const struct pending_dir *d, uint64_t parent)
{
	return d->parent == parent || (d->parent_alias && d->parent_alias == parent);
}

static struct pending_dir *find(struct pending_set *p, uint64_t ino)
{
	for (struct pending_dir *d = p->head; d; d = d->next)
		if (d->ino == ino || (d->alias && d->alias == ino))
			return d;
	return NULL;
}

int pending_add(struct pending_set *p, const struct node_id *id, uint64_t parent, const char *name, int64_t mtime_us)
{
	return pending_add_ino(p, id, node_ino_of(id), parent, name, mtime_us);
}

bool pending_under(struct pending_set *p, const char *table, const uint8_t *key, size_t keyn, char delim)
{
	bool any = false;

	pthread_mutex_lock(&p->lock);
	for (struct pending_dir *d = p->head; d && !any; d = d->next)
		any = d->id.kind >= NODE_DIR && !strcmp(d->id.table, table) && d->id.keyn >= keyn &&
		      !memcmp(d->id.key, key, keyn) && (d->id.keyn == keyn || d->id.key[keyn] == (uint8_t)delim);
	pthread_mutex_unlock(&p->lock);
	return any;
}

int pending_add_ino(struct pending_set *p, const struct node_id *id, uint64_t ino, uint64_t parent, const char *name,
		    int64_t mtime_us)
{
	struct pending_dir *d;
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	for (d = p->head; d; d = d->next)
		if (in_parent(d, parent) && !strcmp(d->name, name))
			goto out; /* held already (by its name: one identity may be held under two names) */
	rc = -ENOMEM;
	if (!(d = calloc(1, sizeof(*d))))
		goto out;
	if (!(d->name = strdup(name)) || node_id_copy(&d->id, id)) {
		entry_free(d);
		goto out;
	}
	d->ino = ino;
	d->parent = parent;
	d->mtime_us = mtime_us;
	d->next = p->head;
	p->head = d;
	p->count++;
	rc = 0;
out:
	pthread_mutex_unlock(&p->lock);
	return rc;
}

/* Let go of the first entry MATCH says yes to. */
static bool remove_where(struct pending_set *p, bool (*match)(const struct pending_dir *d, const void *arg),
			 const void *arg)
{
	bool found = false;

	pthread_mutex_lock(&p->lock);
	for (struct pending_dir **pp = &p->head; *pp; pp = &(*pp)->next) {
		if (match(*pp, arg)) {
			struct pending_dir *d = *pp;
			*pp = d->next;
			entry_free(d);
			p->count--;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return found;
}

static bool by_ino(const struct pending_dir *d, const void *arg)
{
	return d->ino == *(const uint64_t *)arg || (d->alias && d->alias == *(const uint64_t *)arg);
}

bool pending_remove(struct pending_set *p, uint64_t ino)
{
	return remove_where(p, by_ino, &ino);
}

struct entry_key {
	uint64_t parent;
	const char *name;
};

static bool by_entry(const struct pending_dir *d, const void *arg)
{
	const struct entry_key *k = arg;
	return in_parent(d, k->parent) && !strcmp(d->name, k->name);
}

bool pending_remove_entry(struct pending_set *p, uint64_t parent, const char *name)
{
	struct entry_key k = { parent, name };
	return remove_where(p, by_entry, &k);
}

int pending_lookup(struct pending_set *p, uint64_t parent, const char *name, struct node_id *id, int64_t *mtime_us)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&p->lock);
	for (struct pending_dir *d = p->head; d; d = d->next) {
		if (in_parent(d, parent) && !strcmp(d->name, name)) {
			rc = node_id_copy(id, &d->id);
			*mtime_us = d->mtime_us;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

bool pending_has(struct pending_set *p, uint64_t ino, int64_t *mtime_us)
{
	struct pending_dir *d;

	pthread_mutex_lock(&p->lock);
	d = find(p, ino);
	if (d && mtime_us)
		*mtime_us = d->mtime_us;
	pthread_mutex_unlock(&p->lock);
	return d != NULL;
}

bool pending_has_children(struct pending_set *p, uint64_t parent)
{
	bool any = false;

	pthread_mutex_lock(&p->lock);
	for (struct pending_dir *d = p->head; d && !any; d = d->next)
		any = in_parent(d, parent);
	pthread_mutex_unlock(&p->lock);
	return any;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int pending_children(struct pending_set *p, uint64_t parent, char ***names, size_t *n)
{
	size_t cnt = 0, i = 0;
	char **v;

	pthread_mutex_lock(&p->lock);
	for (struct pending_dir *d = p->head; d; d = d->next)
		cnt += in_parent(d, parent);
	if (!(v = calloc(cnt + 1, sizeof(*v))))
		goto nomem;
	for (struct pending_dir *d = p->head; d; d = d->next)
		if (in_parent(d, parent) && !(v[i++] = strdup(d->name)))
			goto nomem;
	pthread_mutex_unlock(&p->lock);
	qsort(v, cnt, sizeof(*v), by_name);
	*names = v;
	*n = cnt;
	return 0;
nomem:
	pthread_mutex_unlock(&p->lock);
	if (v)
		for (size_t j = 0; j < cnt; j++)
			free(v[j]);
	free(v);
	return -ENOMEM;
}

int pending_col_add(struct pending_set *p, uint64_t ino)
{
	int rc = 0;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->ncols; i++)
		if (p->cols[i] == ino)
			goto out;
	if (p->ncols == p->capcols) {
		size_t cap = p->capcols ? 2 * p->capcols : 64;
		uint64_t *v = realloc(p->cols, cap * sizeof(*v));
		if (!v) {
			rc = -ENOMEM;
			goto out;
		}
		p->cols = v;
		p->capcols = cap;
	}
	p->cols[p->ncols++] = ino;
out:
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void pending_col_remove(struct pending_set *p, uint64_t ino)
{
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->ncols; i++)
		if (p->cols[i] == ino) {
			p->cols[i] = p->cols[--p->ncols];
			break;
		}
	pthread_mutex_unlock(&p->lock);
}

bool pending_col_has(struct pending_set *p, uint64_t ino)
{
	bool found = false;
	if (!atomic_load_explicit(&p->ncols, memory_order_relaxed))
		return false; /* the common case, without the lock */
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->ncols && !found; i++)
		found = p->cols[i] == ino;
	pthread_mutex_unlock(&p->lock);
	return found;
}

int pending_round_add(struct pending_set *p, uint64_t col, int64_t sec_us)
{
	int rc = 0;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->nrounds; i++)
		if (p->rounds[i].col == col) {
			p->rounds[i].sec_us = sec_us;
			goto out;
		}
	if (p->nrounds == p->caprounds) {
		size_t cap = p->caprounds ? 2 * p->caprounds : 64;
		struct pending_round *v = realloc(p->rounds, cap * sizeof(*v));
		if (!v) {
			rc = -ENOMEM;
			goto out;
		}
		p->rounds = v;
		p->caprounds = cap;
	}
	p->rounds[p->nrounds++] = (struct pending_round){ col, sec_us };
out:
	pthread_mutex_unlock(&p->lock);
	return rc;
}

bool pending_round_hit(struct pending_set *p, uint64_t col, int64_t ts)
{
	bool hit = false;
	if (!__atomic_load_n(&p->nrounds, __ATOMIC_RELAXED))
		return false;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->nrounds && !hit; i++)
		hit = p->rounds[i].col == col && ts >= p->rounds[i].sec_us && ts < p->rounds[i].sec_us + 1000000;
	pthread_mutex_unlock(&p->lock);
	return hit;
}

void pending_rewrite(struct pending_set *p, bool (*fn)(struct node_id *id, void *arg), void *arg, uint64_t top,
		     uint64_t top_alias)
{
	pthread_mutex_lock(&p->lock);
	for (struct pending_dir *d = p->head; d; d = d->next)
		if (fn(&d->id, arg)) {
			uint64_t a = node_ino_of(&d->id);
			d->alias = a != d->ino ? a : 0;
		}
	for (struct pending_dir *d = p->head; d; d = d->next) {
		if (d->parent == top)
			d->parent_alias = top_alias;
		for (struct pending_dir *e = p->head; e; e = e->next)
			if (e->alias && d->parent == e->ino)
				d->parent_alias = e->alias;
	}
	pthread_mutex_unlock(&p->lock);
}
