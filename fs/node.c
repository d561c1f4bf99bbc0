/* node.c — the inode table (see node.h). Inode numbers are a 64-bit hash of the node's identity, so a
 * file keeps its inode number across remounts; the rare collision between two live nodes is resolved by
 * probing to the next free number (only then does a number depend on history). */
#include "node.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * FNV_PRIME;
	return h;
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

uint64_t node_ino_of(const struct node_id *id)
{
	uint64_t h = FNV_OFFSET, len;
	uint8_t kind = (uint8_t)id->kind;

	if (id->kind == NODE_ROOT)
		return 1; /* FUSE_ROOT_ID */
	h = fnv(h, &kind, 1);
	h = fnv(h, id->table, strlen(id->table) + 1);
	len = id->keyn;
	h = fnv(h, &len, sizeof(len));
	h = fnv(h, id->key, id->keyn);
	if (id->lead_empty)
		h = fnv(h, "/", 1); /* only then: every other number stays as it was */
	if (id->kind >= NODE_FAMILY)
		h = fnv(h, id->family, strlen(id->family) + 1);
	if (id->kind >= NODE_COLUMN) {
		len = id->qualn;
		h = fnv(h, &len, sizeof(len));
		h = fnv(h, id->qual, id->qualn);
	}
	if (id->kind == NODE_VERSION)
		h = fnv(h, &id->ts, sizeof(id->ts));
	h = mix(h);
	return h < 2 ? h + 2 : h; /* 0 is invalid, 1 is the root */
}

uint64_t node_column_ino(const struct node_id *id)
{
	struct node_id c = *id;
	c.kind = NODE_COLUMN;
	c.ts = 0;
	return node_ino_of(&c);
}

bool node_id_equal(const struct node_id *a, const struct node_id *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == NODE_ROOT)
		return true;
	if (strcmp(a->table, b->table) || a->keyn != b->keyn || (a->keyn && memcmp(a->key, b->key, a->keyn)) ||
	    a->lead_empty != b->lead_empty)
		return false;
	if (a->kind >= NODE_FAMILY && strcmp(a->family, b->family))
		return false;
	if (a->kind >= NODE_COLUMN && (a->qualn != b->qualn || (a->qualn && memcmp(a->qual, b->qual, a->qualn))))
		return false;
	return a->kind != NODE_VERSION || a->ts == b->ts;
}

void *node_dup_bytes(const void *p, size_t n)
{
	void *d = malloc(n ? n : 1);
	if (d && n)
		memcpy(d, p, n);
	return d;
}

void node_id_free(struct node_id *id)
{
	free((char *)id->table);
	free((uint8_t *)id->key);
	free((char *)id->family);
	free((uint8_t *)id->qual);
	memset(id, 0, sizeof(*id));
}

int node_id_copy(struct node_id *dst, const struct node_id *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->kind = src->kind;
	dst->keyn = src->keyn;
	dst->lead_empty = src->lead_empty;
	dst->qualn = src->qualn;
	dst->ts = src->ts;
	if (src->kind == NODE_ROOT)
		return 0;
	if (!(dst->table = strdup(src->table)) || !(dst->key = node_dup_bytes(src->key, src->keyn)) ||
	    (src->kind >= NODE_FAMILY && !(dst->family = strdup(src->family))) ||
	    (src->kind >= NODE_COLUMN && !(dst->qual = node_dup_bytes(src->qual, src->qualn)))) {
		node_id_free(dst);
		return -ENOMEM;
	}
	return 0;
}

static void node_free(struct node *n)
{
	if (!n)
		return;
	node_id_free(&n->id);
	free(n->name);
	free(n->fullname);
	free(n);
}

static struct node *node_new(const struct node_id *id, uint64_t ino, uint64_t parent, const char *name)
{
	struct node *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->ino = ino;
	n->parent = parent;
	if (!(n->name = strdup(name ? name : "")) || node_id_copy(&n->id, id))
		goto fail;
	return n;
fail:
	node_free(n);
	return NULL;
}

int node_table_init(struct node_table *t)
{
	struct node_id root = { .kind = NODE_ROOT };
	memset(t, 0, sizeof(*t));
	t->nbuckets = 1024;
	if (!(t->buckets = calloc(t->nbuckets, sizeof(*t->buckets))))
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	if (!(t->buckets[1] = node_new(&root, 1, 0, ""))) {
		free(t->buckets);
		return -ENOMEM;
	}
	t->buckets[1]->nlookup = 1; /* the root is never forgotten */
	t->count = 1;
	return 0;
}

void node_table_release(struct node_table *t)
{
	for (size_t i = 0; i < t->nbuckets; i++)
		while (t->buckets[i]) {
			struct node *n = t->buckets[i];
			t->buckets[i] = n->next;
			node_free(n);
		}
	free(t->buckets);
	pthread_mutex_destroy(&t->lock);
}

static struct node *find(struct node_table *t, uint64_t ino)
{
	for (struct node *n = t->buckets[ino % t->nbuckets]; n; n = n->next)
		if (n->ino == ino)
			return n;
	return NULL;
}

struct node *node_get(struct node_table *t, uint64_t ino)
{
	struct node *n;
	pthread_mutex_lock(&t->lock);
	n = find(t, ino);
	pthread_mutex_unlock(&t->lock);
	return n;
}

static void grow(struct node_table *t)
{
	size_t nb = t->nbuckets * 4;
	struct node **b = calloc(nb, sizeof(*b));
	if (!b)
		return; /* stay at this size: only chains get longer */
	for (size_t i = 0; i < t->nbuckets; i++)
		while (t->buckets[i]) {
			struct node *n = t->buckets[i];
			t->buckets[i] = n->next;
			n->next = b[n->ino % nb];
			b[n->ino % nb] = n;
		}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = nb;
}

static void alias_unlink(struct node_table *t, struct node *n)
{
	struct node **pp = &t->aliases[n->alias % NODE_ALIAS_BUCKETS];
	while (*pp && *pp != n)
		pp = &(*pp)->anext;
	if (*pp)
		*pp = n->anext;
	n->alias = 0;
	n->anext = NULL;
}

int node_ref(struct node_table *t, const struct node_id *id, uint64_t parent, const char *name, uint64_t *ino)
{
	uint64_t i = node_ino_of(id);
	struct node *n;
	int rc = 0;

	pthread_mutex_lock(&t->lock);
	for (n = t->aliases[i % NODE_ALIAS_BUCKETS]; n; n = n->anext)
		if (n->alias == i && node_id_equal(&n->id, id)) {
			i = n->ino;
			break;
		}
	while ((n = find(t, i)) && !node_id_equal(&n->id, id))
		i = i + 1 < 2 ? 2 : i + 1; /* a collision with another live node */
	if (!n) {
		if (!(n = node_new(id, i, parent, name))) {
			rc = -ENOMEM;
			goto out;
		}
		if (t->count + 1 > 2 * t->nbuckets)
			grow(t);
		n->next = t->buckets[i % t->nbuckets];
		t->buckets[i % t->nbuckets] = n;
		t->count++;
	} else if (name && strcmp(n->name, name)) {
		/* reached under another name: a key directory first made under its plain name, whose name
		 * turned into a family's, then made again under its escaped one. The newest name decides. */
		char *nm = strdup(name);
		if (nm) {
			free(n->name);
			n->name = nm;
			n->parent = parent;
			n->as_family = false;
		}
	}
	n->nlookup++;
	*ino = i;
out:
	pthread_mutex_unlock(&t->lock);
	return rc;
}

void node_forget(struct node_table *t, uint64_t ino, uint64_t nl)
{
	struct node **pp, *n;
	if (ino == 1)
		return;
	pthread_mutex_lock(&t->lock);
	for (pp = &t->buckets[ino % t->nbuckets]; (n = *pp); pp = &n->next)
		if (n->ino == ino)
			break;
	if (n) {
		n->nlookup = n->nlookup > nl ? n->nlookup - nl : 0;
		if (!n->nlookup) {
			*pp = n->next;
			t->count--;
			if (n->alias)
				alias_unlink(t, n);
			node_free(n);
		}
	}
	pthread_mutex_unlock(&t->lock);
}

enum node_cache node_open_file(struct node_table *t, uint64_t ino, uint64_t ver)
{
	enum node_cache how = NODE_CACHE_DIRECT;
	struct node *n;

	pthread_mutex_lock(&t->lock);
	if ((n = find(t, ino))) {
		if (n->ncached && (!ver || n->cache_ver != ver)) {
			how = NODE_CACHE_DIRECT; /* the pages are another open value's: stay out of them */
		} else {
			how = ver && n->cache_ver == ver ? NODE_CACHE_KEEP : NODE_CACHE_DROP;
			n->cache_ver = ver;
			n->ncached++;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return how;
}

void node_close_file(struct node_table *t, uint64_t ino, bool cached)
{
	struct node *n;

	pthread_mutex_lock(&t->lock);
	if (cached && (n = find(t, ino)) && n->ncached)
		n->ncached--;
	pthread_mutex_unlock(&t->lock);
}

/* The writers are chained through a pointer the handle keeps first: struct fileh is the daemon's, so the
 * table sees only this. */
struct writer_link {
	struct fileh *next;
};

static struct writer_link *link_of(struct fileh *h)
{
	return (struct writer_link *)(void *)h;
}

void node_add_writer(struct node_table *t, uint64_t ino, struct fileh *h)
{
	struct node *n;
	pthread_mutex_lock(&t->lock);
	if ((n = find(t, ino))) {
		link_of(h)->next = n->writers;
		n->writers = h;
	}
	pthread_mutex_unlock(&t->lock);
}

void node_remove_writer(struct node_table *t, uint64_t ino, struct fileh *h)
{
	struct node *n;
	pthread_mutex_lock(&t->lock);
	if ((n = find(t, ino)))
		for (struct fileh **pp = &n->writers; *pp; pp = &link_of(*pp)->next)
			if (*pp == h) {
				*pp = link_of(h)->next;
				break;
			}
	pthread_mutex_unlock(&t->lock);
}

size_t node_foreach_writer(struct node_table *t, uint64_t ino, void (*fn)(struct fileh *h, void *arg), void *arg)
{
	struct node *n;
	size_t cnt = 0;
	pthread_mutex_lock(&t->lock);
	if ((n = find(t, ino)))
		for (struct fileh *h = n->writers; h; h = link_of(h)->next, cnt++)
			fn(h, arg);
	pthread_mutex_unlock(&t->lock);
	return cnt;
}

void node_rewrite(struct node_table *t, bool (*fn)(struct node_id *id, void *arg),
		  void (*wfn)(struct fileh *h, const struct node_id *id, void *arg), void *arg)
{
	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->nbuckets; i++)
		for (struct node *n = t->buckets[i]; n; n = n->next)
			if (fn(&n->id, arg))
				for (struct fileh *h = n->writers; h; h = link_of(h)->next)
					wfn(h, &n->id, arg);
	pthread_mutex_unlock(&t->lock);
}

void node_rewrite_alias(struct node_table *t, bool (*fn)(struct node_id *id, void *arg),
			void (*wfn)(struct fileh *h, const struct node_id *id, void *arg), void *arg)
{
	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->nbuckets; i++)
		for (struct node *n = t->buckets[i]; n; n = n->next) {
			if (!fn(&n->id, arg))
				continue;
			for (struct fileh *h = n->writers; h; h = link_of(h)->next)
				wfn(h, &n->id, arg);
			if (n->alias)
				alias_unlink(t, n);
			if ((n->alias = node_ino_of(&n->id)) != n->ino) {
				n->anext = t->aliases[n->alias % NODE_ALIAS_BUCKETS];
				t->aliases[n->alias % NODE_ALIAS_BUCKETS] = n;
			} else {
				n->alias = 0;
			}
		}
	pthread_mutex_unlock(&t->lock);
}

void node_moved(struct node_table *t, uint64_t ino, uint64_t parent, const char *name)
{
	struct node *n;
	char *nm = strdup(name);
	pthread_mutex_lock(&t->lock);
	if ((n = find(t, ino)) && nm) {
		free(n->name);
		n->name = nm;
		nm = NULL;
		n->parent = parent;
	}
	pthread_mutex_unlock(&t->lock);
	free(nm);
}

void node_foreach(struct node_table *t, void (*fn)(const struct node *n, void *arg), void *arg)
{
	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->nbuckets; i++)
		for (struct node *n = t->buckets[i]; n; n = n->next)
			fn(n, arg);
	pthread_mutex_unlock(&t->lock);
}

int node_set_fullname(struct node_table *t, uint64_t ino, const void *b, size_t n)
{
	uint8_t *c = malloc(n ? n : 1);
	struct node *nd;
	int rc = -ESTALE;

	if (!c)
		return -ENOMEM;
	memcpy(c, b, n);
	pthread_mutex_lock(&t->lock);
	if ((nd = find(t, ino))) {
		free(nd->fullname);
		nd->fullname = c;
		nd->fullnamen = n;
		c = NULL;
		rc = 0;
	}
	pthread_mutex_unlock(&t->lock);
	free(c);
	return rc;
}

int node_fullname(struct node_table *t, uint64_t ino, uint8_t **b, size_t *n)
{
	struct node *nd;
	int rc = -ENOENT;

	pthread_mutex_lock(&t->lock);
	if ((nd = find(t, ino)) && nd->fullname) {
		rc = (*b = malloc(nd->fullnamen ? nd->fullnamen : 1)) ? 0 : -ENOMEM;
		if (!rc) {
			memcpy(*b, nd->fullname, nd->fullnamen);
			*n = nd->fullnamen;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}
