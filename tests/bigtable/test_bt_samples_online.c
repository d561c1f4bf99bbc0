/* test_bt_samples_online.c — a table's row-key samples from the emulator through the backend itself
 * (store/bigtable/bt_samples.c, linked with the module's sources): the bound of the whole table and of
 * each prefix's range against the bytes loaded there, the per-store cache (a second get within the
 * minute makes no SampleRowKeys call; bt_samples_forget, and deleting and making the table again, make
 * the next get call), errors (a missing table, an instance that cannot be reached), and threads sharing the cache. Skips (77) without the emulator. */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bt_internal.h"
#include "temu.h"

const struct cs_backend *cs_backend_table(void);

#define PREFIXES 20
#define ROWS 500 /* per prefix */

static struct temu emu;
static const struct cs_backend *be;
static bt_store *st;
/* What "sized" holds: per prefix, the bytes of its cells (key + family + qualifier + value) and of their
 * values alone, which is what the emulator counts in its offsets (bttest's row size). */
static uint64_t prefix_bytes[PREFIXES], prefix_values[PREFIXES], table_bytes, table_values;

/* The SampleRowKeys calls st made so far (its counters). */
static unsigned long calls(void)
{
	static const char name[] = "bigtable.calls.SampleRowKeys ";
	char *text = NULL, *at;
	size_t len;
	unsigned long n = 0;
	assert_int_equal(btr_counters_text(st->c, &text, &len), 0);
	if ((at = strstr(text, name)))
		n = strtoul(at + sizeof(name) - 1, NULL, 10);
	free(text);
	return n;
}

static int create_table(const char *name)
{
	cs_family_info fam = { .name = "f", .gc = "maxversions=1", .type = CS_TYPE_BYTES };
	cs_table_info info = { .name = (char *)name, .delim = '#', .nfamilies = 1, .families = &fam };
	void *txn;
	int rc;
	assert_int_equal(be->txn_begin(st, 0, &txn), 0);
	rc = be->table_create_as(txn, &info);
	assert_int_equal(be->txn_commit(txn), rc);
	return rc;
}

/* Table "sized": PREFIXES x ROWS rows "pNN#RRRR", one cell f:v of 90 to 110 bytes each. */
static void load(void)
{
	void *txn, *bulk;
	uint8_t value[128];
	assert_int_equal(create_table("sized"), 0);
	assert_int_equal(be->txn_begin(st, 0, &txn), 0);
	assert_int_equal(be->bulk_open(txn, "sized", &bulk), 0);
	for (int p = 0; p < PREFIXES; p++)
		for (int r = 0; r < ROWS; r++) {
			char key[16];
			size_t vn = 90 + (size_t)((p * 7 + r * 13) % 21);
			int kn = snprintf(key, sizeof(key), "p%02d#%04d", p, r);
			for (size_t i = 0; i < vn; i++)
				value[i] = (uint8_t)(p + r + i);
			assert_int_equal(be->bulk_put(bulk, (cs_bytes){ key, (size_t)kn }, "f", (cs_bytes){ "v", 1 },
						      1000000, (cs_bytes){ value, vn }), 0);
			prefix_bytes[p] += (uint64_t)kn + 1 + 1 + vn;
			prefix_values[p] += vn;
		}
	assert_int_equal(be->bulk_flush(bulk), 0);
	be->bulk_close(bulk);
	assert_int_equal(be->txn_commit(txn), 0);
	for (int p = 0; p < PREFIXES; p++) {
		table_bytes += prefix_bytes[p];
		table_values += prefix_values[p];
	}
}

/* The largest gap between neighbouring samples of S, the first counted from 0. */
static uint64_t largest_gap(const struct bt_samples *s)
{
	uint64_t prev = 0, gap = 0;
	for (size_t i = 0; i < bt_samples_count(s); i++) {
		uint64_t o = bt_samples_offset(s, i);
		if (o - prev > gap)
			gap = o - prev;
		prev = o;
	}
	return gap;
}

/* The bound of the whole table and of each prefix's range is at least what is there and at most four
 * times that plus a gap before and after the range (the last prefix: plus the allowance after the last
 * sample when the server sent no end marker). "What is there" is in the server's units: the emulator's
 * offsets count values only (bttest's row size), so the bound is checked against the values' bytes; and
 * the cells' whole bytes (names too) are at most the values' bytes plus what names add. */
static void test_bt_samples__bound_holds_a_loaded_table(void **state)
{
	(void)state;
	struct bt_samples *s;
	uint64_t b;
	assert_int_equal(bt_samples_get(st, "sized", &s), 0);
	uint64_t gap = largest_gap(s), tail = gap > BT_SAMPLES_TAIL_MIN ? gap : BT_SAMPLES_TAIL_MIN;
	print_message("%zu samples, the last at %llu, largest gap %llu, end marker %s (%llu); %llu bytes of "
		      "cells, %llu of values\n",
		      bt_samples_count(s),
		      bt_samples_count(s) ? (unsigned long long)bt_samples_offset(s, bt_samples_count(s) - 1) : 0ull,
		      (unsigned long long)gap, bt_samples_has_end(s) ? "yes" : "no",
		      (unsigned long long)bt_samples_size(s), (unsigned long long)table_bytes,
		      (unsigned long long)table_values);
	assert_true(bt_samples_count(s) > 0);
	assert_int_equal(bt_samples_bound(s, NULL, 0, NULL, 0, &b), 0);
	if (b < table_values || b > 4 * table_bytes + (bt_samples_has_end(s) ? 0 : tail))
		fail_msg("the whole table: bound %llu for %llu bytes of values, %llu of cells", (unsigned long long)b,
			 (unsigned long long)table_values, (unsigned long long)table_bytes);
	for (int p = 0; p < PREFIXES; p++) {
		char lo[8], hi[8];
		snprintf(lo, sizeof(lo), "p%02d#", p);
		snprintf(hi, sizeof(hi), "p%02d$", p); /* '#' + 1: the end of the prefix */
		assert_int_equal(bt_samples_bound(s, lo, 4, hi, 4, &b), 0);
		uint64_t most = 4 * prefix_bytes[p] + gap + (p == PREFIXES - 1 && !bt_samples_has_end(s) ? tail : gap);
		if (b < prefix_values[p] || b > most)
			fail_msg("prefix %s: bound %llu for %llu bytes of values (at most %llu)", lo,
				 (unsigned long long)b, (unsigned long long)prefix_values[p], (unsigned long long)most);
	}
	/* a range inside one prefix, and one across three */
	assert_int_equal(bt_samples_bound(s, "p07#0100", 8, "p07#0400", 8, &b), 0);
	assert_true(b <= prefix_bytes[7] + 2 * gap);
	assert_int_equal(bt_samples_bound(s, "p03#", 4, "p06#", 4, &b), 0);
	assert_true(b >= prefix_values[3] + prefix_values[4] + prefix_values[5]);
	bt_samples_put(s);
}

static void test_bt_samples__cached_until_forgotten(void **state)
{
	(void)state;
	struct bt_samples *a, *b;
	bt_samples_forget(st, "sized");
	unsigned long n = calls();
	assert_int_equal(bt_samples_get(st, "sized", &a), 0);
	assert_int_equal(calls(), n + 1);
	assert_int_equal(bt_samples_get(st, "sized", &b), 0); /* within the minute: no call */
	assert_int_equal(calls(), n + 1);
	assert_ptr_equal(a, b);
	bt_samples_put(b);
	bt_samples_forget(st, "sized");
	assert_int_equal(bt_samples_get(st, "sized", &b), 0);
	assert_int_equal(calls(), n + 2);
	bt_samples_put(b);
	bt_samples_put(a); /* (a reference outlives its forgetting) */

	/* another table's samples are its own; deleting and making it again forgets them */
	uint64_t bytes;
	assert_int_equal(create_table("again"), 0);
	assert_int_equal(bt_samples_get(st, "again", &a), 0);
	assert_int_equal(calls(), n + 3);
	assert_int_equal(bt_samples_bound(a, NULL, 0, NULL, 0, &bytes), 0);
	assert_int_equal(bytes, 0); /* empty */
	bt_samples_put(a);
	void *txn;
	assert_int_equal(be->txn_begin(st, 0, &txn), 0);
	assert_int_equal(be->table_delete(txn, "again"), 0);
	assert_int_equal(be->txn_commit(txn), 0);
	assert_int_equal(bt_samples_get(st, "again", &a), -ENOENT);
	assert_int_equal(calls(), n + 4);
	assert_int_equal(create_table("again"), 0);
	assert_int_equal(bt_samples_get(st, "again", &a), 0);
	assert_int_equal(calls(), n + 5);
	bt_samples_put(a);
	assert_int_equal(bt_samples_get(st, "sized", &b), 0); /* "sized" still cached */
	assert_int_equal(calls(), n + 5);
	bt_samples_put(b);
}

static void test_bt_samples__errors(void **state)
{
	(void)state;
	struct bt_samples *s = (struct bt_samples *)1;
	unsigned long n = calls();
	bt_clear_error();
	assert_int_equal(bt_samples_get(st, "nosuch", &s), -ENOENT);
	assert_null(s);
	const char *why = be->last_error();
	assert_non_null(why);
	if (!strstr(why, "NOT_FOUND") || !strstr(why, emu.addr))
		fail_msg("the error says: %s", why);
	assert_int_equal(bt_samples_get(st, "nosuch", &s), -ENOENT); /* an error is not cached */
	assert_int_equal(calls(), n + 2);
	assert_int_equal(bt_samples_get(st, "bad name", &s), -EINVAL);
	assert_int_equal(bt_samples_get(st, BT_META_TABLE, &s), -ENOENT);
	assert_int_equal(calls(), n + 2);
}

/* A loopback port where nothing listens. */
static int dead_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* An instance that cannot be reached: -EIO, the error naming the address and UNAVAILABLE; nothing kept,
 * so the next get calls again. */
static void test_bt_samples__unreachable_instance_is_eio(void **state)
{
	(void)state;
	cs_open_opts opts = { .deadline_ms = 5000 };
	char addr[64];
	const char *why = NULL;
	void *p;
	struct bt_samples *s;
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", dead_port());
	setenv("BIGTABLE_EMULATOR_HOST", addr, 1);
	assert_int_equal(be->open("bigtable://proj/inst", &opts, &p, &why), 0);
	setenv("BIGTABLE_EMULATOR_HOST", emu.addr, 1);
	bt_store *dead = p;
	for (int i = 0; i < 2; i++) {
		bt_clear_error();
		assert_int_equal(bt_samples_get(dead, "sized", &s), -EIO);
		const char *msg = be->last_error();
		assert_non_null(msg);
		if (!strstr(msg, addr) || (!strstr(msg, "UNAVAILABLE") && !strstr(msg, "DEADLINE_EXCEEDED")))
			fail_msg("the error says: %s", msg);
	}
	be->close(dead);
}

#define THREADS 4
#define ROUNDS 100

static void *sampler(void *arg)
{
	long id = (long)arg, bad = 0;
	for (int i = 0; i < ROUNDS; i++) {
		struct bt_samples *s;
		uint64_t b;
		if (id == 0 && i % 10 == 0)
			bt_samples_forget(st, "sized");
		if (bt_samples_get(st, "sized", &s) || bt_samples_bound(s, NULL, 0, NULL, 0, &b) || b < table_values)
			bad++;
		else
			bt_samples_put(s);
	}
	return (void *)bad;
}

/* Threads get, bound and put one table's samples while one of them forgets it now and then. */
static void test_bt_samples__threads_share_the_cache(void **state)
{
	(void)state;
	pthread_t th[THREADS];
	for (long i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, sampler, (void *)i), 0);
	for (int i = 0; i < THREADS; i++) {
		void *bad;
		pthread_join(th[i], &bad);
		assert_int_equal((long)bad, 0);
	}
}

static int group_setup(void **state)
{
	(void)state;
	cs_open_opts opts = { 0 };
	const char *why = NULL;
	void *p;
	if (temu_start(&emu))
		return -1;
	setenv("BIGTABLE_EMULATOR_HOST", emu.addr, 1);
	be = cs_backend_table();
	if (be->open("bigtable://proj/inst", &opts, &p, &why)) {
		fprintf(stderr, "open: %s\n", why ? why : "failed");
		return -1;
	}
	st = p;
	load();
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (be && st)
		be->close(st);
	temu_stop(&emu, SIGTERM);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bt_samples__bound_holds_a_loaded_table),
		cmocka_unit_test(test_bt_samples__cached_until_forgotten),
		cmocka_unit_test(test_bt_samples__errors),
		cmocka_unit_test(test_bt_samples__unreachable_instance_is_eio),
		cmocka_unit_test(test_bt_samples__threads_share_the_cache),
	};
	unsetenv("CELLFS_BT_DEADLINE_MS");
	if (access(temu_path(), X_OK) != 0) {
		printf("SKIP: Bigtable emulator not found (%s)\n", temu_path());
		return 77;
	}
	return cmocka_run_group_tests_name("bt_samples (emulator)", tests, group_setup, group_teardown) ? 1 : 0;
}
