/* test_bt_defer.c — CS_TXN_DEFER's queue (store/bigtable/bt_defer.c) against the emulator, through the
 * backend's own sources: a read of a queued row sends the queue first (another handle, which never saw
 * the queue, finds the row gone once the read returned); a write after a queued delete of the same cell
 * keeps the write; 500 queued deletes are a few MutateRows and no MutateRow; a queue whose send fails
 * (its table deleted meanwhile by another handle) is the error of the next call, once, with its words.
 * Skips (77) without the emulator. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bt_internal.h"
#include "temu.h"

const struct cs_backend *cs_backend_table(void);

static struct temu emu;
static const struct cs_backend *be;
static bt_store *st;    /* the handle that queues */
static bt_store *other; /* another client */

static bt_store *open_store(void)
{
	cs_open_opts opts = { 0 };
	const char *why = NULL;
	void *p;
	if (be->open("bigtable://proj/inst", &opts, &p, &why)) {
		fprintf(stderr, "open: %s\n", why ? why : "failed");
		return NULL;
	}
	return p;
}

/* Counter NAME of S ("bigtable.calls.MutateRows"), 0 when absent. */
static unsigned long counter(bt_store *s, const char *name)
{
	char *text = NULL, *at, key[128];
	size_t len;
	unsigned long n = 0;
	snprintf(key, sizeof(key), "%s ", name);
	assert_int_equal(btr_counters_text(s->c, &text, &len), 0);
	if ((at = strstr(text, key)) && (at == text || at[-1] == '\n'))
		n = strtoul(at + strlen(key), NULL, 10);
	free(text);
	return n;
}

static void create_table(bt_store *s, const char *name)
{
	cs_family_info fam = { .name = "f", .gc = "never", .type = CS_TYPE_BYTES };
	cs_table_info info = { .name = (char *)name, .delim = '#', .nfamilies = 1, .families = &fam };
	void *txn;
	assert_int_equal(be->txn_begin(s, 0, &txn), 0);
	assert_int_equal(be->table_create_as(txn, &info), 0);
	assert_int_equal(be->txn_commit(txn), 0);
}

/* One transaction of S (FLAGS) mutating row KEY of TABLE with M: the commit's result. */
static int mutate(bt_store *s, unsigned flags, const char *table, const char *key, const cs_mutation *m, size_t n)
{
	void *txn;
	int rc;
	assert_int_equal(be->txn_begin(s, flags, &txn), 0);
	rc = be->row_mutate(txn, table, CS_STR(key), m, n);
	if (rc) {
		be->txn_abort(txn);
		return rc;
	}
	return be->txn_commit(txn);
}

static void set_cell(bt_store *s, const char *table, const char *key, const char *value)
{
	cs_mutation m = { .op = CS_SET_CELL, .family = "f", .qualifier = CS_STR("q"), .ts = CS_TS_NOW,
			  .value = CS_STR(value) };
	assert_int_equal(mutate(s, 0, table, key, &m, 1), 0);
}

static int delete_row(bt_store *s, unsigned flags, const char *table, const char *key)
{
	cs_mutation m = { .op = CS_DELETE_ROW };
	return mutate(s, flags, table, key, &m, 1);
}

/* Row KEY of TABLE as S reads it: -1 absent, else its newest f:q value's first byte. */
static int read_row(bt_store *s, const char *table, const char *key)
{
	cs_bytes row = CS_STR(key);
	cs_read_opts o = { .row = &row };
	const cs_row *r;
	void *txn, *scan;
	int rc, v = -1;
	assert_int_equal(be->txn_begin(s, CS_TXN_RDONLY, &txn), 0);
	assert_int_equal(be->scan_open(txn, table, &o, &scan), 0);
	rc = be->scan_next(scan, &r);
	assert_true(rc >= 0);
	if (rc == 1 && r->ncells)
		v = ((const uint8_t *)r->cells[0].value.data)[0];
	be->scan_close(scan);
	be->txn_commit(txn);
	return v;
}

static long count_rows(bt_store *s, const char *table, const char *prefix)
{
	cs_read_opts o = { .prefix = CS_STR(prefix), .keys_only = true };
	const cs_row *r;
	void *txn, *scan;
	long n = 0;
	int rc;
	assert_int_equal(be->txn_begin(s, CS_TXN_RDONLY, &txn), 0);
	assert_int_equal(be->scan_open(txn, table, &o, &scan), 0);
	while ((rc = be->scan_next(scan, &r)) == 1)
		n++;
	assert_int_equal(rc, 0);
	be->scan_close(scan);
	be->txn_commit(txn);
	return n;
}

static void test_bt_defer__a_read_sends_the_queue_first(void **state)
{
	(void)state;
	create_table(st, "rd");
	set_cell(st, "rd", "r1", "a");
	set_cell(st, "rd", "r2", "b");
	assert_int_equal(delete_row(st, CS_TXN_DEFER, "rd", "r2"), 0);
	assert_int_equal(read_row(st, "rd", "r2"), -1); /* this process sees it at once */
	assert_int_equal(read_row(other, "rd", "r2"), -1); /* and it was sent before that read */
	assert_int_equal(read_row(other, "rd", "r1"), 'a');
	assert_true(counter(st, "bigtable.calls.MutateRows") >= 1);
}

static void test_bt_defer__a_write_after_a_queued_delete_stays(void **state)
{
	(void)state;
	cs_mutation del = { .op = CS_DELETE_COLUMN, .family = "f", .qualifier = CS_STR("q") };
	create_table(st, "wr");
	set_cell(st, "wr", "w", "o");
	assert_int_equal(mutate(st, CS_TXN_DEFER, "wr", "w", &del, 1), 0);
	set_cell(st, "wr", "w", "x"); /* (the queue goes first) */
	assert_int_equal(be->sync(st), 0);
	assert_int_equal(read_row(other, "wr", "w"), 'x');
	assert_int_equal(read_row(st, "wr", "w"), 'x');
}

static void test_bt_defer__deletes_go_in_batches(void **state)
{
	(void)state;
	enum { N = 500 };
	void *txn, *bulk;
	unsigned long row0, rows0;
	create_table(st, "many");
	assert_int_equal(be->txn_begin(st, 0, &txn), 0);
	assert_int_equal(be->bulk_open(txn, "many", &bulk), 0);
	for (int i = 0; i < N; i++) {
		char key[16];
		snprintf(key, sizeof(key), "k#%04d", i);
		assert_int_equal(be->bulk_put(bulk, CS_STR(key), "f", CS_STR("q"), 1000, CS_STR("v")), 0);
	}
	be->bulk_close(bulk);
	assert_int_equal(be->txn_commit(txn), 0);
	row0 = counter(st, "bigtable.calls.MutateRow");
	rows0 = counter(st, "bigtable.calls.MutateRows");
	for (int i = 0; i < N; i++) {
		char key[16];
		snprintf(key, sizeof(key), "k#%04d", i);
		assert_int_equal(delete_row(st, CS_TXN_DEFER, "many", key), 0);
	}
	assert_int_equal(be->sync(st), 0);
	assert_int_equal(counter(st, "bigtable.calls.MutateRow"), row0);
	/* (a batch goes 100 ms after its first row: a slow machine makes more, never one per row) */
	assert_true(counter(st, "bigtable.calls.MutateRows") - rows0 >= 1);
	assert_true(counter(st, "bigtable.calls.MutateRows") - rows0 <= N / 2);
	assert_int_equal(count_rows(other, "many", "k#"), 0);
}

static void test_bt_defer__a_failed_send_is_the_next_calls_error_once(void **state)
{
	(void)state;
	void *txn;
	create_table(st, "gone");
	set_cell(st, "gone", "g", "v"); /* (st keeps the table's schema: the queued delete is accepted) */
	assert_int_equal(be->txn_begin(other, 0, &txn), 0);
	assert_int_equal(be->table_delete(txn, "gone"), 0);
	assert_int_equal(be->txn_commit(txn), 0);
	assert_int_equal(delete_row(st, CS_TXN_DEFER, "gone", "g"), 0);
	assert_int_equal(be->sync(st), -ENOENT);
	assert_non_null(be->last_error());
	assert_non_null(strstr(be->last_error(), "1 queued deletes of table gone failed: "));
	assert_non_null(strstr(be->last_error(), "NOT_FOUND"));
	assert_int_equal(be->sync(st), 0); /* once */
}

static int group_setup(void **state)
{
	(void)state;
	if (temu_start(&emu))
		return -1;
	setenv("BIGTABLE_EMULATOR_HOST", emu.addr, 1);
	be = cs_backend_table();
	if (!(st = open_store()) || !(other = open_store()))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (be && st)
		be->close(st);
	if (be && other)
		be->close(other);
	temu_stop(&emu, SIGTERM);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bt_defer__a_read_sends_the_queue_first),
		cmocka_unit_test(test_bt_defer__a_write_after_a_queued_delete_stays),
		cmocka_unit_test(test_bt_defer__deletes_go_in_batches),
		cmocka_unit_test(test_bt_defer__a_failed_send_is_the_next_calls_error_once),
	};
	unsetenv("CELLFS_BT_DEADLINE_MS");
	if (access(temu_path(), X_OK) != 0) {
		printf("SKIP: Bigtable emulator not found (%s)\n", temu_path());
		return 77;
	}
	return cmocka_run_group_tests_name("bt_defer (emulator)", tests, group_setup, group_teardown) ? 1 : 0;
}
