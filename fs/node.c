/* node.c — the inode table (see node.h). Inode numbers are a 64-bit hash of the node's identity, so a
 * file keeps its inode number across remounts; the rare collision between two live nodes is resolved by
 * probing to the next free number (only then does a number depend on history). */
#include "node.h"

#include <errno.h>
#include <stddef.h>
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

/* What inode 1 stands for when it is not the top (node_set_root): a table or key directory, and the
 * number its identity would have otherwise. Set once, before any request; read without a lock. */
static struct node_id root_id = { .kind = NODE_ROOT };
static uint64_t root_hash;

/* ID's number from its identity alone (node_ino_of() without the root). */
static uint64_t ino_hash(const struct node_id *id)
{
	uint64_t h = FNV_OFFSET, len;
	uint8_t kind = (uint8_t)id->kind;

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

uint64_t node_ino_of(const struct node_id *id)
{
	uint64_t h;

	if (id->kind == NODE_ROOT)
		return 1; /* FUSE_ROOT_ID */
	h = ino_hash(id);
	return root_hash && h == root_hash && node_id_equal(id, &root_id) ? 1 : h;
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

/* ---- the entries ---------------------------------------------------------------------------------- */

enum { F_LEAD_EMPTY = 1u << 0, F_EXT = 1u << 7 }; /* (NODE_AS_FAMILY, NODE_MADE between) */

/* Where an entry's name is. */
enum { NAME_OWN, NAME_KEY_TAIL, NAME_QUAL, NAME_FAMILY };

#define NO_NAME 0xFFFFu /* tab/fam of an entry without one */

/* The rarely needed part of an entry, made when first needed. */
struct node_more {
	uint64_t cache_ver;       /* the value whose pages the kernel may hold (its hash; 0: unknown) */
	uint32_t ncached;         /* open handles reading through the page cache (all of value cache_ver) */
	struct fileh *writers;    /* handles open for writing on it */
	_Atomic int64_t made_us;  /* made by mknod, not in the store yet: when (else 0) */
	uint64_t alias;           /* given a new identity by node_rewrite_alias: node_ino_of() of it (else 0) */
	struct node_rec *anext;   /* chain of the table's aliases */
	uint8_t *fullname;        /* a tool's temporary file: the whole name (user.cellfs.name) it is to take */
	size_t fullnamen;
	uint8_t *data;            /* F_EXT: the entry's data, grown out of the entry by a rename */
};

/* An entry. DATA holds the key, a NUL, the qualifier, a NUL, the timestamp (versions: 8 bytes), then the
 * name with its NUL when it is none of: the key's last NAMEN bytes, the qualifier, the family. All but
 * FLAGS are protected by the table's lock. */
struct node_rec {
	uint64_t ino;
	struct node_rec *next;    /* hash chain */
	uint64_t parent;
	struct node_more *more;
	uint64_t nlookup;
	uint16_t keyn, qualn, namen;
	uint16_t tab, fam;        /* indexes into the table's names */
	uint16_t datacap;         /* the bytes DATA has room for (inline) */
	uint8_t kind, namewhere;
	_Atomic uint8_t flags;
	uint8_t data[];
};

/* Entries come from slabs of equal-sized slots, 8 bytes apart (malloc rounds each to 16 and adds 8 of
 * its own: a third more for the smallest entries). A slot freed goes back to its size's list, under the
 * table's lock. Under AddressSanitizer every entry is malloc's, so that a use after free is found. */
#if defined(__SANITIZE_ADDRESS__)
#define NODE_SLABS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NODE_SLABS 0
#endif
#endif
#ifndef NODE_SLABS
#define NODE_SLABS 1
#endif
#define SLAB_MAX 256           /* larger entries are malloc's */
#define SLAB_BYTES (64u << 10) /* one block of slots */

struct slab_block {
	struct slab_block *next;
};

static size_t slab_class(size_t size)
{
	return (size + 7) / 8; /* 1..SLAB_MAX / 8 */
}

static void *slab_alloc(struct node_table *t, size_t size)
{
	size_t c = slab_class(size);
	void *p;
	if (!NODE_SLABS || size > SLAB_MAX)
		return calloc(1, size);
	if (!t->slab_free[c]) {
		size_t slot = c * 8, n = (SLAB_BYTES - sizeof(struct slab_block)) / slot;
		struct slab_block *b = malloc(SLAB_BYTES);
		if (!b)
			return NULL;
		b->next = t->slabs;
		t->slabs = b;
		for (size_t i = n; i-- > 0;) {
			void **s = (void **)((char *)(b + 1) + i * slot);
			*s = t->slab_free[c];
			t->slab_free[c] = s;
		}
	}
	p = t->slab_free[c];
	t->slab_free[c] = *(void **)p;
	memset(p, 0, c * 8);
	return p;
}

static void slab_free(struct node_table *t, void *p, size_t size)
{
	size_t c = slab_class(size);
	if (!NODE_SLABS || size > SLAB_MAX) {
		free(p);
		return;
	}
	*(void **)p = t->slab_free[c];
	t->slab_free[c] = p;
}

static uint8_t *data_of(const struct node_rec *r)
{
	return (atomic_load_explicit(&r->flags, memory_order_relaxed) & F_EXT) ? r->more->data
									    : (uint8_t *)r->data;
}

static uint32_t name_hash(const char *s)
{
	return (uint32_t)mix(fnv(FNV_OFFSET, s, strlen(s)));
}

/* The index of table or family name S among T's names, added if new: 0..65534, or -ENOMEM. */
static int intern(struct node_table *t, const char *s)
{
	uint32_t h, mask;
	if (t->nameidxcap) {
		mask = t->nameidxcap - 1;
		for (h = name_hash(s) & mask; t->nameidx[h]; h = (h + 1) & mask)
			if (!strcmp(t->names[t->nameidx[h] - 1], s))
				return (int)(t->nameidx[h] - 1);
	}
	if (t->nnames >= NO_NAME)
		return -ENOMEM;
	if (t->nnames == t->namescap) {
		uint32_t cap = t->namescap ? 2 * t->namescap : 16;
		char **v = realloc(t->names, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->names = v;
		t->namescap = cap;
	}
	if (2 * (t->nnames + 1) > t->nameidxcap) { /* keep the index at most half full */
		uint32_t cap = t->nameidxcap ? 2 * t->nameidxcap : 64;
		uint32_t *idx = calloc(cap, sizeof(*idx));
		if (!idx)
			return -ENOMEM;
		for (uint32_t i = 0; i < t->nnames; i++) {
			for (h = name_hash(t->names[i]) & (cap - 1); idx[h]; h = (h + 1) & (cap - 1))
				;
			idx[h] = i + 1;
		}
		free(t->nameidx);
		t->nameidx = idx;
		t->nameidxcap = cap;
	}
	if (!(t->names[t->nnames] = strdup(s)))
		return -ENOMEM;
	mask = t->nameidxcap - 1;
	for (h = name_hash(s) & mask; t->nameidx[h]; h = (h + 1) & mask)
		;
	t->nameidx[h] = t->nnames + 1;
	return (int)t->nnames++;
}

/* The view of entry R into *V (under the table's lock). */
static void view_of(const struct node_table *t, struct node_rec *r, struct node *v)
{
	const uint8_t *d = data_of(r);
	v->ino = r->ino;
	v->parent = r->parent;
	v->rec = r;
	v->id = (struct node_id){ .kind = (enum node_kind)r->kind };
	if (r->kind != NODE_ROOT) {
		v->id.table = t->names[r->tab];
		v->id.key = d;
		v->id.keyn = r->keyn;
		v->id.lead_empty = atomic_load_explicit(&r->flags, memory_order_relaxed) & F_LEAD_EMPTY;
		if (r->kind >= NODE_FAMILY)
			v->id.family = t->names[r->fam];
		if (r->kind >= NODE_COLUMN) {
			v->id.qual = d + r->keyn + 1;
			v->id.qualn = r->qualn;
		}
		if (r->kind == NODE_VERSION)
			memcpy(&v->id.ts, d + r->keyn + 1 + r->qualn + 1, sizeof(v->id.ts));
	}
	switch (r->namewhere) {
	case NAME_KEY_TAIL:
		v->name = (const char *)d + r->keyn - r->namen;
		break;
	case NAME_QUAL:
		v->name = (const char *)d + r->keyn + 1;
		break;
	case NAME_FAMILY:
		v->name = v->id.family;
		break;
	default:
		v->name = (const char *)d + r->keyn + 1 + r->qualn + 1 + (r->kind == NODE_VERSION ? 8 : 0);
	}
}

/* How the data of ID named NAME is laid out: its size, and where the name is. -ENOMEM when a length does
 * not fit the entry's fields. */
static int layout(const struct node_id *id, const char *name, size_t *size, uint8_t *where)
{
	size_t namen = strlen(name), keyn = id->kind == NODE_ROOT ? 0 : id->keyn;
	size_t qualn = id->kind >= NODE_COLUMN ? id->qualn : 0;
	size_t n = keyn + 1 + qualn + 1 + (id->kind == NODE_VERSION ? 8 : 0);

	if (keyn >= NO_NAME || qualn >= NO_NAME || namen >= NO_NAME)
		return -ENOMEM;
	if (namen <= keyn && id->kind == NODE_DIR && !memcmp(id->key + keyn - namen, name, namen))
		*where = NAME_KEY_TAIL;
	else if (id->kind >= NODE_COLUMN && namen == qualn && !memcmp(id->qual, name, namen))
		*where = NAME_QUAL;
	else if (id->kind == NODE_FAMILY && !strcmp(id->family, name))
		*where = NAME_FAMILY;
	else
		*where = NAME_OWN, n += namen + 1;
	*size = n;
	return 0;
}

static void fill(uint8_t *d, const struct node_id *id, const char *name, uint8_t where)
{
	size_t keyn = id->kind == NODE_ROOT ? 0 : id->keyn, qualn = id->kind >= NODE_COLUMN ? id->qualn : 0;
	if (keyn)
		memmove(d, id->key, keyn); /* (ID may be these very bytes: a new name for the same identity) */
	d += keyn;
	*d++ = 0;
	if (qualn)
		memmove(d, id->qual, qualn);
	d += qualn;
	*d++ = 0;
	if (id->kind == NODE_VERSION) {
		memmove(d, &id->ts, sizeof(id->ts));
		d += sizeof(id->ts);
	}
	if (where == NAME_OWN)
		memcpy(d, name, strlen(name) + 1);
}

/* Give entry R identity ID and name NAME (under the table's lock). R's data is rewritten in place when
 * it fits, else moved to a buffer of its own. Errors: -ENOMEM (R is left as it was). */
static int set_id(struct node_table *t, struct node_rec *r, const struct node_id *id, const char *name)
{
	int tab = NO_NAME, fam = NO_NAME;
	uint8_t where, *d, *old_ext = NULL;
	size_t size, namen = strlen(name);
	char nbuf[256], *nm = nbuf;

	if (layout(id, name, &size, &where))
		return -ENOMEM;
	if (id->kind != NODE_ROOT && (tab = intern(t, id->table)) < 0)
		return -ENOMEM;
	if (id->kind >= NODE_FAMILY && (fam = intern(t, id->family)) < 0)
		return -ENOMEM;
	/* NAME (and ID) may be R's own bytes, which are about to be overwritten */
	if (namen >= sizeof(nbuf) && !(nm = malloc(namen + 1)))
		return -ENOMEM;
	memcpy(nm, name, namen + 1);
	if (size <= r->datacap) {
		d = r->data;
		if (atomic_load_explicit(&r->flags, memory_order_relaxed) & F_EXT)
			old_ext = r->more->data;
	} else {
		if ((!r->more && !(r->more = calloc(1, sizeof(*r->more)))) || !(d = malloc(size))) {
			if (nm != nbuf)
				free(nm);
			return -ENOMEM;
		}
		old_ext = r->more->data;
	}
	fill(d, id, nm, where);
	if (d == r->data) {
		if (r->more)
			r->more->data = NULL;
		atomic_fetch_and(&r->flags, (uint8_t)~F_EXT);
	} else {
		r->more->data = d;
		atomic_fetch_or(&r->flags, (uint8_t)F_EXT);
	}
	free(old_ext);
	if (nm != nbuf)
		free(nm);
	r->kind = (uint8_t)id->kind;
	r->keyn = (uint16_t)(id->kind == NODE_ROOT ? 0 : id->keyn);
	r->qualn = (uint16_t)(id->kind >= NODE_COLUMN ? id->qualn : 0);
	r->namen = (uint16_t)namen;
	r->namewhere = where;
	r->tab = (uint16_t)tab;
	r->fam = (uint16_t)fam;
	if (id->kind != NODE_ROOT && id->lead_empty)
		atomic_fetch_or(&r->flags, (uint8_t)F_LEAD_EMPTY);
	else
		atomic_fetch_and(&r->flags, (uint8_t)~F_LEAD_EMPTY);
	return 0;
}

static struct node_rec *rec_new(struct node_table *t, const struct node_id *id, uint64_t ino, uint64_t parent,
				const char *name)
{
	struct node_rec *r;
	uint8_t where;
	size_t size;

	if (layout(id, name, &size, &where) || !(r = slab_alloc(t, offsetof(struct node_rec, data) + size)))
		return NULL;
	r->datacap = (uint16_t)size;
	r->ino = ino;
	r->parent = parent;
	if (set_id(t, r, id, name)) {
		slab_free(t, r, offsetof(struct node_rec, data) + size);
		return NULL;
	}
	return r;
}

static void rec_free(struct node_table *t, struct node_rec *r)
{
	if (!r)
		return;
	if (r->more) {
		free(r->more->fullname);
		free(r->more->data);
		free(r->more);
	}
	slab_free(t, r, offsetof(struct node_rec, data) + r->datacap);
}

/* R's rare part, made if need be (under the lock); NULL when out of memory. */
static struct node_more *more_of(struct node_rec *r)
{
	if (!r->more)
		r->more = calloc(1, sizeof(*r->more));
	return r->more;
}

bool node_flag(const struct node *n, enum node_flag f)
{
	return atomic_load(&n->rec->flags) & (uint8_t)f;
}

void node_set_flag(const struct node *n, enum node_flag f)
{
	atomic_fetch_or(&n->rec->flags, (uint8_t)f);
}

static void clear_flag(struct node_rec *r, enum node_flag f)
{
	atomic_fetch_and(&r->flags, (uint8_t)~f);
}

int64_t node_made_us(struct node_table *t, const struct node *n)
{
	int64_t us = 0;
	pthread_mutex_lock(&t->lock);
	if (n->rec->more)
		us = atomic_load(&n->rec->more->made_us);
	pthread_mutex_unlock(&t->lock);
	return us;
}

int node_set_made_us(struct node_table *t, const struct node *n, int64_t us)
{
	struct node_more *m;
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	if ((m = us ? more_of(n->rec) : n->rec->more))
		atomic_store(&m->made_us, us);
	else if (us)
		rc = -ENOMEM;
	pthread_mutex_unlock(&t->lock);
	return rc;
}

/* ---- the table ------------------------------------------------------------------------------------ */

int node_table_init(struct node_table *t)
{
	struct node_id root = { .kind = NODE_ROOT };
	memset(t, 0, sizeof(*t));
	t->nbuckets = 1024;
	if (!(t->buckets = calloc(t->nbuckets, sizeof(*t->buckets))))
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	if (!(t->buckets[1] = rec_new(t, &root, 1, 0, ""))) {
		free(t->buckets);
		pthread_mutex_destroy(&t->lock);
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
			struct node_rec *r = t->buckets[i];
			t->buckets[i] = r->next;
			rec_free(t, r);
		}
	free(t->buckets);
	while (t->slabs) {
		struct slab_block *b = t->slabs;
		t->slabs = b->next;
		free(b);
	}
	for (uint32_t i = 0; i < t->nnames; i++)
		free(t->names[i]);
	free(t->names);
	free(t->nameidx);
	pthread_mutex_destroy(&t->lock);
}

static struct node_rec *find(struct node_table *t, uint64_t ino)
{
	for (struct node_rec *r = t->buckets[ino % t->nbuckets]; r; r = r->next)
		if (r->ino == ino)
			return r;
	return NULL;
}

int node_set_root(struct node_table *t, const struct node_id *root, const char *name)
{
	struct node_id copy;
	struct node_rec *r;
	int rc;

	if (root->kind == NODE_ROOT)
		return 0;
	if ((rc = node_id_copy(&copy, root)))
		return rc;
	pthread_mutex_lock(&t->lock);
	rc = (r = find(t, 1)) ? set_id(t, r, &copy, name) : -ENOENT;
	pthread_mutex_unlock(&t->lock);
	if (rc) {
		node_id_free(&copy);
		return rc;
	}
	node_id_free(&root_id);
	root_id = copy;
	root_hash = ino_hash(&root_id);
	return 0;
}

size_t node_count(struct node_table *t)
{
	size_t n;
	pthread_mutex_lock(&t->lock);
	n = t->count;
	pthread_mutex_unlock(&t->lock);
	return n;
}

struct node *node_get(struct node_table *t, uint64_t ino, struct node *view)
{
	struct node_rec *r;
	pthread_mutex_lock(&t->lock);
	if ((r = find(t, ino)))
		view_of(t, r, view);
	pthread_mutex_unlock(&t->lock);
	return r ? view : NULL;
}

static void grow(struct node_table *t)
{
	size_t nb = t->nbuckets * 4;
	struct node_rec **b = calloc(nb, sizeof(*b));
	if (!b)
		return; /* stay at this size: only chains get longer */
	for (size_t i = 0; i < t->nbuckets; i++)
		while (t->buckets[i]) {
			struct node_rec *r = t->buckets[i];
			t->buckets[i] = r->next;
			r->next = b[r->ino % nb];
			b[r->ino % nb] = r;
		}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = nb;
}

static void alias_unlink(struct node_table *t, struct node_rec *r)
{
	struct node_rec **pp = &t->aliases[r->more->alias % NODE_ALIAS_BUCKETS];
	while (*pp && *pp != r)
		pp = &(*pp)->more->anext;
	if (*pp)
		*pp = r->more->anext;
	r->more->alias = 0;
	r->more->anext = NULL;
}

/* Whether entry R is ID (under the lock). */
static bool rec_is(const struct node_table *t, struct node_rec *r, const struct node_id *id)
{
	struct node v;
	if (r->kind != (uint8_t)id->kind)
		return false;
	view_of(t, r, &v);
	return node_id_equal(&v.id, id);
}

int node_ref(struct node_table *t, const struct node_id *id, uint64_t parent, const char *name, uint64_t *ino)
{
	uint64_t i = node_ino_of(id);
	struct node_rec *r;
	int rc = 0;

	if (!name)
		name = "";
	pthread_mutex_lock(&t->lock);
	for (r = t->aliases[i % NODE_ALIAS_BUCKETS]; r; r = r->more->anext)
		if (r->more->alias == i && rec_is(t, r, id)) {
			i = r->ino;
			break;
		}
	while ((r = find(t, i)) && !rec_is(t, r, id))
		i = i + 1 < 2 ? 2 : i + 1; /* a collision with another live node */
	if (!r) {
		if (!(r = rec_new(t, id, i, parent, name))) {
			rc = -ENOMEM;
			goto out;
		}
		if (t->count + 1 > 4 * t->nbuckets) /* chains of 2 to 4 on average: 2 to 4 bytes an entry */
			grow(t);
		r->next = t->buckets[i % t->nbuckets];
		t->buckets[i % t->nbuckets] = r;
		t->count++;
	} else {
		struct node v;
		view_of(t, r, &v);
		/* reached under another name: a key directory first made under its plain name, whose name
		 * turned into a family's, then made again under its escaped one. The newest name decides. */
		if (strcmp(v.name, name) && !set_id(t, r, &v.id, name)) {
			r->parent = parent;
			clear_flag(r, NODE_AS_FAMILY);
		}
	}
	r->nlookup++;
	*ino = i;
out:
	pthread_mutex_unlock(&t->lock);
	return rc;
}

void node_forget(struct node_table *t, uint64_t ino, uint64_t nl)
{
	struct node_rec **pp, *r;
	if (ino == 1)
		return;
	pthread_mutex_lock(&t->lock);
	for (pp = &t->buckets[ino % t->nbuckets]; (r = *pp); pp = &r->next)
		if (r->ino == ino)
			break;
	if (r) {
		r->nlookup = r->nlookup > nl ? r->nlookup - nl : 0;
		if (!r->nlookup) {
			*pp = r->next;
			t->count--;
			if (r->more && r->more->alias)
				alias_unlink(t, r);
			rec_free(t, r);
		}
	}
	pthread_mutex_unlock(&t->lock);
}

enum node_cache node_open_file(struct node_table *t, uint64_t ino, uint64_t ver)
{
	enum node_cache how = NODE_CACHE_DIRECT;
	struct node_rec *r;
	struct node_more *m;

	pthread_mutex_lock(&t->lock);
	if ((r = find(t, ino)) && (m = more_of(r))) {
		if (m->ncached && (!ver || m->cache_ver != ver)) {
			how = NODE_CACHE_DIRECT; /* the pages are another open value's: stay out of them */
		} else {
			how = ver && m->cache_ver == ver ? NODE_CACHE_KEEP : NODE_CACHE_DROP;
			m->cache_ver = ver;
			m->ncached++;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return how;
}

void node_close_file(struct node_table *t, uint64_t ino, bool cached)
{
	struct node_rec *r;

	pthread_mutex_lock(&t->lock);
	if (cached && (r = find(t, ino)) && r->more && r->more->ncached)
		r->more->ncached--;
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
	struct node_rec *r;
	struct node_more *m;
	pthread_mutex_lock(&t->lock);
	if ((r = find(t, ino)) && (m = more_of(r))) {
		link_of(h)->next = m->writers;
		m->writers = h;
	}
	pthread_mutex_unlock(&t->lock);
}

void node_remove_writer(struct node_table *t, uint64_t ino, struct fileh *h)
{
	struct node_rec *r;
	pthread_mutex_lock(&t->lock);
	if ((r = find(t, ino)) && r->more)
		for (struct fileh **pp = &r->more->writers; *pp; pp = &link_of(*pp)->next)
			if (*pp == h) {
				*pp = link_of(h)->next;
				break;
			}
	pthread_mutex_unlock(&t->lock);
}

size_t node_foreach_writer(struct node_table *t, uint64_t ino, void (*fn)(struct fileh *h, void *arg), void *arg)
{
	struct node_rec *r;
	size_t cnt = 0;
	pthread_mutex_lock(&t->lock);
	if ((r = find(t, ino)) && r->more)
		for (struct fileh *h = r->more->writers; h; h = link_of(h)->next, cnt++)
			fn(h, arg);
	pthread_mutex_unlock(&t->lock);
	return cnt;
}

struct fileh *node_writers(const struct node *n)
{
	return n->rec->more ? n->rec->more->writers : NULL;
}

/* Rewrite entry R if FN moves it, and its writers with it: whether it did (under the lock). */
static bool rewrite_one(struct node_table *t, struct node_rec *r,
			bool (*fn)(const struct node_id *id, void *arg, struct node_id *out),
			void (*wfn)(struct fileh *h, const struct node_id *id, void *arg), void *arg)
{
	struct node v;
	struct node_id to;
	bool done;

	view_of(t, r, &v);
	if (!fn(&v.id, arg, &to))
		return false;
	done = !set_id(t, r, &to, v.name);
	node_id_free(&to);
	if (!done)
		return false;
	view_of(t, r, &v);
	if (r->more)
		for (struct fileh *h = r->more->writers; h; h = link_of(h)->next)
			wfn(h, &v.id, arg);
	return true;
}

void node_rewrite(struct node_table *t, bool (*fn)(const struct node_id *id, void *arg, struct node_id *out),
		  void (*wfn)(struct fileh *h, const struct node_id *id, void *arg), void *arg)
{
	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->nbuckets; i++)
		for (struct node_rec *r = t->buckets[i]; r; r = r->next)
			rewrite_one(t, r, fn, wfn, arg);
	pthread_mutex_unlock(&t->lock);
}

void node_rewrite_alias(struct node_table *t, bool (*fn)(const struct node_id *id, void *arg, struct node_id *out),
			void (*wfn)(struct fileh *h, const struct node_id *id, void *arg), void *arg)
{
	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->nbuckets; i++)
		for (struct node_rec *r = t->buckets[i]; r; r = r->next) {
			struct node v;
			uint64_t alias;
			if (!rewrite_one(t, r, fn, wfn, arg))
				continue;
			if (r->more && r->more->alias)
				alias_unlink(t, r);
			view_of(t, r, &v);
			if ((alias = node_ino_of(&v.id)) != r->ino && more_of(r)) {
				r->more->alias = alias;
				r->more->anext = t->aliases[alias % NODE_ALIAS_BUCKETS];
				t->aliases[alias % NODE_ALIAS_BUCKETS] = r;
			}
		}
	pthread_mutex_unlock(&t->lock);
}

void node_moved(struct node_table *t, uint64_t ino, uint64_t parent, const char *name)
{
	struct node_rec *r;
	pthread_mutex_lock(&t->lock);
	if ((r = find(t, ino))) {
		struct node v;
		view_of(t, r, &v);
		if (!strcmp(v.name, name) || !set_id(t, r, &v.id, name))
			r->parent = parent;
	}
	pthread_mutex_unlock(&t->lock);
}

void node_foreach(struct node_table *t, void (*fn)(const struct node *n, void *arg), void *arg)
{
	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->nbuckets; i++)
		for (struct node_rec *r = t->buckets[i]; r; r = r->next) {
			struct node v;
			view_of(t, r, &v);
			fn(&v, arg);
		}
	pthread_mutex_unlock(&t->lock);
}

int node_set_fullname(struct node_table *t, uint64_t ino, const void *b, size_t n)
{
	uint8_t *c = malloc(n ? n : 1);
	struct node_rec *r;
	struct node_more *m;
	int rc = -ESTALE;

	if (!c)
		return -ENOMEM;
	memcpy(c, b, n);
	pthread_mutex_lock(&t->lock);
	if ((r = find(t, ino))) {
		rc = -ENOMEM;
		if ((m = more_of(r))) {
			free(m->fullname);
			m->fullname = c;
			m->fullnamen = n;
			c = NULL;
			rc = 0;
		}
	}
	pthread_mutex_unlock(&t->lock);
	free(c);
	return rc;
}

int node_fullname(struct node_table *t, uint64_t ino, uint8_t **b, size_t *n)
{
	struct node_rec *r;
	int rc = -ENOENT;

	pthread_mutex_lock(&t->lock);
	if ((r = find(t, ino)) && r->more && r->more->fullname) {
		rc = (*b = malloc(r->more->fullnamen ? r->more->fullnamen : 1)) ? 0 : -ENOMEM;
		if (!rc) {
			memcpy(*b, r->more->fullname, r->more->fullnamen);
			*n = r->more->fullnamen;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}
