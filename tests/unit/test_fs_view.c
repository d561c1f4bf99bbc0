/* test_fs_view.c — fs/view.c, the store seen as a tree (fs/CONTRACT.md, "The tree"), with no FUSE: what each
 * path lists, in which order, with which attributes, and what lookups of names refuse. Each test has a
 * fresh store in tmpfs (TMPDIR=/dev/shm) and walks paths with view_lookup() as the daemon's lookups do. */
#include "fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xattr.h"

#define PUT(st, t, row, f, q, ts, v) fu_put((st), (t), (row), strlen(row), (f), (q), strlen(q), (ts), (v))

static cs_store *st_of(void **state)
{
	return ((struct tu_store *)*state)->st;
}

/* What GET (fu_list, fu_read) gives for PATH is WANT. */
static void expect_text(cs_store *st, char *(*get)(cs_store *, const char *, int *), const char *path,
			const char *want)
{
	int rc = 0;
	char *s = get(st, path, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(s);
	assert_string_equal(s, want);
	free(s);
}

static void expect_list(cs_store *st, const char *path, const char *want)
{
	expect_text(st, fu_list, path, want);
}

static void expect_read(cs_store *st, const char *path, const char *want)
{
	expect_text(st, fu_read, path, want);
}

/* Listings, a table of directory paths and what each lists (expect_list), ended by NULL. */
static void expect_lists(cs_store *st, const char *const *dirs)
{
	for (; *dirs; dirs += 2)
		expect_list(st, dirs[0], dirs[1]);
}

static void test_fs_view__root_lists_every_table_and_nothing_else(void **state)
{
	cs_store *st = st_of(state);
	expect_list(st, "", "");
	fu_table(st, "zeta", 0, NULL);
	fu_table(st, "alpha", 0, "F", NULL);
	expect_list(st, "", "alpha/ zeta/");
	assert_int_equal(fu_walk(st, "beta", NULL, NULL), -ENOENT);
	assert_int_equal(fu_walk(st, "not a table", NULL, NULL), -ENOENT);
}

static void test_fs_view__empty_table_lists_nothing(void **state)
{
	cs_store *st = st_of(state);
	struct view_attr a;
	fu_table(st, "t", 0, "F", "G", NULL);
	expect_list(st, "t", "");
	assert_int_equal(fu_walk(st, "t", NULL, &a), 0);
	assert_true(a.dir);
	assert_int_equal(fu_walk(st, "t/F", NULL, NULL), -ENOENT); /* a family shows only under a row */
}

static void test_fs_view__delimiter_splits_row_keys_into_directories(void **state)
{
	cs_store *st = st_of(state);
	fu_table(st, "quotes", 0, "MD", NULL);
	PUT(st, "quotes", "NASDAQ#ZXZZT#1426535612156", "MD", "BID", 1000, "12.5");
	PUT(st, "quotes", "NASDAQ#AAPL#1", "MD", "ASK", 1000, "99");
	PUT(st, "quotes", "NYSE#IBM#7", "MD", "BID", 1000, "1");
	expect_lists(st, (const char *const[]){
		"quotes", "NASDAQ/ NYSE/",
		"quotes/NASDAQ", "AAPL/ ZXZZT/",
		"quotes/NASDAQ/ZXZZT", "1426535612156/",
		"quotes/NASDAQ/ZXZZT/1426535612156", "MD/",
		"quotes/NASDAQ/ZXZZT/1426535612156/MD", "BID",
		NULL });
	expect_read(st, "quotes/NASDAQ/ZXZZT/1426535612156/MD/BID", "12.5");
	assert_int_equal(fu_walk(st, "quotes/NASDAQ#ZXZZT", NULL, NULL), -ENOENT); /* the delimiter is not in a name */
}

static void test_fs_view__a_table_delimiter_is_its_own(void **state)
{
	cs_store *st = st_of(state);
	fu_table(st, "p", '|', "F", NULL);
	PUT(st, "p", "a|b", "F", "q", 1000, "1");
	PUT(st, "p", "a#c", "F", "q", 1000, "2");
	expect_list(st, "p", "a#c/ a/"); /* key order: '#' sorts before '|' */
	expect_list(st, "p/a", "b/");
	expect_read(st, "p/a#c/F/q", "2");
}

static void test_fs_view__row_and_deeper_rows_share_a_directory_families_first(void **state)
{
	cs_store *st = st_of(state);
	fu_table(st, "t", 0, "F", "G", NULL);
	PUT(st, "t", "a", "G", "q", 1000, "row a");
	PUT(st, "t", "a#z", "F", "q", 1000, "z");
	PUT(st, "t", "a#b#c", "F", "q", 1000, "c");
	expect_list(st, "t/a", "G/ b/ z/");
	expect_list(st, "t/a/b", "c/");
	expect_read(st, "t/a/G/q", "row a");
	assert_int_equal(fu_walk(st, "t/a/F", NULL, NULL), -ENOENT); /* row a has no cell in F */
	assert_int_equal(fu_walk(st, "t/a/b/F", NULL, NULL), -ENOENT); /* no row a#b */
}

static void test_fs_view__a_row_key_prefix_of_another_is_not_its_directory(void **state)
{
	cs_store *st = st_of(state);
	fu_table(st, "t", 0, "F", NULL);
	PUT(st, "t", "a", "F", "q", 1000, "a");
	PUT(st, "t", "ab", "F", "q", 1000, "ab");
	PUT(st, "t", "a0", "F", "q", 1000, "a0");
	PUT(st, "t", "a#x", "F", "q", 1000, "ax");
	PUT(st, "t", "abcd", "F", "q", 1000, "abcd");
	expect_list(st, "t", "a/ a0/ ab/ abcd/");
	assert_int_equal(fu_walk(st, "t/abc", NULL, NULL), -ENOENT); /* a prefix of a key, not a segment */
	assert_int_equal(fu_walk(st, "t/a/F/q", NULL, NULL), 0);
	expect_list(st, "t/a", "F/ x/");
	expect_list(st, "t/ab", "F/");
	expect_read(st, "t/ab/F/q", "ab");
	expect_read(st, "t/a/x/F/q", "ax");
}

static void test_fs_view__a_family_lists_bare_names_then_older_versions(void **state)
{
	cs_store *st = st_of(state);
	fu_table(st, "t", 0, "F", NULL);
	PUT(st, "t", "r", "F", "q", 1000, "one");
	PUT(st, "t", "r", "F", "q", 3000, "three");
	PUT(st, "t", "r", "F", "q", 2000, "two");
	PUT(st, "t", "r", "F", "p", 5000, "p");
	expect_list(st, "t/r/F", "p q q@0000000000002000 q@0000000000001000");
	expect_read(st, "t/r/F/q", "three");
	expect_read(st, "t/r/F/q@0000000000001000", "one");
	/* the newest is reachable by its Q@TS name, unlisted */
	expect_read(st, "t/r/F/q@0000000000003000", "three");
	assert_int_equal(fu_walk(st, "t/r/F/q@0000000000004000", NULL, NULL), -ENOENT);
	assert_int_equal(fu_walk(st, "t/r/F/q@1000", NULL, NULL), -ENOENT); /* not zero-padded */
}

static void test_fs_view__attributes_are_the_cells_and_stable_directory_times(void **state)
{
	cs_store *st = st_of(state);
	struct view_attr a, t;
	char *s;
	fu_table(st, "t", 0, "F", NULL);
	PUT(st, "t", "r", "F", "q", 7000, "12345");
	PUT(st, "t", "r", "F", "q", 3000, "1");
	PUT(st, "t", "r", "F", "p", 9000, "xy");
	assert_int_equal(fu_walk(st, "t/r/F/q", NULL, &a), 0);
	assert_false(a.dir);
	assert_int_equal(a.size, 5);
	assert_int_equal(a.mtime_us, 7000);
	assert_int_equal(a.nlink, 1);
	assert_int_equal(fu_walk(st, "t/r/F", NULL, &a), 0); /* a family: its newest cell's time */
	assert_true(a.dir);
	assert_int_equal(a.mtime_us, 9000);
	assert_int_equal(a.nlink, 2);
	assert_int_equal(fu_walk(st, "t", NULL, &t), 0); /* key directories: the table's creation time */
	assert_int_equal(fu_walk(st, "t/r", NULL, &a), 0);
	assert_true(a.dir);
	assert_int_equal(a.mtime_us, t.mtime_us);
	assert_int_equal(a.nlink, 1);
	assert_int_equal(fu_walk(st, "", NULL, &a), 0); /* the root counts its tables */
	assert_int_equal(a.nlink, 3);
	s = fu_list_attrs(st, "t/r/F");
	assert_string_equal(s, "p 2 9000\nq 5 7000\nq@0000000000003000 1 3000");
	free(s);
}

/* Names of bytes (name.h): what the listing shows, and that the name reads the row back. */
static void test_fs_view__escaped_bytes_in_segments_and_qualifiers(void **state)
{
	static const struct { const char *row, *q, *dirname, *qname; } cases[] = {
		{ "a/b", "x@y", "a%2Fb", "x%40y" },
		{ "100%", "", "100%25", "%" },
		{ "\xff\x01", "\x7f", "%FF%01", "%7F" },
		{ "caf\xc3\xa9", "\xc3\xa9t\xc3\xa9", "caf\xc3\xa9", "\xc3\xa9t\xc3\xa9" },
		{ ".", "..", "%2E", "%2E%2E" },
	};
	cs_store *st = st_of(state);
	fu_table(st, "t", 0, "F", NULL);
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		char dir[300], file[600];
		fu_put(st, "t", cases[i].row, strlen(cases[i].row), "F", cases[i].q, strlen(cases[i].q), 1000, "v");
		snprintf(dir, sizeof(dir), "t/%s/F", cases[i].dirname);
		expect_list(st, dir, cases[i].qname);
		snprintf(file, sizeof(file), "%s/%s", dir, cases[i].qname);
		expect_read(st, file, "v");
	}
	/* an empty key segment is the reserved token too */
	PUT(st, "t", "e##f", "F", "q", 1000, "empty");
	expect_list(st, "t/e", "%/");
	expect_read(st, "t/e/%/f/F/q", "empty");
}

static void test_fs_view__noncanonical_names_are_enoent(void **state)
{
	static const char *const bad[] = {
		"t/a%2fb",        /* lower-case hex */
		"t/%61%2Fb",      /* an escape that is not needed */
		"t/a%2",          /* '%' without two hex digits */
		"t/a%2Fb/F/x@y",  /* a raw '@' in a qualifier is a version name, not this one */
		"t/a%2Fb/F/q@0000000000001000x",
	};
	cs_store *st = st_of(state);
	fu_table(st, "t", 0, "F", NULL);
	PUT(st, "t", "a/b", "F", "x@y", 1000, "v");
	PUT(st, "t", "a/b", "F", "q", 1000, "v");
	expect_read(st, "t/a%2Fb/F/x%40y", "v");
	for (size_t i = 0; i < TU_ARRAY_SIZE(bad); i++)
		assert_int_equal(fu_walk(st, bad[i], NULL, NULL), -ENOENT);
}

static void test_fs_view__a_segment_named_like_a_family_is_escaped(void **state)
{
	cs_store *st = st_of(state);
	fu_table(st, "t", 0, "MD", NULL);
	PUT(st, "t", "a", "MD", "q", 1000, "row");
	PUT(st, "t", "a#MD", "MD", "q", 1000, "segment");
	PUT(st, "t", "MD", "MD", "q", 1000, "top");
	expect_lists(st, (const char *const[]){ "t", "%4DD/ a/", "t/a", "MD/ %4DD/", NULL });
	expect_read(st, "t/a/MD/q", "row");
	expect_read(st, "t/a/%4DD/MD/q", "segment");
	expect_read(st, "t/%4DD/MD/q", "top");
	assert_int_equal(fu_walk(st, "t/MD", NULL, NULL), -ENOENT); /* the family's name, unescaped, at the top */
}

static void test_fs_view__keys_starting_with_the_delimiter_have_an_empty_first_segment(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id;
	fu_table(st, "t", 0, "F", NULL);
	PUT(st, "t", "#x", "F", "q", 1000, "v");
	PUT(st, "t", "x", "F", "q", 1000, "w");
	expect_list(st, "t", "%/ x/");
	expect_list(st, "t/%", "x/");
	expect_read(st, "t/%/x/F/q", "v");
	assert_int_equal(fu_walk(st, "t/%", &id, NULL), 0);
	assert_int_equal(id.keyn, 0);
	assert_true(id.lead_empty);
	node_id_free(&id);
}

static void test_fs_view__lookups_and_listings_in_a_file_are_enotdir(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id;
	cs_txn *txn;
	int rc;
	fu_table(st, "t", 0, "F", NULL);
	PUT(st, "t", "r", "F", "q", 1000, "v");
	assert_int_equal(fu_walk(st, "t/r/F/q/x", NULL, NULL), -ENOTDIR);
	assert_null(fu_list(st, "t/r/F/q", &rc));
	assert_int_equal(rc, -ENOTDIR);
	assert_int_equal(fu_walk(st, "t/r", &id, NULL), 0);
	txn = tu_begin(st, CS_TXN_RDONLY);
	{
		void *buf = NULL;
		size_t len;
		assert_int_equal(view_read(txn, &id, &buf, &len), -EISDIR);
	}
	cs_txn_abort(txn);
	node_id_free(&id);
}

static void test_fs_view__long_names_show_a_short_form_that_finds_them(void **state)
{
	cs_store *st = st_of(state);
	uint8_t *q = tu_filled(300, 'k'), *seg = tu_filled(400, 's');
	char *names, path[1200];
	const char *sp;
	fu_table(st, "t", 0, "F", NULL);
	fu_put(st, "t", "r", 1, "F", q, 300, 1000, "long q");
	fu_put(st, "t", seg, 400, "F", "q", 1, 1000, "long seg");
	names = fu_list(st, "t/r/F", NULL);
	assert_non_null(names);
	assert_int_equal(strlen(names), 200 + 2 + 16);
	assert_memory_equal(names, q, 200);
	assert_memory_equal(names + 200, "%~", 2);
	snprintf(path, sizeof(path), "t/r/F/%s", names);
	expect_read(st, path, "long q");
	free(names);
	names = fu_list(st, "t", NULL);
	assert_non_null(names);
	sp = strchr(names, ' ');  /* "r/ sss...%~HASH/" */
	assert_non_null(sp);
	assert_non_null(strstr(sp, "%~"));
	snprintf(path, sizeof(path), "t/%.*s/F/q", (int)(strlen(sp + 1) - 1), sp + 1);
	expect_read(st, path, "long seg");
	free(names);
	free(q);
	free(seg);
}

static void test_fs_view__listings_resume_across_calls_and_see_each_cell_once(void **state)
{
	cs_store *st = st_of(state);
	struct tu_buf want = { 0 };
	char row[16], *got;
	fu_table(st, "t", 0, "F", NULL);
	for (int i = 0; i < 9; i++) {
		snprintf(row, sizeof(row), "k%d#x", i);
		PUT(st, "t", row, "F", "q", 1000, "v");
		snprintf(row, sizeof(row), "k%d#y#z", i);
		PUT(st, "t", row, "F", "q", 1000, "v");
		snprintf(row, sizeof(row), "%sk%d/", i ? " " : "", i);
		tu_buf_add(&want, row, strlen(row));
	}
	expect_list(st, "t", want.s);
	expect_list(st, "t/k4", "x/ y/");
	for (int i = 0; i < 5; i++)
		PUT(st, "t", "r", "F", "q", 1000 + i, "v");
	got = fu_list(st, "t/r/F", NULL);
	assert_string_equal(got, "q q@0000000000001003 q@0000000000001002 q@0000000000001001 q@0000000000001000");
	free(got);
	free(want.s);
}

static void test_fs_view__a_removed_row_is_gone_from_lookup_and_listing(void **state)
{
	cs_store *st = st_of(state);
	cs_mutation del = TU_DELROW();
	struct node_id id;
	cs_txn *txn;
	fu_table(st, "t", 0, "F", NULL);
	PUT(st, "t", "a#b", "F", "q", 1000, "v");
	PUT(st, "t", "c", "F", "q", 1000, "v");
	assert_int_equal(fu_walk(st, "t/a/b/F/q", &id, NULL), 0);
	txn = tu_begin(st, 0);
	assert_int_equal(cs_row_mutate(txn, "t", CS_STR("a#b"), &del, 1), 0);
	tu_commit(txn);
	txn = tu_begin(st, CS_TXN_RDONLY);
	assert_int_equal(view_exists(txn, &id), 0);
	cs_txn_abort(txn);
	node_id_free(&id);
	assert_int_equal(fu_walk(st, "t/a", NULL, NULL), -ENOENT);
	expect_list(st, "t", "c/");
}

/* ---- extended attributes (xattr.c): the schema on a table directory, a short form's whole name ---- */

static void expect_xattr(cs_txn *txn, const struct node_id *id, const char *name, const char *want, size_t wantn)
{
	char *val = NULL;
	size_t len = 0;
	assert_int_equal(xattr_get(txn, id, name, &val, &len), 0);
	assert_int_equal(len, wantn);
	assert_memory_equal(val, want, wantn);
	free(val);
}

static void test_fs_view__a_tables_extended_attributes_are_its_schema(void **state)
{
	static const char names[] = "user.cellfs.delimiter\0user.cellfs.family.A\0user.cellfs.family.F\0";
	cs_store *st = st_of(state);
	struct node_id t, col;
	cs_txn *txn = tu_begin(st, 0);
	char *buf = NULL, *val = NULL;
	size_t len = 0;
	assert_int_equal(cs_table_create(txn, "t", '|'), 0);
	assert_int_equal(cs_family_create(txn, "t", "F", "maxversions=2"), 0);
	assert_int_equal(cs_family_create_typed(txn, "t", "A", NULL, CS_TYPE_INTSUM), 0);
	tu_commit(txn);
	PUT(st, "t", "r", "F", "q", 1000, "v");
	assert_int_equal(fu_walk(st, "t", &t, NULL), 0);
	assert_int_equal(fu_walk(st, "t/r/F/q", &col, NULL), 0);
	txn = tu_begin(st, CS_TXN_RDONLY);
	assert_int_equal(xattr_list(txn, &t, &buf, &len), 0);
	assert_int_equal(len, sizeof(names) - 1);
	assert_memory_equal(buf, names, len);
	free(buf);
	expect_xattr(txn, &t, XATTR_DELIM, "|", 1);
	expect_xattr(txn, &t, XATTR_FAMILY "F", "maxversions=2", 13);
	expect_xattr(txn, &t, XATTR_FAMILY "A", "never:intsum", 12);
	assert_int_equal(xattr_get(txn, &t, XATTR_FAMILY "G", &val, &len), -ENODATA);
	assert_int_equal(xattr_list(txn, &col, &buf, &len), 0); /* a file with its full name: none */
	assert_null(buf);
	assert_int_equal(len, 0);
	assert_int_equal(xattr_get(txn, &col, XATTR_NAME, &val, &len), -ENODATA);
	cs_txn_abort(txn);
	node_id_free(&t);
	node_id_free(&col);
}

static void test_fs_view__a_short_form_entry_carries_its_whole_name(void **state)
{
	cs_store *st = st_of(state);
	uint8_t *q = tu_filled(300, 'k');
	struct node_id id;
	char *names, path[300], *buf = NULL;
	size_t len = 0;
	cs_txn *txn;
	q[299] = '/'; /* a byte the name escapes: the attribute has it raw */
	fu_table(st, "t", 0, "F", NULL);
	fu_put(st, "t", "r", 1, "F", q, 300, 1000, "v");
	names = fu_list(st, "t/r/F", NULL);
	snprintf(path, sizeof(path), "t/r/F/%s", names);
	assert_int_equal(fu_walk(st, path, &id, NULL), 0);
	txn = tu_begin(st, CS_TXN_RDONLY);
	assert_int_equal(xattr_list(txn, &id, &buf, &len), 0);
	assert_int_equal(len, sizeof(XATTR_NAME));
	assert_string_equal(buf, XATTR_NAME);
	free(buf);
	expect_xattr(txn, &id, XATTR_NAME, (const char *)q, 300);
	cs_txn_abort(txn);
	node_id_free(&id);
	free(names);
	free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(test_fs_view__##name, tu_store_setup, tu_store_teardown)
		T(root_lists_every_table_and_nothing_else),
		T(empty_table_lists_nothing),
		T(delimiter_splits_row_keys_into_directories),
		T(a_table_delimiter_is_its_own),
		T(row_and_deeper_rows_share_a_directory_families_first),
		T(a_row_key_prefix_of_another_is_not_its_directory),
		T(a_family_lists_bare_names_then_older_versions),
		T(attributes_are_the_cells_and_stable_directory_times),
		T(escaped_bytes_in_segments_and_qualifiers),
		T(noncanonical_names_are_enoent),
		T(a_segment_named_like_a_family_is_escaped),
		T(keys_starting_with_the_delimiter_have_an_empty_first_segment),
		T(lookups_and_listings_in_a_file_are_enotdir),
		T(long_names_show_a_short_form_that_finds_them),
		T(listings_resume_across_calls_and_see_each_cell_once),
		T(a_removed_row_is_gone_from_lookup_and_listing),
		T(a_tables_extended_attributes_are_its_schema),
		T(a_short_form_entry_carries_its_whole_name),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
