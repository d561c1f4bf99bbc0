/* test_dump.c — cs_dump() and cs_restore(): an exact round trip (awkward bytes, long keys, many versions,
 * big and empty values, GC policies, delimiters), deterministic bytes, and all-or-nothing restores: every
 * truncation and every flipped byte of a dump is refused and leaves the store exactly as it was, also
 * when the restore had already committed staging batches. */
#include "testutil.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codec.h"
#include "dumpfmt.h"
#include "hash.h"
#include "keys.h"
#include "lmutil.h"

struct mem {
	uint8_t *p;
	size_t n, cap, pos;
	size_t chunk; /* reads return at most this many bytes (0: all asked) */
};

static int mem_write(void *ctx, const void *p, size_t n)
{
	struct mem *m = ctx;
	if (m->n + n > m->cap) {
		m->cap = (m->n + n) * 2;
		m->p = realloc(m->p, m->cap);
		assert_non_null(m->p);
	}
	memcpy(m->p + m->n, p, n);
	m->n += n;
	return 0;
}

static int mem_read(void *ctx, void *p, size_t n, size_t *got)
{
	struct mem *m = ctx;
	size_t k = m->n - m->pos < n ? m->n - m->pos : n;
	if (m->chunk && k > m->chunk)
		k = m->chunk;
	memcpy(p, m->p + m->pos, k);
	m->pos += k;
	*got = k;
	return 0;
}

static struct mem dump_all(cs_store *st)
{
	struct mem m = { 0 };
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	assert_int_equal(cs_dump(txn, NULL, 0, mem_write, &m, NULL), 0);
	tu_commit(txn);
	return m;
}

static int restore(cs_store *st, const uint8_t *p, size_t n, const cs_restore_opts *o, cs_restore_result *res)
{
	struct mem m = { .p = (uint8_t *)p, .n = n, .chunk = 777 };
	return cs_restore(st, mem_read, &m, o, res);
}

static cs_store *fresh(char **dir)
{
	cs_open_opts o = { .flags = CS_OPEN_CREATE };
	cs_store *st;
	*dir = tu_mkdtemp();
	assert_int_equal(cs_store_open(*dir, &o, &st), 0);
	return st;
}

static void drop_store(cs_store *st, char *dir)
{
	cs_store_close(st);
	tu_rmtree(dir);
	free(dir);
}

/* Every stored key, as a count per kind, so "the store is as it was" covers hidden data too. */
static void count_kinds(cs_store *st, size_t counts[256])
{
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	kv_cursor *c;
	int rc;
	memset(counts, 0, 256 * sizeof(size_t));
	assert_int_equal(kv_cursor_open(lm_txn_of(txn)->kv, &c), 0);
	for (rc = kv_seek(c, "", 0); !rc; rc = kv_next(c)) {
		const uint8_t *k;
		size_t kn;
		kv_key(c, (const void **)&k, &kn);
		counts[k[0]]++;
		if (kn > 6 && !memcmp(k, "Mstage", 6))
			counts[0]++; /* staging records: none may be left */
	}
	assert_int_equal(rc, -ENOENT);
	kv_cursor_close(c);
	tu_commit(txn);
}

/* A store with everything a dump must carry. */
static void fill(cs_store *st)
{
	uint64_t seed = 42;
	uint8_t longrow[600], longq[2000], *big, *rnd;
	size_t bign = 3u << 20, rndn = 1u << 20;
	cs_txn *txn;

	txn = tu_begin(st, 0);
	assert_int_equal(cs_table_create(txn, "awk", '/'), 0);
	assert_int_equal(cs_family_create(txn, "awk", "f", NULL), 0);
	assert_int_equal(cs_family_create(txn, "awk", "v2", "maxversions=2"), 0);
	assert_int_equal(cs_family_create(txn, "awk", "old", "maxage=1d or maxversions=5"), 0);
	assert_int_equal(cs_family_create_typed(txn, "awk", "sum", NULL, CS_TYPE_INTSUM), 0);
	assert_int_equal(cs_table_create(txn, "empty", 0), 0);
	assert_int_equal(cs_table_set_keyviz(txn, "empty", false), 0); /* (a table property a dump carries) */
	assert_int_equal(cs_table_create(txn, "nofam", '\n'), 0);
	assert_int_equal(cs_table_create(txn, "many", 0), 0);
	assert_int_equal(cs_family_create(txn, "many", "m", NULL), 0);
	tu_commit(txn);

	txn = tu_begin(st, 0);
	static const struct {
		const char *row, *q, *v;
		size_t rn, qn, vn;
	} awk[] = {
		{ "r\0w", "q\0", "v\0\n", 3, 2, 3 },
		{ "\xff\xfe", "\n", "\xc3\x28", 2, 1, 2 },
		{ "a/b/c", "", "", 5, 0, 0 },
		{ "\x01", "%@", "\r\n", 1, 2, 2 },
	};
	for (size_t i = 0; i < TU_ARRAY_SIZE(awk); i++)
		for (int64_t ts = 0; ts < 4; ts++)
			assert_int_equal(tu_set(txn, "awk", CS_BYTES(awk[i].row, awk[i].rn), ts % 2 ? "v2" : "f",
						CS_BYTES(awk[i].q, awk[i].qn), ts * 1000, CS_BYTES(awk[i].v, awk[i].vn)), 0);
	for (int64_t i = 0; i < 5; i++) {
		cs_mutation add = { .op = CS_ADD_TO_CELL, .family = "sum", .qualifier = CS_STR("n"), .ts = 1000 * (i % 2),
				    .input = i - 7 };
		assert_int_equal(cs_row_mutate(txn, "awk", CS_STR("agg"), &add, 1), 0);
	}
	/* v2 keeps two of three versions: the oldest is never dumped. */
	for (int64_t ts = 1; ts <= 3; ts++)
		assert_int_equal(tu_set(txn, "awk", CS_STR("gc"), "v2", CS_STR("q"), ts, CS_STR("x")), 0);
	assert_int_equal(tu_set(txn, "awk", CS_STR("gc"), "old", CS_STR("q"), cs_now_us(), CS_STR("young")), 0);
	assert_int_equal(tu_set(txn, "awk", CS_STR("gc"), "old", CS_STR("q"), 5, CS_STR("too old")), 0);
	/* Long keys: kv's long-key path (row and qualifier past 480 bytes). */
	tu_rand_bytes(&seed, longrow, sizeof(longrow), 1);
	tu_rand_bytes(&seed, longq, sizeof(longq), 1);
	longrow[0] = 'L';
	for (int i = 0; i < 3; i++) {
		longq[1999] = (uint8_t)i;
		assert_int_equal(tu_set(txn, "awk", CS_BYTES(longrow, sizeof(longrow)), "f",
					CS_BYTES(longq, sizeof(longq)), i, CS_BYTES(longq, 100 + i)), 0);
	}
	/* Big values: compressible and not. */
	big = tu_filled(bign, 'z');
	memcpy(big, "header", 6);
	rnd = malloc(rndn);
	assert_non_null(rnd);
	tu_rand_bytes(&seed, rnd, rndn, 0);
	assert_int_equal(tu_set(txn, "awk", CS_STR("big"), "f", CS_STR("compressible"), 1, CS_BYTES(big, bign)), 0);
	assert_int_equal(tu_set(txn, "awk", CS_STR("big"), "f", CS_STR("random"), 1, CS_BYTES(rnd, rndn)), 0);
	free(big);
	free(rnd);
	tu_commit(txn);

	/* Many versions and rows, over several 1 MiB blocks. */
	txn = tu_begin(st, 0);
	for (int r = 0; r < 300; r++) {
		char row[16], v[64];
		snprintf(row, sizeof(row), "row%05d", r);
		for (int ts = 0; ts < 20; ts++) {
			snprintf(v, sizeof(v), "value %d of row %d, padded to some length..........", ts, r);
			assert_int_equal(tu_set(txn, "many", CS_STR(row), "m", CS_STR("col"), ts, CS_STR(v)), 0);
		}
	}
	tu_commit(txn);
}

static void test_dump__round_trip_is_exact(void **state)
{
	struct tu_store *ts = *state;
	cs_restore_result res;
	char *dir;
	cs_store *b;
	struct mem d1, d2;
	static const char *tables[] = { "awk", "empty", "many", "nofam" };

	fill(ts->st);
	d1 = dump_all(ts->st);
	b = fresh(&dir);
	assert_int_equal(restore(b, d1.p, d1.n, NULL, &res), 0);
	assert_int_equal(res.stats.tables, 4);
	assert_int_equal(res.stats.bytes, d1.n);
	d2 = dump_all(b);
	assert_int_equal(d2.n, d1.n);
	assert_memory_equal(d2.p, d1.p, d1.n);
	/* And reads agree, schema included. */
	for (size_t i = 0; i < TU_ARRAY_SIZE(tables); i++) {
		char *x = tu_dump_st(ts->st, tables[i], NULL), *y = tu_dump_st(b, tables[i], NULL);
		cs_table_info *ia, *ib;
		cs_txn *ta = tu_begin(ts->st, CS_TXN_RDONLY), *tb = tu_begin(b, CS_TXN_RDONLY);
		assert_string_equal(x, y);
		assert_int_equal(cs_table_info_get(ta, tables[i], &ia), 0);
		assert_int_equal(cs_table_info_get(tb, tables[i], &ib), 0);
		assert_int_equal(ia->delim, ib->delim);
		assert_true(ia->created == ib->created);
		assert_int_equal(ia->keyviz_off, ib->keyviz_off);
		assert_int_equal(ib->keyviz_off, !strcmp(tables[i], "empty"));
		assert_int_equal(ia->nfamilies, ib->nfamilies);
		for (size_t f = 0; f < ia->nfamilies; f++) {
			assert_int_equal(ia->families[f].type, ib->families[f].type);
			assert_string_equal(ia->families[f].name, ib->families[f].name);
			assert_string_equal(ia->families[f].gc, ib->families[f].gc);
		}
		cs_table_info_free(ia);
		cs_table_info_free(ib);
		tu_commit(ta);
		tu_commit(tb);
		free(x);
		free(y);
	}
	free(d1.p);
	free(d2.p);
	drop_store(b, dir);
}

static void test_dump__deterministic_and_collected_cells_left_out(void **state)
{
	struct tu_store *ts = *state;
	cs_dump_stats s1, s2;
	struct mem a = { 0 }, b = { 0 };
	const char *names[] = { "t" };
	cs_txn *txn;

	tu_table(ts->st, "t", "f", "maxversions=1", NULL);
	for (int i = 1; i <= 3; i++)
		tu_put(ts->st, "t", "r", "f", "q", i, "v");
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_dump(txn, names, 1, mem_write, &a, &s1), 0);
	tu_commit(txn);
	/* cs_gc() changes what is stored, not what is visible: the same bytes. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_gc(txn, NULL, NULL), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_dump(txn, names, 1, mem_write, &b, &s2), 0);
	tu_commit(txn);
	assert_int_equal(s1.cells, 1);
	assert_int_equal(s1.rows, 1);
	assert_int_equal(s1.bytes, a.n);
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.p, b.p, a.n);
	free(a.p);
	free(b.p);
}

static void test_dump__bad_names_write_nothing(void **state)
{
	struct tu_store *ts = *state;
	struct mem m = { 0 };
	const char *missing[] = { "t", "nosuch" }, *twice[] = { "t", "t" };
	cs_txn *txn;

	tu_table(ts->st, "t", "f", NULL, NULL);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_dump(txn, missing, 2, mem_write, &m, NULL), -ENOENT);
	assert_int_equal(cs_dump(txn, twice, 2, mem_write, &m, NULL), -EINVAL);
	assert_int_equal(m.n, 0);
	tu_commit(txn);
}

static void test_restore__existing_table_refused_unless_overwrite(void **state)
{
	struct tu_store *ts = *state;
	cs_restore_opts over = { .overwrite = true };
	cs_restore_result res;
	struct mem d, after;
	char *before;

	tu_table(ts->st, "t", "f", NULL, NULL);
	tu_put(ts->st, "t", "r", "f", "q", 1, "dumped");
	d = dump_all(ts->st);
	tu_put(ts->st, "t", "r", "f", "q", 2, "newer");
	before = tu_dump_st(ts->st, "t", NULL);
	assert_int_equal(restore(ts->st, d.p, d.n, NULL, &res), -EEXIST);
	assert_string_equal(res.table, "t");
	after.p = (uint8_t *)tu_dump_st(ts->st, "t", NULL);
	assert_string_equal((char *)after.p, before);
	free(after.p);
	assert_int_equal(restore(ts->st, d.p, d.n, &over, &res), 0);
	after = dump_all(ts->st);
	assert_int_equal(after.n, d.n);
	assert_memory_equal(after.p, d.p, d.n);
	free(after.p);
	free(before);
	free(d.p);
}

/* RESTORE of every prefix of D (and of D with every byte flipped, if FLIP) into ST fails and changes
 * nothing, hidden records included. */
static void expect_rejected(cs_store *st, const struct mem *d, size_t step, bool flip, uint64_t batch)
{
	cs_restore_opts o = { .overwrite = true, .batch_bytes = batch };
	struct mem before = dump_all(st), after;
	size_t kb[256], ka[256];
	uint8_t *copy = malloc(d->n);

	assert_non_null(copy);
	count_kinds(st, kb);
	for (size_t i = 0; i < d->n; i += step) {
		cs_restore_result res;
		int rc;
		memcpy(copy, d->p, d->n);
		if (flip)
			copy[i] ^= (uint8_t)(1u << (i % 8));
		rc = restore(st, copy, flip ? d->n : i, &o, &res);
		if (rc != -EBADMSG && rc != -ENOTSUP)
			fail_msg("%s at %zu: restore returned %d", flip ? "flip" : "truncation", i, rc);
		assert_true(res.why[0]);
	}
	free(copy);
	after = dump_all(st);
	assert_int_equal(after.n, before.n);
	assert_memory_equal(after.p, before.p, before.n);
	count_kinds(st, ka);
	assert_memory_equal(ka, kb, sizeof(ka));
	assert_int_equal(ka[0], 0);
	free(before.p);
	free(after.p);
}

static void test_restore__every_truncation_and_flip_of_a_small_dump_rejected(void **state)
{
	struct tu_store *ts = *state;
	struct mem d;

	tu_table(ts->st, "t", "f", "maxversions=3", "g", NULL, NULL);
	tu_put(ts->st, "t", "r1", "f", "q", 1, "one");
	tu_put(ts->st, "t", "r1", "g", "", 2, "");
	tu_put(ts->st, "t", "r\n2", "f", "q\xff", 3, "three");
	tu_table(ts->st, "u", NULL);
	d = dump_all(ts->st);
	/* Into the same store, with overwrite: a failed restore must not replace anything. */
	expect_rejected(ts->st, &d, 1, false, 0);
	expect_rejected(ts->st, &d, 1, true, 0);
	free(d.p);
}

static void test_restore__failure_after_committed_batches_leaves_nothing(void **state)
{
	struct tu_store *ts = *state;
	char *dir;
	cs_store *b;
	struct mem d;

	fill(ts->st);
	d = dump_all(ts->st);
	b = fresh(&dir);
	tu_table(b, "keep", "f", NULL, NULL);
	tu_put(b, "keep", "r", "f", "q", 1, "v");
	/* Batches of 64 KiB: truncations late in the dump fail after many commits. */
	expect_rejected(b, &d, d.n / 7 + 1, false, 64 << 10);
	expect_rejected(b, &d, d.n - 1, false, 64 << 10); /* nothing at all, and all but the last byte */
	expect_rejected(b, &d, d.n / 5 + 3, true, 64 << 10);
	free(d.p);
	drop_store(b, dir);
}

static void test_restore__garbage_and_newer_versions(void **state)
{
	struct tu_store *ts = *state;
	cs_restore_result res;
	uint8_t junk[64] = "CELLDUMP\x02\0\0\0";

	assert_int_equal(restore(ts->st, (const uint8_t *)"hello", 5, NULL, &res), -EBADMSG);
	assert_string_equal(res.why, "not a cellfs dump (no CELLDUMP header)");
	assert_int_equal(restore(ts->st, junk, sizeof(junk), NULL, &res), -ENOTSUP);
	assert_string_equal(res.why, "format version 2 is not supported (this build reads 1)");
}

/* A hand-made dump: the header, one frame per PAYLOAD (kinds KINDS), hash-chained. */
static struct mem craft(const char *kinds, const struct mem *payloads, size_t n)
{
	struct mem m = { 0 };
	uint8_t hdr[DF_HDR] = "CELLDUMP\1\0\0\0\0\0\0\0", fh[DF_FRAME_HDR], sum[8];
	uint64_t chain = hash_xxh64(hdr, DF_HDR, 0);
	mem_write(&m, hdr, DF_HDR);
	for (size_t i = 0; i < n; i++) {
		uint8_t *f = malloc(DF_FRAME_HDR + payloads[i].n);
		assert_non_null(f);
		memset(fh, 0, sizeof(fh));
		fh[0] = (uint8_t)kinds[i];
		df_put32(fh + 4, (uint32_t)payloads[i].n);
		df_put32(fh + 8, (uint32_t)payloads[i].n);
		memcpy(f, fh, DF_FRAME_HDR);
		memcpy(f + DF_FRAME_HDR, payloads[i].p, payloads[i].n);
		chain = hash_xxh64(f, DF_FRAME_HDR + payloads[i].n, chain);
		df_put64(sum, chain);
		mem_write(&m, f, DF_FRAME_HDR + payloads[i].n);
		mem_write(&m, sum, 8);
		free(f);
	}
	return m;
}

/* The schema record's attributes are the extension point: a family's value type is "type"; one this
 * build does not know, or an attribute it does not know, is refused, never silently dropped. */
static void test_restore__schema_attributes(void **state)
{
	struct tu_store *ts = *state;
	static uint8_t known[] = "\1t\1\5delim\1/\2\1f\1\2gc\15maxversions=2\1s\2\2gc\5never\4type\6intmax";
	static uint8_t hll[] = "\1t\0\1\1f\1\4type\6inthll";
	static uint8_t colour[] = "\1t\0\1\1f\1\6colour\3red";
	static uint8_t end1[] = { 1, 0, 0, 0 };
	struct mem p[2] = { { .p = known, .n = sizeof(known) - 1 }, { .p = end1, .n = 4 } }, d;
	cs_restore_opts over = { .overwrite = true };
	cs_restore_result res;
	cs_table_info *info;
	cs_txn *txn;

	d = craft("SE", p, 2);
	assert_int_equal(restore(ts->st, d.p, d.n, NULL, &res), 0);
	free(d.p);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_info_get(txn, "t", &info), 0);
	assert_int_equal(info->delim, '/');
	assert_string_equal(info->families[0].gc, "maxversions=2");
	assert_int_equal(info->families[0].type, CS_TYPE_BYTES);
	assert_int_equal(info->families[1].type, CS_TYPE_INTMAX);
	cs_table_info_free(info);
	tu_commit(txn);

	p[0] = (struct mem){ .p = hll, .n = sizeof(hll) - 1 };
	d = craft("SE", p, 2);
	assert_int_equal(restore(ts->st, d.p, d.n, &over, &res), -ENOTSUP);
	assert_string_equal(res.why, "value type \"inthll\" is not supported");
	free(d.p);
	p[0] = (struct mem){ .p = colour, .n = sizeof(colour) - 1 };
	d = craft("SE", p, 2);
	assert_int_equal(restore(ts->st, d.p, d.n, &over, &res), -ENOTSUP);
	assert_string_equal(res.why, "family attribute \"colour\" is not known to this version");
	free(d.p);
}

/* A restore in progress (its staging record names a live process) keeps its cells through cs_gc();
 * one whose process died has them collected. */
static void test_restore__gc_spares_live_staging_only(void **state)
{
	struct tu_store *ts = *state;
	pid_t dead = fork();
	uint8_t sk[10], pid[4], key[64];
	size_t kb[256], ka[256];
	cs_txn *txn;
	size_t kn;

	if (!dead)
		_exit(0);
	assert_true(dead > 0);
	waitpid(dead, NULL, 0);
	txn = tu_begin(ts->st, 0);
	for (uint32_t id = 1000; id <= 1001; id++) {
		memcpy(sk, "Mstage", 6);
		key_put_u32(sk + 6, id);
		key_put_u32(pid, id == 1000 ? (uint32_t)getpid() : (uint32_t)dead);
		assert_int_equal(kv_put(lm_txn_of(txn)->kv, sk, 10, pid, 4), 0);
		kn = key_cell(key, id, CS_STR("r"), "f", CS_STR("q"), 1);
		assert_int_equal(kv_put(lm_txn_of(txn)->kv, key, kn, "\0\1\0", 3), 0);
	}
	tu_commit(txn);
	count_kinds(ts->st, kb);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_gc(txn, NULL, NULL), 0);
	tu_commit(txn);
	count_kinds(ts->st, ka);
	assert_int_equal(ka['d'], kb['d'] - 1);
	assert_int_equal(ka[0], kb[0] - 1);
}

/* SQLite-style: the Nth LMDB or zstd call fails, N upward, with commits after every few cells. Every run
 * ends restored exactly, or refused with the store as it was (hidden records included). */
static void test_restore__every_fault_is_all_or_nothing(void **state)
{
	struct tu_store *ts = *state;
	cs_restore_opts o = { .overwrite = true, .batch_bytes = 200 };
	struct mem d, before;
	size_t kb[256];
	bool fired = true;
	int runs = 0;

	tu_table(ts->st, "t", "f", "maxversions=2", "g", NULL, NULL);
	for (int i = 0; i < 30; i++) {
		char row[16];
		snprintf(row, sizeof(row), "row%d", i);
		tu_put(ts->st, "t", row, i % 2 ? "f" : "g", "q", i, i % 3 ? "value" : "a longer value, compressible? compressible? compressible? compressible? compressible? compressible? compressible?");
	}
	tu_table(ts->st, "u", "f", NULL, NULL);
	d = dump_all(ts->st);
	/* What the store holds before: the same tables, other contents. */
	tu_put(ts->st, "t", "row1", "f", "q", 1000, "changed");
	before = dump_all(ts->st);
	count_kinds(ts->st, kb);
	for (uint64_t n = 1; fired; n++, runs++) {
		cs_restore_result res;
		struct mem now;
		size_t k[256];
		int rc;

		cs_fault_arm(CS_FAULT_LMDB | CS_FAULT_ZSTD, n);
		rc = restore(ts->st, d.p, d.n, &o, &res);
		fired = cs_fault_fired();
		cs_fault_arm(0, 0);
		now = dump_all(ts->st);
		if (rc == 0) {
			assert_int_equal(now.n, d.n);
			assert_memory_equal(now.p, d.p, d.n);
			/* Back to BEFORE for the next run. */
			assert_int_equal(restore(ts->st, before.p, before.n, &o, &res), 0);
			free(now.p);
			continue;
		}
		assert_int_equal(now.n, before.n);
		assert_memory_equal(now.p, before.p, before.n);
		count_kinds(ts->st, k);
		assert_int_equal(k[0], 0);
		assert_int_equal(k['T'], kb['T']);
		free(now.p);
	}
	assert_true(runs > 50);
	free(d.p);
	free(before.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dump__round_trip_is_exact, tu_store_setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_dump__deterministic_and_collected_cells_left_out, tu_store_setup,
						tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_dump__bad_names_write_nothing, tu_store_setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_restore__existing_table_refused_unless_overwrite, tu_store_setup,
						tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_restore__every_truncation_and_flip_of_a_small_dump_rejected,
						tu_store_setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_restore__failure_after_committed_batches_leaves_nothing,
						tu_store_setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_restore__garbage_and_newer_versions, tu_store_setup,
						tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_restore__gc_spares_live_staging_only, tu_store_setup,
						tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_restore__every_fault_is_all_or_nothing, tu_store_setup,
						tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_restore__schema_attributes, tu_store_setup,
						tu_store_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
