/* test_fs_move.c — fs/move.c (renames, as fs_rename calls move_entry and move_table) and fs/target.c (where a
 * write or a rename lands and whether it may), with no mount: the daemon's context (struct fs) is made by
 * hand as cellfs.c's main makes it, with no FUSE session (the kernel notifications the modules send are
 * refused by libfuse for want of one, and change nothing here), and nodes are looked up into its inode
 * table as the kernel's lookups would. A fresh store in tmpfs per test. */
#include "fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "move.h"
#include "req.h"
#include "target.h"

#define PUT(st, t, row, f, q, ts, v) fu_put((st), (t), (row), strlen(row), (f), (q), strlen(q), (ts), (v))

struct fixture {
	void *ts; /* struct tu_store */
	struct fs fs;
};

/* The daemon's context over a fresh store, with table t (families F, G) holding r F:q at 1000 and 2000. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	tu_store_setup(&f->ts);
	f->fs.st = ((struct tu_store *)f->ts)->st;
	f->fs.delim = CS_DEFAULT_DELIM;
	assert_int_equal(node_table_init(&f->fs.nodes), 0);
	assert_int_equal(req_txn_key_init(&f->fs), 0);
	pending_init(&f->fs.pending);
	pthread_mutex_init(&f->fs.wlock, NULL);
	pthread_mutex_init(&f->fs.hlock, NULL);
	fu_table(f->fs.st, "t", 0, "F", "G", NULL);
	PUT(f->fs.st, "t", "r", "F", "q", 1000, "old");
	PUT(f->fs.st, "t", "r", "F", "q", 2000, "new");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	cs_txn *txn = pthread_getspecific(f->fs.txn_key);
	if (txn)
		cs_txn_abort(txn);
	pthread_setspecific(f->fs.txn_key, NULL);
	pthread_key_delete(f->fs.txn_key);
	for (size_t i = 0; i < f->fs.ninval; i++)
		free(f->fs.inval[i].name);
	free(f->fs.inval);
	pending_release(&f->fs.pending);
	node_table_release(&f->fs.nodes);
	pthread_mutex_destroy(&f->fs.wlock);
	pthread_mutex_destroy(&f->fs.hlock);
	tu_store_teardown(&f->ts);
	free(f);
	return 0;
}

/* The inode of directory PATH, looked up into the inode table as the kernel would, or, when the store
 * has no such directory (a family to be made), of the identity ident_resolve_new gives its name. */
static uint64_t ino(struct fixture *f, const char *path)
{
	struct node_id id;
	const char *slash = strrchr(path, '/');
	uint64_t parent = 1, i;

	if (!*path)
		return 1;
	if (slash) {
		char *dir = strndup(path, (size_t)(slash - path));
		parent = ino(f, dir);
		free(dir);
	}
	if (fu_walk(f->fs.st, path, &id, NULL)) {
		char *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup("");
		assert_in_range(fu_resolve(f->fs.st, dir, slash ? slash + 1 : path, true, &id), 0, 0);
		free(dir);
	}
	assert_int_equal(node_ref(&f->fs.nodes, &id, parent, slash ? slash + 1 : path, &i), 0);
	node_id_free(&id);
	return i;
}

/* rename(2) of DIR/NAME to NDIR/NEWNAME, as fs_rename() does below the top. */
static int rename_entry(struct fixture *f, const char *dir, const char *name, const char *ndir, const char *newname,
			unsigned flags)
{
	struct node pv, npv;
	uint64_t p = ino(f, dir), np = ino(f, ndir);
	struct node *pn = node_get(&f->fs.nodes, p, &pv), *npn = node_get(&f->fs.nodes, np, &npv);
	assert_non_null(pn);
	assert_non_null(npn);
	return move_entry(&f->fs, pn, p, name, npn, np, newname, flags);
}

static void expect_table(struct fixture *f, const char *table, const char *want)
{
	char *s = tu_dump_st(f->fs.st, table, NULL);
	assert_string_equal(s, want);
	free(s);
}

static void test_fs_move__rename_across_rows_moves_every_version(void **state)
{
	struct fixture *f = *state;
	PUT(f->fs.st, "t", "s#x", "F", "keep", 5, "k");
	assert_int_equal(rename_entry(f, "t/r/F", "q", "t/s/x/F", "moved", 0), 0);
	expect_table(f, "t", "s#x F:keep@5=k F:moved@2000=new F:moved@1000=old\n");
}

static void test_fs_move__rename_within_a_row_keeps_timestamps(void **state)
{
	struct fixture *f = *state;
	PUT(f->fs.st, "t", "r", "G", "g", 7, "g");
	assert_int_equal(rename_entry(f, "t/r/F", "q", "t/r/G", "q%2F2", 0), 0);
	expect_table(f, "t", "r G:g@7=g G:q/2@2000=new G:q/2@1000=old\n");
}

static void test_fs_move__rename_of_a_version_moves_that_cell_alone(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(rename_entry(f, "t/r/F", "q@0000000000001000", "t/r/F", "p@0000000000000099", 0), 0);
	expect_table(f, "t", "r F:p@99=old F:q@2000=new\n");
}

static void test_fs_move__rename_onto_a_file_replaces_it_as_the_source_read(void **state)
{
	struct fixture *f = *state;
	PUT(f->fs.st, "t", "r", "F", "src", 1500, "s");
	PUT(f->fs.st, "t", "r", "F", "q", 9000, "newest");
	assert_int_equal(rename_entry(f, "t/r/F", "src", "t/r/F", "q", RENAME_NOREPLACE), -EEXIST);
	assert_int_equal(rename_entry(f, "t/r/F", "src", "t/r/F", "q", 0), 0);
	expect_table(f, "t", "r F:q@1500=s F:q@1000=old\n"); /* newer than the source's newest: gone */
	assert_int_equal(f->fs.ninval, 2); /* q@...9000 and q@...2000, names the kernel is to forget */
}

static void test_fs_move__a_tools_temporary_name_is_the_column_of_its_own_bytes(void **state)
{
	struct fixture *f = *state;
	struct target_found tf;
	cs_txn *txn;
	struct node_id dir;
	/* rsync's .q.XXXXXX with a byte its name would escape: not canonical, found by its own bytes */
	PUT(f->fs.st, "t", "r", "F", ".q%zz", 3000, "tmp");
	assert_int_equal(fu_walk(f->fs.st, "t/r/F", &dir, NULL), 0);
	assert_int_equal(req_txn(&f->fs, &txn), 0);
	assert_int_equal(target_find(txn, &dir, ".q%zz", &tf), 0);
	node_id_free(&tf.id);
	assert_int_equal(target_find_any(txn, &dir, ".q%zz", &tf), 0);
	assert_true(tf.ok);
	fu_assert_bytes(tf.id.qual, tf.id.qualn, ".q%zz");
	assert_int_equal(tf.a.mtime_us, 3000);
	node_id_free(&tf.id);
	assert_int_equal(target_find_any(txn, &dir, ".x%zz", &tf), -ENOENT); /* no such column */
	assert_int_equal(target_find_any(txn, &dir, "x%zz", &tf), -ENOENT);  /* not a tool's: not canonical */
	req_txn_idle(&f->fs);
	node_id_free(&dir);
	assert_int_equal(rename_entry(f, "t/r/F", ".q%zz", "t/r/F", "q", 0), 0); /* the temp file renamed */
	expect_table(f, "t", "r F:q@3000=tmp F:q@2000=new F:q@1000=old\n");
}

static void test_fs_move__renames_out_of_the_table_or_of_a_family_are_exdev(void **state)
{
	struct fixture *f = *state;
	fu_table(f->fs.st, "u", 0, "F", NULL);
	PUT(f->fs.st, "u", "r", "F", "x", 1, "x");
	assert_int_equal(rename_entry(f, "t/r/F", "q", "u/r/F", "q", 0), -EXDEV);
	assert_int_equal(rename_entry(f, "t/r", "F", "t/r", "G", 0), -EXDEV); /* a family's directory */
	assert_int_equal(rename_entry(f, "t", "r", "u", "r2", 0), -EXDEV);   /* a key directory to another table */
	expect_table(f, "t", "r F:q@2000=new F:q@1000=old\n");
}

static void test_fs_move__refusals_leave_the_store_as_it_was(void **state)
{
	struct fixture *f = *state;
	PUT(f->fs.st, "t", "x#y#z", "F", "q", 1, "z");
	assert_int_equal(rename_entry(f, "t/r/F", "nosuch", "t/r/F", "p", 0), -ENOENT);
	assert_int_equal(rename_entry(f, "t/r/F", "q", "t/r/F", "bad%2f", 0), -EINVAL);
	assert_int_equal(rename_entry(f, "t/r/F", "q", "t/x/y", "z", 0), -EISDIR); /* t/x/y/z is a directory */
	assert_int_equal(rename_entry(f, "t/r/F", "q", "t/x", "f", 0), -EPERM);     /* no row to hold it */
	expect_table(f, "t", "r F:q@2000=new F:q@1000=old\nx#y#z F:q@1=z\n");
}

static void test_fs_move__strict_schema_refuses_a_family_a_rename_would_make(void **state)
{
	struct fixture *f = *state;
	struct node_id h = { .kind = NODE_COLUMN, .table = "t", .key = (const uint8_t *)"r", .keyn = 1, .family = "H",
			     .qual = (const uint8_t *)"q", .qualn = 1, .ts = -1 };
	cs_txn *txn;
	f->fs.strict_schema = true;
	assert_int_equal(rename_entry(f, "t/r/F", "q", "t/r/H", "q", 0), -EPERM); /* r#H: family H of row r */
	assert_int_equal(req_txn(&f->fs, &txn), 0);
	assert_int_equal(target_family(&f->fs, txn, &h), -EPERM);
	h.family = "G";
	assert_int_equal(target_family(&f->fs, txn, &h), 0);
	f->fs.strict_schema = false;
	h.family = "H";
	assert_int_equal(target_family(&f->fs, txn, &h), 0);
	req_txn_idle(&f->fs);
	assert_int_equal(rename_entry(f, "t/r/F", "q", "t/r/H", "q", 0), 0);
	expect_table(f, "t", "r H:q@2000=new H:q@1000=old\n");
}

static void test_fs_move__a_family_that_would_escape_key_segments_is_eperm(void **state)
{
	struct fixture *f = *state;
	cs_txn *txn;
	PUT(f->fs.st, "t", "a#K", "F", "q", 1, "v");
	assert_int_equal(rename_entry(f, "t/r/F", "q", "t/r/K", "q", 0), -EPERM);
	assert_int_equal(req_txn(&f->fs, &txn), 0);
	assert_int_equal(target_clash(txn, "t", "K"), -EPERM);
	assert_int_equal(target_clash(txn, "t", "L"), 0);
	assert_int_equal(target_clash(txn, "t", "F"), 0); /* a family already */
	req_txn_idle(&f->fs);
	expect_table(f, "t", "a#K F:q@1=v\nr F:q@2000=new F:q@1000=old\n");
}

static void test_fs_move__rename_of_a_key_directory_moves_every_row_below(void **state)
{
	struct fixture *f = *state;
	PUT(f->fs.st, "t", "a#b", "F", "q", 1, "1");
	PUT(f->fs.st, "t", "a#b#c", "F", "q", 2, "2");
	PUT(f->fs.st, "t", "a#bc", "F", "q", 3, "3");
	assert_int_equal(rename_entry(f, "t/a", "b", "t", "z", 0), 0);
	expect_table(f, "t", "a#bc F:q@3=3\nr F:q@2000=new F:q@1000=old\nz F:q@1=1\nz#c F:q@2=2\n");
	assert_int_equal(rename_entry(f, "t", "z", "t", "r", 0), -ENOTEMPTY); /* rows at r */
	assert_int_equal(rename_entry(f, "t", "z", "t/r", "F", 0), -EXDEV);   /* onto a family's name */
	assert_int_equal(rename_entry(f, "t", "z", "t", "%48", 0), -EXDEV);   /* a family to make first: mv copies */
	expect_table(f, "t", "a#bc F:q@3=3\nr F:q@2000=new F:q@1000=old\nz F:q@1=1\nz#c F:q@2=2\n");
}

static void test_fs_move__rename_of_a_table_at_the_top_renames_it(void **state)
{
	struct fixture *f = *state;
	char *names;
	fu_table(f->fs.st, "full", 0, "F", NULL);
	PUT(f->fs.st, "full", "x", "F", "q", 1, "v");
	assert_int_equal(move_table(&f->fs, "t", 1, "bad name", 0), -EINVAL);
	assert_int_equal(move_table(&f->fs, "t", 1, "full", 0), -ENOTEMPTY);
	assert_int_equal(move_table(&f->fs, "t", 1, "u", 0), 0);
	expect_table(f, "u", "r F:q@2000=new F:q@1000=old\n");
	names = fu_list(f->fs.st, "", NULL);
	assert_string_equal(names, "full/ u/");
	free(names);
}

static void test_fs_move__a_version_name_on_a_store_with_microseconds_is_allowed(void **state)
{
	struct fixture *f = *state;
	struct node_id v = { .kind = NODE_VERSION, .table = "t", .key = (const uint8_t *)"r", .keyn = 1,
			     .family = "F", .qual = (const uint8_t *)"q", .qualn = 1, .ts = 1234567 };
	assert_true(cs_store_caps(f->fs.st) & CS_CAP_TS_MICROS);
	assert_int_equal(target_version_ts(&f->fs, &v), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(test_fs_move__##name, setup, teardown)
		T(rename_across_rows_moves_every_version),
		T(rename_within_a_row_keeps_timestamps),
		T(rename_of_a_version_moves_that_cell_alone),
		T(rename_onto_a_file_replaces_it_as_the_source_read),
		T(a_tools_temporary_name_is_the_column_of_its_own_bytes),
		T(renames_out_of_the_table_or_of_a_family_are_exdev),
		T(refusals_leave_the_store_as_it_was),
		T(strict_schema_refuses_a_family_a_rename_would_make),
		T(a_family_that_would_escape_key_segments_is_eperm),
		T(rename_of_a_key_directory_moves_every_row_below),
		T(rename_of_a_table_at_the_top_renames_it),
		T(a_version_name_on_a_store_with_microseconds_is_allowed),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
