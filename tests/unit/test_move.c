/* test_move.c — moving a subtree of rows to another key (cs_move_prefix), checked against a snapshot
 * of the table: delimiters, limits, refusals, hidden cells, long keys, compressed values, aborts. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "keys.h"
#include "lmutil.h"

/* ---- moving a subtree of rows (cs_move_prefix) ---- */

/* A table's rows as (key, cells as tu_dump writes them), so that keys can be mapped and compared. */
struct snap_row {
	uint8_t *key;
	size_t n;
	char *cells;
};

struct snap {
	struct snap_row *r;
	size_t n;
};

static struct snap snap_take(cs_txn *txn, const char *table)
{
	struct snap s = { 0 };
	cs_scan *scan;
	const cs_row *row;
	int rc;

	assert_int_equal(cs_scan_open(txn, table, NULL, &scan), 0);
	while ((rc = cs_scan_next(scan, &row)) == 1) {
		struct tu_buf b = { 0 };
		struct snap_row *r;
		tu_buf_add(&b, "", 0);
		for (size_t i = 0; i < row->ncells; i++) {
			const cs_cell *c = &row->cells[i];
			char num[32];
			tu_buf_add(&b, " ", 1);
			tu_buf_add(&b, c->family, strlen(c->family));
			tu_buf_add(&b, ":", 1);
			tu_escape(&b, c->qualifier.data, c->qualifier.len);
			snprintf(num, sizeof(num), "@%lld=", (long long)c->ts);
			tu_buf_add(&b, num, strlen(num));
			tu_escape(&b, c->value.data, c->value.len);
		}
		s.r = realloc(s.r, (s.n + 1) * sizeof(*s.r));
		assert_non_null(s.r);
		r = &s.r[s.n++];
		r->key = tu_filled(row->key.len, 0);
		memcpy(r->key, row->key.data, row->key.len);
		r->n = row->key.len;
		r->cells = b.s;
	}
	assert_int_equal(rc, 0);
	cs_scan_close(scan);
	return s;
}

static void snap_free(struct snap *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->r[i].key);
		free(s->r[i].cells);
	}
	free(s->r);
	s->r = NULL;
	s->n = 0;
}

static int snap_row_cmp(const void *a, const void *b)
{
	const struct snap_row *x = a, *y = b;
	size_t n = x->n < y->n ? x->n : y->n;
	int c = n ? memcmp(x->key, y->key, n) : 0;
	return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* The rows as a read of the table would return them after moving FROM's subtree (delimiter DELIM) to
 * TO: keys mapped, then sorted. */
static void snap_map(struct snap *s, cs_bytes from, cs_bytes to, char delim)
{
	for (size_t i = 0; i < s->n; i++) {
		struct snap_row *r = &s->r[i];
		uint8_t *k;
		if (r->n < from.len || memcmp(r->key, from.data, from.len) ||
		    (r->n > from.len && r->key[from.len] != (uint8_t)delim))
			continue;
		k = tu_filled(to.len + r->n - from.len, 0);
		memcpy(k, to.data, to.len);
		memcpy(k + to.len, r->key + from.len, r->n - from.len);
		free(r->key);
		r->key = k;
		r->n = to.len + r->n - from.len;
	}
	qsort(s->r, s->n, sizeof(*s->r), snap_row_cmp);
}

static char *snap_text(const struct snap *s)
{
	struct tu_buf b = { 0 };
	tu_buf_add(&b, "", 0);
	for (size_t i = 0; i < s->n; i++) {
		tu_escape(&b, s->r[i].key, s->r[i].n);
		tu_buf_add(&b, s->r[i].cells, strlen(s->r[i].cells));
		tu_buf_add(&b, "\n", 1);
	}
	return b.s;
}

static char *table_text(cs_txn *txn, const char *table)
{
	struct snap s = snap_take(txn, table);
	char *t = snap_text(&s);
	snap_free(&s);
	return t;
}

/* How many cells a read of TABLE returns. */
static uint64_t visible_cells(cs_txn *txn, const char *table)
{
	struct snap s = snap_take(txn, table);
	uint64_t n = 0;
	for (size_t i = 0; i < s.n; i++)
		for (const char *p = s.r[i].cells; (p = strchr(p, '@')); p++)
			n++; /* tu_escape writes '@' as \x40: one per cell */
	snap_free(&s);
	return n;
}

/* Cells physically stored (visible or not) in rows of TABLE whose key starts with the bytes PREFIX. */
static uint64_t stored_cells(cs_txn *txn, const char *table, cs_bytes prefix)
{
	struct sch_table *t;
	uint8_t *k = malloc(KEY_MAX);
	size_t kn;
	uint64_t n;

	assert_non_null(k);
	assert_int_equal(sch_table_get(lm_txn_of(txn), table, &t), 0);
	kn = key_table_data(k, t->id);
	kn += key_esc(k + kn, prefix.data, prefix.len);
	n = tu_count_keys(txn, k, kn);
	free(k);
	return n;
}

/* Move FROM to TO in TXN and check it against a snapshot: the rows after equal the rows before with
 * their keys mapped, and every visible cell of the subtree moved. Returns the cells moved. */
static uint64_t move_checked(cs_txn *txn, const char *table, char delim, cs_bytes from, cs_bytes to)
{
	struct snap before = snap_take(txn, table), after;
	uint64_t total = visible_cells(txn, table), moved = 12345;
	char *want, *got;

	assert_int_equal(cs_move_prefix(txn, table, from, to, 0, &moved), 0);
	snap_map(&before, from, to, delim);
	after = snap_take(txn, table);
	want = snap_text(&before);
	got = snap_text(&after);
	if (strcmp(want, got))
		fail_msg("after the move: got\n%swant\n%s", got, want);
	assert_int_equal(visible_cells(txn, table), total);
	free(want);
	free(got);
	snap_free(&before);
	snap_free(&after);
	return moved;
}

/* Rows of a directory tree: the subtree "a#b" (the row itself, rows under "a#b#", an empty segment),
 * and neighbours that only start with the same bytes. */
static const struct {
	const char *row;
	size_t n;
	bool in_b; /* under "a#b" */
} tree_rows[] = {
	{ "a", 1, false },        { "a#a", 3, false },     { "a#b", 3, true },        { "a#b\0", 4, false },
	{ "a#b\"", 4, false },    { "a#b#", 4, true },     { "a#b##", 5, true },      { "a#b#x", 5, true },
	{ "a#b#x#y", 7, true },   { "a#b#\0\xff", 6, true }, { "a#b#\xff", 5, true }, { "a#bc", 4, false },
	{ "a#b\xff", 4, false },  { "a#cz", 4, false },    { "a#c\0", 4, false },     { "a#c\xff", 4, false },
	{ "b", 1, false },
};

static void populate_tree(cs_store *st)
{
	cs_txn *txn = tu_begin(st, 0);
	for (size_t i = 0; i < TU_ARRAY_SIZE(tree_rows); i++) {
		const cs_mutation m[] = {
			TU_SET("a", "q", 1, "one"), TU_SET("a", "q", 2, "two"), TU_SET("a", "q", 3, "three"),
			TU_SET("ab", "", 5, "empty qualifier"),
			{ .op = CS_SET_CELL, .family = "b", .qualifier = CS_BYTES("\0x", 2), .ts = 7,
			  .value = CS_BYTES(tree_rows[i].row, tree_rows[i].n) },
			TU_SET("v1", "x", INT64_MAX, "max ts"),
		};
		assert_int_equal(cs_row_mutate(txn, "t", CS_BYTES(tree_rows[i].row, tree_rows[i].n), m, TU_ARRAY_SIZE(m)), 0);
	}
	tu_commit(txn);
}

#define TREE_CELLS 6 /* visible cells per row of populate_tree() */
/* A row of populate_tree() as tu_dump prints it: key K, written at the row whose key is V. */
#define TREE_ROW(k, v) \
	k " a:q@3=three a:q@2=two a:q@1=one ab:@5=empty\\x20qualifier b:\\x00x@7=" v " v1:x@9223372036854775807=max\\x20ts\n"

static size_t tree_count(void)
{
	size_t n = 0;
	for (size_t i = 0; i < TU_ARRAY_SIZE(tree_rows); i++)
		n += tree_rows[i].in_b;
	return n;
}

/* A directory rename: the row and the rows under it move with every cell, version, timestamp and value;
 * rows that only share the bytes stay; moving back restores the table exactly. */
static void test_mutate__move_prefix_moves_the_subtree_exactly(void **state)
{
	struct tu_store *ts = *state;
	char *orig, *s;
	cs_txn *txn;
	uint64_t moved;

	populate_tree(ts->st);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	orig = table_text(txn, "t");
	tu_commit(txn);

	txn = tu_begin(ts->st, 0);
	moved = move_checked(txn, "t", '#', CS_STR("a#b"), CS_STR("a#c"));
	assert_int_equal(moved, tree_count() * TREE_CELLS);
	assert_int_equal(stored_cells(txn, "t", CS_STR("a#b#")), 0);
	s = tu_dump(txn, "t", &(cs_read_opts){ .prefix = CS_STR("a#c") });
	assert_string_equal(s, TREE_ROW("a#c", "a#b") TREE_ROW("a#c\\x00", "a#c\\x00") TREE_ROW("a#c#", "a#b#")
			       TREE_ROW("a#c#\\x00\\xff", "a#b#\\x00\\xff") TREE_ROW("a#c##", "a#b##")
			       TREE_ROW("a#c#x", "a#b#x") TREE_ROW("a#c#x#y", "a#b#x#y") TREE_ROW("a#c#\\xff", "a#b#\\xff")
			       TREE_ROW("a#cz", "a#cz") TREE_ROW("a#c\\xff", "a#c\\xff"));
	free(s);
	tu_commit(txn);

	/* Committed, reopened, read reversed: the same rows. */
	tu_reopen(ts, 0, 0);
	txn = tu_begin(ts->st, 0);
	s = tu_dump(txn, "t", &(cs_read_opts){ .row = &CS_STR("a#c#x") });
	assert_string_equal(s, TREE_ROW("a#c#x", "a#b#x"));
	free(s);
	s = tu_dump(txn, "t", &(cs_read_opts){ .row = &CS_STR("a#b"), .prefix = CS_STR("a#b#") });
	assert_string_equal(s, "");
	free(s);
	/* And back: the table is exactly as it was. */
	assert_int_equal(move_checked(txn, "t", '#', CS_STR("a#c"), CS_STR("a#b")), moved);
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	tu_commit(txn);

	/* To a key of another length, under another parent, and a top-level row with everything under it. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(move_checked(txn, "t", '#', CS_STR("a#b#x"), CS_STR("b#moved-deeper")), 2 * TREE_CELLS);
	assert_int_equal(move_checked(txn, "t", '#', CS_STR("a"), CS_STR("z")), (TU_ARRAY_SIZE(tree_rows) - 3) * TREE_CELLS);
	s = tu_dump(txn, "t", &(cs_read_opts){ .keys_only = true, .columns = &(cs_column_sel){ .family = "a" }, .ncolumns = 1,
					.cells_per_column = 1 });
	assert_string_equal(s, "b a:q@3=[5]\nb#moved-deeper a:q@3=[5]\nb#moved-deeper#y a:q@3=[5]\nz a:q@3=[5]\n"
			       "z#a a:q@3=[5]\nz#b a:q@3=[5]\nz#b\\x00 a:q@3=[5]\nz#b\" a:q@3=[5]\nz#b# a:q@3=[5]\n"
			       "z#b#\\x00\\xff a:q@3=[5]\nz#b## a:q@3=[5]\nz#b#\\xff a:q@3=[5]\nz#bc a:q@3=[5]\nz#b\\xff a:q@3=[5]\n"
			       "z#c\\x00 a:q@3=[5]\nz#cz a:q@3=[5]\nz#c\\xff a:q@3=[5]\n");
	free(s);
	tu_commit(txn);
	free(orig);
}

/* The subtree is defined by the table's own delimiter. */
static void test_mutate__move_prefix_uses_the_table_delimiter(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn = tu_begin(ts->st, 0);
	char *s;

	assert_int_equal(cs_table_create(txn, "s", '/'), 0);
	assert_int_equal(cs_family_create(txn, "s", "f", NULL), 0);
	static const char *const rows[] = { "a/b", "a/b/c", "a/b/c/d", "a/b#c", "a/bc", "a/b\x01" };
	for (size_t i = 0; i < TU_ARRAY_SIZE(rows); i++)
		assert_int_equal(tu_set(txn, "s", CS_STR(rows[i]), "f", CS_STR("q"), 1, CS_STR(rows[i])), 0);
	assert_int_equal(move_checked(txn, "s", '/', CS_STR("a/b"), CS_STR("x")), 3);
	s = tu_dump(txn, "s", NULL);
	assert_string_equal(s, "a/b\\x01 f:q@1=a/b\\x01\na/b#c f:q@1=a/b#c\na/bc f:q@1=a/bc\n"
			       "x f:q@1=a/b\nx/c f:q@1=a/b/c\nx/c/d f:q@1=a/b/c/d\n");
	free(s);
	tu_commit(txn);
}

/* Bad arguments and overlapping subtrees are refused before anything is written; the transaction goes
 * on. Moving nothing is no error. */
static void test_mutate__move_prefix_validation_errors(void **state)
{
	static const struct {
		const char *from, *to;
		int rc;
		uint64_t moved;
	} cases[] = {
		{ "", "x", -EINVAL, 0 },        { "x", "", -EINVAL, 0 },        { "a#b", "a#b", -EINVAL, 0 },
		{ "a#b", "a#b#c", -EINVAL, 0 }, { "a#b#c", "a#b", -EINVAL, 0 }, { "a", "a#", -EINVAL, 0 },
		{ "a#", "a", -EINVAL, 0 },      { "a#b", "a#b#", -EINVAL, 0 },  { "a#b", "a#b##c", -EINVAL, 0 },
		{ "a#b#", "a#b", -EINVAL, 0 },  { "a#bc", "a#b", -EEXIST, 0 },  { "a#b", "a#bc", -EEXIST, 0 },
		{ "a#b", "a#bd", 0, 2 },        { "a#bc", "a#bd", 0, 1 },       { "a#b#c", "a#bc#c", 0, 1 },
		{ "a#b#c", "a#b#d", 0, 1 },     { "nothing", "here", 0, 0 },
	};
	struct tu_store *ts = *state;
	uint8_t *big = tu_filled(CS_MAX_ROW_KEY + 1, 'k');
	char *orig, *s;
	cs_txn *txn;
	uint64_t moved;

	tu_put(ts->st, "t", "a#b", "a", "q", 1, "v");
	tu_put(ts->st, "t", "a#b#c", "a", "q", 1, "v");
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	orig = table_text(txn, "t");
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_STR("x"), 0, &moved), -EROFS);
	tu_commit(txn);

	txn = tu_begin(ts->st, 0);
	for (size_t i = 0; i < TU_ARRAY_SIZE(cases); i++) {
		moved = 99;
		assert_int_equal(tu_set(txn, "t", CS_STR("a#bc"), "a", CS_STR("q"), 1, CS_STR("v")), 0);
		if (cases[i].rc) {
			int rc = cs_move_prefix(txn, "t", CS_STR(cases[i].from), CS_STR(cases[i].to), 0, &moved);
			if (rc != cases[i].rc)
				fail_msg("case %zu (%s -> %s): %d, want %d", i, cases[i].from, cases[i].to, rc, cases[i].rc);
			assert_int_equal(moved, 0);
		} else {
			/* Subtrees sharing bytes but not keys: moved there and back. */
			assert_int_equal(cs_move_prefix(txn, "t", CS_STR(cases[i].from), CS_STR(cases[i].to), 0, &moved), 0);
			assert_int_equal(moved, cases[i].moved);
			assert_int_equal(cs_move_prefix(txn, "t", CS_STR(cases[i].to), CS_STR(cases[i].from), 0, NULL), 0);
		}
		const cs_mutation del = TU_DELROW();
		assert_int_equal(cs_row_mutate(txn, "t", CS_STR("a#bc"), &del, 1), 0);
		s = table_text(txn, "t");
		assert_string_equal(s, orig);
		free(s);
	}
	assert_int_equal(cs_move_prefix(txn, "nosuch", CS_STR("a#b"), CS_STR("x"), 0, &moved), -ENOENT);
	assert_int_equal(cs_move_prefix(txn, "t", CS_BYTES(big, CS_MAX_ROW_KEY + 1), CS_STR("x"), 0, &moved), -ENAMETOOLONG);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_BYTES(big, CS_MAX_ROW_KEY + 1), 0, &moved), -ENAMETOOLONG);
	/* A longest key is fine, as FROM or TO. */
	assert_int_equal(cs_move_prefix(txn, "t", CS_BYTES(big, CS_MAX_ROW_KEY), CS_STR("x"), 0, &moved), 0);
	assert_int_equal(moved, 0);
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	/* The transaction is still usable. */
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_BYTES(big, CS_MAX_ROW_KEY - 2), 0, &moved), 0);
	assert_int_equal(moved, 2);
	tu_commit(txn);
	s = tu_dump_st(ts->st, "t", &(cs_read_opts){ .keys_only = true });
	assert_int_equal(strlen(s), 2 * (CS_MAX_ROW_KEY - 2) + 2 + strlen(" a:q@1=[1]\n") * 2);
	assert_non_null(strstr(s, "kk#c a:q@1=[1]\n"));
	free(s);
	free(orig);
	free(big);
}

/* More cells than MAX_CELLS: -EXDEV and nothing written (hidden cells do not count); the transaction
 * goes on, and the limit itself is fine. */
static void test_mutate__move_prefix_refuses_over_max_cells(void **state)
{
	struct tu_store *ts = *state;
	const uint64_t n = tree_count() * TREE_CELLS;
	uint64_t moved;
	char *orig, *s;
	cs_txn *txn;

	populate_tree(ts->st);
	/* Hidden versions, which must not count: v1 keeps one. */
	txn = tu_begin(ts->st, 0);
	for (int64_t v = 0; v < 5; v++)
		assert_int_equal(tu_set(txn, "t", CS_STR("a#b#x"), "v1", CS_STR("x"), v, CS_STR("old")), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, 0);
	orig = table_text(txn, "t");
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_STR("a#c"), n - 1, &moved), -EXDEV);
	assert_int_equal(moved, 0);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_STR("a#c"), 1, &moved), -EXDEV);
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	assert_int_equal(tu_set(txn, "t", CS_STR("other"), "a", CS_STR("q"), 1, CS_STR("v")), 0);
	tu_commit(txn);
	s = tu_dump_st(ts->st, "t", &(cs_read_opts){ .prefix = CS_STR("a#c#") });
	assert_string_equal(s, "");
	free(s);

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_STR("a#c"), n, &moved), 0);
	assert_int_equal(moved, n);
	tu_commit(txn);
	free(orig);
}

/* Moving onto rows that have cells would merge them: -EEXIST, nothing written. Rows whose cells are all
 * hidden (dropped, collected, of a deleted family) do not count, and their cells stay hidden. */
static void test_mutate__move_prefix_refuses_onto_existing_rows(void **state)
{
	static const char *const targets[] = { "a#c", "a#c#", "a#c#deep#er" };
	struct tu_store *ts = *state;
	uint64_t moved;
	char *orig, *s;
	cs_txn *txn;

	populate_tree(ts->st);
	for (size_t i = 0; i < TU_ARRAY_SIZE(targets); i++) {
		txn = tu_begin(ts->st, 0);
		assert_int_equal(tu_set(txn, "t", CS_STR(targets[i]), "b", CS_STR("z"), 1, CS_STR("here")), 0);
		orig = table_text(txn, "t");
		moved = 7;
		assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_STR("a#c"), 0, &moved), -EEXIST);
		assert_int_equal(moved, 0);
		s = table_text(txn, "t");
		assert_string_equal(s, orig); /* nothing written */
		free(s);
		free(orig);
		tu_commit(txn);
		/* Remove it again. */
		txn = tu_begin(ts->st, 0);
		const cs_mutation del = TU_DELROW();
		assert_int_equal(cs_row_mutate(txn, "t", CS_STR(targets[i]), &del, 1), 0);
		tu_commit(txn);
	}

	/* Destination rows with hidden cells only: a dropped range, a collected version, a deleted family. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_create(txn, "t", "old", "maxage=1s"), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#c#gone"), "a", CS_STR("q"), 3, CS_STR("dropped")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#c#x"), "a", CS_STR("q"), 4, CS_STR("dropped")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#c"), "old", CS_STR("q"), 9, CS_STR("collected")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#c#x#y"), "ab", CS_STR(""), 99, CS_STR("deleted family")), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a#c#")), 0);
	assert_int_equal(cs_family_delete(txn, "t", "ab"), 0);
	assert_int_equal(cs_family_create(txn, "t", "ab", NULL), 0);
	assert_int_equal(cs_family_create(txn, "t", "z", NULL), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(visible_cells(txn, "t"), TU_ARRAY_SIZE(tree_rows) * (TREE_CELLS - 1)); /* less ab's */
	moved = move_checked(txn, "t", '#', CS_STR("a#b"), CS_STR("a#c"));
	assert_int_equal(moved, tree_count() * (TREE_CELLS - 1));
	/* Stored under "a#c": the cells moved, the neighbours' (6 each, ab's hidden), the three cells of the
	 * dropped range (left where they are, hidden); not the collected cell of row "a#c". */
	assert_int_equal(stored_cells(txn, "t", CS_STR("a#c")), moved + 3 * TREE_CELLS + 3);
	s = tu_dump(txn, "t", &(cs_read_opts){ .row = &CS_STR("a#c#x") });
	assert_string_equal(s, "a#c#x a:q@3=three a:q@2=two a:q@1=one b:\\x00x@7=a#b#x v1:x@9223372036854775807=max\\x20ts\n");
	free(s);
	s = tu_dump(txn, "t", &(cs_read_opts){ .row = &CS_STR("a#c#gone") });
	assert_string_equal(s, "");
	free(s);
	tu_commit(txn);
	/* Nothing hidden comes back: not with GC, nor with a looser policy, nor after a write. */
	tu_put(ts->st, "t", "a#c#gone", "z", "q", 1, "new");
	txn = tu_begin(ts->st, 0);
	orig = table_text(txn, "t");
	assert_int_equal(cs_family_set_gc(txn, "t", "old", "never"), 0);
	assert_int_equal(cs_gc(txn, NULL, NULL), 0);
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	free(orig);
	s = tu_dump(txn, "t", &(cs_read_opts){ .prefix = CS_STR("a#c#gone") });
	assert_string_equal(s, "a#c#gone z:q@1=new\n");
	free(s);
	tu_commit(txn);
}

/* What a read does not return is not moved and does not come back, at the source or the destination:
 * versions a GC policy collected, cells of a deleted family, rows of a dropped range (with a row written
 * again after the drop), cells written before a drop in the same transaction. */
static void test_mutate__move_prefix_does_not_resurrect_hidden_cells(void **state)
{
	struct tu_store *ts = *state;
	int64_t now = cs_now_us();
	uint64_t moved, visible;
	char *s, *want, exp[256];
	cs_txn *txn;

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_create(txn, "t", "old", "maxage=1h"), 0);
	for (int64_t v = 1; v <= 3; v++) {
		assert_int_equal(tu_set(txn, "t", CS_STR("a#b"), "v1", CS_STR("x"), v, CS_STR("version")), 0);
		assert_int_equal(tu_set(txn, "t", CS_STR("a#b#r"), "old", CS_STR("x"), v, CS_STR("ancient")), 0);
		assert_int_equal(tu_set(txn, "t", CS_STR("a#b#r"), "ab", CS_STR("x"), v, CS_STR("deleted family")), 0);
		assert_int_equal(tu_set(txn, "t", CS_STR("a#b#d#1"), "a", CS_STR("x"), v, CS_STR("dropped")), 0);
		assert_int_equal(tu_set(txn, "t", CS_STR("a#b#e#1"), "a", CS_STR("x"), v, CS_STR("dropped")), 0);
	}
	assert_int_equal(tu_set(txn, "t", CS_STR("a#b#r"), "old", CS_STR("x"), now, CS_STR("recent")), 0);
	tu_commit(txn);
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_delete(txn, "t", "ab"), 0);
	assert_int_equal(cs_family_create(txn, "t", "ab", NULL), 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a#b#d")), 0); /* stays clean */
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a#b#e")), 0);
	tu_commit(txn);
	tu_put(ts->st, "t", "a#b#e#1", "b", "y", 1, "written again"); /* dirty */
	tu_put(ts->st, "t", "a#b#r", "ab", "new", 1, "new family");

	txn = tu_begin(ts->st, 0);
	want = tu_dump(txn, "t", NULL);
	snprintf(exp, sizeof(exp),
		 "a#b v1:x@3=version\na#b#e#1 b:y@1=written\\x20again\na#b#r ab:new@1=new\\x20family old:x@%lld=recent\n",
		 (long long)now);
	assert_string_equal(want, exp);
	visible = visible_cells(txn, "t");
	assert_int_equal(visible, 4);
	moved = move_checked(txn, "t", '#', CS_STR("a#b"), CS_STR("n"));
	assert_int_equal(moved, 4);
	/* The source is empty but for the clean dropped range, left hidden where it was. */
	assert_int_equal(stored_cells(txn, "t", CS_STR("a#b")), 3);
	assert_int_equal(stored_cells(txn, "t", CS_STR("a#b#d#1")), 3);
	assert_int_equal(stored_cells(txn, "t", CS_STR("n")), 4); /* nothing hidden was carried */
	tu_commit(txn);
	free(want);

	/* A looser policy, GC, new writes at the source: nothing hidden reappears. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_family_set_gc(txn, "t", "v1", "never"), 0);
	assert_int_equal(cs_family_set_gc(txn, "t", "old", "never"), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#b#d#1"), "b", CS_STR("y"), 1, CS_STR("new")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#b#r"), "b", CS_STR("y"), 1, CS_STR("new")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#b"), "b", CS_STR("y"), 1, CS_STR("new")), 0);
	s = tu_dump(txn, "t", &(cs_read_opts){ .prefix = CS_STR("a") });
	assert_string_equal(s, "a#b b:y@1=new\na#b#d#1 b:y@1=new\na#b#r b:y@1=new\n");
	free(s);
	assert_int_equal(cs_gc(txn, NULL, NULL), 0);
	assert_int_equal(visible_cells(txn, "t"), 4 + 3);
	s = tu_dump(txn, "t", &(cs_read_opts){ .prefix = CS_STR("n") });
	assert_non_null(strstr(s, "n v1:x@3=version\nn#e#1 b:y@1=written\\x20again\nn#r ab:new@1=new\\x20family old:x@"));
	free(s);
	tu_commit(txn);

	/* In one transaction: cells written before a drop of the source are not moved; cells moved into a
	 * range dropped earlier in the transaction show; a later drop of the destination hides them. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("m#1"), "a", CS_STR("q"), 1, CS_STR("before")), 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("m#2"), "a", CS_STR("q"), 1, CS_STR("before")), 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("m#1")), 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("p")), 0);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("m"), CS_STR("p"), 0, &moved), 0);
	assert_int_equal(moved, 1);
	s = tu_dump(txn, "t", &(cs_read_opts){ .prefix = CS_STR("m") });
	assert_string_equal(s, "");
	free(s);
	s = tu_dump(txn, "t", &(cs_read_opts){ .prefix = CS_STR("p") });
	assert_string_equal(s, "p#2 a:q@1=before\n");
	free(s);
	tu_commit(txn);
	tu_expect_dump(ts->st, &(cs_read_opts){ .prefix = CS_STR("p") }, "p#2 a:q@1=before\n");
	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("p"), CS_STR("m"), 0, &moved), 0);
	assert_int_equal(moved, 1);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("m")), 0);
	tu_commit(txn);
	tu_expect_dump(ts->st, &(cs_read_opts){ .prefix = CS_STR("m") }, "");
	tu_expect_dump(ts->st, &(cs_read_opts){ .prefix = CS_STR("p") }, "");
}

/* Keys near the limits, across kv's 480-byte boundary (short keys become long and long ones short, long
 * keys sharing their first 480 bytes with their destination), any bytes, full-size qualifiers; a key that
 * would pass CS_MAX_ROW_KEY refuses the whole move. */
static void test_mutate__move_prefix_long_keys(void **state)
{
	struct tu_store *ts = *state;
	uint8_t *to = malloc(3000), *x = malloc(CS_MAX_ROW_KEY), *row = malloc(CS_MAX_ROW_KEY + 1), *q = malloc(CS_MAX_QUALIFIER);
	static const size_t rests[] = { 0, 10, 470, 1000, CS_MAX_ROW_KEY - 3000 - 1 };
	uint64_t seed = 11, moved;
	char *orig, *s;
	cs_txn *txn;

	tu_rand_bytes(&seed, to, 3000, 1);
	tu_rand_bytes(&seed, x, CS_MAX_ROW_KEY, 1);
	tu_rand_bytes(&seed, q, CS_MAX_QUALIFIER, 1);
	txn = tu_begin(ts->st, 0);
	for (size_t i = 0; i < TU_ARRAY_SIZE(rests); i++) {
		size_t n = 1 + (rests[i] ? 1 + rests[i] : 0);
		row[0] = 's';
		row[1] = '#';
		memcpy(row + 2, x, rests[i]);
		assert_int_equal(tu_set(txn, "t", CS_BYTES(row, n), "a", CS_STR("q"), 1, CS_BYTES(x, i * 100)), 0);
		assert_int_equal(tu_set(txn, "t", CS_BYTES(row, n), "b", CS_BYTES(q, CS_MAX_QUALIFIER), 2, CS_STR("long q")), 0);
		assert_int_equal(tu_set(txn, "t", CS_BYTES(row, n), "b", CS_BYTES(q, 400), 3, CS_STR("q 400")), 0);
	}
	tu_commit(txn);

	/* One row too long once moved: nothing moves. */
	txn = tu_begin(ts->st, 0);
	memcpy(row + 2, x, CS_MAX_ROW_KEY - 3000);
	assert_int_equal(tu_set(txn, "t", CS_BYTES(row, 2 + CS_MAX_ROW_KEY - 3000), "a", CS_STR("q"), 1, CS_STR("too long")), 0);
	orig = table_text(txn, "t");
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("s"), CS_BYTES(to, 3000), 0, &moved), -ENAMETOOLONG);
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	free(orig);
	cs_txn_abort(txn);

	/* Such a row whose cells are all hidden (deleted family) does not count; its cells are removed. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(tu_set(txn, "t", CS_BYTES(row, 2 + CS_MAX_ROW_KEY - 3000), "ab", CS_STR("q"), 1, CS_STR("hidden")), 0);
	assert_int_equal(cs_family_delete(txn, "t", "ab"), 0);
	assert_int_equal(stored_cells(txn, "t", CS_BYTES(row, 2 + CS_MAX_ROW_KEY - 3000)), 1);
	orig = table_text(txn, "t");
	/* Short to long (the longest row ends at exactly CS_MAX_ROW_KEY), then back. */
	assert_int_equal(move_checked(txn, "t", '#', CS_STR("s"), CS_BYTES(to, 3000)), 3 * TU_ARRAY_SIZE(rests));
	assert_int_equal(stored_cells(txn, "t", CS_BYTES(row, 2 + CS_MAX_ROW_KEY - 3000)), 0);
	assert_int_equal(move_checked(txn, "t", '#', CS_BYTES(to, 3000), CS_STR("s")), 3 * TU_ARRAY_SIZE(rests));
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	tu_commit(txn);

	/* Long to long: rows FROM and TO differ in their last byte only, so their keys share kv's first 480
	 * bytes; and to a TO that sorts before FROM. */
	txn = tu_begin(ts->st, 0);
	memcpy(row, x, 3990);
	row[3990] = '1';
	for (int i = 0; i < 3; i++) {
		size_t n = 3991 + (i ? 1 + (size_t)i : 0);
		row[3991] = '#';
		memset(row + 3992, 0xff - i, (size_t)i);
		assert_int_equal(tu_set(txn, "t", CS_BYTES(row, n), "a", CS_STR("q"), i, CS_BYTES(q, 1000 + (size_t)i)), 0);
		assert_int_equal(tu_set(txn, "t", CS_BYTES(row, n), "b", CS_BYTES(q, CS_MAX_QUALIFIER), i, CS_STR("v")), 0);
	}
	/* TOs x[:3990] + '2' and x[:3990] + '0'. */
	uint8_t *t2 = malloc(3991), *t0 = malloc(3991);
	memcpy(t2, x, 3990);
	memcpy(t0, x, 3990);
	t2[3990] = '2';
	t0[3990] = '0';
	assert_int_equal(move_checked(txn, "t", '#', CS_BYTES(row, 3991), CS_BYTES(t2, 3991)), 6);
	assert_int_equal(move_checked(txn, "t", '#', CS_BYTES(t2, 3991), CS_BYTES(t0, 3991)), 6);
	assert_int_equal(stored_cells(txn, "t", CS_BYTES(t0, 3991)), 6);
	assert_int_equal(stored_cells(txn, "t", CS_BYTES(t2, 3991)), 0);
	assert_int_equal(stored_cells(txn, "t", CS_BYTES(row, 3991)), 0);
	tu_commit(txn);
	tu_reopen(ts, 0, 0);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	s = tu_dump(txn, "t", &(cs_read_opts){ .prefix = CS_BYTES(t0, 3991), .keys_only = true,
					.columns = &(cs_column_sel){ .family = "a" }, .ncolumns = 1 });
	assert_true(strlen(s) > 3 * 3991);
	assert_non_null(strstr(s, " a:q@0=[1000]\n"));
	assert_non_null(strstr(s, " a:q@2=[1002]\n"));
	free(s);
	tu_commit(txn);
	free(orig);
	free(to);
	free(t0);
	free(t2);
	free(x);
	free(row);
	free(q);
}

/* Values are moved as stored: compressed ones stay compressed (not recompressed), raw ones raw. */
static void test_mutate__move_prefix_keeps_compressed_values(void **state)
{
	static const size_t sizes[] = { 0, 127, 128, 300, 4000, 70000 };
	struct tu_store *ts = *state;
	uint8_t *text = malloc(70000), *noise = malloc(300), *k = malloc(KEY_MAX);
	uint64_t seed = 3;
	struct sch_table *t;
	cs_txn *txn;

	for (size_t i = 0; i < 70000; i++)
		text[i] = (uint8_t)"a compressible value, #row#key "[i % 31];
	tu_rand_bytes(&seed, noise, 300, 0);
	txn = tu_begin(ts->st, 0);
	for (size_t i = 0; i < TU_ARRAY_SIZE(sizes); i++) {
		assert_int_equal(tu_set(txn, "t", CS_STR("a#b#c"), "a", CS_STR("text"), (int64_t)i, CS_BYTES(text, sizes[i])), 0);
		if (sizes[i] <= 300)
			assert_int_equal(tu_set(txn, "t", CS_STR("a#b"), "b", CS_STR("noise"), (int64_t)i, CS_BYTES(noise, sizes[i])), 0);
	}
	tu_commit(txn);

	txn = tu_begin(ts->st, 0);
	assert_int_equal(sch_table_get(lm_txn_of(txn), "t", &t), 0);
	/* The stored records before, by key: header and payload. */
	codec_hdr hb[TU_ARRAY_SIZE(sizes)];
	uint8_t *payload[TU_ARRAY_SIZE(sizes)];
	size_t plen[TU_ARRAY_SIZE(sizes)];
	for (size_t i = 0; i < TU_ARRAY_SIZE(sizes); i++) {
		const void *v;
		size_t vn, kn = key_cell(k, t->id, CS_STR("a#b#c"), "a", CS_STR("text"), (int64_t)i);
		assert_int_equal(kv_get(lm_txn_of(txn)->kv, k, kn, &v, &vn), 0);
		assert_int_equal(codec_header(v, vn, &hb[i]), 0);
		plen[i] = vn - hb[i].hdrlen;
		payload[i] = tu_filled(plen[i], 0);
		memcpy(payload[i], (const uint8_t *)v + hb[i].hdrlen, plen[i]);
	}
	assert_int_equal(hb[0].kind, CODEC_RAW);
	assert_int_equal(hb[1].kind, CODEC_RAW);
	assert_int_equal(hb[2].kind, CODEC_ZSTD);
	assert_int_equal(hb[5].kind, CODEC_ZSTD);
	assert_int_equal(move_checked(txn, "t", '#', CS_STR("a#b"), CS_STR("x")), TU_ARRAY_SIZE(sizes) + 4);
	for (size_t i = 0; i < TU_ARRAY_SIZE(sizes); i++) {
		const void *v;
		size_t vn, kn = key_cell(k, t->id, CS_STR("x#c"), "a", CS_STR("text"), (int64_t)i);
		codec_hdr h;
		assert_int_equal(kv_get(lm_txn_of(txn)->kv, k, kn, &v, &vn), 0);
		assert_int_equal(codec_header(v, vn, &h), 0);
		assert_int_equal(h.kind, hb[i].kind);
		assert_int_equal(h.rawlen, sizes[i]);
		assert_true(h.seq > hb[i].seq); /* written now */
		assert_int_equal(vn - h.hdrlen, plen[i]);
		if (plen[i])
			assert_memory_equal((const uint8_t *)v + h.hdrlen, payload[i], vn - h.hdrlen);
		free(payload[i]);
	}
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	cs_scan *scan;
	const cs_row *r;
	assert_int_equal(cs_scan_open(txn, "t", &(cs_read_opts){ .row = &CS_STR("x#c") }, &scan), 0);
	assert_int_equal(cs_scan_next(scan, &r), 1);
	assert_int_equal(r->ncells, TU_ARRAY_SIZE(sizes));
	for (size_t i = 0; i < TU_ARRAY_SIZE(sizes); i++) {
		const cs_cell *c = &r->cells[TU_ARRAY_SIZE(sizes) - 1 - i];
		assert_int_equal(c->ts, (int64_t)i);
		assert_int_equal(c->value.len, sizes[i]);
		if (sizes[i])
			assert_memory_equal(c->value.data, text, sizes[i]);
	}
	cs_scan_close(scan);
	tu_commit(txn);
	free(text);
	free(noise);
	free(k);
}

/* The move is part of the caller's transaction: aborted, the store is as it was, to the stored byte;
 * committed, it lands together with the other changes. */
static void test_mutate__move_prefix_aborted_transaction_leaves_store_as_it_was(void **state)
{
	struct tu_store *ts = *state;
	uint64_t moved, stored;
	char *orig, *s;
	cs_txn *txn;

	populate_tree(ts->st);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	orig = table_text(txn, "t");
	stored = stored_cells(txn, "t", CS_STR(""));
	tu_commit(txn);

	txn = tu_begin(ts->st, 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("new"), "a", CS_STR("q"), 1, CS_STR("v")), 0);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_STR("a#c"), 0, &moved), 0);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#c#x"), CS_STR("b#x"), 0, &moved), 0);
	assert_int_equal(moved, 2 * TREE_CELLS);
	assert_int_equal(cs_table_rename(txn, "t", "u"), 0);
	cs_txn_abort(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	s = table_text(txn, "t");
	assert_string_equal(s, orig);
	free(s);
	assert_int_equal(stored_cells(txn, "t", CS_STR("")), stored);
	tu_commit(txn);

	/* Committed with a mutation before and after it: all of it, or (a failed write) none of it. */
	txn = tu_begin(ts->st, 0);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#b#x"), "a", CS_STR("q"), 9, CS_STR("before")), 0);
	assert_int_equal(cs_move_prefix(txn, "t", CS_STR("a#b"), CS_STR("a#c"), 0, &moved), 0);
	assert_int_equal(moved, tree_count() * TREE_CELLS + 1);
	assert_int_equal(tu_set(txn, "t", CS_STR("a#b"), "a", CS_STR("q"), 9, CS_STR("after")), 0);
	tu_commit(txn);
	tu_expect_dump(ts->st, &(cs_read_opts){ .row = &CS_STR("a#b") }, "a#b a:q@9=after\n");
	tu_expect_dump(ts->st, &(cs_read_opts){ .prefix = CS_STR("a#b#") }, "");
	s = tu_dump_st(ts->st, "t", &(cs_read_opts){ .row = &CS_STR("a#c#x"), .cells_per_column = 1,
						     .columns = &(cs_column_sel){ .family = "a" }, .ncolumns = 1 });
	assert_string_equal(s, "a#c#x a:q@9=before\n");
	free(s);
	free(orig);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, tu_mutate_setup, tu_store_teardown)
		T(test_mutate__move_prefix_moves_the_subtree_exactly),
		T(test_mutate__move_prefix_uses_the_table_delimiter),
		T(test_mutate__move_prefix_validation_errors),
		T(test_mutate__move_prefix_refuses_over_max_cells),
		T(test_mutate__move_prefix_refuses_onto_existing_rows),
		T(test_mutate__move_prefix_does_not_resurrect_hidden_cells),
		T(test_mutate__move_prefix_long_keys),
		T(test_mutate__move_prefix_keeps_compressed_values),
		T(test_mutate__move_prefix_aborted_transaction_leaves_store_as_it_was),
#undef T
	};
	return cmocka_run_group_tests_name("move", tests, NULL, NULL);
}
