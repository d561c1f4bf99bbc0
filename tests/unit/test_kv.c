/* test_kv.c — the ordered map under the store: keys of any length and any bytes must store, seek and
 * iterate in exact bytewise order, against a qsort-with-memcmp model; long keys sharing their first
 * KV_INLINE_MAX bytes (one "group"), keys of exactly 479/480/481 bytes, and colliding hash slots; seeks
 * that land where a walk does when a damaged branch page misleads LMDB's search; open errors. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kv.h"

/* ---- the model: keys sorted by memcmp, shorter first on a tie ---- */

struct mkey {
	uint8_t *p;
	size_t n;
	uint32_t id; /* stored as the value, to check the key -> value mapping */
	bool live;
};

static int bcmp_(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int r = n ? memcmp(a, b, n) : 0;
	return r ? r : (an > bn) - (an < bn);
}

static int mkey_cmp(const void *x, const void *y)
{
	const struct mkey *a = x, *b = y;
	return bcmp_(a->p, a->n, b->p, b->n);
}

struct model {
	struct mkey *k;
	size_t n, cap;
};

static void model_add(struct model *m, const uint8_t *p, size_t n)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 256;
		m->k = realloc(m->k, m->cap * sizeof(*m->k));
		assert_non_null(m->k);
	}
	m->k[m->n].p = malloc(n);
	assert_non_null(m->k[m->n].p);
	memcpy(m->k[m->n].p, p, n);
	m->k[m->n].n = n;
	m->k[m->n].live = true;
	m->n++;
}

/* Sort and drop duplicates; number the keys. */
static void model_sort(struct model *m)
{
	size_t o = 0;
	qsort(m->k, m->n, sizeof(*m->k), mkey_cmp);
	for (size_t i = 0; i < m->n; i++) {
		if (o && !mkey_cmp(&m->k[o - 1], &m->k[i])) {
			free(m->k[i].p);
			continue;
		}
		m->k[o++] = m->k[i];
	}
	m->n = o;
	for (size_t i = 0; i < m->n; i++)
		m->k[i].id = (uint32_t)i;
}

static void model_free(struct model *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->k[i].p);
	free(m->k);
}

/* Index of the first live key >= P (m->n if none). */
static size_t model_lower(const struct model *m, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < m->n; i++) /* the model is small enough for a linear scan */
		if (m->k[i].live && bcmp_(m->k[i].p, m->k[i].n, p, n) >= 0)
			return i;
	return m->n;
}

/* Index of the last live key <= P ((size_t)-1 if none). */
static size_t model_upper_le(const struct model *m, const uint8_t *p, size_t n)
{
	for (size_t i = m->n; i-- > 0;)
		if (m->k[i].live && bcmp_(m->k[i].p, m->k[i].n, p, n) <= 0)
			return i;
	return (size_t)-1;
}

static size_t model_next(const struct model *m, size_t i)
{
	while (++i < m->n && !m->k[i].live)
		;
	return i;
}

static size_t model_prev(const struct model *m, size_t i)
{
	while (i-- > 0)
		if (m->k[i].live)
			return i;
	return (size_t)-1;
}

static void value_of(const struct mkey *k, uint8_t v[8])
{
	memcpy(v, &k->id, 4);
	memcpy(v + 4, &k->n, 4);
}

/* The cursor must be on model key I (or off the end, rc -ENOENT, when I is out of range). */
static void expect_at(kv_cursor *c, int rc, const struct model *m, size_t i)
{
	const void *k, *v;
	size_t kn, vn;
	uint8_t want[8];

	if (i >= m->n) {
		assert_int_equal(rc, -ENOENT);
		return;
	}
	assert_int_equal(rc, 0);
	kv_key(c, &k, &kn);
	assert_int_equal(kn, m->k[i].n);
	assert_memory_equal(k, m->k[i].p, kn);
	assert_int_equal(kv_value(c, &v, &vn), 0);
	value_of(&m->k[i], want);
	assert_int_equal(vn, 8);
	assert_memory_equal(v, want, 8);
}

static void put_model(kv_txn *t, const struct mkey *k)
{
	uint8_t v[8];
	value_of(k, v);
	assert_int_equal(kv_put(t, k->p, k->n, v, 8), 0);
}

/* Walk the whole map forward and backward and compare with the model. */
static void check_walk(kv_txn *t, const struct model *m)
{
	kv_cursor *c;
	size_t i;
	int rc;

	assert_int_equal(kv_cursor_open(t, &c), 0);
	i = model_next(m, (size_t)-1);
	for (rc = kv_seek(c, "", 0); i < m->n; rc = kv_next(c), i = model_next(m, i))
		expect_at(c, rc, m, i);
	expect_at(c, rc, m, m->n);
	i = model_prev(m, m->n);
	for (rc = kv_last(c); i != (size_t)-1; rc = kv_prev(c), i = model_prev(m, i))
		expect_at(c, rc, m, i);
	assert_int_equal(rc, -ENOENT);
	kv_cursor_close(c);
}

/* Seek to probe P from both sides and step two keys each way from there. */
static void check_probe(kv_cursor *c, const struct model *m, const uint8_t *p, size_t n)
{
	size_t i = model_lower(m, p, n), j = model_upper_le(m, p, n);
	int rc = kv_seek(c, p, n);

	expect_at(c, rc, m, i);
	if (i < m->n) {
		size_t a = model_next(m, i), b;
		expect_at(c, kv_next(c), m, a);
		if (a < m->n) {
			b = model_next(m, a);
			expect_at(c, kv_next(c), m, b);
			if (b < m->n)
				expect_at(c, kv_prev(c), m, a);
		}
	}
	rc = kv_seek_le(c, p, n);
	expect_at(c, rc, m, j);
	if (j != (size_t)-1) {
		size_t a = model_prev(m, j);
		expect_at(c, kv_prev(c), m, a == (size_t)-1 ? m->n : a);
		if (a != (size_t)-1)
			expect_at(c, kv_next(c), m, j);
	}
}

static void check_probes(kv_txn *t, const struct model *m, uint64_t *seed, size_t every)
{
	kv_cursor *c;
	uint8_t *buf = malloc(40000 + 1);

	assert_non_null(buf);
	assert_int_equal(kv_cursor_open(t, &c), 0);
	for (size_t i = 0; i < m->n; i += every) {
		const struct mkey *k = &m->k[i];
		memcpy(buf, k->p, k->n);
		check_probe(c, m, buf, k->n);         /* the key itself */
		check_probe(c, m, buf, k->n - 1);     /* its parent: just below */
		buf[k->n] = 0;
		check_probe(c, m, buf, k->n + 1);     /* its first child: just above */
		if (buf[k->n - 1] != 0xFF) {          /* its next sibling */
			buf[k->n - 1]++;
			check_probe(c, m, buf, k->n);
		}
		if (k->n > 2) {                       /* something random in between */
			size_t n = 1 + tu_rand(seed) % k->n;
			memcpy(buf, k->p, n);
			tu_rand_bytes(seed, buf + n - 1, 1, 1);
			check_probe(c, m, buf, n);
		}
	}
	check_probe(c, m, (const uint8_t *)"\xff\xff\xff\xff", 4);
	check_probe(c, m, (const uint8_t *)"\0", 1);
	kv_cursor_close(c);
	free(buf);
}

/* Keys that stress every part of the long-key scheme. */
static void build_keys(struct model *m, uint64_t *seed)
{
	uint8_t *base = malloc(40000), *k = malloc(40000 + 2);
	static const size_t huge[] = { 4096, 4096 * 2 + 100, 16384, 40000 };

	assert_non_null(base);
	assert_non_null(k);
	tu_rand_bytes(seed, base, 40000, 1);
	for (int i = 0; i < 400; i++) { /* short keys */
		size_t n = 1 + tu_rand(seed) % 24;
		tu_rand_bytes(seed, k, n, 1);
		model_add(m, k, n);
	}
	for (int i = 0; i < 200; i++) { /* any length up to past the inline limit */
		size_t n = 1 + tu_rand(seed) % 700;
		tu_rand_bytes(seed, k, n, i & 1);
		model_add(m, k, n);
	}
	/* One big group: 480 shared bytes, tails that share further prefixes among themselves. */
	for (int i = 0; i < 400; i++) {
		size_t share = 480 + tu_rand(seed) % 3 * (tu_rand(seed) % 40);
		size_t n = share + 1 + tu_rand(seed) % 60;
		memcpy(k, base, share);
		tu_rand_bytes(seed, k + share, n - share, 1);
		model_add(m, k, n);
	}
	/* The edges of that group: exactly 479/480/481 bytes, and their neighbours. */
	for (size_t n = 478; n <= 482; n++) {
		model_add(m, base, n);
		memcpy(k, base, n);
		k[n] = 0;
		model_add(m, k, n + 1);
		k[n] = 0xFF;
		model_add(m, k, n + 1);
		if (k[n - 1] != 0xFF) {
			k[n - 1]++;
			model_add(m, k, n);
		}
		if (k[n - 1] != 0) {
			memcpy(k, base, n);
			k[n - 1]--;
			model_add(m, k, n);
			model_add(m, k, n + 7);
		}
	}
	/* Groups of all-0x00 and all-0xFF prefixes: the ends of the key space. */
	for (int fill = 0; fill < 2; fill++) {
		uint8_t b = fill ? 0xFF : 0x00;
		for (size_t n = 478; n <= 483; n++) {
			memset(k, b, n);
			model_add(m, k, n);
		}
		for (int i = 0; i < 60; i++) {
			size_t n = 481 + tu_rand(seed) % 40;
			memset(k, b, 480);
			tu_rand_bytes(seed, k + 480, n - 480, 1);
			model_add(m, k, n);
		}
	}
	/* Keys at and far beyond the store's limits, inside the big group. */
	for (size_t i = 0; i < TU_ARRAY_SIZE(huge); i++) {
		model_add(m, base, huge[i]);
		memcpy(k, base, huge[i]);
		k[huge[i] - 1] ^= 0x5A;
		model_add(m, k, huge[i]);
	}
	free(base);
	free(k);
	model_sort(m);
}

/* Insert M's keys into the map in a random order over three transactions. */
static void insert_shuffled(struct tu_kv *f, struct model *m, uint64_t *seed)
{
	size_t *ord = malloc(m->n * sizeof(*ord));
	assert_non_null(ord);
	for (size_t i = 0; i < m->n; i++)
		ord[i] = i;
	for (size_t i = m->n; i > 1; i--) {
		size_t j = tu_rand(seed) % i, x = ord[i - 1];
		ord[i - 1] = ord[j];
		ord[j] = x;
	}
	for (size_t part = 0; part < 3; part++) {
		kv_txn *t = tu_kv_begin(f, false);
		for (size_t i = part * m->n / 3; i < (part + 1) * m->n / 3; i++)
			put_model(t, &m->k[ord[i]]);
		assert_int_equal(kv_txn_commit(t), 0);
	}
	free(ord);
}

static void test_kv__order_matches_memcmp_model(void **state)
{
	struct tu_kv *f = *state;
	struct model m = { 0 };
	uint64_t seed = 20240601;
	kv_txn *t;

	build_keys(&m, &seed);
	insert_shuffled(f, &m, &seed);

	t = tu_kv_begin(f, true);
	check_walk(t, &m);
	check_probes(t, &m, &seed, 1);
	kv_txn_abort(t);

	/* Delete a third, in a write transaction, and check there (cursors re-seek after writes). */
	t = tu_kv_begin(f, false);
	for (size_t i = 0; i < m.n; i++) {
		if (tu_rand(&seed) % 3)
			continue;
		assert_int_equal(kv_del(t, m.k[i].p, m.k[i].n), 0);
		m.k[i].live = false;
	}
	check_walk(t, &m);
	check_probes(t, &m, &seed, 3);
	assert_int_equal(kv_txn_commit(t), 0);

	t = tu_kv_begin(f, true);
	check_walk(t, &m);
	for (size_t i = 0; i < m.n; i++) {
		const void *v;
		size_t vn;
		assert_int_equal(kv_get(t, m.k[i].p, m.k[i].n, &v, &vn), m.k[i].live ? 0 : -ENOENT);
	}
	kv_txn_abort(t);
	model_free(&m);
}

/* Point operations at every interesting length. */
static void test_kv__put_get_del_at_lengths(void **state)
{
	static const size_t lens[] = { 1, 2, 8, 479, 480, 481, 487, 488, 489, 511, 512, 4096, 16384, 41000 };
	struct tu_kv *f = *state;
	uint64_t seed = 7;
	kv_txn *t = tu_kv_begin(f, false);

	for (size_t i = 0; i < TU_ARRAY_SIZE(lens); i++) {
		size_t n = lens[i];
		uint8_t *k = malloc(n), *v1 = tu_filled(3000, (uint8_t)i);
		const void *v;
		size_t vn;

		assert_non_null(k);
		tu_rand_bytes(&seed, k, n, 1);
		assert_int_equal(kv_get(t, k, n, &v, &vn), -ENOENT);
		assert_int_equal(kv_del(t, k, n), -ENOENT);
		assert_int_equal(kv_put(t, k, n, v1, 3000), 0);
		assert_int_equal(kv_get(t, k, n, &v, &vn), 0);
		assert_int_equal(vn, 3000);
		assert_memory_equal(v, v1, 3000);
		assert_int_equal(kv_put(t, k, n, "", 0), 0); /* replace, with an empty value */
		assert_int_equal(kv_get(t, k, n, &v, &vn), 0);
		assert_int_equal(vn, 0);
		assert_int_equal(kv_put(t, k, n, "x", 1), 0);
		if (n > 1)
			assert_int_equal(kv_get(t, k, n - 1, &v, &vn), -ENOENT);
		assert_int_equal(kv_del(t, k, n), 0);
		assert_int_equal(kv_get(t, k, n, &v, &vn), -ENOENT);
		assert_int_equal(kv_put(t, k, n, "y", 1), 0); /* and back, for the commit below */
		free(k);
		free(v1);
	}
	assert_int_equal(kv_put(t, "", 0, "x", 1), -EINVAL);
	assert_int_equal(kv_txn_commit(t), 0);

	/* One key per length survives the commit, each exactly once. */
	t = tu_kv_begin(f, true);
	kv_cursor *c;
	size_t cnt = 0;
	int rc;
	assert_int_equal(kv_cursor_open(t, &c), 0);
	for (rc = kv_seek(c, "", 0); !rc; rc = kv_next(c))
		cnt++;
	assert_int_equal(rc, -ENOENT);
	assert_int_equal(cnt, TU_ARRAY_SIZE(lens));
	kv_cursor_close(c);
	kv_txn_abort(t);
}

/* kv_reserve gives the caller room to fill; a long key's hidden tail must not show in the value. */
static void test_kv__reserve_fills_value(void **state)
{
	struct tu_kv *f = *state;
	kv_txn *t = tu_kv_begin(f, false);
	uint8_t *k = tu_filled(1000, 0xAB);
	const void *v;
	size_t vn;
	void *dst;

	for (size_t n = 479; n <= 1000; n += 521) {
		assert_int_equal(kv_reserve(t, k, n, 5, &dst), 0);
		memcpy(dst, "hello", 5);
		assert_int_equal(kv_get(t, k, n, &v, &vn), 0);
		assert_int_equal(vn, 5);
		assert_memory_equal(v, "hello", 5);
	}
	assert_int_equal(kv_txn_commit(t), 0);
	free(k);
}

/* A cursor that read a group must see the group change after a write in its transaction. */
static void test_kv__cursor_sees_writes_to_loaded_group(void **state)
{
	struct tu_kv *f = *state;
	kv_txn *t = tu_kv_begin(f, false);
	uint8_t k[600];
	const void *key, *v;
	size_t kn, vn;
	kv_cursor *c;

	memset(k, 'g', sizeof(k));
	for (int i = 0; i < 5; i++) {
		k[500] = (uint8_t)('a' + 2 * i); /* a, c, e, g, i */
		assert_int_equal(kv_put(t, k, 501, "v", 1), 0);
	}
	assert_int_equal(kv_cursor_open(t, &c), 0);
	k[500] = 'b';
	assert_int_equal(kv_seek(c, k, 501), 0); /* loads the group; lands on 'c' */
	kv_key(c, &key, &kn);
	assert_int_equal(((const uint8_t *)key)[500], 'c');

	assert_int_equal(kv_put(t, k, 501, "new", 3), 0); /* 'b' joins the group */
	assert_true(kv_txn_writes(t) > 0);
	assert_int_equal(kv_seek(c, k, 501), 0);
	kv_key(c, &key, &kn);
	assert_int_equal(kn, 501);
	assert_int_equal(((const uint8_t *)key)[500], 'b');
	assert_int_equal(kv_value(c, &v, &vn), 0);
	assert_int_equal(vn, 3);
	assert_memory_equal(v, "new", 3);

	k[500] = 'c';
	assert_int_equal(kv_del(t, k, 501), 0); /* 'c' leaves it */
	k[500] = 'b';
	assert_int_equal(kv_seek(c, k, 501), 0);
	assert_int_equal(kv_next(c), 0);
	kv_key(c, &key, &kn);
	assert_int_equal(((const uint8_t *)key)[500], 'e');
	kv_cursor_close(c);
	assert_int_equal(kv_txn_commit(t), 0);
}

/* ---- colliding hash slots ---- */

/* The map's long-key hash (kv*.c), replicated so the test can build keys whose slots collide. If kv changes
 * its hash, test_kv__backshift_keeps_probe_runs_findable notices: it checks the slots it built on disk. */
#define C1 0x87C37B91114253D5ull
#define C2 0x4CF5AD432745937Full
#define F1 0xFF51AFD7ED558CCDull
#define F2 0xC4CEB9FE1A85EC53ull

static uint64_t rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static uint64_t mix_block(uint64_t h, uint64_t b)
{
	h ^= rotl64(b * C1, 31) * C2;
	return rotl64(h, 27) * 5 + 0x52DCE729;
}

static uint64_t hash_replica(const uint8_t *p, size_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full), b, t = 0;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&b, p + i, 8);
		h = mix_block(h, b);
	}
	for (size_t j = 0; i + j < n; j++)
		t |= (uint64_t)p[i + j] << (8 * j);
	h ^= rotl64(t * C1, 31) * C2;
	h ^= h >> 33;
	h *= F1;
	h ^= h >> 33;
	h *= F2;
	h ^= h >> 33;
	return h;
}

static uint64_t inverse(uint64_t a) /* of an odd number, mod 2^64 (Newton) */
{
	uint64_t x = a;
	for (int i = 0; i < 6; i++)
		x *= 2 - a * x;
	return x;
}

/* Fill the last 8 bytes of the N-byte key K (N a multiple of 8) so that its hash is H. */
static void force_hash(uint8_t *k, size_t n, uint64_t hash)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full), b, want = hash;
	for (size_t i = 0; i + 8 < n; i += 8) {
		memcpy(&b, k + i, 8);
		h = mix_block(h, b);
	}
	/* Undo the finaliser, then the last block's step (the empty tail adds nothing). */
	want ^= want >> 33;
	want *= inverse(F2);
	want ^= want >> 33;
	want *= inverse(F1);
	want ^= want >> 33;
	want = rotl64((want - 0x52DCE729) * inverse(5), 64 - 27) ^ h;
	b = rotl64(want * inverse(C2), 64 - 31) * inverse(C1);
	memcpy(k + n - 8, &b, 8);
	assert_true(hash_replica(k, n) == hash);
}

static bool file_has(const char *dir, const uint8_t *p, size_t n)
{
	char *path;
	struct stat sb;
	uint8_t *buf;
	bool found;
	int fd;

	assert_true(asprintf(&path, "%s/data.mdb", dir) > 0);
	fd = open(path, O_RDONLY);
	free(path);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	buf = malloc((size_t)sb.st_size);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)sb.st_size, 0), sb.st_size);
	close(fd);
	found = memmem(buf, (size_t)sb.st_size, p, n) != NULL;
	free(buf);
	return found;
}

#define NCOLL 12
#define KLEN 496 /* 480 shared bytes, 8 chosen, 8 solved */

static void test_kv__backshift_keeps_probe_runs_findable(void **state)
{
	/* Home slots (offsets from H): several keys per slot, and runs that pass through other homes. */
	static const unsigned home[NCOLL] = { 0, 0, 1, 0, 2, 1, 5, 0, 3, 9, 2, 0 };
	const uint64_t H = 0x0123456789ABCDEFull;
	struct tu_kv *f = *state;
	struct model m = { 0 };
	uint8_t k[KLEN], slotkey[488];
	uint64_t seed = 99;
	kv_txn *t;

	memset(k, '#', 480);
	for (int i = 0; i < NCOLL; i++) {
		memset(k + 480, 'a' + i, 8);
		force_hash(k, KLEN, H + home[i]);
		model_add(&m, k, KLEN);
	}
	model_sort(&m);
	assert_int_equal(m.n, NCOLL);

	t = tu_kv_begin(f, false);
	for (int i = 0; i < NCOLL; i++) { /* insert in home order, as built */
		memset(k + 480, 'a' + i, 8);
		force_hash(k, KLEN, H + home[i]);
		for (size_t j = 0; j < m.n; j++)
			if (!memcmp(m.k[j].p, k, KLEN))
				put_model(t, &m.k[j]);
	}
	assert_int_equal(kv_txn_commit(t), 0);

	/* The keys really collided: the run occupies NCOLL consecutive slots from H. */
	memset(slotkey, '#', 480);
	for (uint64_t s = H; s < H + NCOLL; s++) {
		for (int b = 0; b < 8; b++)
			slotkey[480 + b] = (uint8_t)(s >> (56 - 8 * b));
		assert_true(file_has(f->dir, slotkey, sizeof(slotkey)));
	}

	/* Delete in a random order, re-inserting now and then; everything left must stay findable. */
	for (int round = 0; round < 60; round++) {
		size_t i = tu_rand(&seed) % m.n;
		const void *v;
		size_t vn;

		t = tu_kv_begin(f, false);
		if (m.k[i].live) {
			assert_int_equal(kv_del(t, m.k[i].p, m.k[i].n), 0);
			m.k[i].live = false;
		} else {
			put_model(t, &m.k[i]);
			m.k[i].live = true;
		}
		for (size_t j = 0; j < m.n; j++)
			assert_int_equal(kv_get(t, m.k[j].p, m.k[j].n, &v, &vn), m.k[j].live ? 0 : -ENOENT);
		check_walk(t, &m);
		/* Replacing an existing key must not add a second copy. */
		for (size_t j = 0; j < m.n; j++)
			if (m.k[j].live)
				put_model(t, &m.k[j]);
		check_walk(t, &m);
		assert_int_equal(kv_txn_commit(t), 0);
	}
	model_free(&m);
}

static void test_kv__abort_discards_and_commit_persists(void **state)
{
	struct tu_kv *f = *state;
	uint8_t big[700];
	const void *v;
	size_t vn;
	kv_txn *t;

	memset(big, 0, sizeof(big));
	t = tu_kv_begin(f, false);
	assert_int_equal(kv_put(t, "a", 1, "1", 1), 0);
	assert_int_equal(kv_put(t, big, sizeof(big), "2", 1), 0);
	kv_txn_abort(t);
	t = tu_kv_begin(f, true);
	assert_int_equal(kv_get(t, "a", 1, &v, &vn), -ENOENT);
	assert_int_equal(kv_get(t, big, sizeof(big), &v, &vn), -ENOENT);
	assert_int_equal(kv_put(t, "a", 1, "1", 1), -EROFS);
	assert_int_equal(kv_del(t, "a", 1), -EROFS);
	kv_txn_abort(t);

	t = tu_kv_begin(f, false);
	assert_int_equal(kv_put(t, "a", 1, "1", 1), 0);
	assert_int_equal(kv_put(t, big, sizeof(big), "2", 1), 0);
	assert_int_equal(kv_txn_commit(t), 0);
	assert_int_equal(kv_env_sync(f->env), 0);
	kv_env_close(f->env);
	assert_int_equal(kv_env_open(f->dir, true, false, &f->env), 0);
	t = tu_kv_begin(f, true);
	assert_int_equal(kv_get(t, big, sizeof(big), &v, &vn), 0);
	assert_int_equal(vn, 1);
	assert_memory_equal(v, "2", 1);
	kv_txn_abort(t);
	assert_int_equal(kv_txn_begin(f->env, false, &t), -EROFS); /* a read-only environment */
}

/* Rewrite in data.mdb under DIR the key of the second node of the first branch page (the first node's
 * key is empty) to KEY, as a damaged page would: searches then go to the wrong leaf, walks do not. */
static void damage_branch_key(const char *dir, const char *key)
{
	char *path;
	uint8_t pg[4096];
	FILE *fp;

	assert_true(asprintf(&path, "%s/data.mdb", dir) > 0);
	assert_non_null(fp = fopen(path, "r+b"));
	for (long off = 2 * 4096;; off += 4096) { /* (pages 0 and 1 are the meta pages) */
		assert_int_equal(fseek(fp, off, SEEK_SET), 0);
		assert_int_equal(fread(pg, 1, sizeof(pg), fp), sizeof(pg)); /* there is one */
		uint16_t flags = (uint16_t)(pg[10] | pg[11] << 8);
		if (!(flags & 0x01)) /* P_BRANCH */
			continue;
		uint16_t node = (uint16_t)(pg[16 + 2] | pg[16 + 3] << 8); /* mp_ptrs[1] */
		uint16_t ksize = (uint16_t)(pg[node + 6] | pg[node + 7] << 8);
		assert_int_equal(ksize, strlen(key));
		memcpy(pg + node + 8, key, ksize);
		assert_int_equal(fseek(fp, off, SEEK_SET), 0);
		assert_int_equal(fwrite(pg, 1, sizeof(pg), fp), sizeof(pg));
		break;
	}
	assert_int_equal(fclose(fp), 0);
	free(path);
}

/* kv_seek() finds the place a walk finds, even when a damaged branch key sends LMDB's search to the
 * leaf after the place (the separator made smaller) or before it (made larger). */
static void test_kv__seek_lands_where_a_walk_does_despite_a_damaged_branch_key(void **state)
{
	struct tu_kv *f = *state;
	static const char *const bad[] = { "k00001", "k01999" };
	char k[16], probe[16];
	const void *p;
	size_t pn;
	kv_txn *t;
	kv_cursor *c;

	for (int b = 0; b < 2; b++) {
		t = tu_kv_begin(f, false);
		for (int i = 0; i < 2000; i++) {
			snprintf(k, sizeof(k), "k%05d", i);
			assert_int_equal(kv_put(t, k, 6, "value-value-value-value", 23), 0);
		}
		assert_int_equal(kv_txn_commit(t), 0);
		assert_int_equal(kv_env_sync(f->env), 0);
		kv_env_close(f->env);
		damage_branch_key(f->dir, bad[b]);
		assert_int_equal(kv_env_open(f->dir, false, false, &f->env), 0);
		t = tu_kv_begin(f, true);
		assert_int_equal(kv_cursor_open(t, &c), 0);
		for (int i = 0; i < 2000; i += 7) {
			snprintf(k, sizeof(k), "k%05d", i);
			snprintf(probe, sizeof(probe), "k%05d!", i - 1); /* between i - 1 and i */
			for (int j = 0; j < 2; j++) {
				assert_int_equal(kv_seek(c, j ? probe : k, j ? strlen(probe) : 6), 0);
				kv_key(c, &p, &pn);
				assert_int_equal(pn, 6);
				assert_memory_equal(p, k, 6);
			}
			assert_int_equal(kv_seek_le(c, probe, strlen(probe)), i ? 0 : -ENOENT);
			if (i) {
				snprintf(k, sizeof(k), "k%05d", i - 1);
				kv_key(c, &p, &pn);
				assert_memory_equal(p, k, 6);
			}
		}
		assert_int_equal(kv_seek(c, "k02000", 6), -ENOENT);
		assert_int_equal(kv_seek(c, "a", 1), 0);
		kv_key(c, &p, &pn);
		assert_memory_equal(p, "k00000", 6);
		kv_cursor_close(c);
		kv_txn_abort(t);
		kv_env_close(f->env);
		tu_rmtree(f->dir);
		assert_int_equal(mkdir(f->dir, 0700), 0);
		assert_int_equal(kv_env_open(f->dir, false, true, &f->env), 0);
	}
}

static void test_kv__open_errors(void **state)
{
	struct tu_kv *f = *state;
	char *missing, *file, *junkdir, *junk;
	kv_env *e = NULL;
	FILE *fp;

	assert_true(asprintf(&missing, "%s/no/such/dir", f->dir) > 0);
	assert_int_equal(kv_env_open(missing, false, false, &e), -ENOENT);
	assert_int_equal(kv_env_open(missing, true, true, &e), -ENOENT); /* read-only never creates */
	assert_int_equal(kv_env_open(missing, false, true, &e), 0);    /* creates the parents too */
	kv_env_close(e);

	assert_true(asprintf(&file, "%s/plainfile", f->dir) > 0);
	assert_non_null(fp = fopen(file, "w"));
	fclose(fp);
	assert_int_equal(kv_env_open(file, false, true, &e), -ENOTDIR);

	/* A directory whose data file is not LMDB's is not a store. */
	assert_true(asprintf(&junkdir, "%s/junk", f->dir) > 0);
	assert_int_equal(mkdir(junkdir, 0700), 0);
	assert_true(asprintf(&junk, "%s/data.mdb", junkdir) > 0);
	assert_non_null(fp = fopen(junk, "w"));
	for (int i = 0; i < 8192; i++)
		fputc('J', fp);
	fclose(fp);
	assert_int_equal(kv_env_open(junkdir, false, false, &e), -EIO);
	assert_int_equal(kv_env_open(junkdir, true, false, &e), -EIO);
	free(missing);
	free(file);
	free(junkdir);
	free(junk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kv__order_matches_memcmp_model, tu_kv_setup, tu_kv_teardown),
		cmocka_unit_test_setup_teardown(test_kv__put_get_del_at_lengths, tu_kv_setup, tu_kv_teardown),
		cmocka_unit_test_setup_teardown(test_kv__reserve_fills_value, tu_kv_setup, tu_kv_teardown),
		cmocka_unit_test_setup_teardown(test_kv__cursor_sees_writes_to_loaded_group, tu_kv_setup, tu_kv_teardown),
		cmocka_unit_test_setup_teardown(test_kv__backshift_keeps_probe_runs_findable, tu_kv_setup, tu_kv_teardown),
		cmocka_unit_test_setup_teardown(test_kv__abort_discards_and_commit_persists, tu_kv_setup, tu_kv_teardown),
		cmocka_unit_test_setup_teardown(test_kv__seek_lands_where_a_walk_does_despite_a_damaged_branch_key,
						tu_kv_setup, tu_kv_teardown),
		cmocka_unit_test_setup_teardown(test_kv__open_errors, tu_kv_setup, tu_kv_teardown),
	};
	return cmocka_run_group_tests_name("kv", tests, NULL, NULL);
}
