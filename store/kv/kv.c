/* kv.c — the map: an ordered map with keys of any length on one LMDB database (kv.h tells the long-key
 * scheme): point operations and cursors. The environment, transactions and the fault guard the calls
 * here run under are the other kv*.c (kv_internal.h). */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "kv_internal.h"
#include "mem.h"

#define P KV_INLINE_MAX
#define SKEY_LEN (KV_INLINE_MAX + 8) /* a long key's stored form: first P bytes, 8-byte slot */

struct group_ent {
	uint8_t skey[SKEY_LEN];
	uint8_t *full; /* the full key: the group's prefix and this entry's tail */
	size_t fulln;
	MDB_val val;   /* the caller's value (tail header stripped); valid while no write happens */
};

enum cstate { C_NONE, C_SIMPLE, C_GROUP };

struct kv_cursor {
	kv_txn *t;
	MDB_cursor *mc;
	enum cstate state;
	MDB_val k, v;                     /* C_SIMPLE: the current pair */
	struct group_ent *g;              /* C_GROUP: the group, sorted by full key */
	size_t gn, gcap, gi;
	uint8_t gmin[SKEY_LEN], gmax[SKEY_LEN]; /* smallest and largest stored key of the group */
	uint64_t gwrites;                 /* t->writes when the group was read */
};

/* ---- long keys ---- */

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* A well-mixed 64-bit hash of a long key; collisions are handled, so it need not be cryptographic. */
static uint64_t key_hash(const uint8_t *p, size_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full);
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		h ^= rotl(rd64(p + i) * 0x87C37B91114253D5ull, 31) * 0x4CF5AD432745937Full;
		h = rotl(h, 27) * 5 + 0x52DCE729;
	}
	uint64_t t = 0;
	for (size_t j = 0; i + j < n; j++)
		t |= (uint64_t)p[i + j] << (8 * j);
	h ^= rotl(t * 0x87C37B91114253D5ull, 31) * 0x4CF5AD432745937Full;
	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDull;
	h ^= h >> 33;
	h *= 0xC4CEB9FE1A85EC53ull;
	h ^= h >> 33;
	return h;
}

static void slot_key(uint8_t *skey, const uint8_t *key, uint64_t slot)
{
	memcpy(skey, key, P);
	for (int i = 0; i < 8; i++)
		skey[P + i] = (uint8_t)(slot >> (56 - 8 * i));
}

static uint64_t slot_of(const uint8_t *skey)
{
	uint64_t s = 0;
	for (int i = 0; i < 8; i++)
		s = (s << 8) | skey[P + i];
	return s;
}

/* A long key's stored value: varint tail length, tail, the caller's value. */
static int split_long(const MDB_val *v, const uint8_t **tail, size_t *tailn, MDB_val *user)
{
	uint64_t tn;
	int a = codec_get_varint(v->mv_data, v->mv_size, &tn);
	if (a < 0 || tn == 0 || tn > v->mv_size - (size_t)a)
		return -EIO;
	*tail = (const uint8_t *)v->mv_data + a;
	*tailn = tn;
	user->mv_data = (uint8_t *)v->mv_data + a + tn;
	user->mv_size = v->mv_size - (size_t)a - tn;
	return 0;
}

/* ---- point operations ---- */

/* Find the slot of long key KEY. Returns 0 with SKEY/VAL set (found), -ENOENT with SKEY set to the first
 * free slot of its probe sequence, or an error. */
static int long_find(kv_txn *t, const uint8_t *key, size_t klen, uint8_t *skey, MDB_val *val)
{
	uint64_t slot = key_hash(key, klen);
	for (;;) {
		MDB_val k = { SKEY_LEN, skey }, v;
		const uint8_t *tail;
		size_t tailn;
		int rc;

		slot_key(skey, key, slot);
		rc = LMG(t, KV_G_GET, NULL, &k, &v, 0);
		if (!rc && !kv_guard_in_file(t, &v))
			rc = -EIO;
		if (rc)
			return rc;
		if ((rc = split_long(&v, &tail, &tailn, val)))
			return rc;
		if (tailn == klen - P && !memcmp(tail, key + P, tailn))
			return 0;
		slot++;
	}
}

int kv_get(kv_txn *t, const void *key, size_t klen, const void **val, size_t *vlen)
{
	MDB_val v;
	int rc;

	if (klen <= P) {
		MDB_val k = { klen, (void *)key };
		rc = LMG(t, KV_G_GET, NULL, &k, &v, 0);
		if (!rc && !kv_guard_in_file(t, &v))
			rc = -EIO;
	} else {
		uint8_t skey[SKEY_LEN];
		rc = long_find(t, key, klen, skey, &v);
	}
	if (rc)
		return rc;
	*val = v.mv_data;
	*vlen = v.mv_size;
	return 0;
}

/* Copy N bytes from SRC to DST, space LMDB reserved in T: in the map when it is written (MDB_WRITEMAP),
 * so under the fault guard (the file grows, or the disk is full: -ENOSPC). */
static int map_copy(kv_txn *t, void *dst, const void *src, size_t n)
{
	MDB_val d = { n, dst }, s = { n, (void *)src };
	if (!t->env->wmap)
		return (memcpy(dst, src, n), 0);
	return kv_guard_run(t, KV_G_COPY, NULL, &d, &s, 0);
}

/* kv_reserve() without making *DST safe to fill outside the fault guard: kv_put() copies under it. */
static int reserve(kv_txn *t, const void *key, size_t klen, size_t vlen, void **dst)
{
	uint8_t skey[SKEY_LEN], hdr[10];
	MDB_val k, v;
	size_t hl = 0;
	int rc;

	if (t->rdonly)
		return -EROFS;
	if (klen == 0)
		return -EINVAL;
	t->writes++;
	if (klen <= P) {
		k.mv_size = klen;
		k.mv_data = (void *)key;
	} else {
		MDB_val old;
		rc = long_find(t, key, klen, skey, &old);
		if (rc && rc != -ENOENT)
			return rc;
		k.mv_size = SKEY_LEN;
		k.mv_data = skey;
		hl = codec_put_varint(hdr, klen - P);
	}
	v.mv_size = hl + (klen > P ? klen - P : 0) + vlen;
	v.mv_data = NULL;
	if ((rc = LMG(t, KV_G_PUT, NULL, &k, &v, MDB_RESERVE)))
		return rc;
	if (klen > P && ((rc = map_copy(t, v.mv_data, hdr, hl)) ||
			 (rc = map_copy(t, (uint8_t *)v.mv_data + hl, (const uint8_t *)key + P, klen - P))))
		return rc;
	*dst = (uint8_t *)v.mv_data + (v.mv_size - vlen);
	return 0;
}

int kv_put(kv_txn *t, const void *key, size_t klen, const void *val, size_t vlen)
{
	void *dst;
	int rc = reserve(t, key, klen, vlen, &dst);
	if (!rc && vlen)
		rc = map_copy(t, dst, val, vlen);
	return rc;
}

int kv_reserve(kv_txn *t, const void *key, size_t klen, size_t vlen, void **dst)
{
	int rc = reserve(t, key, klen, vlen, dst);
	if (!rc && vlen && t->env->wmap) { /* the file grows under the guard, not in the caller's fill */
		MDB_val d = { vlen, *dst }, z = { vlen, NULL };
		rc = kv_guard_run(t, KV_G_ZERO, NULL, &d, &z, 0);
	}
	return rc;
}

int kv_append(kv_txn *t, const void *key, size_t klen, const void *val, size_t vlen)
{
	MDB_val k = { klen, (void *)key }, v = { vlen, NULL };
	int rc;

	if (t->rdonly)
		return -EROFS;
	if (klen == 0 || klen > P)
		return -EINVAL;
	/* LMDB checks the order itself and refuses with MDB_KEYEXIST before changing anything. */
	if ((rc = LMG(t, KV_G_PUT, NULL, &k, &v, MDB_APPEND | MDB_RESERVE)))
		return rc;
	t->writes++;
	return vlen ? map_copy(t, v.mv_data, val, vlen) : 0;
}

/* After emptying slot HOLE of a long-key probe run, pull later entries back so lookups (which stop at
 * the first empty slot) still find them: linear probing's backward-shift deletion. */
static int long_backshift(kv_txn *t, uint8_t *hole)
{
	uint8_t skey[SKEY_LEN];
	uint64_t s = slot_of(hole);
	memcpy(skey, hole, SKEY_LEN);
	for (uint64_t j = s + 1;; j++) {
		MDB_val k = { SKEY_LEN, skey }, v, user;
		const uint8_t *tail;
		size_t tailn;
		uint8_t *full, *copy;
		uint64_t home;
		int rc;

		slot_key(skey, hole, j);
		rc = LMG(t, KV_G_GET, NULL, &k, &v, 0);
		if (!rc && !kv_guard_in_file(t, &v))
			rc = -EIO;
		if (rc == -ENOENT)
			return 0;
		if (rc || (rc = split_long(&v, &tail, &tailn, &user)))
			return rc;
		full = mem_malloc(P + tailn);
		if (!full)
			return -ENOMEM;
		memcpy(full, hole, P);
		memcpy(full + P, tail, tailn);
		home = key_hash(full, P + tailn);
		free(full);
		if (j - home < j - s)
			continue; /* its probe run does not pass the hole */
		copy = mem_malloc(v.mv_size);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, v.mv_data, v.mv_size);
		MDB_val dk = { SKEY_LEN, hole }, dv = { v.mv_size, copy };
		slot_key(hole, hole, s);
		rc = LMG(t, KV_G_PUT, NULL, &dk, &dv, 0);
		free(copy);
		if (!rc)
			rc = LMG(t, KV_G_DEL, NULL, &k, NULL, 0);
		if (rc)
			return rc;
		s = j;
	}
}

int kv_del(kv_txn *t, const void *key, size_t klen)
{
	uint8_t skey[SKEY_LEN];
	MDB_val k, v;
	int rc;

	if (t->rdonly)
		return -EROFS;
	t->writes++;
	if (klen <= P) {
		k.mv_size = klen;
		k.mv_data = (void *)key;
		return LMG(t, KV_G_DEL, NULL, &k, NULL, 0);
	}
	if ((rc = long_find(t, key, klen, skey, &v)))
		return rc;
	k.mv_size = SKEY_LEN;
	k.mv_data = skey;
	if ((rc = LMG(t, KV_G_DEL, NULL, &k, NULL, 0)))
		return rc;
	return long_backshift(t, skey);
}

/* ---- cursors ---- */

int kv_cursor_open(kv_txn *t, kv_cursor **out)
{
	kv_cursor *c = mem_malloc(sizeof(*c)); /* not calloc: gmin and gmax are 1 KiB, written before read */
	int rc;
	if (!c)
		return -ENOMEM;
	c->t = t;
	c->state = C_NONE;
	c->k = c->v = (MDB_val){ 0 };
	c->g = NULL;
	c->gn = c->gcap = c->gi = 0;
	c->gwrites = 0;
	if ((rc = LM(mdb_cursor_open(t->txn, t->env->dbi, &c->mc)))) {
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

static void group_clear(kv_cursor *c)
{
	for (size_t i = 0; i < c->gn; i++)
		free(c->g[i].full);
	c->gn = 0;
}

void kv_cursor_close(kv_cursor *c)
{
	if (!c)
		return;
	group_clear(c);
	free(c->g);
	mdb_cursor_close(c->mc);
	free(c);
}

static int cget(kv_cursor *c, MDB_val *k, MDB_val *v, MDB_cursor_op op)
{
	int rc = LMG(c->t, KV_G_CURSOR_GET, c->mc, k, v, (unsigned)op);
	if (!rc && (!kv_guard_in_file(c->t, k) || !kv_guard_in_file(c->t, v)))
		rc = -EIO;
	return rc;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct group_ent *x = a, *y = b;
	size_t n = x->fulln < y->fulln ? x->fulln : y->fulln;
	int r = memcmp(x->full, y->full, n);
	if (r)
		return r;
	return (x->fulln > y->fulln) - (x->fulln < y->fulln);
}

/* The cursor is on stored key K (a long key's slot): read its whole group, walking FORWARD or back. */
static int group_load(kv_cursor *c, MDB_val k, MDB_val v, bool forward)
{
	uint8_t prefix[P];
	int rc = 0;

	if (c->gn && c->gwrites == c->t->writes && !memcmp(c->gmin, k.mv_data, P)) {
		c->gi = forward ? 0 : c->gn - 1; /* the same group, unchanged since it was read */
		c->state = C_GROUP;
		return 0;
	}
	group_clear(c);
	memcpy(prefix, k.mv_data, P);
	while (!rc && k.mv_size == SKEY_LEN && !memcmp(k.mv_data, prefix, P)) {
		struct group_ent *e;
		const uint8_t *tail;
		size_t tailn;

		if (c->gn == c->gcap) {
			size_t ncap = c->gcap ? 2 * c->gcap : 8;
			void *ng = mem_realloc(c->g, ncap * sizeof(*c->g));
			if (!ng)
				return -ENOMEM;
			c->g = ng;
			c->gcap = ncap;
		}
		e = &c->g[c->gn];
		if ((rc = split_long(&v, &tail, &tailn, &e->val)))
			return rc;
		if (!(e->full = mem_malloc(P + tailn)))
			return -ENOMEM;
		memcpy(e->skey, k.mv_data, SKEY_LEN);
		memcpy(e->full, prefix, P);
		memcpy(e->full + P, tail, tailn);
		e->fulln = P + tailn;
		c->gn++;
		rc = cget(c, &k, &v, forward ? MDB_NEXT : MDB_PREV);
	}
	if (rc && rc != -ENOENT)
		return rc;
	memcpy(forward ? c->gmin : c->gmax, c->g[0].skey, SKEY_LEN);
	memcpy(forward ? c->gmax : c->gmin, c->g[c->gn - 1].skey, SKEY_LEN);
	qsort(c->g, c->gn, sizeof(*c->g), ent_cmp);
	c->gwrites = c->t->writes;
	c->gi = forward ? 0 : c->gn - 1;
	c->state = C_GROUP;
	return 0;
}

/* Settle the cursor after an LMDB positioning call that returned RC with K/V. */
static int land(kv_cursor *c, int rc, MDB_val k, MDB_val v, bool forward)
{
	if (rc) {
		c->state = C_NONE;
		return rc;
	}
	if (k.mv_size <= P) {
		c->state = C_SIMPLE;
		c->k = k;
		c->v = v;
		return 0;
	}
	if (k.mv_size != SKEY_LEN) {
		c->state = C_NONE;
		return -EIO;
	}
	rc = group_load(c, k, v, forward);
	if (rc)
		c->state = C_NONE;
	return rc;
}

/* Move the LMDB cursor off the current group, past its last (FORWARD) or before its first stored key. */
static int leave_group(kv_cursor *c, bool forward)
{
	MDB_val k = { SKEY_LEN, forward ? c->gmax : c->gmin }, v;
	int rc = cget(c, &k, &v, MDB_SET);
	if (!rc)
		rc = cget(c, &k, &v, forward ? MDB_NEXT : MDB_PREV);
	return land(c, rc, k, v, forward);
}

/* The first key >= KEY as LMDB's search finds it: by the keys in the branch pages. */
static int search_ge(kv_cursor *c, const void *key, size_t klen)
{
	MDB_val k, v;
	int rc;

	if (klen <= P) {
		k.mv_size = klen ? klen : 1;
		k.mv_data = klen ? (void *)key : (void *)"";
		rc = klen ? cget(c, &k, &v, MDB_SET_RANGE) : cget(c, &k, &v, MDB_FIRST);
		return land(c, rc, k, v, true);
	}
	k.mv_size = P;
	k.mv_data = (void *)key;
	rc = cget(c, &k, &v, MDB_SET_RANGE);
	if (!rc && k.mv_size == P && !memcmp(k.mv_data, key, P))
		rc = cget(c, &k, &v, MDB_NEXT); /* KEY[:P] itself is a proper prefix of KEY: smaller */
	if (rc || k.mv_size != SKEY_LEN || memcmp(k.mv_data, key, P))
		return land(c, rc, k, v, true);
	if ((rc = group_load(c, k, v, true))) {
		c->state = C_NONE;
		return rc;
	}
	for (size_t i = 0; i < c->gn; i++) {
		struct group_ent probe = { .full = (uint8_t *)key, .fulln = klen };
		if (ent_cmp(&c->g[i], &probe) >= 0) {
			c->gi = i;
			return 0;
		}
	}
	return leave_group(c, true);
}

/* The first key >= KEY as a walk finds it. LMDB's search goes by the keys in branch pages, which a walk
 * never reads: one damaged sends it to a leaf before or after the place, and a scan that believed it
 * would read rows another scan does not, or go back over rows it had passed (a listing that seeks past
 * rows would go round forever). So step from where the search landed: forward past keys below KEY, back
 * over keys at or above it. In an intact store that is one step back and one forward. */
int kv_seek(kv_cursor *c, const void *key, size_t klen)
{
	const void *k;
	size_t kn;
	int rc = search_ge(c, key, klen);

	if (!klen)
		return rc; /* the first key: the search compares no keys */
	if (rc == -ENOENT) {
		if ((rc = kv_last(c)))
			return rc;
		kv_key(c, &k, &kn);
		if (kv_key_cmp(k, kn, key, klen) < 0) {
			c->state = C_NONE; /* (as the search leaves it) */
			return -ENOENT;
		}
	} else if (rc) {
		return rc;
	} else {
		kv_key(c, &k, &kn);
		while (kv_key_cmp(k, kn, key, klen) < 0) {
			if ((rc = kv_next(c)))
				return rc;
			kv_key(c, &k, &kn);
		}
	}
	for (;;) { /* on a key >= KEY: the place, if the key before it is below KEY */
		if ((rc = kv_prev(c)) == -ENOENT)
			return search_ge(c, "", 0);
		if (rc)
			return rc;
		kv_key(c, &k, &kn);
		if (kv_key_cmp(k, kn, key, klen) < 0)
			return kv_next(c);
	}
}

int kv_last(kv_cursor *c)
{
	MDB_val k, v;
	int rc = cget(c, &k, &v, MDB_LAST);
	return land(c, rc, k, v, false);
}

int kv_next(kv_cursor *c)
{
	MDB_val k, v;
	switch (c->state) {
	case C_SIMPLE:
		return land(c, cget(c, &k, &v, MDB_NEXT), k, v, true);
	case C_GROUP:
		if (c->gi + 1 < c->gn) {
			c->gi++;
			return 0;
		}
		return leave_group(c, true);
	default:
		return -ENOENT;
	}
}

int kv_prev(kv_cursor *c)
{
	MDB_val k, v;
	switch (c->state) {
	case C_SIMPLE:
		return land(c, cget(c, &k, &v, MDB_PREV), k, v, false);
	case C_GROUP:
		if (c->gi > 0) {
			c->gi--;
			return 0;
		}
		return leave_group(c, false);
	default:
		return -ENOENT;
	}
}

void kv_key(const kv_cursor *c, const void **key, size_t *klen)
{
	if (c->state == C_GROUP) {
		*key = c->g[c->gi].full;
		*klen = c->g[c->gi].fulln;
	} else {
		*key = c->k.mv_data;
		*klen = c->k.mv_size;
	}
}

int kv_value(kv_cursor *c, const void **val, size_t *vlen)
{
	if (c->state == C_NONE)
		return -ENOENT;
	if (c->state == C_GROUP) {
		*val = c->g[c->gi].val.mv_data;
		*vlen = c->g[c->gi].val.mv_size;
	} else {
		*val = c->v.mv_data;
		*vlen = c->v.mv_size;
	}
	return 0;
}

int kv_pair(kv_cursor *c, const void **key, size_t *klen, const void **val, size_t *vlen)
{
	kv_key(c, key, klen);
	return kv_value(c, val, vlen);
}

int kv_seek_le(kv_cursor *c, const void *key, size_t klen)
{
	const void *k;
	size_t kn, n;
	int rc = kv_seek(c, key, klen);

	if (rc == -ENOENT)
		return kv_last(c);
	if (rc)
		return rc;
	kv_key(c, &k, &kn);
	n = kn < klen ? kn : klen;
	if (kn == klen && !memcmp(k, key, n))
		return 0;
	return kv_prev(c);
}
