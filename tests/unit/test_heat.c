/* test_heat.c — the Key Visualizer's recording (heat.c): the counts after a scripted load are exact;
 * merging keeps totals and key order within the bounds; counts ride on commits (the first, then one a
 * minute) and close, the others to the spool; old minutes are dropped; the table switch stops it;
 * rename keeps and delete drops the records. The clock is the store's test hook: no sleeping. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "heat.h"
#include "heatspool.h"
#include "keys.h"
#include "lmutil.h"

#define MIN_US 60000000LL
static int64_t BASE; /* a minute after now (tables are created at the real time: their minute and later show) */

static int64_t clock_us;
static int64_t test_clock(void *ctx)
{
	(void)ctx;
	return clock_us;
}

static void at_minute(cs_store *st, int64_t minute)
{
	clock_us = minute * MIN_US + 1234;
	cs_heat_set_clock(st, test_clock, NULL);
}

static int setup(void **state)
{
	struct tu_store *ts;
	tu_store_setup(state);
	ts = *state;
	at_minute(ts->st, BASE);
	tu_table(ts->st, "t", "f", NULL, NULL);
	return 0;
}

static void reopen(struct tu_store *ts, unsigned flags)
{
	tu_reopen(ts, flags, 0);
	cs_heat_set_clock(ts->st, test_clock, NULL);
}

static cs_heat *heat_of(cs_store *st, const char *table)
{
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	cs_heat *h = NULL;
	assert_int_equal(cs_heat_get(txn, table, &h), 0);
	cs_txn_abort(txn);
	return h;
}

static const cs_heat_minute *minute_of(const cs_heat *h, int64_t minute)
{
	for (size_t i = 0; i < h->nminutes; i++)
		if (h->minutes[i].minute == minute)
			return &h->minutes[i];
	return NULL;
}

/* The ranges of MINUTE as text: "KEY r/w KEY r/w ...", "" when absent. Caller frees. */
static char *ranges_text(const cs_heat *h, int64_t minute)
{
	const cs_heat_minute *m = minute_of(h, minute);
	struct tu_buf b = { 0 };
	tu_buf_add(&b, "", 0);
	for (size_t i = 0; m && i < m->nranges; i++) {
		char num[64];
		tu_buf_add(&b, i ? " " : "", i ? 1 : 0);
		tu_escape(&b, m->ranges[i].key, m->ranges[i].keylen);
		snprintf(num, sizeof(num), " %llu/%llu", (unsigned long long)m->ranges[i].reads,
			 (unsigned long long)m->ranges[i].writes);
		tu_buf_add(&b, num, strlen(num));
	}
	return b.s;
}

static void expect_minute(cs_store *st, int64_t minute, const char *want)
{
	cs_heat *h = heat_of(st, "t");
	char *got = ranges_text(h, minute);
	assert_string_equal(got, want);
	free(got);
	cs_heat_free(h);
}

static void read_row(cs_store *st, const char *row)
{
	cs_bytes r = CS_STR(row);
	cs_read_opts o = { .row = &r };
	free(tu_dump_st(st, "t", &o));
}

/* 100 writes to rows a#0..a#9 (ten each), 10 reads of rows m#0..m#4 (two each): the minute holds
 * exactly those counts, in key order; the rows' own writes, a minute before, are apart. */
static void test_heat__scripted_load_counts_exactly(void **state)
{
	struct tu_store *ts = *state;
	char row[8];

	at_minute(ts->st, BASE - 5);
	for (int i = 0; i < 5; i++) {
		snprintf(row, sizeof(row), "m#%d", i);
		tu_put(ts->st, "t", row, "f", "q", 1, "v");
	}
	at_minute(ts->st, BASE);
	for (int n = 0; n < 10; n++)
		for (int i = 0; i < 10; i++) {
			snprintf(row, sizeof(row), "a#%d", i);
			tu_put(ts->st, "t", row, "f", "q", 1 + n, "v");
		}
	for (int n = 0; n < 2; n++)
		for (int i = 0; i < 5; i++) {
			snprintf(row, sizeof(row), "m#%d", i);
			read_row(ts->st, row);
		}
	assert_int_equal(cs_heat_flush(ts->st), 0);
	expect_minute(ts->st, BASE - 5, "m#0 0/1 m#1 0/1 m#2 0/1 m#3 0/1 m#4 0/1");
	expect_minute(ts->st, BASE,
		      "a#0 0/10 a#1 0/10 a#2 0/10 a#3 0/10 a#4 0/10 a#5 0/10 a#6 0/10 a#7 0/10 a#8 0/10 a#9 0/10 "
		      "m#0 2/0 m#1 2/0 m#2 2/0 m#3 2/0 m#4 2/0");
	/* A scan of the whole table reads each row once; keys_only too. */
	cs_read_opts ko = { .keys_only = true };
	free(tu_dump_st(ts->st, "t", NULL));
	free(tu_dump_st(ts->st, "t", &ko));
	assert_int_equal(cs_heat_flush(ts->st), 0);
	expect_minute(ts->st, BASE,
		      "a#0 2/10 a#1 2/10 a#2 2/10 a#3 2/10 a#4 2/10 a#5 2/10 a#6 2/10 a#7 2/10 a#8 2/10 a#9 2/10 "
		      "m#0 4/0 m#1 4/0 m#2 4/0 m#3 4/0 m#4 4/0");
}

/* Only the first CS_HEAT_KEY bytes of a key make its bound. */
static void test_heat__long_keys_share_a_bound(void **state)
{
	struct tu_store *ts = *state;
	tu_put(ts->st, "t", "0123456789abcdefXYZ", "f", "q", 1, "v");
	tu_put(ts->st, "t", "0123456789abcdefZZZ", "f", "q", 1, "v");
	tu_put(ts->st, "t", "0123456789abcde", "f", "q", 1, "v");
	assert_int_equal(cs_heat_flush(ts->st), 0);
	expect_minute(ts->st, BASE, "0123456789abcde 0/1 0123456789abcdef 0/2");
}

/* More distinct keys than ranges: at most CS_HEAT_RANGES ranges, strictly in key order, the first bound
 * the smallest key, and every count kept; a second handle's counts of the same minute merge in. */
static void test_heat__merging_keeps_totals_and_order(void **state)
{
	struct tu_store *ts = *state;
	uint64_t seed = 7, reads = 0, writes = 0;
	cs_txn *txn = tu_begin(ts->st, 0);
	char row[32];

	for (int i = 0; i < 1000; i++) {
		snprintf(row, sizeof(row), "k%05llu", (unsigned long long)(tu_rand(&seed) % 100000));
		assert_int_equal(tu_set(txn, "t", CS_STR(row), "f", CS_STR("q"), i, CS_STR("v")), 0);
	}
	tu_commit(txn);
	free(tu_dump_st(ts->st, "t", NULL)); /* (reads: one per row) */
	cs_txn *r = tu_begin(ts->st, CS_TXN_RDONLY);
	cs_scan *s;
	const cs_row *row_;
	cs_read_opts un = { .unrecorded = true };
	uint64_t rows = 0;
	assert_int_equal(cs_scan_open(r, "t", &un, &s), 0);
	while (cs_scan_next(s, &row_) == 1)
		rows++;
	cs_scan_close(s);
	cs_txn_abort(r);
	reopen(ts, 0); /* (written at close) */
	txn = tu_begin(ts->st, 0);
	for (int i = 0; i < 300; i++)
		assert_int_equal(tu_set(txn, "t", CS_STR("k00000"), "f", CS_STR("q"), i, CS_STR("v")), 0);
	tu_commit(txn);
	assert_int_equal(cs_heat_flush(ts->st), 0);

	cs_heat *h = heat_of(ts->st, "t");
	assert_int_equal(h->nminutes, 1);
	const cs_heat_minute *m = &h->minutes[0];
	assert_true(m->nranges > 1 && m->nranges <= CS_HEAT_RANGES);
	for (size_t i = 0; i < m->nranges; i++) {
		reads += m->ranges[i].reads;
		writes += m->ranges[i].writes;
		if (i)
			assert_true(memcmp(m->ranges[i - 1].key, m->ranges[i].key, 6) < 0);
	}
	assert_memory_equal(m->ranges[0].key, "k00000", 6); /* (the hot row of the second handle) */
	assert_int_equal(writes, 1000 + 300);
	assert_int_equal(reads, rows);
	cs_heat_free(h);
}

/* The histogram alone: random keys and counts, into two histograms merged at the end. At most
 * CS_HEAT_RANGES disjoint ranges in key order, and each range's counts are exactly those of the keys it
 * holds: no count is ever moved to a range without its key. */
#define NKEYS 20000
static void test_heat__histogram_bounds(void **state)
{
	(void)state;
	static struct heat_hist a, b;
	static uint8_t keys[NKEYS][CS_HEAT_KEY];
	static size_t keyn[NKEYS];
	static uint64_t cnt[NKEYS];
	uint64_t seed = 11, total = 0, sum = 0;
	uint8_t key[40];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	for (int i = 0; i < NKEYS; i++) {
		size_t n = 1 + tu_rand(&seed) % sizeof(key);
		uint64_t c = tu_rand(&seed) % 5;
		tu_rand_bytes(&seed, key, n, 0);
		if (i % 7 == 0) /* (sequential runs too) */
			key[n > 2 ? n - 1 : 0] = (uint8_t)i;
		heat_hist_add(i % 2 ? &a : &b, key, n, c, 1);
		keyn[i] = n < CS_HEAT_KEY ? n : CS_HEAT_KEY;
		memcpy(keys[i], key, keyn[i]);
		cnt[i] = c + 1;
		total += c + 1;
	}
	assert_int_equal(a.n, CS_HEAT_RANGES);
	heat_hist_merge(&a, &b); /* (ranges of B that meet several of A make them one: fewer, wider) */
	assert_true(a.n >= 1 && a.n <= CS_HEAT_RANGES);
	for (size_t j = 0; j < a.n; j++) {
		const cs_heat_range *r = &a.r[j];
		uint64_t held = 0;
		assert_true(r->keylen >= 1 && r->keylen <= CS_HEAT_KEY && r->lastlen >= 1 && r->lastlen <= CS_HEAT_KEY);
		assert_true(kv_key_cmp(r->key, r->keylen, r->last, r->lastlen) <= 0);
		if (j)
			assert_true(kv_key_cmp(a.r[j - 1].last, a.r[j - 1].lastlen, r->key, r->keylen) < 0);
		for (int i = 0; i < NKEYS; i++)
			if (kv_key_cmp(keys[i], keyn[i], r->key, r->keylen) >= 0 &&
			    kv_key_cmp(keys[i], keyn[i], r->last, r->lastlen) <= 0)
				held += cnt[i];
		assert_int_equal(held, r->reads + r->writes);
		sum += r->reads + r->writes;
	}
	assert_int_equal(sum, total);
}

/* Counts ride on commits: a handle's first commit with counts writes them, later ones in the same
 * minute do not, the first in the next minute does; cs_store_close() writes the rest. */
static void test_heat__written_with_commits_and_at_close(void **state)
{
	struct tu_store *ts = *state;

	tu_put(ts->st, "t", "r1", "f", "q", 1, "v"); /* the handle's first commit with counts */
	expect_minute(ts->st, BASE, "r1 0/1");
	tu_put(ts->st, "t", "r2", "f", "q", 1, "v");
	expect_minute(ts->st, BASE, "r1 0/1");
	reopen(ts, 0); /* close spools it */
	expect_minute(ts->st, BASE, "r1 0/1 r2 0/1");
	tu_put(ts->st, "t", "r3", "f", "q", 1, "v"); /* the new handle's first */
	expect_minute(ts->st, BASE, "r1 0/1 r2 0/1 r3 0/1");
	tu_put(ts->st, "t", "r4", "f", "q", 1, "v");
	expect_minute(ts->st, BASE, "r1 0/1 r2 0/1 r3 0/1");
	at_minute(ts->st, BASE + 1);
	tu_put(ts->st, "t", "r5", "f", "q", 1, "v"); /* the next minute's first */
	expect_minute(ts->st, BASE, "r1 0/1 r2 0/1 r3 0/1 r4 0/1");
	expect_minute(ts->st, BASE + 1, "r5 0/1");
}

/* What a transaction wrote counts only if it commits. */
static void test_heat__aborted_writes_do_not_count(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn = tu_begin(ts->st, 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("x"), "f", CS_STR("q"), 1, CS_STR("v")), 0);
	cs_txn_abort(txn);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("y"), "f", CS_STR("q"), 1, CS_STR("v")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("y"), "nosuch", CS_STR("q"), 1, CS_STR("v")), -ENOENT);
	tu_commit(txn);
	assert_int_equal(cs_heat_flush(ts->st), 0);
	expect_minute(ts->st, BASE, "y 0/1");
}

static uint64_t spool_size(const struct tu_store *ts)
{
	char *path;
	struct stat sb;
	uint64_t n = 0;
	assert_true(asprintf(&path, "%s/%s", ts->dir, HSPOOL_NAME) > 0);
	if (!stat(path, &sb))
		n = (uint64_t)sb.st_size;
	free(path);
	return n;
}

/* Append N bytes of BYTE to TS's spool (damage, or a spool grown large). */
static void spool_junk(const struct tu_store *ts, int byte, size_t n)
{
	char *path, *junk = malloc(n);
	FILE *f;
	assert_non_null(junk);
	memset(junk, byte, n);
	assert_true(asprintf(&path, "%s/%s", ts->dir, HSPOOL_NAME) > 0);
	assert_non_null(f = fopen(path, "ab"));
	assert_int_equal(fwrite(junk, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	free(path);
	free(junk);
}

/* A read-only handle spools its reads (no commit: the store's version stays, and nothing waits for a
 * writer); every handle's cs_heat_get() shows them; the next commit that writes counts takes them into
 * the records, once. Scans marked unrecorded count nothing. */
static void test_heat__read_only_handle_spools_its_counts(void **state)
{
	struct tu_store *ts = *state;
	cs_read_opts un = { .unrecorded = true };
	uint64_t v;

	tu_put(ts->st, "t", "r", "f", "q", 1, "v");
	reopen(ts, CS_OPEN_RDONLY);
	read_row(ts->st, "r");
	read_row(ts->st, "r");
	free(tu_dump_st(ts->st, "t", &un));
	v = cs_store_version(ts->st);
	assert_int_equal(cs_heat_flush(ts->st), 0);
	assert_int_equal(cs_store_version(ts->st), v);
	assert_true(spool_size(ts) > 0);
	expect_minute(ts->st, BASE, "r 2/1");
	read_row(ts->st, "r");
	reopen(ts, 0); /* (the close spools the third read) */
	expect_minute(ts->st, BASE, "r 3/1");
	tu_put(ts->st, "t", "s", "f", "q", 1, "v"); /* the handle's first commit: takes the spool */
	assert_int_equal(spool_size(ts), 0);
	expect_minute(ts->st, BASE, "r 3/1 s 0/1");
	reopen(ts, 0);
	tu_put(ts->st, "t", "s", "f", "q", 1, "v");
	expect_minute(ts->st, BASE, "r 3/1 s 0/2");
	free(tu_dump_st(ts->st, "t", &un));
	assert_int_equal(cs_heat_flush(ts->st), 0);
	expect_minute(ts->st, BASE, "r 3/1 s 0/2");
}

/* A writable handle's flush spools too (another mount would take a commit for a change and drop its
 * caches), until the spool is large: then it commits, and takes the spool. A spool that does not
 * check is read up to the damage, and the commit that takes it drops the rest. */
static void test_heat__flush_spools_until_the_spool_is_large(void **state)
{
	struct tu_store *ts = *state;
	uint64_t v;

	tu_put(ts->st, "t", "r", "f", "q", 1, "v");
	read_row(ts->st, "r");
	v = cs_store_version(ts->st);
	assert_int_equal(cs_heat_flush(ts->st), 0);
	assert_int_equal(cs_store_version(ts->st), v);
	expect_minute(ts->st, BASE, "r 1/1");
	spool_junk(ts, 'x', 100);
	read_row(ts->st, "r");
	assert_int_equal(cs_heat_flush(ts->st), 0); /* (after the damage: not read) */
	expect_minute(ts->st, BASE, "r 1/1");
	spool_junk(ts, 0, HSPOOL_COMMIT);
	read_row(ts->st, "r");
	assert_int_equal(cs_heat_flush(ts->st), 0);
	assert_true(cs_store_version(ts->st) > v);
	assert_int_equal(spool_size(ts), 0);
	expect_minute(ts->st, BASE, "r 2/1");
}

/* With a write transaction of its own open, a handle's flush and close spool: a commit would wait for
 * that transaction, in the same thread, for ever. */
static void test_heat__flush_with_a_write_open_does_not_wait(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *w;

	tu_put(ts->st, "t", "r", "f", "q", 1, "v");
	spool_junk(ts, 0, HSPOOL_COMMIT); /* (a flush would commit, but for the open transaction) */
	read_row(ts->st, "r");
	w = tu_begin(ts->st, 0);
	assert_int_equal(cs_heat_flush(ts->st), 0);
	cs_txn_abort(w);
	assert_true(spool_size(ts) > HSPOOL_COMMIT);
}

/* Minutes older than CS_HEAT_MINUTES go when a later minute is written: the area stays bounded. */
static void test_heat__oldest_minutes_dropped(void **state)
{
	struct tu_store *ts = *state;
	cs_heat *h;

	for (int i = 0; i < 200; i++) {
		at_minute(ts->st, BASE + i);
		tu_put(ts->st, "t", "r", "f", "q", i, "v");
	}
	assert_int_equal(cs_heat_flush(ts->st), 0);
	h = heat_of(ts->st, "t");
	assert_int_equal(h->nminutes, 200);
	assert_int_equal(h->minutes[0].minute, BASE);
	assert_int_equal(h->minutes[199].minute, BASE + 199);
	cs_heat_free(h);
	/* A week after the tenth minute: the first ten are gone. */
	at_minute(ts->st, BASE + 9 + CS_HEAT_MINUTES);
	tu_put(ts->st, "t", "s", "f", "q", 1, "v");
	h = heat_of(ts->st, "t");
	assert_int_equal(h->nminutes, 191);
	assert_int_equal(h->minutes[0].minute, BASE + 10);
	assert_int_equal(h->minutes[190].minute, BASE + 9 + CS_HEAT_MINUTES);
	cs_heat_free(h);
	/* Much later, only the newest minute is left. */
	at_minute(ts->st, BASE + 3 * CS_HEAT_MINUTES);
	tu_put(ts->st, "t", "s", "f", "q", 2, "v");
	h = heat_of(ts->st, "t");
	assert_int_equal(h->nminutes, 1);
	assert_int_equal(h->minutes[0].minute, BASE + 3 * CS_HEAT_MINUTES);
	cs_heat_free(h);
}

/* keyviz off: nothing is counted (counts held are dropped when written), the property survives a
 * reopen and is in the table's info; on again, counting resumes. Verify knows the records. */
static void test_heat__table_switch(void **state)
{
	struct tu_store *ts = *state;
	cs_table_info *info;
	cs_verify_stats vs;
	cs_txn *txn;

	tu_put(ts->st, "t", "w", "f", "q", 1, "v");    /* written: the handle's first commit */
	tu_put(ts->st, "t", "held", "f", "q", 1, "v"); /* held by the handle: dropped when turned off */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_table_set_keyviz(txn, "t", false), 0);
	assert_int_equal(cs_table_set_keyviz(txn, "nosuch", false), -ENOENT);
	tu_commit(txn);
	reopen(ts, 0);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_set_keyviz(txn, "t", true), -EROFS);
	assert_int_equal(cs_table_info_get(txn, "t", &info), 0);
	assert_true(info->keyviz_off);
	cs_table_info_free(info);
	cs_txn_abort(txn);
	tu_put(ts->st, "t", "off", "f", "q", 1, "v");
	read_row(ts->st, "off");
	assert_int_equal(cs_heat_flush(ts->st), 0);
	expect_minute(ts->st, BASE, "w 0/1");

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_table_set_keyviz(txn, "t", true), 0);
	tu_commit(txn);
	tu_put(ts->st, "t", "on", "f", "q", 1, "v");
	assert_int_equal(cs_heat_flush(ts->st), 0);
	expect_minute(ts->st, BASE, "on 0/1 w 0/1");
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_info_get(txn, "t", &info), 0);
	assert_false(info->keyviz_off);
	cs_table_info_free(info);
	assert_int_equal(cs_verify(txn, NULL, NULL, &vs), 0);
	assert_int_equal(vs.problems, 0);
	assert_int_equal(vs.heat, 1);
	cs_txn_abort(txn);
}

/* Records are the table name's: after a rename the new name starts empty (cs_heat_get() of the old one
 * is -ENOENT); a table created later under the old name shows only minutes from its creation on; and
 * cs_gc() of the whole store removes the records of names no table has. */
static void test_heat__rename_delete_and_gc(void **state)
{
	struct tu_store *ts = *state;
	cs_table_info info = { .name = "t", .created = (BASE + 1) * MIN_US };
	cs_verify_stats vs;
	cs_txn *txn;
	cs_heat *h;

	tu_put(ts->st, "t", "r", "f", "q", 1, "v");
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_table_rename(txn, "t", "u"), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_heat_get(txn, "t", &h), -ENOENT);
	cs_txn_abort(txn);
	h = heat_of(ts->st, "u");
	assert_int_equal(h->nminutes, 0);
	cs_heat_free(h);

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_table_create_as(txn, &info), 0);
	assert_int_equal(cs_family_create(txn, "t", "f", NULL), 0);
	tu_commit(txn);
	at_minute(ts->st, BASE + 1);
	tu_put(ts->st, "t", "s", "f", "q", 1, "v");
	h = heat_of(ts->st, "t");
	assert_int_equal(h->nminutes, 1);
	assert_int_equal(h->minutes[0].minute, BASE + 1);
	cs_heat_free(h);

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_table_delete(txn, "t"), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_verify(txn, NULL, NULL, &vs), 0);
	assert_int_equal(vs.heat, 2);
	assert_int_equal(cs_gc(txn, NULL, NULL), 0);
	assert_int_equal(cs_verify(txn, NULL, NULL, &vs), 0);
	assert_int_equal(vs.heat, 0);
	assert_int_equal(vs.problems, 0);
	tu_commit(txn);
}

static void note_problem(void *ctx, const cs_problem *p)
{
	assert_string_equal(p->what, "Key Visualizer record does not decode");
	(*(int *)ctx)++;
}

/* A damaged record is reported by cs_verify() and by cs_heat_get() (-EIO), and replaced when the
 * minute is written again. */
static void test_heat__damaged_record(void **state)
{
	struct tu_store *ts = *state;
	cs_verify_stats vs;
	cs_txn *txn;
	cs_heat *h;
	uint8_t k[64];
	size_t kn;
	int problems = 0;

	memcpy(k, "Mheatt", 6);
	k[6] = 0;
	key_put_u64(k + 7, (uint64_t)BASE);
	kn = 15;
	txn = tu_begin(ts->st, 0);
	assert_int_equal(kv_put(lm_txn_of(txn)->kv, k, kn, "\x01\x05zz", 4), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_heat_get(txn, "t", &h), -EIO);
	assert_int_equal(cs_verify(txn, note_problem, &problems, &vs), 0);
	assert_int_equal(vs.problems, 1);
	assert_int_equal(problems, 1);
	cs_txn_abort(txn);
	tu_put(ts->st, "t", "r", "f", "q", 1, "v");
	reopen(ts, 0);
	expect_minute(ts->st, BASE, "r 0/1");
}

int main(void)
{
	BASE = cs_now_us() / MIN_US + 10;
#define T(f) cmocka_unit_test_setup_teardown(f, setup, tu_store_teardown)
	const struct CMUnitTest tests[] = {
		T(test_heat__scripted_load_counts_exactly),
		T(test_heat__long_keys_share_a_bound),
		T(test_heat__merging_keeps_totals_and_order),
		cmocka_unit_test(test_heat__histogram_bounds),
		T(test_heat__written_with_commits_and_at_close),
		T(test_heat__aborted_writes_do_not_count),
		T(test_heat__read_only_handle_spools_its_counts),
		T(test_heat__flush_spools_until_the_spool_is_large),
		T(test_heat__flush_with_a_write_open_does_not_wait),
		T(test_heat__oldest_minutes_dropped),
		T(test_heat__table_switch),
		T(test_heat__rename_delete_and_gc),
		T(test_heat__damaged_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
