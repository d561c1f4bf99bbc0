/* test_bt_fault.c — out of memory inside the Bigtable module (its allocations go through store/mem.h, so
 * CS_FAULT_ALLOC reaches them), against the emulator through the backend's own sources. For each
 * workload (open and close a store that keeps rows, make a table, write a row, read a table whole and
 * then from the kept rows, list tables, read a table's schema, bulk-load rows, queue deletes and sync),
 * the Nth allocation fails, N = 1, 2, ... until the workload makes fewer: every run ends cleanly (0, or
 * a negative errno, -ENOMEM among them; no crash, and no leak under ASan), and the same workload then
 * runs again, unarmed, with the right result: a failure leaves nothing behind that breaks the next call.
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
static unsigned seq; /* makes each run's table and rows new */

/* A store handle (keeping rows: CS_OPEN_CACHE, for the read-whole and kept-row paths), or a negative
 * errno. */
static int open_store(bt_store **out)
{
	cs_open_opts opts = { .flags = CS_OPEN_CACHE, .version_ttl_ms = 60000 };
	const char *why = NULL;
	return be->open("bigtable://proj/inst", &opts, (void **)out, &why);
}

static int create(bt_store *s, const char *table)
{
	cs_family_info fam = { .name = "f", .gc = "never", .type = CS_TYPE_BYTES };
	cs_table_info info = { .name = (char *)table, .delim = '#', .nfamilies = 1, .families = &fam };
	void *txn;
	int rc = be->txn_begin(s, 0, &txn);
	if (rc)
		return rc;
	if ((rc = be->table_create_as(txn, &info))) {
		be->txn_abort(txn);
		return rc;
	}
	return be->txn_commit(txn);
}

static int put(bt_store *s, unsigned flags, const char *table, const char *row, const char *value)
{
	cs_mutation m = { .op = CS_SET_CELL, .family = "f", .qualifier = CS_STR("q"), .ts = 1000000,
			  .value = CS_STR(value) };
	void *txn;
	int rc = be->txn_begin(s, flags, &txn);
	if (rc)
		return rc;
	if ((rc = be->row_mutate(txn, table, CS_STR(row), &m, 1))) {
		be->txn_abort(txn);
		return rc;
	}
	return be->txn_commit(txn);
}

/* Rows of TABLE (whole rows: every cell read) into *N; their values' bytes summed into *BYTES. */
static int count(bt_store *s, const char *table, size_t *n, size_t *bytes)
{
	cs_read_opts o = { 0 };
	const cs_row *row;
	void *txn, *scan;
	int rc;
	*n = *bytes = 0;
	if ((rc = be->txn_begin(s, CS_TXN_RDONLY, &txn)))
		return rc;
	if (!(rc = be->scan_open(txn, table, &o, &scan))) {
		while ((rc = be->scan_next(scan, &row)) > 0) {
			(*n)++;
			for (size_t i = 0; i < row->ncells; i++)
				*bytes += row->cells[i].value.len;
		}
		be->scan_close(scan);
	}
	be->txn_abort(txn);
	return rc < 0 ? rc : 0;
}

/* ---- the workloads: each returns what its calls returned (0 or the first negative errno) */

static char table[64];

static int w_open_close(bt_store *unused)
{
	bt_store *s;
	int rc = open_store(&s);
	(void)unused;
	if (!rc)
		be->close(s);
	return rc;
}

static int w_create(bt_store *s)
{
	char name[64];
	snprintf(name, sizeof(name), "made%u", ++seq);
	return create(s, name);
}

static int w_write(bt_store *s)
{
	char row[64];
	snprintf(row, sizeof(row), "w#%u", ++seq);
	return put(s, 0, table, row, "value");
}

/* A table read whole by a store that keeps rows, then read again from what it kept. */
static int w_read_twice(bt_store *unused)
{
	bt_store *s;
	size_t n, bytes, n2, bytes2;
	int rc = open_store(&s);
	(void)unused;
	if (rc)
		return rc;
	if (!(rc = count(s, table, &n, &bytes)) && !(rc = count(s, table, &n2, &bytes2)))
		assert_true(n == n2 && bytes == bytes2);
	be->close(s);
	return rc;
}

static int w_list(bt_store *s)
{
	char **names = NULL;
	size_t n = 0;
	void *txn;
	int rc = be->txn_begin(s, CS_TXN_RDONLY, &txn);
	if (rc)
		return rc;
	if (!(rc = be->table_list(txn, &names, &n))) {
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
	}
	be->txn_abort(txn);
	return rc;
}

static int w_info(bt_store *unused)
{
	bt_store *s; /* (a fresh handle: its schema cache is empty) */
	cs_table_info *info = NULL;
	void *txn;
	int rc = open_store(&s);
	(void)unused;
	if (rc)
		return rc;
	if (!(rc = be->txn_begin(s, CS_TXN_RDONLY, &txn))) {
		if (!(rc = be->table_info_get(txn, table, &info)))
			cs_table_info_free(info);
		be->txn_abort(txn);
	}
	be->close(s);
	return rc;
}

static int w_bulk(bt_store *s)
{
	char row[64];
	void *txn, *bulk;
	int rc = be->txn_begin(s, 0, &txn), rc2;
	if (rc)
		return rc;
	if ((rc = be->bulk_open(txn, table, &bulk))) {
		be->txn_abort(txn);
		return rc;
	}
	seq++;
	for (unsigned i = 0; i < 20 && !rc; i++) {
		snprintf(row, sizeof(row), "b%u#%u", seq, i);
		rc = be->bulk_put(bulk, CS_STR(row), "f", CS_STR("q"), 1000000, CS_STR("bulk value"));
	}
	rc2 = be->bulk_flush(bulk);
	be->bulk_close(bulk);
	rc = rc ? rc : rc2;
	rc2 = be->txn_commit(txn);
	return rc ? rc : rc2;
}

static int w_defer(bt_store *s)
{
	char row[64];
	int rc = 0;
	seq++;
	for (unsigned i = 0; i < 5 && !rc; i++) {
		snprintf(row, sizeof(row), "d%u#%u", seq, i);
		if (!(rc = put(s, 0, table, row, "x"))) {
			cs_mutation del = { .op = CS_DELETE_ROW };
			void *txn;
			if ((rc = be->txn_begin(s, CS_TXN_DEFER, &txn)))
				break;
			if ((rc = be->row_mutate(txn, table, CS_STR(row), &del, 1))) {
				be->txn_abort(txn);
				break;
			}
			rc = be->txn_commit(txn);
		}
	}
	int rc2 = be->sync(s);
	return rc ? rc : rc2;
}

/* Runs W with the Nth allocation failing, N = 1, 2, ..., until it makes fewer; each run must end
 * cleanly, and the run after it, unarmed, must succeed. Returns how many runs failed with -ENOMEM. */
static unsigned each_allocation(const char *what, int (*w)(bt_store *), bt_store *s)
{
	unsigned enomem = 0, n;
	for (n = 1; n < 5000; n++) {
		cs_fault_arm(CS_FAULT_ALLOC, n);
		int rc = w(s);
		bool fired = cs_fault_fired();
		cs_fault_arm(0, 0);
		if (rc == -ENOMEM)
			enomem++;
		if (rc && rc != -ENOMEM && rc != -EIO)
			fail_msg("%s, allocation %u failing: %s", what, n, strerror(-rc));
		if (be->sync)
			be->sync(s); /* (what a failed run queued is sent, or its failure reported, before the check) */
		rc = w(s);
		if (rc)
			fail_msg("%s after allocation %u failed: %s", what, n, strerror(-rc));
		if (!fired)
			break;
	}
	assert_true(n > 1); /* (the workload allocates in the module) */
	printf("%s: %u allocations, %u runs -ENOMEM\n", what, n - 1, enomem);
	return enomem;
}

static void test_bt_fault__each_allocation_fails_cleanly(void **state)
{
	static const struct {
		const char *what;
		int (*w)(bt_store *);
	} loads[] = {
		{ "open and close", w_open_close }, { "create a table", w_create }, { "write a row", w_write },
		{ "read whole, then kept", w_read_twice }, { "list tables", w_list }, { "table info", w_info },
		{ "bulk load", w_bulk }, { "queued deletes", w_defer },
	};
	bt_store *s;
	unsigned enomem = 0;
	assert_int_equal(open_store(&s), 0);
	snprintf(table, sizeof(table), "faults");
	assert_int_equal(create(s, table), 0);
	for (unsigned i = 0; i < 30; i++) {
		char row[32];
		snprintf(row, sizeof(row), "r#%02u", i);
		assert_int_equal(put(s, 0, table, row, "a value of some length"), 0);
	}
	for (size_t i = 0; i < sizeof(loads) / sizeof(loads[0]); i++)
		enomem += each_allocation(loads[i].what, loads[i].w, s);
	assert_true(enomem > 0);
	be->close(s);
}

static int group_setup(void **state)
{
	be = cs_backend_table();
	if (temu_start(&emu))
		return -1;
	setenv("BIGTABLE_EMULATOR_HOST", emu.addr, 1);
	return 0;
}

static int group_teardown(void **state)
{
	temu_stop(&emu, SIGTERM);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bt_fault__each_allocation_fails_cleanly),
	};
	if (access(temu_path(), X_OK) != 0) {
		printf("SKIP: Bigtable emulator not found (%s)\n", temu_path());
		return 77;
	}
	unsetenv("CELLFS_BT_DEADLINE_MS");
	return cmocka_run_group_tests_name("bt_fault (emulator)", tests, group_setup, group_teardown) ? 1 : 0;
}
