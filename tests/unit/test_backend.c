/* test_backend.c — the seam (store/store.c, backend.h): a backend is a folder and a line in the list of
 * backends. This test's list has one line more than store/backends.c's: the test double (dblstore.c),
 * which cellstore.h's calls then reach by its scheme, with the capability mask alone answering what it
 * cannot do. Every backend built in passes backend_check(), and a table that disagrees with its caps
 * does not. */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "dblstore.h"
#include "lm.h"
#include "remote.h"

/* store/backends.c's list, and the double. (This file's list is linked instead of that one.) */
const struct backend_entry backends[] = {
	{ "double", &dbl_backend }, /* tests/unit/dblstore.c */
	{ "bigtable", NULL },
	{ "", &lm_backend },
	{ NULL, NULL },
};

static void test_backend__built_in_tables_agree_with_their_caps(void **state)
{
	const char *why = NULL;

	assert_int_equal(backend_check(&lm_backend, &why), 0);
	assert_int_equal(backend_check(&dbl_backend, &why), 0);
	assert_int_equal(lm_backend.caps & CS_CAP_MAINT, CS_CAP_MAINT);
}

static void test_backend__a_table_that_disagrees_is_refused(void **state)
{
	struct cs_backend bad = dbl_backend;
	const char *why = NULL;

	bad.caps |= CS_CAP_MOVE; /* says it moves, has no move_prefix */
	assert_int_equal(backend_check(&bad, &why), -EINVAL);
	assert_string_equal(why, "move_prefix");
	bad = lm_backend;
	bad.caps &= ~(unsigned)CS_CAP_MAINT; /* has gc and the rest, says it has not */
	assert_int_equal(backend_check(&bad, &why), -EINVAL);
	assert_string_equal(why, "compact");
	bad = dbl_backend;
	bad.scan_next = NULL; /* required */
	assert_int_equal(backend_check(&bad, &why), -EINVAL);
	assert_string_equal(why, "scan_next");
	bad = dbl_backend;
	bad.abi = CS_BACKEND_ABI - 1;
	assert_int_equal(backend_check(&bad, &why), -EINVAL);
}

/* Writes and reads reach the double through cellstore.h; what it cannot do, the seam answers. */
static void test_backend__the_double_serves_cellstore_calls(void **state)
{
	cs_mutation m = { .op = CS_SET_CELL, .family = "f", .qualifier = { "q", 1 }, .ts = 5000,
			  .value = { "hello", 5 } };
	cs_store *st;
	cs_txn *t;
	cs_scan *s;
	const cs_row *r;
	cs_heat *heat;
	char **names, *text;
	size_t n, len;
	uint64_t moved, size;

	assert_int_equal(cs_store_name_kind("double://x"), 1);
	assert_int_equal(cs_store_open("double://x", NULL, &st), 0);
	assert_int_equal(cs_store_caps(st), 0);
	assert_int_equal(cs_txn_begin(st, 0, &t), 0);
	assert_int_equal(cs_table_create(t, "t", '#'), 0);
	assert_int_equal(cs_family_create(t, "t", "f", "never"), 0);
	assert_int_equal(cs_row_mutate(t, "t", (cs_bytes){ "r1", 2 }, &m, 1), 0);
	assert_int_equal(cs_table_list(t, &names, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(names[0], "t");
	cs_strv_free(names, n);
	assert_int_equal(cs_scan_open(t, "t", NULL, &s), 0);
	assert_int_equal(cs_scan_next(s, &r), 1);
	assert_memory_equal(r->key.data, "r1", 2);
	assert_memory_equal(r->cells[0].value.data, "hello", 5);
	assert_int_equal(r->cells[0].ts, 5000);
	assert_int_equal(cs_scan_next(s, &r), 0);
	cs_scan_close(s);

	/* The mask answers, the double is not asked */
	assert_int_equal(cs_move_prefix(t, "t", (cs_bytes){ "r", 1 }, (cs_bytes){ "s", 1 }, 0, &moved), -EXDEV);
	assert_int_equal(cs_table_rename(t, "t", "u"), -EXDEV);
	assert_int_equal(cs_gc(t, "t", NULL), -EOPNOTSUPP);
	assert_int_equal(cs_verify(t, NULL, NULL, NULL), -EOPNOTSUPP);
	assert_int_equal(cs_heat_get(t, "t", &heat), -EOPNOTSUPP);
	assert_int_equal(cs_table_set_keyviz(t, "t", false), -EOPNOTSUPP);
	assert_int_equal(cs_store_size(st, &size), -EOPNOTSUPP);
	assert_int_equal(cs_store_compact(st, "/nonexistent/copy", &size), -EOPNOTSUPP);
	assert_int_equal(cs_heat_flush(st), 0);
	assert_int_equal(cs_store_sync(st), 0);
	assert_true(cs_store_unpin(st));
	assert_int_equal(cs_txn_commit(t), 0);
	assert_int_equal(cs_store_counters(st, &text, &len), 0);
	assert_int_equal(len, 0);
	free(text);
	assert_int_equal(cs_store_version(st), 2);
	cs_store_close(st);
}

/* An as-of store of any backend: read-only, its reads and its tables' creation narrowed by the seam to
 * its time (the double knows nothing of it). Runs after the test above made the double's table. */
static void test_backend__the_seam_narrows_an_as_of_store(void **state)
{
	cs_open_opts asof = { .flags = CS_OPEN_ASOF, .asof = 600 };
	cs_read_opts o = { .ts_start = 100, .ts_end = 5000 };
	cs_table_info *info;
	cs_store *st;
	cs_txn *t;
	cs_scan *s;

	assert_int_equal(cs_store_open("double://x", &asof, &st), 0);
	assert_true(dbl_seen.open_flags & CS_OPEN_ASOF);
	assert_int_equal(cs_txn_begin(st, 0, &t), -EROFS);
	assert_int_equal(cs_txn_begin(st, CS_TXN_RDONLY, &t), 0);
	assert_int_equal(cs_scan_open(t, "t", NULL, &s), 0);
	assert_int_equal(dbl_seen.ts_end, 601); /* every timestamp: up to the store's time */
	cs_scan_close(s);
	assert_int_equal(cs_scan_open(t, "t", &o, &s), 0);
	assert_int_equal(dbl_seen.ts_end, 601);
	cs_scan_close(s);
	assert_int_equal(cs_table_info_get(t, "t", &info), 0);
	assert_int_equal(info->created, 600);
	cs_table_info_free(info);
	cs_txn_abort(t);
	cs_store_close(st);
}

/* A scheme with no backend, built in or module, is refused in one line. */
static void test_backend__an_unknown_scheme_is_refused(void **state)
{
	cs_store *st;

	assert_int_equal(cs_store_open("nosuch://x", NULL, &st), -EPROTONOSUPPORT);
	assert_non_null(cs_last_error());
	assert_non_null(strstr(cs_last_error(), "no backend for nosuch:// stores"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backend__built_in_tables_agree_with_their_caps),
		cmocka_unit_test(test_backend__a_table_that_disagrees_is_refused),
		cmocka_unit_test(test_backend__the_double_serves_cellstore_calls),
		cmocka_unit_test(test_backend__the_seam_narrows_an_as_of_store),
		cmocka_unit_test(test_backend__an_unknown_scheme_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
