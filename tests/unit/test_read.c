/* test_read.c — scans: one row, a prefix, [start, end), reversed, a limit, column selectors (exact,
 * regex, unions), cells per column, timestamp ranges, keys only, row regex; rows of any bytes at full
 * length in exact bytewise order against a model; and GC visibility: cells a policy collects are never
 * returned, before or after cs_gc(). */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIT(s) { (s), sizeof(s) - 1 }
#define Y10 "yyyyyyyyyy"
#define Y130 Y10 Y10 Y10 Y10 Y10 Y10 Y10 Y10 Y10 Y10 Y10 Y10 Y10 /* compressed when stored */

static const struct {
	const char *row;
	size_t rn;
	const char *fam, *q;
	int64_t ts;
	const char *v;
} fixture[] = {
	{ "r1", 2, "a", "q1", 3, "v3" }, { "r1", 2, "a", "q1", 2, "v2" }, { "r1", 2, "a", "q1", 1, "v1" },
	{ "r1", 2, "a", "q2", 5, "w" },  { "r1", 2, "b", "q1", 4, "b4" },
	{ "r1\0", 3, "a", "q1", 1, "n" },
	{ "r1#x", 4, "b", "z", 7, "z7" },
	{ "r2", 2, "a", "q2", 2, "r2a" }, { "r2", 2, "b", "other", 9, "o" },
	{ "r3", 2, "b", "q1", 1, "r3b" },
	{ "s1", 2, "a", "q1", 10, "s" },
	{ "s2", 2, "a", "long", 1, Y130 },
	{ "\xff", 1, "a", "q1", 1, "ff" },
	{ "\0", 1, "a", "q1", 1, "nul" },
};

#define L0 "\\x00 a:q1@1=nul\n"
#define L1 "r1 a:q1@3=v3 a:q1@2=v2 a:q1@1=v1 a:q2@5=w b:q1@4=b4\n"
#define L2 "r1\\x00 a:q1@1=n\n"
#define L3 "r1#x b:z@7=z7\n"
#define L4 "r2 a:q2@2=r2a b:other@9=o\n"
#define L5 "r3 b:q1@1=r3b\n"
#define L6 "s1 a:q1@10=s\n"
#define L7 "s2 a:long@1=" Y130 "\n"
#define L8 "\\xff a:q1@1=ff\n"

static int setup(void **state)
{
	struct tu_store *ts;
	cs_txn *txn;

	tu_store_setup(state);
	ts = *state;
	tu_table(ts->st, "t", "a", NULL, "b", NULL, NULL);
	txn = tu_begin(ts->st, 0);
	for (size_t i = 0; i < TU_ARRAY_SIZE(fixture); i++)
		assert_int_equal(tu_set(txn, "t", CS_BYTES(fixture[i].row, fixture[i].rn), fixture[i].fam,
					CS_STR(fixture[i].q), fixture[i].ts, CS_STR(fixture[i].v)), 0);
	tu_commit(txn);
	return 0;
}

static const cs_bytes row_r1 = LIT("r1"), row_r1nul = { "r1\0", 3 }, row_r = LIT("r"), row_r2 = LIT("r2");
static const cs_bytes q1 = LIT("q1"), q2 = LIT("q2"), qz = LIT("z");
static const cs_column_sel fam_b[] = { { .family = "b" } };
static const cs_column_sel a_q1[] = { { .family = "a", .qualifier = &q1 } };
static const cs_bytes qq = LIT("q"), qother = LIT("other");
static const cs_column_sel a_q2[] = { { .family = "a", .qualifier = &q2 } };
static const cs_column_sel b_q1[] = { { .family = "b", .qualifier = &q1 } };
static const cs_column_sel b_z[] = { { .family = "b", .qualifier = &qz } };
static const cs_column_sel a_q[] = { { .family = "a", .qualifier = &qq } };
static const cs_column_sel a_other[] = { { .family = "a", .qualifier = &qother } };
static const cs_column_sel q_re[] = { { .qualifier_regex = "q." } };
static const cs_column_sel fre_qre[] = { { .family_regex = "[ab]", .qualifier_regex = "o.*" } };
static const cs_column_sel both_q1[] = { { .qualifier = &q1 } };
static const cs_column_sel sel_union[] = { { .family = "b", .qualifier = &qz }, { .family = "a", .qualifier = &q2 } };
static const cs_column_sel overlap[] = { { .family = "a" }, { .qualifier = &q1 } };
static const cs_column_sel nothing[] = { { .family = "c" } };
static const cs_column_sel fre_anchored[] = { { .family_regex = "a|c" } };
static const cs_column_sel fre_partial[] = { { .family_regex = "" } };
static const cs_cell after_a_q1_3 = { .family = "a", .qualifier = LIT("q1"), .ts = 3 };
static const cs_cell after_a_q1_5 = { .family = "a", .qualifier = LIT("q1"), .ts = 5 };
static const cs_cell after_a_q2_5 = { .family = "a", .qualifier = LIT("q2"), .ts = 5 };
static const cs_cell after_b_q1_4 = { .family = "b", .qualifier = LIT("q1"), .ts = 4 };
static const cs_cell after_a_p = { .family = "a", .qualifier = LIT("p"), .ts = 0 };

static const struct read_case {
	const char *name;
	cs_read_opts o;
	const char *want;
} read_cases[] = {
	{ "everything", { 0 }, L0 L1 L2 L3 L4 L5 L6 L7 L8 },
	{ "row", { .row = &row_r1 }, L1 },
	{ "row with a NUL", { .row = &row_r1nul }, L2 },
	{ "missing row", { .row = &row_r }, "" },
	{ "prefix r1", { .prefix = LIT("r1") }, L1 L2 L3 },
	{ "prefix r", { .prefix = LIT("r") }, L1 L2 L3 L4 L5 },
	{ "prefix 0xff", { .prefix = { "\xff", 1 } }, L8 },
	{ "prefix NUL", { .prefix = { "\0", 1 } }, L0 },
	{ "prefix none", { .prefix = LIT("q") }, "" },
	{ "range", { .start = { "r1\0", 3 }, .end = LIT("r3") }, L2 L3 L4 },
	{ "from", { .start = LIT("r2") }, L4 L5 L6 L7 L8 },
	{ "until", { .end = LIT("r2") }, L0 L1 L2 L3 },
	{ "until NUL", { .end = { "\0", 1 } }, "" },
	{ "empty range", { .start = LIT("s"), .end = LIT("r") }, "" },
	{ "start is end", { .start = LIT("r2"), .end = LIT("r2") }, "" },
	{ "prefix and start", { .prefix = LIT("r"), .start = LIT("r2") }, L4 L5 },
	{ "prefix and end", { .prefix = LIT("r"), .end = LIT("r1#") }, L1 L2 },
	{ "row and prefix", { .row = &row_r2, .prefix = LIT("r") }, L4 },
	{ "row outside prefix", { .row = &row_r2, .prefix = LIT("s") }, "" },
	{ "reversed", { .reversed = true }, L8 L7 L6 L5 L4 L3 L2 L1 L0 },
	{ "reversed prefix", { .reversed = true, .prefix = LIT("r1") }, L3 L2 L1 },
	{ "reversed range", { .reversed = true, .start = { "r1\0", 3 }, .end = LIT("r3") }, L4 L3 L2 },
	{ "reversed from", { .reversed = true, .start = LIT("s1") }, L8 L7 L6 },
	{ "reversed until", { .reversed = true, .end = LIT("r1#x") }, L2 L1 L0 },
	{ "reversed row", { .reversed = true, .row = &row_r2 }, L4 },
	{ "reversed prefix 0xff", { .reversed = true, .prefix = { "\xff", 1 } }, L8 },
	{ "limit", { .limit = 2 }, L0 L1 },
	{ "limit reversed", { .limit = 2, .reversed = true }, L8 L7 },
	{ "limit prefix", { .limit = 1, .prefix = LIT("r") }, L1 },
	{ "limit above count", { .limit = 100, .prefix = LIT("s") }, L6 L7 },
	{ "family", { .ncolumns = 1, .columns = fam_b },
	  "r1 b:q1@4=b4\n" L3 "r2 b:other@9=o\n" L5 },
	{ "family:qualifier", { .ncolumns = 1, .columns = a_q1 },
	  L0 "r1 a:q1@3=v3 a:q1@2=v2 a:q1@1=v1\n" L2 L6 L8 },
	{ "qualifier regex", { .ncolumns = 1, .columns = q_re },
	  L0 L1 L2 "r2 a:q2@2=r2a\n" L5 L6 L8 },
	{ "family and qualifier regexes", { .ncolumns = 1, .columns = fre_qre }, "r2 b:other@9=o\n" },
	{ "qualifier in any family", { .ncolumns = 1, .columns = both_q1 },
	  L0 "r1 a:q1@3=v3 a:q1@2=v2 a:q1@1=v1 b:q1@4=b4\n" L2 L5 L6 L8 },
	{ "union", { .ncolumns = 2, .columns = sel_union }, "r1 a:q2@5=w\n" L3 "r2 a:q2@2=r2a\n" },
	{ "overlapping union: each cell once", { .ncolumns = 2, .columns = overlap, .prefix = LIT("r1") }, L1 L2 },
	{ "selector matching nothing", { .ncolumns = 1, .columns = nothing }, "" },
	{ "family regex alternatives are anchored", { .ncolumns = 1, .columns = fre_anchored, .prefix = LIT("r1") },
	  "r1 a:q1@3=v3 a:q1@2=v2 a:q1@1=v1 a:q2@5=w\n" L2 },
	{ "empty family regex matches no family", { .ncolumns = 1, .columns = fre_partial }, "" },
	{ "one cell per column", { .cells_per_column = 1, .prefix = LIT("r1") }, "r1 a:q1@3=v3 a:q2@5=w b:q1@4=b4\n" L2 L3 },
	{ "two cells per column", { .cells_per_column = 2, .row = &row_r1 }, "r1 a:q1@3=v3 a:q1@2=v2 a:q2@5=w b:q1@4=b4\n" },
	{ "one cell per row", { .cells_per_row = 1, .prefix = LIT("r") }, "r1 a:q1@3=v3\n" L2 L3 "r2 a:q2@2=r2a\n" L5 },
	{ "two cells per row, after the other filters", { .cells_per_row = 2, .cells_per_column = 1, .row = &row_r1 },
	  "r1 a:q1@3=v3 a:q2@5=w\n" },
	{ "one cell of a row's family", { .cells_per_row = 1, .row = &row_r1, .ncolumns = 1, .columns = fam_b },
	  "r1 b:q1@4=b4\n" },
	{ "one cell per row, reversed", { .cells_per_row = 1, .reversed = true, .prefix = LIT("r1") },
	  "r1#x b:z@7=z7\n" L2 "r1 a:q1@3=v3\n" },
	{ "one cell per row, timestamp range", { .cells_per_row = 1, .ts_start = 4, .ts_end = 6, .prefix = LIT("r1") },
	  "r1 a:q2@5=w\n" },
	{ "after a cell", { .row = &row_r1, .after = &after_a_q1_3 }, "r1 a:q1@2=v2 a:q1@1=v1 a:q2@5=w b:q1@4=b4\n" },
	{ "after a cell, two at a time", { .row = &row_r1, .after = &after_a_q1_3, .cells_per_row = 2 },
	  "r1 a:q1@2=v2 a:q1@1=v1\n" },
	{ "after a cell, then the next two", { .row = &row_r1, .after = &after_a_q1_5, .cells_per_row = 2 },
	  "r1 a:q1@3=v3 a:q1@2=v2\n" },
	{ "after the row's last cell", { .row = &row_r1, .after = &after_b_q1_4 }, "" },
	{ "after a cell, in another family", { .row = &row_r1, .after = &after_a_q2_5, .ncolumns = 1, .columns = fam_b },
	  "r1 b:q1@4=b4\n" },
	{ "after a column that is not there", { .row = &row_r1, .after = &after_a_p }, L1 },
	{ "after a cell, versions counted from the column's newest",
	  { .row = &row_r1, .after = &after_a_q1_3, .cells_per_column = 2 }, "r1 a:q1@2=v2 a:q2@5=w b:q1@4=b4\n" },
	{ "after a cell of another row's", { .row = &row_r2, .after = &after_a_q1_3 }, L4 },
	{ "timestamp range", { .ts_start = 2, .ts_end = 5 }, "r1 a:q1@3=v3 a:q1@2=v2 b:q1@4=b4\nr2 a:q2@2=r2a\n" },
	{ "timestamps from", { .ts_start = 5, .ts_end = CS_TS_MAX }, "r1 a:q2@5=w\n" L3 "r2 b:other@9=o\n" L6 },
	{ "timestamps until", { .ts_start = 0, .ts_end = 2 }, L0 "r1 a:q1@1=v1\n" L2 L5 L7 L8 },
	{ "empty timestamp range", { .ts_start = 5, .ts_end = 5 }, "" },
	{ "timestamp range, then one per column", { .ts_start = 2, .ts_end = 5, .cells_per_column = 1 },
	  "r1 a:q1@3=v3 b:q1@4=b4\nr2 a:q2@2=r2a\n" },
	{ "keys only", { .keys_only = true, .prefix = LIT("s") }, "s1 a:q1@10=[1]\ns2 a:long@1=[130]\n" },
	{ "keys only, reversed, one per column",
	  { .keys_only = true, .reversed = true, .cells_per_column = 1, .row = &row_r1 },
	  "r1 a:q1@3=[2] a:q2@5=[1] b:q1@4=[2]\n" },
	{ "row regex", { .row_regex = "r[0-9]" }, L1 L4 L5 },
	{ "row regex is anchored", { .row_regex = "1" }, "" },
	{ "row regex with #", { .row_regex = "r1#.*" }, L3 },
	{ "row regex alternatives", { .row_regex = "s1|r3" }, L5 L6 },
	{ "row regex reversed", { .row_regex = "r[0-9]", .reversed = true }, L5 L4 L1 },
	{ "row regex in RE2's dialect", { .row_regex = "(?i)R\\x31|\\Qr3\\E" }, L1 L5 },
	{ "row regex matches bytes", { .row_regex = "r1\\C\\C+" }, L3 },
	{ "row regex and limit", { .row_regex = "[rs][0-9]", .limit = 4, .start = LIT("r2") }, L4 L5 L6 L7 },
	/* one exact column of one row: the scan seeks to the column's cells (read.c) */
	{ "one column of a row", { .row = &row_r1, .ncolumns = 1, .columns = a_q1 }, "r1 a:q1@3=v3 a:q1@2=v2 a:q1@1=v1\n" },
	{ "one column, after another", { .row = &row_r1, .ncolumns = 1, .columns = a_q2 }, "r1 a:q2@5=w\n" },
	{ "one column, in a later family", { .row = &row_r1, .ncolumns = 1, .columns = b_q1 }, "r1 b:q1@4=b4\n" },
	{ "one column, only in a later row", { .row = &row_r1, .ncolumns = 1, .columns = b_z }, "" },
	{ "one column, a prefix of another's qualifier", { .row = &row_r1, .ncolumns = 1, .columns = a_q }, "" },
	{ "one column, in the other family", { .row = &row_r2, .ncolumns = 1, .columns = a_other }, "" },
	{ "one column of a row with a NUL", { .row = &row_r1nul, .ncolumns = 1, .columns = a_q1 }, L2 },
	{ "one column of a missing row", { .row = &row_r, .ncolumns = 1, .columns = a_q1 }, "" },
	{ "one column, one cell", { .row = &row_r1, .ncolumns = 1, .columns = a_q1, .cells_per_column = 1 },
	  "r1 a:q1@3=v3\n" },
	{ "one column, a timestamp range", { .row = &row_r1, .ncolumns = 1, .columns = a_q1, .ts_start = 2, .ts_end = 3 },
	  "r1 a:q1@2=v2\n" },
	{ "one column, keys only", { .row = &row_r1, .ncolumns = 1, .columns = a_q1, .keys_only = true, .limit = 1 },
	  "r1 a:q1@3=[2] a:q1@2=[2] a:q1@1=[2]\n" },
	{ "one column, reversed", { .row = &row_r1, .ncolumns = 1, .columns = b_q1, .reversed = true }, "r1 b:q1@4=b4\n" },
	{ "row regex, prefix, columns", { .row_regex = "r.", .prefix = LIT("r"), .ncolumns = 1, .columns = fam_b },
	  "r1 b:q1@4=b4\nr2 b:other@9=o\n" L5 },
};

static void test_read__options(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn = tu_begin(ts->st, CS_TXN_RDONLY);
	int failed = 0;

	for (size_t i = 0; i < TU_ARRAY_SIZE(read_cases); i++) {
		char *s = tu_dump(txn, "t", &read_cases[i].o);
		if (strcmp(s, read_cases[i].want)) {
			print_error("%s: got\n%swant\n%s", read_cases[i].name, s, read_cases[i].want);
			failed++;
		}
		free(s);
	}
	tu_commit(txn);
	if (failed)
		fail_msg("%d read cases failed", failed);
}

/* The same reads in the write transaction that wrote the rows. */
static void test_read__options_in_write_transaction(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn = tu_begin(ts->st, 0);

	assert_int_equal(tu_set(txn, "t", CS_STR("t0"), "a", CS_STR("q"), 1, CS_STR("mine")), 0);
	for (size_t i = 0; i < TU_ARRAY_SIZE(read_cases); i++) {
		if (read_cases[i].o.row || read_cases[i].o.prefix.len) {
			char *s = tu_dump(txn, "t", &read_cases[i].o);
			if (strcmp(s, read_cases[i].want))
				fail_msg("%s: got\n%swant\n%s", read_cases[i].name, s, read_cases[i].want);
			free(s);
		}
	}
	char *s = tu_dump(txn, "t", &(cs_read_opts){ .start = LIT("t"), .end = LIT("u") });
	assert_string_equal(s, "t0 a:q@1=mine\n");
	free(s);
	cs_txn_abort(txn);
}

static void test_read__errors(void **state)
{
	static const cs_column_sel bad_f[] = { { .family_regex = "[" } }, bad_q[] = { { .qualifier_regex = "(" } };
	struct tu_store *ts = *state;
	cs_txn *txn = tu_begin(ts->st, CS_TXN_RDONLY);
	cs_scan *scan = NULL;

	assert_int_equal(cs_scan_open(txn, "nosuch", NULL, &scan), -ENOENT);
	assert_int_equal(cs_scan_open(txn, "t", &(cs_read_opts){ .row_regex = "(" }, &scan), -EINVAL);
	assert_int_equal(cs_scan_open(txn, "t", &(cs_read_opts){ .ncolumns = 1, .columns = bad_f }, &scan), -EINVAL);
	assert_int_equal(cs_scan_open(txn, "t", &(cs_read_opts){ .ncolumns = 1, .columns = bad_q }, &scan), -EINVAL);
	cs_scan_close(NULL);
	/* After the end, a scan stays at the end. */
	const cs_row *r;
	assert_int_equal(cs_scan_open(txn, "t", &(cs_read_opts){ .limit = 1 }, &scan), 0);
	assert_int_equal(cs_scan_next(scan, &r), 1);
	assert_int_equal(cs_scan_next(scan, &r), 0);
	assert_int_equal(cs_scan_next(scan, &r), 0);
	cs_scan_close(scan);
	tu_commit(txn);
}

/* Values of every size come back as written; their length is known with keys_only. */
static void test_read__values_round_trip(void **state)
{
	static const size_t sizes[] = { 0, 1, 127, 128, 129, 4096, 1 << 20, 10 << 20 };
	struct tu_store *ts = *state;
	uint8_t *vals[TU_ARRAY_SIZE(sizes) * 2];
	uint64_t seed = 3;
	cs_txn *txn = tu_begin(ts->st, 0);
	cs_scan *scan;
	const cs_row *r;

	for (size_t i = 0; i < TU_ARRAY_SIZE(sizes); i++) {
		char q[16];
		vals[2 * i] = tu_filled(sizes[i], 'c');         /* compressible */
		vals[2 * i + 1] = tu_filled(sizes[i], 0);
		tu_rand_bytes(&seed, vals[2 * i + 1], sizes[i], 0); /* incompressible */
		for (int k = 0; k < 2; k++) {
			snprintf(q, sizeof(q), "%02zu", 2 * i + k);
			assert_int_equal(tu_set(txn, "t", CS_STR("vals"), "a", CS_STR(q), 1, CS_BYTES(vals[2 * i + k], sizes[i])), 0);
		}
	}
	tu_commit(txn);
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	for (int keys_only = 0; keys_only < 2; keys_only++) {
		cs_bytes row = CS_STR("vals");
		assert_int_equal(cs_scan_open(txn, "t", &(cs_read_opts){ .row = &row, .keys_only = keys_only }, &scan), 0);
		assert_int_equal(cs_scan_next(scan, &r), 1);
		assert_int_equal(r->ncells, 2 * TU_ARRAY_SIZE(sizes));
		for (size_t c = 0; c < r->ncells; c++) {
			size_t n = sizes[c / 2];
			assert_int_equal(r->cells[c].value_len, n);
			if (keys_only) {
				assert_int_equal(r->cells[c].value.len, 0);
			} else {
				assert_int_equal(r->cells[c].value.len, n);
				if (n)
					assert_memory_equal(r->cells[c].value.data, vals[c], n);
			}
		}
		cs_scan_close(scan);
	}
	tu_commit(txn);
	for (size_t i = 0; i < 2 * TU_ARRAY_SIZE(sizes); i++)
		free(vals[i]);
}

/* ---- bytewise order against a model, at the limits ---- */

struct mcell {
	uint8_t *row, *q;
	size_t rn, qn;
	const char *fam;
	int64_t ts;
};

static int bcmp_(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int r = n ? memcmp(a, b, n) : 0;
	return r ? r : (an > bn) - (an < bn);
}

static int mcell_cmp(const void *x, const void *y)
{
	const struct mcell *a = x, *b = y;
	int r = bcmp_(a->row, a->rn, b->row, b->rn);
	if (!r)
		r = strcmp(a->fam, b->fam);
	if (!r)
		r = bcmp_(a->q, a->qn, b->q, b->qn);
	if (!r)
		r = (a->ts < b->ts) - (a->ts > b->ts);
	return r;
}

/* The same column (row, family, qualifier)? 0 if so. */
static int mcell_cmp_col(const struct mcell *a, const struct mcell *b)
{
	int r = bcmp_(a->row, a->rn, b->row, b->rn);
	if (!r)
		r = strcmp(a->fam, b->fam);
	return r ? r : bcmp_(a->q, a->qn, b->q, b->qn);
}

static bool row_in(const struct mcell *c, const cs_read_opts *o)
{
	if (o->start.len && bcmp_(c->row, c->rn, o->start.data, o->start.len) < 0)
		return false;
	if (o->end.len && bcmp_(c->row, c->rn, o->end.data, o->end.len) >= 0)
		return false;
	if (o->prefix.len && (c->rn < o->prefix.len || memcmp(c->row, o->prefix.data, o->prefix.len)))
		return false;
	if (o->row && bcmp_(c->row, c->rn, o->row->data, o->row->len))
		return false;
	return true;
}

/* Scan with O and compare with the model's cells (sorted, no duplicates) that O selects. */
static void check_scan(cs_txn *txn, const struct mcell *m, size_t n, const cs_read_opts *o, const char *what)
{
	cs_scan *scan;
	const cs_row *r;
	size_t rows = 0;
	size_t i = o->reversed ? n : 0; /* reversed: rows backwards, cells within a row still forwards */
	int rc;

	if ((rc = cs_scan_open(txn, "t", o, &scan)))
		fail_msg("%s: scan_open %d", what, rc);
	while ((rc = cs_scan_next(scan, &r)) == 1) {
		size_t first, last; /* the model's next row: [first, last) */
		if (o->reversed) {
			while (i > 0 && !row_in(&m[i - 1], o))
				i--;
			if (!i)
				fail_msg("%s: extra row", what);
			last = i;
			first = i - 1;
			while (first > 0 && !bcmp_(m[first - 1].row, m[first - 1].rn, m[last - 1].row, m[last - 1].rn))
				first--;
			i = first;
		} else {
			while (i < n && !row_in(&m[i], o))
				i++;
			if (i == n)
				fail_msg("%s: extra row", what);
			first = i;
			last = i + 1;
			while (last < n && !bcmp_(m[last].row, m[last].rn, m[first].row, m[first].rn))
				last++;
			i = last;
		}
		if (r->key.len != m[first].rn || memcmp(r->key.data, m[first].row, r->key.len))
			fail_msg("%s: row %zu differs (length %zu, want %zu)", what, rows, r->key.len, m[first].rn);
		if (r->ncells != last - first)
			fail_msg("%s: row %zu has %zu cells, want %zu", what, rows, r->ncells, last - first);
		for (size_t c = 0; c < r->ncells; c++) {
			const struct mcell *mc = &m[first + c];
			if (strcmp(r->cells[c].family, mc->fam) || r->cells[c].ts != mc->ts ||
			    bcmp_(r->cells[c].qualifier.data, r->cells[c].qualifier.len, mc->q, mc->qn))
				fail_msg("%s: row %zu cell %zu differs", what, rows, c);
			if (r->cells[c].value_len != mc->rn % 7)
				fail_msg("%s: row %zu cell %zu value", what, rows, c);
		}
		rows++;
		if (o->limit && rows > o->limit)
			fail_msg("%s: over the limit", what);
	}
	if (rc)
		fail_msg("%s: scan_next %d after %zu rows", what, rc, rows);
	cs_scan_close(scan);
	if (o->limit && rows == o->limit)
		return;
	if (o->reversed) {
		while (i > 0 && !row_in(&m[i - 1], o))
			i--;
		if (i)
			fail_msg("%s: rows missing", what);
	} else {
		while (i < n && !row_in(&m[i], o))
			i++;
		if (i != n)
			fail_msg("%s: rows missing", what);
	}
}

static void test_read__rows_sort_bytewise_at_the_limits(void **state)
{
	static const char *fams[] = { "a", "b" };
	struct tu_store *ts = *state;
	enum { NROWS = 260 };
	struct mcell *m = calloc(NROWS * 3, sizeof(*m));
	uint8_t *base = malloc(CS_MAX_QUALIFIER + 8);
	size_t n = 0;
	uint64_t seed = 11;
	cs_txn *txn;

	assert_non_null(m);
	tu_rand_bytes(&seed, base, CS_MAX_QUALIFIER + 8, 1);
	for (size_t i = 0; i < NROWS; i++) {
		size_t rn, share = 0;
		switch (i % 6) {
		case 0: rn = 1 + tu_rand(&seed) % 12; break;
		case 1: rn = 470 + tu_rand(&seed) % 20; share = rn - 1 - tu_rand(&seed) % 3; break; /* around 480 */
		case 2: rn = CS_MAX_ROW_KEY; share = CS_MAX_ROW_KEY - 1 - tu_rand(&seed) % 600; break;
		case 3: rn = 1 + tu_rand(&seed) % CS_MAX_ROW_KEY; break;
		case 4: rn = 479 + tu_rand(&seed) % 3; share = rn; break; /* exactly 479/480/481: prefixes */
		default: rn = 600 + tu_rand(&seed) % 400; share = 500 + tu_rand(&seed) % 100; break;
		}
		uint8_t *row = malloc(rn);
		memcpy(row, base, share);
		tu_rand_bytes(&seed, row + share, rn - share, 1);
		size_t ncells = 1 + tu_rand(&seed) % 3;
		for (size_t c = 0; c < ncells; c++) {
			struct mcell *mc = &m[n++];
			size_t qn = tu_rand(&seed) % 5 == 0 ? CS_MAX_QUALIFIER - tu_rand(&seed) % 2 : tu_rand(&seed) % 8;
			mc->row = c ? m[n - 2].row : row;
			mc->rn = rn;
			mc->fam = fams[tu_rand(&seed) % 2];
			mc->q = malloc(qn + 1);
			mc->qn = qn;
			memcpy(mc->q, base + 7, qn);
			if (qn)
				tu_rand_bytes(&seed, mc->q + qn - 1 - tu_rand(&seed) % qn, 1, 1);
			mc->ts = (int64_t)(tu_rand(&seed) % 4);
		}
	}
	/* Write in a random order over two transactions, then sort the model and drop duplicates. */
	for (size_t part = 0; part < 2; part++) {
		txn = tu_begin(ts->st, 0);
		for (size_t k = 0; k < n; k++) {
			size_t j = (k * 7919 + 13) % n;
			if ((j & 1) != part)
				continue;
			assert_int_equal(tu_set(txn, "t", CS_BYTES(m[j].row, m[j].rn), m[j].fam, CS_BYTES(m[j].q, m[j].qn),
						m[j].ts, CS_BYTES(base, m[j].rn % 7)), 0);
		}
		tu_commit(txn);
	}
	struct mcell *sorted = malloc(n * sizeof(*sorted));
	size_t ns = 0;
	memcpy(sorted, m, n * sizeof(*m));
	qsort(sorted, n, sizeof(*sorted), mcell_cmp);
	for (size_t k = 0; k < n; k++)
		if (!ns || mcell_cmp(&sorted[ns - 1], &sorted[k]))
			sorted[ns++] = sorted[k];

	/* The fixture table holds other rows; read a table of its own. */
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	check_scan(txn, sorted, ns, &(cs_read_opts){ 0 }, "all");
	check_scan(txn, sorted, ns, &(cs_read_opts){ .reversed = true }, "all reversed");
	check_scan(txn, sorted, ns, &(cs_read_opts){ .keys_only = true, .limit = 17 }, "limit");
	for (int probe = 0; probe < 60; probe++) {
		const struct mcell *a = &sorted[tu_rand(&seed) % ns], *b = &sorted[tu_rand(&seed) % ns];
		uint8_t *pb;
		cs_read_opts o = { .reversed = probe & 1 };
		cs_bytes rowb;
		char what[64];

		if (mcell_cmp(a, b) > 0) {
			const struct mcell *x = a;
			a = b;
			b = x;
		}
		pb = malloc(a->rn + 1);
		memcpy(pb, a->row, a->rn);
		switch (probe / 2 % 4) {
		case 0: /* [a, b) */
			o.start = CS_BYTES(a->row, a->rn);
			o.end = CS_BYTES(b->row, b->rn);
			break;
		case 1: /* a prefix of a, cut anywhere */
			o.prefix = CS_BYTES(pb, 1 + tu_rand(&seed) % a->rn);
			break;
		case 2: /* exactly a, and from just after it */
			rowb = CS_BYTES(a->row, a->rn);
			o.row = &rowb;
			break;
		default:
			pb[a->rn] = 0;
			o.start = CS_BYTES(pb, a->rn + 1);
			o.limit = 1 + tu_rand(&seed) % 5;
			break;
		}
		snprintf(what, sizeof(what), "probe %d", probe);
		check_scan(txn, sorted, ns, &o, what);
		free(pb);
	}
	/* One column of one row, which a scan seeks to: long keys (stored by kv in another form) too. */
	for (int probe = 0; probe < 60; probe++) {
		size_t first = tu_rand(&seed) % ns, last = first, want;
		const struct mcell *a = &sorted[first];
		cs_bytes rowb = CS_BYTES(a->row, a->rn), qb = CS_BYTES(a->q, a->qn);
		cs_column_sel sel = { .family = a->fam, .qualifier = &qb };
		cs_read_opts o = { .row = &rowb, .ncolumns = 1, .columns = &sel };
		uint8_t *longer = NULL;
		const cs_row *r;
		cs_scan *scan;

		while (first > 0 && !mcell_cmp_col(&sorted[first - 1], a))
			first--;
		while (last < ns && !mcell_cmp_col(&sorted[last], a))
			last++;
		want = last - first;
		if (probe % 3 == 2) { /* a qualifier one byte longer: no such column */
			longer = malloc(a->qn + 1);
			memcpy(longer, a->q, a->qn);
			longer[a->qn] = 0;
			qb = CS_BYTES(longer, a->qn + 1);
			struct mcell probe_col = { .row = a->row, .rn = a->rn, .fam = a->fam, .q = longer, .qn = a->qn + 1 };
			want = 0;
			for (size_t k = 0; k < ns; k++) {
				if (!mcell_cmp_col(&sorted[k], &probe_col)) {
					if (!want)
						first = k;
					want++;
				}
			}
		}
		assert_int_equal(cs_scan_open(txn, "t", &o, &scan), 0);
		if (want) {
			assert_int_equal(cs_scan_next(scan, &r), 1);
			if (r->ncells != want)
				fail_msg("column probe %d: %zu cells, want %zu", probe, r->ncells, want);
			for (size_t c = 0; c < want; c++)
				assert_int_equal(r->cells[c].ts, sorted[first + c].ts);
		}
		assert_int_equal(cs_scan_next(scan, &r), 0);
		cs_scan_close(scan);
		free(longer);
	}
	tu_commit(txn);
	for (size_t k = 0; k < n; k++) {
		free(m[k].q);
		if (k == 0 || m[k].row != m[k - 1].row)
			free(m[k].row);
	}
	free(m);
	free(sorted);
	free(base);
}

/* A scan of one column of one row seeks to the column; after cs_scan_seek() it reads whole rows (still
 * selecting the column), and a dropped row's cells stay hidden either way. */
static void test_read__one_column_after_seek_and_drop(void **state)
{
	struct tu_store *ts = *state;
	static const cs_bytes row = { "a#1", 3 }, q = { "q", 1 };
	static const cs_column_sel fq[] = { { .family = "f", .qualifier = &q } };
	cs_read_opts o = { .row = &row, .ncolumns = 1, .columns = fq };
	const cs_row *r;
	cs_scan *s;
	cs_txn *txn;
	char *got;

	tu_table(ts->st, "t", "f", NULL, NULL);
	tu_put(ts->st, "t", "a#1", "f", "p", 1, "p1");
	tu_put(ts->st, "t", "a#1", "f", "q", 2, "q2");
	tu_put(ts->st, "t", "a#1", "f", "r", 3, "r3");
	txn = tu_begin(ts->st, CS_TXN_RDONLY);
	assert_int_equal(cs_scan_open(txn, "t", &o, &s), 0);
	assert_int_equal(cs_scan_next(s, &r), 1);
	assert_int_equal(r->ncells, 1);
	assert_int_equal(r->cells[0].ts, 2);
	assert_int_equal(cs_scan_next(s, &r), 0);
	assert_int_equal(cs_scan_seek(s, CS_STR("")), 0); /* from the row again, read whole */
	assert_int_equal(cs_scan_next(s, &r), 1);
	assert_int_equal(r->ncells, 1);
	assert_memory_equal(r->cells[0].value.data, "q2", 2);
	assert_int_equal(cs_scan_next(s, &r), 0);
	cs_scan_close(s);
	tu_commit(txn);

	txn = tu_begin(ts->st, 0);
	assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("a#")), 0);
	tu_commit(txn);
	got = tu_dump_st(ts->st, "t", &o);
	assert_string_equal(got, "");
	free(got);
	tu_put(ts->st, "t", "a#1", "f", "r", 4, "r4"); /* the row written again, not the column */
	got = tu_dump_st(ts->st, "t", &o);
	assert_string_equal(got, "");
	free(got);
	tu_put(ts->st, "t", "a#1", "f", "q", 1, "q1");
	got = tu_dump_st(ts->st, "t", &o);
	assert_string_equal(got, "a#1 f:q@1=q1\n");
	free(got);
}

/* cs_scan_seek jumps forward over rows; it never goes below the scan's own lower bound. */
static void test_read__seek_skips_forward(void **state)
{
	struct tu_store *ts = *state;
	static const char *rows[] = { "a#1", "a#2", "b#1", "b#2", "c#1", "d" };
	const cs_row *row;
	cs_scan *s;
	cs_txn *r;
	char got[64] = "";

	tu_table(ts->st, "t", "f", NULL, NULL);
	for (size_t i = 0; i < TU_ARRAY_SIZE(rows); i++)
		tu_put(ts->st, "t", rows[i], "f", "q", 1, "v");
	r = tu_begin(ts->st, CS_TXN_RDONLY);
	cs_read_opts o = { .start = CS_STR("a#2"), .keys_only = true };
	assert_int_equal(cs_scan_open(r, "t", &o, &s), 0);
	assert_int_equal(cs_scan_next(s, &row), 1);              /* a#2 */
	strncat(got, row->key.data, row->key.len);
	assert_int_equal(cs_scan_seek(s, CS_STR("a$")), 0);      /* past everything under "a#" */
	assert_int_equal(cs_scan_next(s, &row), 1);              /* b#1 */
	strncat(got, row->key.data, row->key.len);
	assert_int_equal(cs_scan_seek(s, CS_STR("c")), 0);
	assert_int_equal(cs_scan_next(s, &row), 1);              /* c#1 */
	strncat(got, row->key.data, row->key.len);
	assert_int_equal(cs_scan_seek(s, CS_STR("")), 0);        /* below the bound: from "a#2" again */
	assert_int_equal(cs_scan_next(s, &row), 1);
	strncat(got, row->key.data, row->key.len);
	assert_int_equal(cs_scan_seek(s, CS_STR("e")), 0);
	assert_int_equal(cs_scan_next(s, &row), 0);
	assert_string_equal(got, "a#2b#1c#1a#2");
	cs_scan_close(s);
	cs_read_opts rev = { .reversed = true };
	assert_int_equal(cs_scan_open(r, "t", &rev, &s), 0);
	assert_int_equal(cs_scan_seek(s, CS_STR("b")), -EINVAL);
	cs_scan_close(s);
	cs_txn_abort(r);
}

static int setup_empty(void **state)
{
	struct tu_store *ts;
	tu_store_setup(state);
	ts = *state;
	tu_table(ts->st, "t", "a", NULL, "b", NULL, NULL);
	return 0;
}

/* ---- GC visibility ---- */

#define HOUR (3600LL * 1000000)
#define DAY (24 * HOUR)

static const struct gc_case {
	const char *policy;
	int64_t age[6];    /* the column's cells, by age (0 ends the list; use 1 for "now") */
	unsigned visible;  /* how many of them stay visible: always the newest ones */
} gc_cases[] = {
	{ "never", { 1, HOUR, 10 * DAY, 11 * DAY }, 4 },
	{ "maxversions=1", { 1, HOUR, 2 * HOUR }, 1 },
	{ "maxversions=2", { 1, HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR }, 2 },
	{ "maxversions=5", { 1, HOUR }, 2 },
	{ "maxage=1d", { -HOUR, 1, HOUR, 2 * DAY, 3 * DAY }, 3 },      /* a future cell is young */
	{ "maxage=1d", { 2 * DAY, 3 * DAY }, 0 },
	{ "maxage=12h", { 11 * HOUR, 13 * HOUR }, 1 },
	{ "maxage=90m", { HOUR, 89 * 60 * 1000000LL, 91 * 60 * 1000000LL, 2 * HOUR }, 2 }, /* every unit */
	{ "maxage=7200s", { HOUR, 3 * HOUR }, 1 },
	{ "maxage=86400000ms", { 1, 23 * HOUR, 25 * HOUR }, 2 },
	{ "maxage=2d", { 47 * HOUR, 49 * HOUR }, 1 },
	{ "maxversions=2 and maxage=1d", { HOUR, 2 * HOUR, 3 * HOUR, 10 * DAY, 11 * DAY }, 3 },
	{ "maxversions=2 and maxage=1d", { 10 * DAY, 11 * DAY, 12 * DAY, 13 * DAY }, 2 },
	{ "maxversions=2 && maxage=1d", { HOUR, 2 * HOUR }, 2 },
	{ "maxversions=2 or maxage=1d", { HOUR, 2 * HOUR, 3 * HOUR, 10 * DAY, 11 * DAY }, 2 },
	{ "maxversions=2 || maxage=1d", { HOUR, 10 * DAY, 11 * DAY }, 1 },
	{ "maxversions=2 or maxage=1d", { 10 * DAY, 11 * DAY }, 0 },
	{ "(maxversions=1 and maxage=1d) or maxversions=3", { HOUR, 10 * DAY, 11 * DAY, 12 * DAY }, 1 },
	{ "(maxversions=1 and maxage=1d) or maxversions=3", { HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR }, 3 },
	{ "maxage=30d || (maxage=3d && maxversions=2)", { HOUR, 4 * DAY, 5 * DAY, 40 * DAY }, 2 },
	{ "maxage=30d || (maxage=3d && maxversions=2)", { HOUR, 2 * HOUR, 2 * DAY, 4 * DAY }, 3 },
	{ "maxversions=0", { 1, HOUR }, 0 },
};

/* What a column of case C must show: its VISIBLE newest cells, within [lo, hi) and at most PER. */
static void want_column(char *w, const struct gc_case *c, const int64_t *stamps, int64_t lo, int64_t hi, unsigned per)
{
	unsigned shown = 0;
	w[0] = 0;
	for (unsigned k = 0; k < c->visible; k++) {
		if (stamps[k] < lo || stamps[k] >= hi || (per && shown >= per))
			continue;
		w += sprintf(w, " f:c@%lld=%u", (long long)stamps[k], k);
		shown++;
	}
}

/* Each policy on a family of its own, one column per case; reads before and after cs_gc() agree with
 * the policy, with and without timestamp ranges and cells per column (GC counts versions before any
 * filter: a collected version never shows, even when newer ones are filtered out). */
static void test_read__gc_visibility(void **state)
{
	struct tu_store *ts = *state;
	int64_t now = cs_now_us();
	int64_t stamps[TU_ARRAY_SIZE(gc_cases)][6];
	uint64_t invisible = 0;

	for (size_t i = 0; i < TU_ARRAY_SIZE(gc_cases); i++) {
		const struct gc_case *c = &gc_cases[i];
		char table[16], row[8];
		cs_txn *txn = tu_begin(ts->st, 0);
		unsigned n = 0;

		snprintf(table, sizeof(table), "g%zu", i);
		assert_int_equal(cs_table_create(txn, table, 0), 0);
		assert_int_equal(cs_family_create(txn, table, "f", c->policy), 0);
		assert_int_equal(cs_family_create(txn, table, "keep", NULL), 0);
		for (; n < 6 && c->age[n]; n++) {
			char v[8];
			stamps[i][n] = now - (c->age[n] == 1 ? 0 : c->age[n]) - (int64_t)n; /* distinct, newest first */
			snprintf(v, sizeof(v), "%u", n);
			snprintf(row, sizeof(row), "r");
			assert_int_equal(tu_set(txn, table, CS_STR(row), "f", CS_STR("c"), stamps[i][n], CS_STR(v)), 0);
		}
		invisible += n - c->visible;
		/* Another row with only a cell the policy collects must not show at all. */
		assert_int_equal(tu_set(txn, table, CS_STR("s"), "keep", CS_STR("k"), 1, CS_STR("k")), 0);
		tu_commit(txn);
	}

	for (int phase = 0; phase < 3; phase++) {
		if (phase == 1) { /* physical clean-up removes exactly what was invisible */
			cs_gc_stats st;
			cs_txn *txn = tu_begin(ts->st, 0);
			assert_int_equal(cs_gc(txn, NULL, &st), 0);
			tu_commit(txn);
			assert_int_equal(st.cells_removed, invisible);
			assert_true(invisible == 0 || st.bytes_freed > 0);
		} else if (phase == 2) {
			tu_reopen(ts, 0, 0);
		}
		for (size_t i = 0; i < TU_ARRAY_SIZE(gc_cases); i++) {
			const struct gc_case *c = &gc_cases[i];
			static const struct {
				int64_t lo_age, hi_age; /* ts range as ages from now; 0 = unbounded */
				unsigned per;
			} views[] = { { 0, 0, 0 }, { 0, 0, 1 }, { 0, 2 * HOUR + 10, 0 }, { 5 * DAY, 0, 1 }, { 36 * HOUR, 30 * HOUR, 0 } };
			char table[16];
			snprintf(table, sizeof(table), "g%zu", i);
			for (size_t v = 0; v < TU_ARRAY_SIZE(views); v++) {
				int64_t lo = views[v].lo_age ? now - views[v].lo_age : 0;
				int64_t hi = views[v].hi_age ? now - views[v].hi_age : CS_TS_MAX;
				cs_read_opts o = { .cells_per_column = views[v].per, .ts_start = lo, .ts_end = hi };
				char want[512], col[400], *s;
				want_column(col, c, stamps[i], lo, hi, views[v].per);
				snprintf(want, sizeof(want), "%s%s%s%s", col[0] ? "r" : "", col, col[0] ? "\n" : "",
					 lo <= 1 && hi > 1 ? "s keep:k@1=k\n" : "");
				s = tu_dump_st(ts->st, table, &o);
				if (strcmp(s, want))
					fail_msg("phase %d, \"%s\" (case %zu), view %zu: got\n%swant\n%s", phase, c->policy, i, v, s, want);
				free(s);
				/* the same column read alone (the scan seeks to it) */
				static const cs_bytes qc = { "c", 1 };
				static const cs_column_sel fc[] = { { .family = "f", .qualifier = &qc } };
				o.row = &row_r;
				o.ncolumns = 1;
				o.columns = fc;
				snprintf(want, sizeof(want), "%s%s%s", col[0] ? "r" : "", col, col[0] ? "\n" : "");
				s = tu_dump_st(ts->st, table, &o);
				if (strcmp(s, want))
					fail_msg("phase %d, \"%s\" (case %zu), view %zu, the column alone: got\n%swant\n%s", phase,
						 c->policy, i, v, s, want);
				free(s);
			}
		}
	}
}

/* Tightening a policy hides what it collects at once; loosening it later never brings collected cells
 * back, whether or not cs_gc() ran in between. */
static void test_read__gc_policy_changes(void **state)
{
	struct tu_store *ts = *state;
	cs_txn *txn;
	char *s;

	for (int gc_between = 0; gc_between < 2; gc_between++) {
		txn = tu_begin(ts->st, 0);
		for (int64_t t = 1; t <= 3; t++)
			assert_int_equal(tu_set(txn, "t", CS_STR("r"), "a", CS_STR("q"), t, CS_STR("v")), 0);
		tu_commit(txn);

		txn = tu_begin(ts->st, 0);
		assert_int_equal(cs_family_set_gc(txn, "t", "a", "maxversions=1"), 0);
		s = tu_dump(txn, "t", NULL);
		assert_string_equal(s, "r a:q@3=v\n");
		free(s);
		tu_commit(txn);
		if (gc_between) {
			txn = tu_begin(ts->st, 0);
			assert_int_equal(cs_gc(txn, "t", NULL), 0);
			tu_commit(txn);
		}
		txn = tu_begin(ts->st, 0);
		assert_int_equal(cs_family_set_gc(txn, "t", "a", "never"), 0);
		tu_commit(txn);
		s = tu_dump_st(ts->st, "t", NULL);
		if (strcmp(s, "r a:q@3=v\n"))
			fail_msg("gc %s: collected cells came back:\n%s", gc_between ? "ran" : "did not run", s);
		free(s);
		/* New versions are kept under the new policy. */
		tu_put(ts->st, "t", "r", "a", "q", 4, "w");
		s = tu_dump_st(ts->st, "t", NULL);
		assert_string_equal(s, "r a:q@4=w a:q@3=v\n");
		free(s);
		txn = tu_begin(ts->st, 0);
		assert_int_equal(cs_drop_prefix(txn, "t", CS_STR("")), 0);
		tu_commit(txn);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read__options, setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_read__options_in_write_transaction, setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_read__errors, setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_read__values_round_trip, setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_read__rows_sort_bytewise_at_the_limits, setup_empty, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_read__gc_visibility, tu_store_setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_read__gc_policy_changes, setup_empty, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_read__seek_skips_forward, tu_store_setup, tu_store_teardown),
		cmocka_unit_test_setup_teardown(test_read__one_column_after_seek_and_drop, tu_store_setup, tu_store_teardown),
	};
	return cmocka_run_group_tests_name("read", tests, NULL, NULL);
}
