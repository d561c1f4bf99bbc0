/* test_fault.c — fault injection as in SQLite: make the Nth LMDB call, zstd call or store allocation
 * fail, for N = 1, 2, ... until a workload runs without reaching the Nth call. Every run must end in
 * success or a clean error (-EIO for LMDB and zstd, -ENOMEM for an allocation), and the store, reopened,
 * must then hold exactly the state before the workload (it failed) or after it (it succeeded) — a
 * multi-mutation row write is whole or absent, never half-written — and pass cs_verify(). Leaks are
 * LeakSanitizer's to find (the unit suite runs under ASan in tests/check). */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_N 200000 /* a workload that never stops reaching new calls is a bug */

/* The whole store as text: tables, their schema, and every cell. */
static char *store_state(cs_store *st)
{
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	char **names, *s = strdup("");
	size_t n;

	assert_int_equal(cs_table_list(txn, &names, &n), 0);
	for (size_t i = 0; i < n; i++) {
		cs_table_info *info;
		char *d, *ns;
		assert_int_equal(cs_table_info_get(txn, names[i], &info), 0);
		d = tu_dump(txn, names[i], NULL);
		assert_true(asprintf(&ns, "%s== %s (%c)\n", s, names[i], info->delim) > 0);
		free(s);
		s = ns;
		for (size_t f = 0; f < info->nfamilies; f++) {
			assert_true(asprintf(&ns, "%s%s: %s %s\n", s, info->families[f].name, info->families[f].gc,
					     cs_value_type_name(info->families[f].type)) > 0);
			free(s);
			s = ns;
		}
		assert_true(asprintf(&ns, "%s%s", s, d) > 0);
		free(s);
		free(d);
		s = ns;
		cs_table_info_free(info);
	}
	cs_strv_free(names, n);
	tu_commit(txn);
	return s;
}

typedef void (*prepare_fn)(cs_store *st);
typedef int (*workload_fn)(cs_store *st);

/* The error a fault of KINDS may cause: -EIO (LMDB, zstd) or -ENOMEM (an allocation). */
static bool clean_error(unsigned kinds, int rc)
{
	return (rc == -EIO && (kinds & (CS_FAULT_LMDB | CS_FAULT_ZSTD))) || (rc == -ENOMEM && (kinds & CS_FAULT_ALLOC));
}

/* Finish TXN after RC: on success commit; on failure the transaction must have failed as a whole
 * (commit returns the same error) unless the error left it usable, which faults never do. */
static int finish(cs_txn *txn, int rc)
{
	if (rc >= 0)
		return cs_txn_commit(txn);
	int crc = cs_txn_commit(txn);
	if (crc != rc)
		fail_msg("a failed call returned %d but commit returned %d", rc, crc);
	return rc;
}

static void report_problem(void *ctx, const cs_problem *p)
{
	print_message("%s: verify: %s %s\n", (const char *)ctx, p->table ? p->table : "-", p->what);
}

/* The store must pass cs_verify() with no problem. Returns its orphaned cells (of deleted tables or
 * unfinished restores), which the caller compares with the state it expects. */
static uint64_t verify_store(cs_store *st, const char *label, uint64_t n)
{
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	cs_verify_stats vs;

	assert_int_equal(cs_verify(txn, report_problem, (void *)label, &vs), 0);
	cs_txn_abort(txn);
	if (vs.problems)
		fail_msg("%s, fault at call %llu: verify found %llu problems", label, (unsigned long long)n,
			 (unsigned long long)vs.problems);
	return vs.orphans;
}

struct fault_stats {
	uint64_t runs, failed, injected;
};

static uint64_t total_injected; /* over the whole binary, printed at the end */

/* Run WORKLOAD on a fresh store prepared by PREPARE with the Nth call of KINDS failing, for every N.
 * MASK (may be NULL) rewrites a state's text before comparison (timestamps of "now"). */
static struct fault_stats fault_loop(const char *name, unsigned kinds, prepare_fn prepare, workload_fn workload,
				     char *(*mask)(char *))
{
	struct fault_stats fs = { 0 };
	char *before = NULL, *after = NULL;
	uint64_t orphans_before = 0, orphans_after = 0, orphans;

	for (uint64_t n = 0; n < MAX_N; n++) {
		struct tu_store *ts;
		void *state;
		char *now;
		bool fired;
		int rc;

		tu_store_setup(&state);
		ts = state;
		if (prepare)
			prepare(ts->st);
		if (!n) {
			before = store_state(ts->st);
			orphans_before = verify_store(ts->st, name, n);
		}
		cs_fault_arm(kinds, n);
		rc = workload(ts->st);
		fired = cs_fault_fired();
		cs_fault_arm(0, 0);

		if (rc != 0 && !clean_error(kinds, rc))
			fail_msg("%s, fault at call %llu: returned %d (%s), not a clean error", name,
				 (unsigned long long)n, rc, strerror(-rc));
		if (!n && rc)
			fail_msg("%s: fails without any fault: %d", name, rc);
		if (!fired && n && rc)
			fail_msg("%s: failed (%d) though no fault fired", name, rc);
		tu_reopen(ts, 0, 0);
		now = store_state(ts->st);
		if (mask)
			now = mask(now);
		if (!n) {
			if (mask)
				before = mask(before);
			after = now;
			now = NULL;
		} else if (strcmp(now, rc ? before : after)) {
			fail_msg("%s, fault at call %llu (%s): the store holds neither the state before nor after:\n%s\n"
				 "--- want\n%s", name, (unsigned long long)n, rc ? "failed" : "succeeded", now,
				 rc ? before : after);
		}
		orphans = verify_store(ts->st, name, n);
		if (!n)
			orphans_after = orphans;
		else if (orphans != (rc ? orphans_before : orphans_after))
			fail_msg("%s, fault at call %llu: %llu orphaned cells (a failed restore left its staging?)",
				 name, (unsigned long long)n, (unsigned long long)orphans);
		free(now);
		tu_store_teardown(&state);
		fs.runs++;
		fs.failed += rc != 0;
		fs.injected += fired;
		if (n && !fired)
			break; /* the workload no longer reaches call N */
	}
	assert_true(fs.runs < MAX_N);
	total_injected += fs.injected;
	free(before);
	free(after);
	return fs;
}

/* ---- workloads ---- */

static uint8_t big_row[CS_MAX_ROW_KEY], big_q[CS_MAX_QUALIFIER], text[8192];

static void init_data(void)
{
	uint64_t seed = 31;
	tu_rand_bytes(&seed, big_row, sizeof(big_row), 1);
	tu_rand_bytes(&seed, big_q, sizeof(big_q), 1);
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (uint8_t)"compressible text, #row#key "[i % 28];
}

static void prepare_table(cs_store *st)
{
	cs_txn *txn = tu_begin(st, 0);
	const cs_mutation m[] = {
		{ .op = CS_SET_CELL, .family = "a", .qualifier = CS_STR("old"), .ts = 1, .value = CS_STR("old") },
		{ .op = CS_SET_CELL, .family = "c", .qualifier = CS_STR("z"), .ts = 1, .value = CS_BYTES(text, 4000) },
	};
	assert_int_equal(cs_table_create(txn, "t", 0), 0);
	assert_int_equal(cs_family_create(txn, "t", "a", NULL), 0);
	assert_int_equal(cs_family_create(txn, "t", "b", "maxversions=2"), 0);
	assert_int_equal(cs_family_create(txn, "t", "c", NULL), 0);
	assert_int_equal(cs_row_mutate(txn, "t", CS_STR("r"), m, 2), 0);
	assert_int_equal(cs_row_mutate(txn, "t", CS_BYTES(big_row, sizeof(big_row)), m, 2), 0);
	assert_int_equal(cs_row_mutate(txn, "t", CS_STR("keep"), m, 2), 0);
	for (int i = 0; i < 10; i++) {
		char row[8];
		snprintf(row, sizeof(row), "k%d", i);
		assert_int_equal(cs_row_mutate(txn, "t", CS_STR(row), m, 2), 0);
	}
	tu_commit(txn);
}

/* One row, many mutations: small and compressed values, a full-length qualifier, deletions. */
static int row_mutation(cs_store *st, cs_bytes row)
{
	const cs_mutation m[] = {
		{ .op = CS_SET_CELL, .family = "a", .qualifier = CS_STR("x"), .ts = 5, .value = CS_STR("small") },
		{ .op = CS_SET_CELL, .family = "b", .qualifier = CS_STR("big"), .ts = 5, .value = CS_BYTES(text, sizeof(text)) },
		{ .op = CS_DELETE_COLUMN, .family = "a", .qualifier = CS_STR("old") },
		{ .op = CS_SET_CELL, .family = "a", .qualifier = CS_BYTES(big_q, sizeof(big_q)), .ts = 7,
		  .value = CS_BYTES(text, 300) },
		{ .op = CS_DELETE_FAMILY, .family = "c" },
		{ .op = CS_SET_CELL, .family = "c", .qualifier = CS_BYTES("\0\xff#", 3), .ts = 9, .value = CS_BYTES(text, 129) },
		{ .op = CS_SET_CELL, .family = "b", .qualifier = CS_STR("big"), .ts = 6, .value = CS_BYTES(text, 2000) },
	};
	cs_txn *txn;
	int rc = cs_txn_begin(st, 0, &txn);
	if (rc)
		return rc;
	return finish(txn, cs_row_mutate(txn, "t", row, m, TU_ARRAY_SIZE(m)));
}

static int row_mutation_short(cs_store *st)
{
	return row_mutation(st, CS_STR("r"));
}

static int row_mutation_long(cs_store *st)
{
	return row_mutation(st, CS_BYTES(big_row, sizeof(big_row)));
}

/* Many rows in one transaction. */
static int bulk(cs_store *st)
{
	cs_txn *txn;
	int rc = cs_txn_begin(st, 0, &txn);
	if (rc)
		return rc;
	for (int i = 0; i < 20 && !rc; i++) {
		char row[16];
		const cs_mutation m[] = {
			{ .op = CS_SET_CELL, .family = "a", .qualifier = CS_STR("q"), .ts = i,
			  .value = CS_BYTES(text, 100 + 50 * (size_t)i) },
			{ .op = CS_DELETE_ROW },
			{ .op = CS_SET_CELL, .family = "b", .qualifier = CS_STR("q"), .ts = i, .value = CS_BYTES(text, 200) },
		};
		snprintf(row, sizeof(row), "bulk%02d", i);
		rc = cs_row_mutate(txn, "t", CS_STR(row), m, 3);
	}
	return finish(txn, rc);
}

static int rmw(cs_store *st)
{
	const cs_predicate p = { "a", CS_STR("old"), NULL };
	const cs_mutation t_m[] = {
		{ .op = CS_SET_CELL, .family = "b", .qualifier = CS_STR("matched"), .ts = 1, .value = CS_BYTES(text, 1000) },
		{ .op = CS_DELETE_COLUMN, .family = "a", .qualifier = CS_STR("old") },
	};
	cs_txn *txn;
	bool matched;
	int rc = cs_txn_begin(st, 0, &txn);
	if (rc)
		return rc;
	if (!(rc = cs_rmw_increment(txn, "t", CS_STR("r"), "a", CS_STR("n"), 5, NULL)) &&
	    !(rc = cs_rmw_append(txn, "t", CS_STR("r"), "c", CS_STR("z"), CS_BYTES(text, 500), NULL)) &&
	    !(rc = cs_check_and_mutate(txn, "t", CS_STR("r"), &p, t_m, 2, NULL, 0, &matched)))
		rc = cs_rmw_increment(txn, "t", CS_STR("r"), "a", CS_STR("n"), 1, NULL);
	return finish(txn, rc);
}

static int schema(cs_store *st)
{
	cs_txn *txn;
	int rc = cs_txn_begin(st, 0, &txn);
	if (rc)
		return rc;
	if (!(rc = cs_table_create(txn, "u", '/')) && !(rc = cs_family_create(txn, "u", "f", "maxversions=1")) &&
	    !(rc = cs_family_create(txn, "u", "g", "maxage=1d or maxversions=3")) &&
	    !(rc = tu_set(txn, "u", CS_STR("row"), "f", CS_STR("q"), 1, CS_BYTES(text, 300))) &&
	    !(rc = cs_family_delete(txn, "t", "c")) && !(rc = cs_family_create(txn, "t", "c", NULL)) &&
	    !(rc = cs_family_set_gc(txn, "t", "b", "maxversions=1")) && !(rc = cs_family_set_gc(txn, "t", "a", "never")) &&
	    (rc = cs_table_delete(txn, "nonexistent")) == -ENOENT)
		rc = 0; /* a validation error: the transaction goes on */
	return finish(txn, rc);
}

static void prepare_versions(cs_store *st)
{
	prepare_table(st);
	cs_txn *txn = tu_begin(st, 0);
	for (int64_t t = 1; t <= 4; t++)
		assert_int_equal(tu_set(txn, "t", CS_STR("r"), "b", CS_STR("v"), t, CS_BYTES(text, 200)), 0);
	tu_commit(txn);
}

static int drop_and_gc(cs_store *st)
{
	cs_txn *txn;
	cs_gc_stats s;
	int rc = cs_txn_begin(st, 0, &txn);
	if (rc)
		return rc;
	if (!(rc = cs_drop_prefix(txn, "t", CS_STR("k"))) &&
	    !(rc = tu_set(txn, "t", CS_STR("k5"), "a", CS_STR("again"), 2, CS_BYTES(text, 150))) &&
	    !(rc = cs_gc(txn, NULL, &s)) && !(rc = cs_drop_prefix(txn, "t", CS_STR("r"))))
		rc = cs_gc(txn, "t", &s);
	return finish(txn, rc);
}

static int drop_all(cs_store *st)
{
	cs_txn *txn;
	int rc = cs_txn_begin(st, 0, &txn);
	if (rc)
		return rc;
	if (!(rc = cs_drop_prefix(txn, "t", CS_STR(""))) && !(rc = cs_table_delete(txn, "t")) &&
	    !(rc = cs_table_create(txn, "t", 0)) && !(rc = cs_family_create(txn, "t", "a", NULL)))
		rc = tu_set(txn, "t", CS_STR("new"), "a", CS_STR("q"), 1, CS_BYTES(text, 1000));
	if (!rc)
		rc = cs_gc(txn, NULL, NULL);
	return finish(txn, rc);
}

/* Renaming the table, then moving rows: a long row to a short key, a short one to a long key, a row
 * onto an existing one (refused, the transaction goes on). */
static int rename_and_move(cs_store *st)
{
	uint64_t moved;
	cs_txn *txn;
	int rc = cs_txn_begin(st, 0, &txn);
	if (rc)
		return rc;
	if (!(rc = cs_table_rename(txn, "t", "moved")) &&
	    !(rc = cs_move_prefix(txn, "moved", CS_BYTES(big_row, sizeof(big_row)), CS_STR("short"), 0, &moved)) &&
	    !(rc = cs_move_prefix(txn, "moved", CS_STR("keep"), CS_BYTES(big_row, 4000), 0, &moved)) &&
	    !(rc = cs_move_prefix(txn, "moved", CS_STR("k1"), CS_STR("z#k1"), 0, &moved))) {
		rc = cs_move_prefix(txn, "moved", CS_STR("r"), CS_STR("k2"), 0, &moved);
		if (!rc)
			fail_msg("moving row r onto row k2 was not refused");
		if (rc == -EEXIST)
			rc = tu_set(txn, "moved", CS_STR("k1"), "a", CS_STR("after"), 3, CS_BYTES(text, 200));
	}
	return finish(txn, rc);
}

/* ---- tests ---- */

static const struct {
	const char *name;
	unsigned kinds;
} fault_kinds[] = {
	{ "lmdb", CS_FAULT_LMDB },
	{ "zstd", CS_FAULT_ZSTD },
	{ "lmdb+zstd", CS_FAULT_LMDB | CS_FAULT_ZSTD },
	{ "alloc", CS_FAULT_ALLOC },
};

static void run_masked(const char *name, prepare_fn prepare, workload_fn w, char *(*mask)(char *))
{
	for (size_t k = 0; k < TU_ARRAY_SIZE(fault_kinds); k++) {
		char label[96];
		struct fault_stats fs;
		snprintf(label, sizeof(label), "%s [%s]", name, fault_kinds[k].name);
		fs = fault_loop(label, fault_kinds[k].kinds, prepare, w, mask);
		/* LMDB and allocation faults must have been met: the loop ran and some runs failed. */
		if (fault_kinds[k].kinds & (CS_FAULT_LMDB | CS_FAULT_ALLOC))
			assert_true(fs.runs > 2 && fs.failed > 0);
		print_message("%s: %llu faults injected, %llu runs failed cleanly\n", label,
			      (unsigned long long)fs.injected, (unsigned long long)fs.failed);
	}
}

static void run_all_kinds(const char *name, prepare_fn prepare, workload_fn w)
{
	run_masked(name, prepare, w, NULL);
}

/* The bulk loader (cs_bulk_*): appended cells past the table's end, ordinary writes below it, a long
 * row key, compressed values, a drop to mark; all in one transaction. */
static int bulk_loader(cs_store *st)
{
	cs_txn *txn;
	cs_bulk *b;
	int rc = cs_txn_begin(st, 0, &txn);

	if (rc)
		return rc;
	if ((rc = cs_bulk_open(txn, "t", &b))) {
		cs_txn_abort(txn);
		return rc;
	}
	for (int i = 0; i < 30 && !rc; i++) {
		char row[16];
		snprintf(row, sizeof(row), i < 20 ? "z%02d" : "a%02d", i); /* z..: appended; a..: put */
		rc = cs_bulk_put(b, CS_STR(row), i % 2 ? "a" : "c", CS_STR("q"), 1000 - i, CS_BYTES(text, 50 + 40 * (size_t)i));
	}
	if (!rc)
		rc = cs_bulk_put(b, CS_BYTES(big_row, sizeof(big_row)), "a", CS_BYTES(big_q, 600), 3, CS_STR("long"));
	if (!rc)
		rc = cs_bulk_put(b, CS_STR("zzz"), "b", CS_STR(""), 0, CS_STR(""));
	cs_bulk_close(b);
	return finish(txn, rc);
}

static void test_fault__row_mutation_is_atomic(void **state)
{
	run_all_kinds("row mutation", prepare_table, row_mutation_short);
}

static void test_fault__long_row_mutation_is_atomic(void **state)
{
	run_all_kinds("row mutation, 4096-byte row", prepare_table, row_mutation_long);
}

static void test_fault__bulk_transaction_is_atomic(void **state)
{
	run_all_kinds("bulk", prepare_table, bulk);
}

static void test_fault__bulk_loader_is_atomic(void **state)
{
	run_all_kinds("bulk loader", prepare_table, bulk_loader);
}

static void test_fault__schema_changes_are_atomic(void **state)
{
	run_all_kinds("schema", prepare_versions, schema);
}

static void test_fault__rename_and_move_are_atomic(void **state)
{
	run_all_kinds("rename and move", prepare_versions, rename_and_move);
}

static void test_fault__drop_and_gc_are_atomic(void **state)
{
	run_all_kinds("drop and gc", prepare_table, drop_and_gc);
	run_all_kinds("drop all", prepare_table, drop_all);
}

/* The test table plus an aggregate family "s" holding a cell that later inputs merge into. */
static void prepare_aggregate(cs_store *st)
{
	const cs_mutation m = { .op = CS_ADD_TO_CELL, .family = "s", .qualifier = CS_STR("n"), .ts = 5, .input = 10 };
	cs_txn *txn;

	prepare_table(st);
	txn = tu_begin(st, 0);
	assert_int_equal(cs_family_create_typed(txn, "t", "s", "maxversions=2", CS_TYPE_INTSUM), 0);
	assert_int_equal(cs_row_mutate(txn, "t", CS_STR("r"), &m, 1), 0);
	tu_commit(txn);
}

/* AddToCell merging into committed and uncommitted cells, beside plain mutations, and a new aggregate
 * family in the same transaction. */
static int aggregate(cs_store *st)
{
	const cs_mutation m[] = {
		{ .op = CS_ADD_TO_CELL, .family = "s", .qualifier = CS_STR("n"), .ts = 5, .input = 3 },
		{ .op = CS_SET_CELL, .family = "a", .qualifier = CS_STR("x"), .ts = 5, .value = CS_BYTES(text, 500) },
		{ .op = CS_ADD_TO_CELL, .family = "s", .qualifier = CS_STR("n"), .ts = 5, .input = 4 },
		{ .op = CS_ADD_TO_CELL, .family = "s", .qualifier = CS_BYTES(big_q, sizeof(big_q)), .ts = 1, .input = -1 },
		{ .op = CS_ADD_TO_CELL, .family = "s", .qualifier = CS_STR("n"), .ts = 9, .input = 1 },
		{ .op = CS_ADD_TO_CELL, .family = "m", .qualifier = CS_STR("n"), .ts = 5, .input = 7 },
		{ .op = CS_ADD_TO_CELL, .family = "m", .qualifier = CS_STR("n"), .ts = 5, .input = -7 },
	};
	cs_txn *txn;
	int rc = cs_txn_begin(st, 0, &txn);
	if (rc)
		return rc;
	if (!(rc = cs_family_create_typed(txn, "t", "m", NULL, CS_TYPE_INTMAX)) &&
	    !(rc = cs_row_mutate(txn, "t", CS_STR("r"), m, TU_ARRAY_SIZE(m))))
		rc = cs_row_mutate(txn, "t", CS_BYTES(big_row, sizeof(big_row)), m, TU_ARRAY_SIZE(m));
	return finish(txn, rc);
}

static void test_fault__add_to_cell_is_atomic(void **state)
{
	run_all_kinds("add to cell", prepare_aggregate, aggregate);
}

/* ReadModifyWrite stamps cells with "now", so states are compared with the timestamps masked. */
static char *mask_now(char *s)
{
	/* Timestamps of 16 digits (µs since 2001) are "now"; the fixture's are tiny. */
	for (char *p = s; (p = strchr(p, '@'));) {
		p++;
		size_t n = strspn(p, "0123456789");
		if (n >= 16)
			memset(p, 'N', n);
	}
	return s;
}

static void test_fault__read_modify_write_is_atomic(void **state)
{
	run_masked("rmw", prepare_table, rmw, mask_now);
}

/* A read-only workload: what it produced into *OUT (caller frees), or a negative errno. */
typedef int (*produce_fn)(cs_store *st, const void *arg, struct tu_buf *out);
/* Rewrite what a run produced into the form runs are compared in, outside the armed window. */
typedef void (*normalize_fn)(struct tu_buf *b);

/* Run PRODUCE on ST with the Nth call of KINDS failing, for every N: each run returns exactly what the
 * run without faults returned, or a clean error. Returns the faults injected. */
static uint64_t produce_loop(const char *name, unsigned kinds, cs_store *st, produce_fn produce, const void *arg,
			     normalize_fn normalize)
{
	struct tu_buf want = { 0 };
	uint64_t errors = 0, injected = 0;

	for (uint64_t n = 0; n < MAX_N; n++) {
		struct tu_buf got = { 0 };
		bool fired;
		int rc;

		cs_fault_arm(kinds, n);
		rc = produce(st, arg, &got);
		fired = cs_fault_fired();
		cs_fault_arm(0, 0);
		if (rc && !clean_error(kinds, rc))
			fail_msg("%s, fault at call %llu: returned %d (%s), not a clean error", name,
				 (unsigned long long)n, rc, strerror(-rc));
		if (!n && rc)
			fail_msg("%s: fails without any fault: %d", name, rc);
		if (!rc && normalize)
			normalize(&got);
		if (!n)
			want = got;
		else if (!rc && (got.n != want.n || memcmp(got.s, want.s, want.n)))
			fail_msg("%s, fault at call %llu: returned other data", name, (unsigned long long)n);
		if (n)
			free(got.s);
		errors += rc != 0;
		injected += fired;
		if (n && !fired)
			break;
	}
	if (kinds & (CS_FAULT_LMDB | CS_FAULT_ALLOC))
		assert_true(errors > 0);
	free(want.s);
	total_injected += injected;
	return injected;
}

static int produce_read(cs_store *st, const void *arg, struct tu_buf *out)
{
	cs_txn *txn;
	char *got;
	int rc = cs_txn_begin(st, CS_TXN_RDONLY, &txn);

	if (rc)
		return rc;
	rc = tu_try_dump(txn, "t", arg, &got);
	cs_txn_abort(txn);
	if (!rc) {
		tu_buf_add(out, got, strlen(got));
		free(got);
	}
	return rc;
}

static int write_buf(void *ctx, const void *p, size_t n)
{
	tu_buf_add(ctx, p, n);
	return 0;
}

static int produce_dump(cs_store *st, const void *arg, struct tu_buf *out)
{
	cs_txn *txn;
	int rc = cs_txn_begin(st, CS_TXN_RDONLY, &txn);

	if (rc)
		return rc;
	rc = cs_dump(txn, NULL, 0, write_buf, out, NULL);
	cs_txn_abort(txn);
	return rc;
}

/* Reads under faults: the exact rows, or a clean error; never other data. */
static void test_fault__reads_return_data_or_clean_error(void **state)
{
	static const cs_bytes q = { "v", 1 };
	static const cs_column_sel cols[] = {
		{ .family = "b", .qualifier = &q },
		{ .family_regex = "a|c", .qualifier_regex = "o.*" },
	};
	static const cs_read_opts opts[] = {
		{ 0 },
		{ .reversed = true },
		{ .prefix = { "k", 1 }, .cells_per_column = 1 },
		{ .keys_only = true },
		{ .row_regex = "k[0-4]|r", .columns = cols, .ncolumns = 2 },
	};
	void *st;
	struct tu_store *ts;

	tu_store_setup(&st);
	ts = st;
	prepare_versions(ts->st);
	for (size_t k = 0; k < TU_ARRAY_SIZE(fault_kinds); k++) {
		for (size_t o = 0; o < TU_ARRAY_SIZE(opts); o++) {
			char label[64];
			snprintf(label, sizeof(label), "read %zu [%s]", o, fault_kinds[k].name);
			print_message("%s: %llu faults injected\n", label,
				      (unsigned long long)produce_loop(label, fault_kinds[k].kinds, ts->st, produce_read, &opts[o], NULL));
		}
	}
	tu_store_teardown(&st);
}

static void dump_contents(struct tu_buf *b);

/* A dump under faults: the same contents, or a clean error. (Not always the same bytes: a frame zstd
 * failed to compress is stored raw.) */
static void test_fault__dump_returns_same_bytes_or_clean_error(void **state)
{
	void *st;
	struct tu_store *ts;

	tu_store_setup(&st);
	ts = st;
	prepare_aggregate(ts->st);
	for (size_t k = 0; k < TU_ARRAY_SIZE(fault_kinds); k++) {
		char label[64];
		snprintf(label, sizeof(label), "dump [%s]", fault_kinds[k].name);
		print_message("%s: %llu faults injected\n", label,
			      (unsigned long long)produce_loop(label, fault_kinds[k].kinds, ts->st, produce_dump, NULL, dump_contents));
	}
	tu_store_teardown(&st);
}

/* The dump the restore workload reads: table "t" of another store, different from the fixture's, and a
 * table "u" the fixture does not have (an aggregate family, a long row, compressed values). */
static struct tu_buf restore_src;

static void make_restore_src(void)
{
	const cs_mutation agg = { .op = CS_ADD_TO_CELL, .family = "s", .qualifier = CS_STR("n"), .ts = 3, .input = 42 };
	void *state;
	struct tu_store *ts;
	cs_txn *txn;

	tu_store_setup(&state);
	ts = state;
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_table_create(txn, "t", 0), 0);
	assert_int_equal(cs_family_create(txn, "t", "a", "maxversions=3"), 0);
	assert_int_equal(cs_table_create(txn, "u", '/'), 0);
	assert_int_equal(cs_family_create(txn, "u", "f", NULL), 0);
	assert_int_equal(cs_family_create_typed(txn, "u", "s", NULL, CS_TYPE_INTSUM), 0);
	for (int i = 0; i < 40; i++) {
		char row[16];
		snprintf(row, sizeof(row), "r%02d", i);
		assert_int_equal(tu_set(txn, "t", CS_STR(row), "a", CS_STR("q"), i, CS_BYTES(text, 100 + 30 * (size_t)i)), 0);
		assert_int_equal(tu_set(txn, "u", CS_STR(row), "f", CS_STR(""), 1, CS_STR("x")), 0);
	}
	assert_int_equal(tu_set(txn, "u", CS_BYTES(big_row, sizeof(big_row)), "f", CS_BYTES(big_q, 700), 2,
				CS_BYTES(text, sizeof(text))), 0);
	assert_int_equal(cs_row_mutate(txn, "u", CS_STR("r00"), &agg, 1), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_dump(txn, NULL, 0, write_buf, &restore_src, NULL), 0);
	cs_txn_abort(txn);
	tu_store_teardown(&state);
}

struct memsrc {
	const struct tu_buf *b;
	size_t off;
};

static int read_mem(void *ctx, void *p, size_t n, size_t *got)
{
	struct memsrc *m = ctx;
	size_t left = m->b->n - m->off;

	*got = n < left ? n : left;
	memcpy(p, m->b->s + m->off, *got);
	m->off += *got;
	return 0;
}

/* What dump B holds: the state of a fresh store it is restored into. */
static void dump_contents(struct tu_buf *b)
{
	struct memsrc m = { b, 0 };
	struct tu_store *ts;
	void *state;
	char *s;

	tu_store_setup(&state);
	ts = state;
	assert_int_equal(cs_restore(ts->st, read_mem, &m, NULL, NULL), 0);
	s = store_state(ts->st);
	tu_store_teardown(&state);
	free(b->s);
	*b = (struct tu_buf){ 0 };
	tu_buf_add(b, s, strlen(s));
	free(s);
}

/* Restore over table "t" and a new "u", committing staged cells every 4 KiB (several transactions). */
static int restore(cs_store *st)
{
	const cs_restore_opts o = { .overwrite = true, .batch_bytes = 4096 };
	struct memsrc m = { &restore_src, 0 };

	return cs_restore(st, read_mem, &m, &o, NULL);
}

static void test_fault__restore_is_all_or_nothing(void **state)
{
	make_restore_src();
	run_all_kinds("restore", prepare_table, restore);
	free(restore_src.s);
}

/* Opening (and creating) a store under faults: success or a clean error, and the store usable afterwards. */
static void test_fault__open(void **state)
{
	static const unsigned open_kinds[] = { CS_FAULT_LMDB, CS_FAULT_ALLOC };
	for (size_t k = 0; k < TU_ARRAY_SIZE(open_kinds); k++) {
		for (int create = 0; create < 2; create++) {
			for (uint64_t n = 1; n < MAX_N; n++) {
				cs_open_opts o = { .flags = CS_OPEN_CREATE };
				char *dir = tu_mkdtemp();
				cs_store *st = NULL;
				bool fired;
				int rc;

				if (!create) {
					assert_int_equal(cs_store_open(dir, &o, &st), 0);
					tu_table(st, "t", "a", NULL, NULL);
					cs_store_close(st);
					st = NULL;
				}
				cs_fault_arm(open_kinds[k], n);
				rc = cs_store_open(dir, create ? &o : NULL, &st);
				fired = cs_fault_fired();
				cs_fault_arm(0, 0);
				if (rc && !clean_error(open_kinds[k], rc))
					fail_msg("open (kinds %u, create %d), fault at call %llu: %d", open_kinds[k], create,
						 (unsigned long long)n, rc);
				cs_store_close(st);
				assert_int_equal(cs_store_open(dir, &o, &st), 0);
				tu_table(st, create ? "t" : "u", "a", NULL, NULL);
				cs_store_close(st);
				tu_rmtree(dir);
				free(dir);
				total_injected += fired;
				if (!fired)
					break;
			}
		}
	}
}

/* The test hook's spelling ($CELLFS_FAULT): KINDS:N, kinds joined by '+'; anything else arms nothing. */
static void test_fault__spec_arms_or_is_refused(void **state)
{
	static const struct {
		const char *spec;
		int rc;
	} cases[] = {
		{ "lmdb:3", 0 },    { "alloc+zstd:1", 0 }, { "lmdb+zstd+alloc:9", 0 }, { "", 0 },
		{ "lmdb", -EINVAL }, { "lmdb:", -EINVAL }, { "disk:1", -EINVAL },       { "lmdb:1x", -EINVAL },
		{ "lmdb:-1", -EINVAL }, { "lmdb+:1", -EINVAL }, { ":1", -EINVAL },      { "LMDB:1", -EINVAL },
		{ "lmdb:99999999999999999999999", -EINVAL },
	};
	struct tu_store *ts;
	cs_txn *txn;

	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		if (cs_fault_arm_spec(cases[i].spec) != cases[i].rc)
			fail_msg("spec \"%s\": want %d", cases[i].spec, cases[i].rc);
		cs_fault_arm(0, 0);
	}
	tu_store_setup(state);
	ts = *state;
	/* Armed far away, it counts calls; armed at the first allocation, a transaction cannot begin. */
	assert_int_equal(cs_fault_arm_spec("alloc:1000000"), 0);
	txn = tu_begin(ts->st, 0);
	cs_txn_abort(txn);
	assert_false(cs_fault_fired());
	assert_true(cs_fault_calls() >= 3); /* the transaction and its two key buffers */
	assert_int_equal(cs_fault_arm_spec("alloc:1"), 0);
	assert_int_equal(cs_txn_begin(ts->st, 0, &txn), -ENOMEM);
	assert_true(cs_fault_fired());
	assert_int_equal(cs_fault_calls(), 1);
	cs_fault_arm(0, 0);
	tu_store_teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fault__row_mutation_is_atomic),
		cmocka_unit_test(test_fault__long_row_mutation_is_atomic),
		cmocka_unit_test(test_fault__bulk_transaction_is_atomic),
		cmocka_unit_test(test_fault__bulk_loader_is_atomic),
		cmocka_unit_test(test_fault__schema_changes_are_atomic),
		cmocka_unit_test(test_fault__drop_and_gc_are_atomic),
		cmocka_unit_test(test_fault__add_to_cell_is_atomic),
		cmocka_unit_test(test_fault__rename_and_move_are_atomic),
		cmocka_unit_test(test_fault__read_modify_write_is_atomic),
		cmocka_unit_test(test_fault__reads_return_data_or_clean_error),
		cmocka_unit_test(test_fault__dump_returns_same_bytes_or_clean_error),
		cmocka_unit_test(test_fault__restore_is_all_or_nothing),
		cmocka_unit_test(test_fault__open),
		cmocka_unit_test(test_fault__spec_arms_or_is_refused),
	};
	int failed;

	init_data();
	failed = cmocka_run_group_tests_name("fault", tests, NULL, NULL);
	print_message("fault: %llu faults injected in all\n", (unsigned long long)total_injected);
	return failed;
}
