/* test_heatsvg.c — the heatmap's numbers over many minutes (tools/keyviz/heatsvg.c), which the cellctl tests
 * cannot reach (they would have to wait for the minutes): a table of 100 rows written and read one row a
 * minute for 450 minutes, the store's clock moved by its test hook, gives a matrix of two minutes a
 * column (HS_COLUMNS is 360) in which every count is where an independent reckoning of the load puts it,
 * totals exact; its SVG titles each cell that is not 0 with its span; an empty table has one band and no columns. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cellstore.h"
#include "heatsvg.h"

#define MIN_US 60000000LL
#define ROWS 100
#define MINUTES 450

static int64_t clock_us;
static int64_t test_clock(void *ctx)
{
	(void)ctx;
	return clock_us;
}

struct fixture {
	char dir[64];
	cs_store *st;
	int64_t base; /* the first minute of the load: after the table's creation */
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	cs_open_opts o = { .flags = CS_OPEN_CREATE };
	cs_txn *txn;

	assert_non_null(fx);
	const char *tmp = getenv("TMPDIR");
	snprintf(fx->dir, sizeof(fx->dir), "%s/test_heatsvg.XXXXXX", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	assert_non_null(mkdtemp(fx->dir));
	assert_int_equal(cs_store_open(fx->dir, &o, &fx->st), 0);
	fx->base = (int64_t)time(NULL) / 60 + 10;
	clock_us = fx->base * MIN_US;
	cs_heat_set_clock(fx->st, test_clock, NULL);
	assert_int_equal(cs_txn_begin(fx->st, 0, &txn), 0);
	assert_int_equal(cs_table_create(txn, "t", 0), 0);
	assert_int_equal(cs_family_create(txn, "t", "f", NULL), 0);
	assert_int_equal(cs_table_create(txn, "e", 0), 0);
	assert_int_equal(cs_txn_commit(txn), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];
	cs_store_close(fx->st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

static void row_key(char *out, int i)
{
	snprintf(out, 8, "k%03d", i);
}

static void write_row(cs_store *st, int i)
{
	char k[8];
	cs_mutation m = { .op = CS_SET_CELL, .family = "f", .qualifier = CS_STR("q"), .ts = 1, .value = CS_STR("v") };
	cs_txn *txn;

	row_key(k, i);
	assert_int_equal(cs_txn_begin(st, 0, &txn), 0);
	assert_int_equal(cs_row_mutate(txn, "t", CS_STR(k), &m, 1), 0);
	assert_int_equal(cs_txn_commit(txn), 0);
}

static void read_row(cs_store *st, int i)
{
	char k[8];
	cs_bytes r;
	cs_read_opts o = { 0 };
	const cs_row *row;
	cs_scan *s;
	cs_txn *txn;

	row_key(k, i);
	r = CS_STR(k);
	o.row = &r;
	assert_int_equal(cs_txn_begin(st, CS_TXN_RDONLY, &txn), 0);
	assert_int_equal(cs_scan_open(txn, "t", &o, &s), 0);
	assert_int_equal(cs_scan_next(s, &row), 1);
	assert_int_equal(cs_scan_next(s, &row), 0);
	cs_scan_close(s);
	cs_txn_abort(txn);
}

/* The band of row I of ROWS in NBANDS bands: band j starts at row floor(j * ROWS / NBANDS). */
static size_t band_of(int i, size_t nbands)
{
	size_t j = 0;
	while (j + 1 < nbands && (j + 1) * ROWS / nbands <= (size_t)i)
		j++;
	return j;
}

static void test_heatsvg__minutes_merged_into_columns_keep_every_count(void **state)
{
	struct fixture *fx = *state;
	static uint64_t want_r[HS_BANDS][MINUTES], want_w[HS_BANDS][MINUTES];
	struct hs_matrix *m;

	for (int i = 0; i < ROWS; i++) /* (minute 0: the rows made, one write each) */
		write_row(fx->st, i);
	for (int t = 0; t < MINUTES; t++) {
		clock_us = (fx->base + t) * MIN_US + 1;
		write_row(fx->st, t % ROWS);
		read_row(fx->st, t * 7 % ROWS);
	}
	assert_int_equal(hs_matrix_build(fx->st, "t", 0, &m), 0);
	assert_int_equal(m->rows, ROWS);
	assert_int_equal(m->nbands, HS_BANDS);
	assert_true(m->first == fx->base);
	assert_true(m->span == 2);
	assert_int_equal(m->ncols, MINUTES / 2);
	assert_int_equal(m->total_writes, ROWS + MINUTES);
	assert_int_equal(m->total_reads, MINUTES);

	for (int i = 0; i < ROWS; i++)
		want_w[band_of(i, m->nbands)][0]++;
	for (int t = 0; t < MINUTES; t++) {
		want_w[band_of(t % ROWS, m->nbands)][t / 2]++;
		want_r[band_of(t * 7 % ROWS, m->nbands)][t / 2]++;
	}
	for (size_t b = 0; b < m->nbands; b++)
		for (size_t c = 0; c < m->ncols; c++)
			if (m->writes[b * m->ncols + c] != want_w[b][c] || m->reads[b * m->ncols + c] != want_r[b][c])
				fail_msg("band %zu column %zu: reads %llu writes %llu, want %llu %llu", b, c,
					 (unsigned long long)m->reads[b * m->ncols + c],
					 (unsigned long long)m->writes[b * m->ncols + c], (unsigned long long)want_r[b][c],
					 (unsigned long long)want_w[b][c]);

	/* The picture: a cell for each count that is not 0, in each panel, each titled with its span. */
	char path[96], *svg = NULL;
	size_t n = 0, titles = 0, spans = 0, nonzero = 0;
	for (size_t c = 0; c < m->nbands * m->ncols; c++)
		nonzero += (m->reads[c] != 0) + (m->writes[c] != 0);
	FILE *f;
	snprintf(path, sizeof(path), "%s/t.svg", fx->dir);
	assert_int_equal(hs_matrix_svg(m, "t", path), 0);
	assert_non_null(f = fopen(path, "r"));
	assert_true(getdelim(&svg, &n, 0, f) > 0);
	fclose(f);
	for (const char *p = svg; (p = strstr(p, "<title>")); p++) {
		const char *end = strstr(p, "</title>");
		assert_non_null(end);
		titles++;
		spans += memmem(p, (size_t)(end - p), " (+1 min)", 9) != NULL;
	}
	assert_int_equal(titles, nonzero);
	assert_int_equal(spans, titles);
	free(svg);
	hs_matrix_free(m);
}

static void test_heatsvg__empty_table_has_one_band_and_no_columns(void **state)
{
	struct fixture *fx = *state;
	struct hs_matrix *m;

	assert_int_equal(hs_matrix_build(fx->st, "e", 0, &m), 0);
	assert_int_equal(m->rows, 0);
	assert_int_equal(m->nbands, 1);
	assert_int_equal(m->ncols, 0);
	assert_int_equal(m->total_reads + m->total_writes, 0);
	hs_matrix_free(m);
	assert_int_equal(hs_matrix_build(fx->st, "nosuch", 0, &m), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_heatsvg__minutes_merged_into_columns_keep_every_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heatsvg__empty_table_has_one_band_and_no_columns, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
