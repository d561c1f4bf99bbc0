/* test_fs_ident.c — fs/ident.c, names as identities when writing, with no FUSE: the identity a new name gets
 * in each kind of directory (ident_resolve_new, as create, mkdir, mknod and rename ask it), a key directory
 * turned into a family's, an entry's own part and its name, and the root of -o only= (ident_root), with
 * the errno of each refusal. A fresh store in tmpfs per test. */
#include "fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ident.h"

#define PUT(st, t, row, f, q, ts, v) fu_put((st), (t), (row), strlen(row), (f), (q), strlen(q), (ts), (v))

static cs_store *st_of(void **state)
{
	return ((struct tu_store *)*state)->st;
}

/* Table t (delimiter '#', families F and MD) with rows r (F:q) and a#b (F:q). */
static int setup(void **state)
{
	cs_store *st;
	tu_store_setup(state);
	st = st_of(state);
	fu_table(st, "t", 0, "F", "MD", NULL);
	PUT(st, "t", "r", "F", "q", 1000, "v");
	PUT(st, "t", "a#b", "F", "q", 1000, "v");
	return 0;
}

/* ident_resolve_new() in a directory given by identity (it need not exist in the store). */
static int resolve_in(cs_store *st, const struct node_id *dir, const char *name, bool want_dir, struct node_id *out)
{
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	int rc = ident_resolve_new(txn, dir, name, want_dir, out);
	cs_txn_abort(txn);
	return rc;
}

static void test_fs_ident__a_directory_at_the_top_is_a_table_and_a_file_there_is_eperm(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id;
	assert_int_equal(fu_resolve(st, "", "newt", true, &id), 0);
	assert_int_equal(id.kind, NODE_DIR);
	assert_string_equal(id.table, "newt");
	assert_int_equal(id.keyn, 0);
	assert_false(id.lead_empty);
	node_id_free(&id);
	assert_int_equal(fu_resolve(st, "", "f", false, &id), -EPERM);
	assert_int_equal(fu_resolve(st, "", "no spaces", true, &id), -EINVAL);
	assert_int_equal(fu_resolve(st, "", "%41", true, &id), -EINVAL);
}

static void test_fs_ident__a_directory_in_a_key_directory_is_the_next_segment(void **state)
{
	cs_store *st = st_of(state);
	struct node_id dir = { .kind = NODE_DIR, .table = "t", .key = (const uint8_t *)"x#y", .keyn = 3 };
	struct node_id id;
	assert_int_equal(fu_resolve(st, "t", "n", true, &id), 0);
	assert_int_equal(id.kind, NODE_DIR);
	fu_assert_bytes(id.key, id.keyn, "n");
	node_id_free(&id);
	assert_int_equal(fu_resolve(st, "t/a", "c%2Fd", true, &id), 0);
	fu_assert_bytes(id.key, id.keyn, "a#c/d");
	node_id_free(&id);
	assert_int_equal(resolve_in(st, &dir, "z", true, &id), 0); /* below a directory the store lacks */
	fu_assert_bytes(id.key, id.keyn, "x#y#z");
	node_id_free(&id);
	assert_int_equal(fu_resolve(st, "t", "%", true, &id), 0); /* the empty first segment */
	assert_int_equal(id.keyn, 0);
	assert_true(id.lead_empty);
	node_id_free(&id);
	assert_int_equal(fu_resolve(st, "t/a", "c%2fd", true, &id), -EINVAL); /* not canonical */
}

static void test_fs_ident__a_family_name_in_a_row_directory_is_the_family(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id;
	assert_int_equal(fu_resolve(st, "t/r", "MD", true, &id), 0);
	assert_int_equal(id.kind, NODE_FAMILY);
	fu_assert_bytes(id.key, id.keyn, "r");
	assert_string_equal(id.family, "MD");
	node_id_free(&id);
	assert_int_equal(fu_resolve(st, "t/r", "%4DD", true, &id), 0); /* the segment MD, escaped */
	assert_int_equal(id.kind, NODE_DIR);
	fu_assert_bytes(id.key, id.keyn, "r#MD");
	node_id_free(&id);
}

static void test_fs_ident__a_segment_escaped_like_a_family_to_be_is_one(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id;
	/* G is no family of t: %47 is not canonical now, but is the name segment G will have once G is
	 * one, which the caller makes first (a backup restored in any order) */
	assert_int_equal(fu_resolve(st, "t/r", "%47", true, &id), 1);
	assert_int_equal(id.kind, NODE_DIR);
	fu_assert_bytes(id.key, id.keyn, "r#G");
	node_id_free(&id);
	/* A/ can be no family: its escaped first byte is not canonical, now or later */
	assert_int_equal(fu_resolve(st, "t/r", "%41%2F", true, &id), -EINVAL);
}

static void test_fs_ident__a_file_in_key_directory_p_f_is_column_f_of_row_p(void **state)
{
	cs_store *st = st_of(state);
	struct node_id dir = { .kind = NODE_DIR, .table = "t", .key = (const uint8_t *)"r#G", .keyn = 3 };
	struct node_id id;
	assert_int_equal(resolve_in(st, &dir, "q%40", false, &id), 0);
	assert_int_equal(id.kind, NODE_COLUMN);
	fu_assert_bytes(id.key, id.keyn, "r");
	assert_string_equal(id.family, "G"); /* a family to be made */
	fu_assert_bytes(id.qual, id.qualn, "q@");
	node_id_free(&id);
	assert_int_equal(resolve_in(st, &dir, "q@0000000000002000", false, &id), 0);
	assert_int_equal(id.kind, NODE_VERSION);
	assert_int_equal(id.ts, 2000);
	node_id_free(&id);
	dir.key = (const uint8_t *)"r#-x";
	dir.keyn = 4;
	assert_int_equal(resolve_in(st, &dir, "q", false, &id), -EINVAL); /* -x is no family name */
	dir.key = (const uint8_t *)"r#MD"; /* reached as an escaped segment (%4DD): not the family */
	assert_int_equal(resolve_in(st, &dir, "q", false, &id), -EPERM);
}

static void test_fs_ident__a_file_where_no_row_can_hold_it_is_eperm(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id;
	assert_int_equal(fu_resolve(st, "t", "q", false, &id), -EPERM);   /* in a table */
	assert_int_equal(fu_resolve(st, "t/r", "q", false, &id), -EPERM); /* in a first-level directory */
	assert_int_equal(fu_resolve(st, "t/r/F", "d", true, &id), -EPERM); /* a directory in a family */
}

static void test_fs_ident__a_file_in_a_family_is_a_column_or_a_version(void **state)
{
	cs_store *st = st_of(state);
	struct node_id id;
	assert_int_equal(fu_resolve(st, "t/r/F", "new", false, &id), 0);
	assert_int_equal(id.kind, NODE_COLUMN);
	fu_assert_bytes(id.qual, id.qualn, "new");
	assert_string_equal(id.family, "F");
	node_id_free(&id);
	assert_int_equal(fu_resolve(st, "t/r/F", "q@0000000000000007", false, &id), 0);
	assert_int_equal(id.kind, NODE_VERSION);
	assert_int_equal(id.ts, 7);
	fu_assert_bytes(id.qual, id.qualn, "q");
	node_id_free(&id);
	assert_int_equal(fu_resolve(st, "t/r/F", "%", false, &id), 0); /* the empty qualifier */
	assert_int_equal(id.qualn, 0);
	node_id_free(&id);
	/* a tool's temporary file: a non-canonical name starting with '.' is the column of its own bytes */
	assert_int_equal(fu_resolve(st, "t/r/F", ".q@0000000000000007.Xa9", false, &id), 0);
	assert_int_equal(id.kind, NODE_COLUMN);
	fu_assert_bytes(id.qual, id.qualn, ".q@0000000000000007.Xa9");
	node_id_free(&id);
	assert_int_equal(fu_resolve(st, "t/r/F", "a%2f", false, &id), -EINVAL);
	assert_int_equal(fu_resolve(st, "t/r/F", "q@7", false, &id), -EINVAL);
	assert_int_equal(fu_resolve(st, "t/r/F/q", "x", false, &id), -ENOTDIR);
}

static void test_fs_ident__a_short_form_nothing_holds_stands_for_its_own_bytes(void **state)
{
	cs_store *st = st_of(state);
	uint8_t *q = tu_filled(300, 'k');
	char name[NAME_BUFSZ], *listed;
	struct node_id id;
	/* the short form of a qualifier nobody wrote */
	memset(name, 'k', 200);
	snprintf(name + 200, sizeof(name) - 200, "%%~%016llX", (unsigned long long)name_hash(q, 300));
	assert_int_equal(fu_resolve(st, "t/r/F", name, false, &id), IDENT_UNNAMED);
	fu_assert_bytes(id.qual, id.qualn, name);
	node_id_free(&id);
	/* once the column is there, the same name is it */
	fu_put(st, "t", "r", 1, "F", q, 300, 1000, "v");
	listed = fu_list(st, "t/r/F", NULL);
	assert_non_null(strstr(listed, name));
	free(listed);
	assert_int_equal(fu_resolve(st, "t/r/F", name, false, &id), 0);
	assert_int_equal(id.qualn, 300);
	assert_memory_equal(id.qual, q, 300);
	node_id_free(&id);
	free(q);
}

static void test_fs_ident__names_over_name_max_are_enametoolong(void **state)
{
	cs_store *st = st_of(state);
	char name[NAME_MAX + 2];
	struct node_id id;
	memset(name, 'n', NAME_MAX + 1);
	name[NAME_MAX + 1] = '\0';
	assert_int_equal(fu_resolve(st, "t/r/F", name, false, &id), -ENAMETOOLONG);
	assert_int_equal(fu_resolve(st, "t", name, true, &id), -ENAMETOOLONG);
}

static void test_fs_ident__a_key_directory_named_like_a_family_turns_into_it(void **state)
{
	cs_store *st = st_of(state);
	struct node_id dir = { .kind = NODE_DIR, .table = "t", .key = (const uint8_t *)"r#F", .keyn = 3 }, out;
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	assert_int_equal(ident_effective(txn, &dir, "F", &out), 1);
	assert_int_equal(out.kind, NODE_FAMILY);
	fu_assert_bytes(out.key, out.keyn, "r");
	assert_string_equal(out.family, "F");
	node_id_free(&out);
	dir.key = (const uint8_t *)"r#G"; /* G is not a family (yet): the directory stands for itself */
	assert_int_equal(ident_effective(txn, &dir, "G", &out), 0);
	dir.keyn = 1; /* a first-level directory never does */
	assert_int_equal(ident_effective(txn, &dir, "r", &out), 0);
	cs_txn_abort(txn);
}

static void test_fs_ident__an_entrys_own_part_and_its_name(void **state)
{
	cs_store *st = st_of(state);
	struct node_id seg = { .kind = NODE_DIR, .table = "t", .key = (const uint8_t *)"a#b/c", .keyn = 5 };
	struct node_id col = { .kind = NODE_COLUMN, .table = "t", .key = (const uint8_t *)"r", .keyn = 1,
			       .family = "F", .qual = (const uint8_t *)"q", .qualn = 1 };
	struct node_id ver = col, table = { .kind = NODE_DIR, .table = "t", .key = (const uint8_t *)"" };
	uint8_t *longq = tu_filled(300, 'k');
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	char name[NAME_BUFSZ];
	const uint8_t *b;
	size_t n;

	assert_int_equal(ident_part(txn, &seg, &b, &n), 0);
	fu_assert_bytes(b, n, "b/c");
	assert_int_equal(ident_part(txn, &col, &b, &n), 0);
	fu_assert_bytes(b, n, "q");
	assert_int_equal(ident_part(txn, &table, &b, &n), -EINVAL);
	assert_int_equal(ident_part_name(txn, &seg, "x/y", 3, name), 5);
	assert_string_equal(name, "x%2Fy");
	assert_int_equal(ident_part_name(txn, &seg, "x#y", 3, name), -EINVAL); /* the delimiter */
	assert_int_equal(ident_part_name(txn, &seg, "MD", 2, name), 4);
	assert_string_equal(name, "%4DD");
	ver.kind = NODE_VERSION;
	ver.ts = 42;
	assert_int_equal(ident_part_name(txn, &ver, "@", 1, name), 20);
	assert_string_equal(name, "%40@0000000000000042");
	assert_int_equal(ident_part_is_short(txn, &col), 0);
	col.qual = longq;
	col.qualn = 300;
	assert_int_equal(ident_part_is_short(txn, &col), 1);
	cs_txn_abort(txn);
	free(longq);
}

static void test_fs_ident__root_of_a_shared_mount_is_a_table_or_a_key_prefix(void **state)
{
	cs_store *st = st_of(state);
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	struct node_id id;
	char why[256];

	assert_int_equal(ident_root(txn, "t", &id, why, sizeof(why)), 0);
	assert_int_equal(id.kind, NODE_DIR);
	assert_string_equal(id.table, "t");
	assert_int_equal(id.keyn, 0);
	node_id_free(&id);
	assert_int_equal(ident_root(txn, "t/a/b", &id, why, sizeof(why)), 0);
	fu_assert_bytes(id.key, id.keyn, "a#b");
	node_id_free(&id);
	assert_int_equal(ident_root(txn, "t/none/yet", &id, why, sizeof(why)), 0); /* no rows: mounts empty */
	fu_assert_bytes(id.key, id.keyn, "none#yet");
	node_id_free(&id);
	cs_txn_abort(txn);
}

static void test_fs_ident__root_refusals_name_the_part_at_fault(void **state)
{
	static const struct { const char *spec; int rc; const char *why; } cases[] = {
		{ "", -EINVAL, "an empty table name" },
		{ "t//a", -EINVAL, "an empty segment" },
		{ "bad name", -EINVAL, "\"bad name\" is not a table name" },
		{ "nosuch", -ENOENT, "no table \"nosuch\" in the store" },
		{ "t/r/F", -ENOTDIR, "\"F\" is family F's directory" },
		{ "t/a%2f", -EINVAL, "\"a%2f\" is not the name of a key segment" },
		{ "t/%47", -EINVAL, "\"%47\" is not the name of a key segment" },
	};
	cs_store *st = st_of(state);
	cs_txn *txn = tu_begin(st, CS_TXN_RDONLY);
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		struct node_id id = { .kind = NODE_ROOT };
		char why[256];
		assert_int_equal(ident_root(txn, cases[i].spec, &id, why, sizeof(why)), cases[i].rc);
		assert_non_null(strstr(why, cases[i].why));
		assert_null(id.table); /* nothing left to free */
	}
	cs_txn_abort(txn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(test_fs_ident__##name, setup, tu_store_teardown)
		T(a_directory_at_the_top_is_a_table_and_a_file_there_is_eperm),
		T(a_directory_in_a_key_directory_is_the_next_segment),
		T(a_family_name_in_a_row_directory_is_the_family),
		T(a_segment_escaped_like_a_family_to_be_is_one),
		T(a_file_in_key_directory_p_f_is_column_f_of_row_p),
		T(a_file_where_no_row_can_hold_it_is_eperm),
		T(a_file_in_a_family_is_a_column_or_a_version),
		T(a_short_form_nothing_holds_stands_for_its_own_bytes),
		T(names_over_name_max_are_enametoolong),
		T(a_key_directory_named_like_a_family_turns_into_it),
		T(an_entrys_own_part_and_its_name),
		T(root_of_a_shared_mount_is_a_table_or_a_key_prefix),
		T(root_refusals_name_the_part_at_fault),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
