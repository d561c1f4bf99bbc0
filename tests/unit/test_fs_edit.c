/* test_fs_edit.c — fs/edit.c, tree writes as store mutations, with no FUSE: each edit_ function called as
 * the handlers call it (fs/wops.c, fs/fileh.c, fs/move.c: the identity from ident_resolve_new or a
 * lookup), then the table compared cell by cell. Write-back of a handle (new version, a time given, a
 * Q@TS written), touch -d, unlink, mkdir and rmdir at the top, families made and refused, the schema's
 * extended attributes, and renames of files within a row and across rows. A fresh store in tmpfs per test. */
#include "fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "edit.h"
#include "ident.h"
#include "xattr.h"

#define PUT(st, t, row, f, q, ts, v) fu_put((st), (t), (row), strlen(row), (f), (q), strlen(q), (ts), (v))

static cs_store *st_of(void **state)
{
	return ((struct tu_store *)*state)->st;
}

static void expect_table(cs_store *st, const char *table, const char *want)
{
	char *s = tu_dump_st(st, table, NULL);
	assert_string_equal(s, want);
	free(s);
}

/* Table t (delimiter '#', family F) with r F:q at 1000 and 2000. */
static int setup(void **state)
{
	cs_store *st;
	tu_store_setup(state);
	st = st_of(state);
	fu_table(st, "t", 0, "F", NULL);
	PUT(st, "t", "r", "F", "q", 1000, "old");
	PUT(st, "t", "r", "F", "q", 2000, "new");
	return 0;
}

/* The identity PATH has: walked if it exists, else resolved as a new file in its parent. */
static struct node_id file_id(cs_store *st, const char *path)
{
	struct node_id id;
	const char *slash = strrchr(path, '/');
	char *dir;
	if (!fu_walk(st, path, &id, NULL))
		return id;
	dir = strndup(path, (size_t)(slash - path));
	assert_in_range(fu_resolve(st, dir, slash + 1, false, &id), 0, 0);
	free(dir);
	return id;
}

static void test_fs_edit__a_write_back_is_a_new_version_now(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id = file_id(st, "t/r/F/q");
	int64_t ts = 0;
	char *v;
	assert_int_equal(edit_put(st, &id, EDIT_TS_NEW, "third", 5, -1, false, &ts, NULL), 0);
	assert_true(ts > 2000); /* newer than the column's cells (the clock's now) */
	assert_int_equal(ts % 1000, 0); /* whole milliseconds */
	v = fu_read(st, "t/r/F/q", NULL);
	assert_string_equal(v, "third");
	free(v);
	v = fu_list(st, "t/r/F", NULL);
	assert_string_equal(v, "q q@0000000000002000 q@0000000000001000");
	free(v);
	node_id_free(&id);
}

static void test_fs_edit__a_write_back_after_a_future_cell_lands_just_after_it(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id = file_id(st, "t/r/F/q");
	int64_t future = (cs_now_us() / 1000 + 3600 * 1000) * 1000 + 5, ts = 0;
	PUT(st, "t", "r", "F", "q", future, "future");
	assert_int_equal(edit_put(st, &id, EDIT_TS_NEW, "x", 1, -1, false, &ts, NULL), 0);
	assert_int_equal(ts, (future / 1000 + 1) * 1000);
	node_id_free(&id);
}

static void test_fs_edit__a_new_file_in_a_new_family_makes_the_family(void **state)
{
	cs_store *st = st_of(state);
	struct node_id dir = { .kind = NODE_DIR, .table = "t", .key = (const uint8_t *)"r#G", .keyn = 3 }, id;
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	assert_int_equal(ident_resolve_new(txn, &dir, "x", false, &id), 0);
	cs_txn_abort(txn);
	assert_int_equal(edit_put(st, &id, 5000, "g", 1, -1, true, NULL, NULL), -EPERM); /* -o strict_schema */
	expect_table(st, "t", "r F:q@2000=new F:q@1000=old\n");
	assert_int_equal(edit_put(st, &id, 5000, "g", 1, -1, false, NULL, NULL), 0);
	expect_table(st, "t", "r F:q@2000=new F:q@1000=old G:x@5000=g\n");
	node_id_free(&id);
}

static void test_fs_edit__a_family_that_would_rename_key_segments_is_eperm(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id = { .kind = NODE_COLUMN, .table = "t", .key = (const uint8_t *)"r", .keyn = 1,
			      .family = "G", .qual = (const uint8_t *)"x", .qualn = 1, .ts = -1 };
	cs_txn *txn;
	PUT(st, "t", "a#G#b", "F", "q", 1000, "v");
	txn = tu_begin(st, CS_TXN_RDONLY);
	assert_int_equal(edit_family_clash(txn, "t", "G"), 1);
	assert_int_equal(edit_family_clash(txn, "t", "H"), 0);
	assert_int_equal(edit_family_clash(txn, "t", "a"), 1);
	assert_int_equal(edit_family_clash(txn, "t", "G#b"), 0); /* whole segments only */
	cs_txn_abort(txn);
	assert_int_equal(edit_put(st, &id, 5000, "g", 1, -1, false, NULL, NULL), -EPERM);
	assert_int_equal(edit_family_ensure(st, "t", "G"), -EPERM);
	assert_int_equal(edit_xattr_set(st, "t", XATTR_FAMILY "G", "never", 5, 0), -EPERM);
	expect_table(st, "t", "a#G#b F:q@1000=v\nr F:q@2000=new F:q@1000=old\n");
	assert_int_equal(edit_family_ensure(st, "t", "H"), 0);
}

static void test_fs_edit__a_q_at_ts_write_sets_exactly_that_cell(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id = file_id(st, "t/r/F/q@0000000000001000");
	assert_int_equal(id.kind, NODE_VERSION);
	assert_int_equal(edit_put(st, &id, EDIT_TS_NEW, "OLD", 3, -1, false, NULL, NULL), 0);
	node_id_free(&id);
	id = file_id(st, "t/r/F/q@0000000000001500"); /* a new version between the two */
	assert_int_equal(edit_put(st, &id, EDIT_TS_NEW, "mid", 3, -1, false, NULL, NULL), 0);
	node_id_free(&id);
	expect_table(st, "t", "r F:q@2000=new F:q@1500=mid F:q@1000=OLD\n");
}

static void test_fs_edit__a_time_given_replaces_the_file_and_drops_newer_cells(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id = file_id(st, "t/r/F/q");
	struct edit_gone gone = { 0 };
	int64_t ts = 0;
	/* cp -a of an older file over q: q reads what was written, at that time; newer cells go */
	assert_int_equal(edit_put(st, &id, 1500, "copied", 6, -1, false, &ts, &gone), 0);
	assert_int_equal(ts, 1500);
	assert_int_equal(gone.n, 1);
	assert_int_equal(gone.ts[0], 2000);
	expect_table(st, "t", "r F:q@1500=copied F:q@1000=old\n");
	free(gone.ts);
	/* the same handle given another time: its version moves there (DROP_TS) */
	assert_int_equal(edit_put(st, &id, 1700, "copied", 6, 1500, false, &ts, NULL), 0);
	expect_table(st, "t", "r F:q@1700=copied F:q@1000=old\n");
	node_id_free(&id);
}

static void test_fs_edit__a_whole_second_time_near_another_cell_is_refused(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id = file_id(st, "t/r/F/q");
	PUT(st, "t", "r", "F", "q", 5000123, "in second 5");
	/* GNU tar's whole seconds: 5 s has a cell in that second (EINVAL), and at itself EEXIST */
	assert_int_equal(edit_put(st, &id, 5000000, "tar", 3, -1, false, NULL, NULL), -EINVAL);
	PUT(st, "t", "r", "F", "p", 7000000, "at 7");
	node_id_free(&id);
	id = file_id(st, "t/r/F/p");
	PUT(st, "t", "r", "F", "p", 8000000, "at 8");
	assert_int_equal(edit_put(st, &id, 7000000, "tar", 3, -1, false, NULL, NULL), -EEXIST);
	expect_table(st, "t", "r F:p@8000000=at\\x208 F:p@7000000=at\\x207 F:q@5000123=in\\x20second\\x205 "
			      "F:q@2000=new F:q@1000=old\n");
	node_id_free(&id);
}

/* truncate(2) of a file no handle holds (wops.c's truncate_path): the value read, cut or zero-filled,
 * written back as a new version; the old ones stay. */
static void test_fs_edit__truncate_writes_the_cut_value_as_a_new_version(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id = file_id(st, "t/r/F/q");
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	char *nb, *v;
	void *buf;
	size_t len;
	assert_int_equal(view_read(txn, &id, &buf, &len), 0);
	cs_txn_abort(txn);
	assert_int_equal(len, 3);
	assert_int_equal(edit_put(st, &id, EDIT_TS_NEW, buf, 1, -1, false, NULL, NULL), 0);
	v = fu_read(st, "t/r/F/q", NULL);
	assert_string_equal(v, "n");
	free(v);
	nb = realloc(buf, 4);
	assert_non_null(nb);
	memset(nb + 1, 0, 3);
	assert_int_equal(edit_put(st, &id, EDIT_TS_NEW, nb, 4, -1, false, NULL, NULL), 0);
	v = fu_list_attrs(st, "t/r/F"); /* q (4 bytes), the cut version (1 byte), the two old ones */
	assert_int_equal(strncmp(v, "q 4 ", 4), 0);
	assert_non_null(strchr(v, '\n'));
	assert_int_equal(strncmp(strchr(v, '\n') + 1 + 18, " 1 ", 3), 0);
	assert_string_equal(strstr(v, "\nq@0000000000002000"), "\nq@0000000000002000 3 2000\nq@0000000000001000 3 1000");
	free(v);
	free(nb);
	node_id_free(&id);
}

static void test_fs_edit__a_value_over_the_stores_limit_is_efbig_and_nothing_written(void **state)
{
	struct tu_store *ts = *state;
	struct node_id id;
	tu_reopen(ts, CS_OPEN_CREATE, 16);
	id = file_id(ts->st, "t/r/F/q");
	assert_int_equal(edit_put(ts->st, &id, EDIT_TS_NEW, "0123456789abcdefg", 17, -1, false, NULL, NULL), -EFBIG);
	assert_int_equal(edit_put(ts->st, &id, 1500, "0123456789abcdefg", 17, -1, false, NULL, NULL), -EFBIG);
	expect_table(ts->st, "t", "r F:q@2000=new F:q@1000=old\n"); /* q@2000 not dropped either */
	assert_int_equal(edit_put(ts->st, &id, EDIT_TS_NEW, "0123456789abcdef", 16, -1, false, NULL, NULL), 0);
	node_id_free(&id);
}

/* mkdir of a key segment escaped like a family the table lacks (ident_resolve_new's 1): wops.c's
 * mkdir_family makes the family, which is what the escape says. */
static void test_fs_edit__mkdir_of_an_escaped_family_name_makes_the_family(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id;
	cs_txn *txn;
	cs_table_info *info;
	assert_int_equal(fu_resolve(st, "t/r", "%47", true, &id), 1);
	fu_assert_bytes(id.key, id.keyn, "r#G");
	node_id_free(&id);
	assert_int_equal(edit_family_ensure(st, "t", "G"), 0);
	assert_int_equal(fu_resolve(st, "t/r", "%47", true, &id), 0); /* canonical now */
	node_id_free(&id);
	assert_int_equal(fu_resolve(st, "t/r", "G", true, &id), 0); /* and G is the row's family */
	assert_int_equal(id.kind, NODE_FAMILY);
	node_id_free(&id);
	txn = tu_begin(st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_info_get(txn, "t", &info), 0);
	assert_int_equal(info->nfamilies, 2);
	cs_table_info_free(info);
	cs_txn_abort(txn);
}

static void test_fs_edit__touch_restamps_the_newest_cell(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id = file_id(st, "t/r/F/q"), v = file_id(st, "t/r/F/q@0000000000001000");
	assert_int_equal(edit_restamp(st, &id, 9000), 0);
	expect_table(st, "t", "r F:q@9000=new F:q@1000=old\n");
	assert_int_equal(edit_restamp(st, &id, 500), -EINVAL);  /* below one of its own versions */
	assert_int_equal(edit_restamp(st, &id, 1000), -EEXIST); /* onto one */
	assert_int_equal(edit_restamp(st, &v, 77), 0);           /* a version is named by its time: unchanged */
	expect_table(st, "t", "r F:q@9000=new F:q@1000=old\n");
	node_id_free(&id);
	node_id_free(&v);
}

static void test_fs_edit__unlink_deletes_a_column_or_one_version(void **state)
{
	cs_store *st = st_of(state);
	struct node_id v = file_id(st, "t/r/F/q@0000000000001000"), id, dir = { .kind = NODE_DIR, .table = "t" };
	PUT(st, "t", "r", "F", "p", 1000, "p");
	assert_int_equal(edit_delete(st, &v, true), 0); /* (the handler defers: queued on Bigtable) */
	expect_table(st, "t", "r F:p@1000=p F:q@2000=new\n");
	id = file_id(st, "t/r/F/q");
	assert_int_equal(edit_delete(st, &id, false), 0);
	expect_table(st, "t", "r F:p@1000=p\n");
	assert_int_equal(edit_delete(st, &dir, false), -EISDIR);
	node_id_free(&v);
	node_id_free(&id);
}

static void test_fs_edit__mkdir_and_rmdir_at_the_top_make_and_drop_empty_tables(void **state)
{
	cs_store *st = st_of(state);
	char *names;
	assert_int_equal(edit_table_create(st, "n", '|'), 0);
	assert_int_equal(edit_table_create(st, "n", '#'), -EEXIST);
	assert_int_equal(edit_table_create(st, "bad name", '#'), -EINVAL);
	names = fu_list(st, "", NULL);
	assert_string_equal(names, "n/ t/");
	free(names);
	assert_int_equal(edit_table_drop_empty(st, "t"), -ENOTEMPTY);
	assert_int_equal(edit_table_drop_empty(st, "nosuch"), -ENOENT);
	assert_int_equal(edit_table_create(st, "e", 0), 0);
	assert_int_equal(edit_family_ensure(st, "e", "F"), 0);
	assert_int_equal(edit_table_drop_empty(st, "e"), 0); /* families go with it */
	names = fu_list(st, "", NULL);
	assert_string_equal(names, "n/ t/");
	free(names);
}

static void test_fs_edit__table_renames_keep_cells_and_replace_only_empty_tables(void **state)
{
	cs_store *st = st_of(state);
	char *names;
	assert_int_equal(edit_table_create(st, "empty", 0), 0);
	assert_int_equal(edit_table_rename(st, "t", "empty", false), -EEXIST);
	assert_int_equal(edit_table_rename(st, "t", "empty", true), 0);
	expect_table(st, "empty", "r F:q@2000=new F:q@1000=old\n");
	names = fu_list(st, "", NULL);
	assert_string_equal(names, "empty/");
	free(names);
	assert_int_equal(edit_table_create(st, "full", 0), 0);
	assert_int_equal(edit_family_ensure(st, "full", "F"), 0);
	PUT(st, "full", "x", "F", "q", 1, "v");
	assert_int_equal(edit_table_rename(st, "empty", "full", true), -ENOTEMPTY);
	assert_int_equal(edit_table_rename(st, "nosuch", "other", true), -ENOENT);
}

static void test_fs_edit__schema_attributes_set_families_and_refuse_what_is_fixed(void **state)
{
	cs_store *st = st_of(state);
	cs_txn *txn;
	cs_table_info *info;
	assert_int_equal(edit_xattr_set(st, "t", XATTR_DELIM, "#", 1, 0), 0);
	assert_int_equal(edit_xattr_set(st, "t", XATTR_DELIM, "|", 1, 0), -EPERM); /* fixed */
	assert_int_equal(edit_xattr_set(st, "t", XATTR_FAMILY "A", "never:intsum", 12, XATTR_CREATE), 0);
	assert_int_equal(edit_xattr_set(st, "t", XATTR_FAMILY "A", "never:intsum", 12, XATTR_CREATE), -EEXIST);
	assert_int_equal(edit_xattr_set(st, "t", XATTR_FAMILY "A", "never:max", 9, 0), -EINVAL); /* type fixed */
	assert_int_equal(edit_xattr_set(st, "t", XATTR_FAMILY "B", "never", 5, XATTR_REPLACE), -ENODATA);
	assert_int_equal(edit_xattr_set(st, "t", XATTR_FAMILY "B", "bogus policy", 12, 0), -EINVAL);
	assert_int_equal(edit_xattr_set(st, "t", XATTR_FAMILY "F", "maxversions=1", 13, 0), 0);
	assert_int_equal(edit_xattr_set(st, "t", "user.other", "x", 1, 0), -EOPNOTSUPP);
	txn = tu_begin(st, CS_TXN_RDONLY);
	assert_int_equal(cs_table_info_get(txn, "t", &info), 0);
	assert_int_equal(info->nfamilies, 2);
	cs_table_info_free(info);
	cs_txn_abort(txn);
	assert_int_equal(edit_family_drop_empty(st, "t", "F"), -ENOTEMPTY);
	assert_int_equal(edit_family_drop_empty(st, "t", "A"), 0);
}

/* ---- file renames in the store (edit_move, as move.c's rename_file calls it) ---- */

static void test_fs_edit__rename_within_a_row_moves_every_version(void **state)
{
	cs_store *st = st_of(state);
	struct node_id from = file_id(st, "t/r/F/q"), to = file_id(st, "t/r/F/p");
	assert_int_equal(edit_move(st, &from, &to, false, NULL), 1);
	expect_table(st, "t", "r F:p@2000=new F:p@1000=old\n");
	assert_int_equal(edit_move(st, &from, &to, false, NULL), -ENOENT); /* gone */
	node_id_free(&from);
	node_id_free(&to);
}

static void test_fs_edit__rename_across_rows_moves_every_version_with_its_timestamp(void **state)
{
	cs_store *st = st_of(state);
	struct node_id dir = { .kind = NODE_DIR, .table = "t", .key = (const uint8_t *)"s#x#G", .keyn = 5 }, to;
	struct node_id from = file_id(st, "t/r/F/q");
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	PUT(st, "t", "r", "F", "keep", 1, "k");
	assert_int_equal(ident_resolve_new(txn, &dir, "q2", false, &to), 0); /* t/s/x/G/q2: row s#x, family G */
	cs_txn_abort(txn);
	assert_int_equal(edit_move(st, &from, &to, false, NULL), 1);
	expect_table(st, "t", "r F:keep@1=k\ns#x G:q2@2000=new G:q2@1000=old\n");
	node_id_free(&from);
	node_id_free(&to);
}

static void test_fs_edit__rename_onto_a_file_replaces_what_is_newer_and_keeps_older(void **state)
{
	cs_store *st = st_of(state);
	struct node_id from, to = file_id(st, "t/r/F/q");
	struct edit_gone gone = { 0 };
	PUT(st, "t", "r", "F", "q", 9000, "newest");
	PUT(st, "t", "o", "F", "src", 1500, "s1");
	PUT(st, "t", "o", "F", "src", 3000, "s3");
	from = file_id(st, "t/o/F/src");
	assert_int_equal(edit_move(st, &from, &to, false, &gone), 1);
	assert_int_equal(gone.n, 1); /* q@9000: newer than the source's newest */
	assert_int_equal(gone.ts[0], 9000);
	expect_table(st, "t", "r F:q@3000=s3 F:q@2000=new F:q@1500=s1 F:q@1000=old\n");
	free(gone.ts);
	node_id_free(&from);
	node_id_free(&to);
}

static void test_fs_edit__rename_of_a_version_moves_that_cell_alone(void **state)
{
	cs_store *st = st_of(state);
	struct node_id from = file_id(st, "t/r/F/q@0000000000001000"), to = file_id(st, "t/r/F/p@0000000000000042");
	struct node_id own = file_id(st, "t/r/F/q");
	assert_int_equal(edit_move(st, &from, &to, false, NULL), 1);
	expect_table(st, "t", "r F:p@42=old F:q@2000=new\n");
	assert_int_equal(edit_move(st, &own, &own, false, NULL), 0); /* onto itself: nothing to do */
	node_id_free(&from);
	node_id_free(&to);
	node_id_free(&own);
}

static void test_fs_edit__key_directory_moves_take_every_row_below(void **state)
{
	cs_store *st = st_of(state);
	PUT(st, "t", "a#b", "F", "q", 1, "1");
	PUT(st, "t", "a#b#c", "F", "q", 2, "2");
	PUT(st, "t", "a#bc", "F", "q", 3, "3"); /* a prefix of the name, not below it */
	assert_int_equal(edit_move_keys(st, "t", (const uint8_t *)"a#b", 3, (const uint8_t *)"z", 1, 0), 0);
	expect_table(st, "t", "a#bc F:q@3=3\nr F:q@2000=new F:q@1000=old\nz F:q@1=1\nz#c F:q@2=2\n");
	assert_int_equal(edit_move_keys(st, "t", (const uint8_t *)"z", 1, (const uint8_t *)"y", 1, 1), -EXDEV);
	expect_table(st, "t", "a#bc F:q@3=3\nr F:q@2000=new F:q@1000=old\nz F:q@1=1\nz#c F:q@2=2\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(test_fs_edit__##name, setup, tu_store_teardown)
		T(a_write_back_is_a_new_version_now),
		T(a_write_back_after_a_future_cell_lands_just_after_it),
		T(a_new_file_in_a_new_family_makes_the_family),
		T(a_family_that_would_rename_key_segments_is_eperm),
		T(a_q_at_ts_write_sets_exactly_that_cell),
		T(a_time_given_replaces_the_file_and_drops_newer_cells),
		T(a_whole_second_time_near_another_cell_is_refused),
		T(truncate_writes_the_cut_value_as_a_new_version),
		T(a_value_over_the_stores_limit_is_efbig_and_nothing_written),
		T(mkdir_of_an_escaped_family_name_makes_the_family),
		T(touch_restamps_the_newest_cell),
		T(unlink_deletes_a_column_or_one_version),
		T(mkdir_and_rmdir_at_the_top_make_and_drop_empty_tables),
		T(table_renames_keep_cells_and_replace_only_empty_tables),
		T(schema_attributes_set_families_and_refuse_what_is_fixed),
		T(rename_within_a_row_moves_every_version),
		T(rename_across_rows_moves_every_version_with_its_timestamp),
		T(rename_onto_a_file_replaces_what_is_newer_and_keeps_older),
		T(rename_of_a_version_moves_that_cell_alone),
		T(key_directory_moves_take_every_row_below),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
