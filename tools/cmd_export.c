/* cmd_export.c — cellctl export: a table (or the part read filters select) as CSV that `cbt import`
 * and `cellctl import` read back, or as JSON lines (one cell per line) that carry everything exactly.
 *
 * CSV needs its columns up front: a first, keys-only scan of the same snapshot collects the distinct
 * (family, qualifier) pairs (memory grows with them, not with rows), the second writes the rows. A row
 * with several versions of a column takes several lines, the newest first, each cell as VALUE@TS
 * (timestamp=value-encoded). What CSV cannot carry is refused (a "\r\n" inside a field, which any CSV
 * reader turns into "\n") or reported (timestamps finer than the millisecond cbt import keeps).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cellctl.h"
#include "import/csv.h"
#include "jsonout.h"

struct col {
	char *fam;
	char *q;
	size_t qn;
};

struct exp {
	cs_read_opts o;
	colspec *specs;
	size_t nspecs;
	cs_column_sel *sels;
	bool jsonl, value_ts;
	/* CSV */
	struct col *cols;     /* sorted by family, qualifier */
	size_t ncols, cap;
	size_t *order;        /* output position -> column */
	bool dummy;           /* a first column that is never filled (see csv_header) */
	size_t *first, *count; /* per column, for the current row: its first cell, its number of cells */
	char *scratch;
	size_t scap;
	uint64_t coarse;      /* cells whose timestamp is not whole milliseconds */
};

static int col_cmp(const char *fa, const void *qa, size_t qan, const struct col *b)
{
	int c = strcmp(fa, b->fam);
	size_t m = qan < b->qn ? qan : b->qn;

	if (c)
		return c;
	c = m ? memcmp(qa, b->q, m) : 0;
	return c ? c : (qan > b->qn) - (qan < b->qn);
}

/* The column's index, or where it would go (negative: -(pos + 1)). */
static ssize_t col_find(const struct exp *e, const char *fam, const void *q, size_t qn)
{
	size_t lo = 0, hi = e->ncols;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = col_cmp(fam, q, qn, &e->cols[mid]);
		if (c == 0)
			return (ssize_t)mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -(ssize_t)lo - 1;
}

static int col_add(struct exp *e, const char *fam, const void *q, size_t qn)
{
	ssize_t at = col_find(e, fam, q, qn);
	size_t pos;
	struct col c;

	if (at >= 0)
		return 0;
	pos = (size_t)(-at - 1);
	if (e->ncols == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 64;
		struct col *n = realloc(e->cols, cap * sizeof *n);
		if (!n)
			return -ENOMEM;
		e->cols = n;
		e->cap = cap;
	}
	c.fam = strdup(fam);
	c.q = malloc(qn + 1);
	if (!c.fam || !c.q) {
		free(c.fam);
		free(c.q);
		return -ENOMEM;
	}
	if (qn)
		memcpy(c.q, q, qn);
	c.q[qn] = 0;
	c.qn = qn;
	memmove(&e->cols[pos + 1], &e->cols[pos], (e->ncols - pos) * sizeof *e->cols);
	e->cols[pos] = c;
	e->ncols++;
	return 0;
}

static void exp_release(struct exp *e)
{
	for (size_t i = 0; i < e->ncols; i++) {
		free(e->cols[i].fam);
		free(e->cols[i].q);
	}
	free(e->cols);
	free(e->order);
	free(e->first);
	free(e->count);
	free(e->scratch);
	free(e->sels);
	colspecs_free(e->specs, e->nspecs);
}

/* ---- Filters, as cellctl read takes them -------------------------------------------------------- */

static int regex_sel(const char *pat, const char **out)
{
	if (!pat)
		return CC_OK;
	*out = pat;
	return cc_regex(pat, "columns=", NULL);
}

static int parse_args(struct cellctl *cc, struct exp *e, int argc, char **argv)
{
	static const char *const valid[] = { "start", "end", "prefix", "regex", "columns", "count",
					     "cells-per-column", "format", "timestamp", "app-profile", "asof", NULL };
	enum { K_START, K_END, K_PREFIX, K_REGEX, K_COLUMNS, K_COUNT, K_CELLS, K_FORMAT, K_TS, K_APP, K_ASOF, K_N };
	const char *v[K_N];
	char *err = NULL;
	int64_t n;
	int rc;

	if (cc_args_kv(argc, argv, valid, v) != CC_OK)
		return CC_FAIL;
	for (int k = 0; k < K_N; k++)
		if (v[k] && !*v[k])
			v[k] = NULL;
	if ((v[K_START] || v[K_END]) && v[K_PREFIX])
		return cc_error("\"start\"/\"end\" may not be mixed with \"prefix\"");
	if (cc_asof(cc, v[K_ASOF]) != CC_OK)
		return CC_FAIL;
	if (v[K_FORMAT] && strcmp(v[K_FORMAT], "csv") && strcmp(v[K_FORMAT], "jsonl"))
		return cc_error("format must be csv or jsonl (format=%s)", cc_qs(v[K_FORMAT]));
	e->jsonl = v[K_FORMAT] && !strcmp(v[K_FORMAT], "jsonl");
	if (v[K_TS] && strcmp(v[K_TS], "now") && strcmp(v[K_TS], "value-encoded"))
		return cc_error("timestamp must be one of 'now' or 'value-encoded' (timestamp=%s)", cc_qs(v[K_TS]));
	if (v[K_TS] && e->jsonl)
		return cc_error("timestamp= applies to CSV output only");
	e->value_ts = !v[K_TS] || !strcmp(v[K_TS], "value-encoded");
	if (v[K_START])
		e->o.start = CS_BYTES(v[K_START], strlen(v[K_START]));
	if (v[K_END])
		e->o.end = CS_BYTES(v[K_END], strlen(v[K_END]));
	if (v[K_PREFIX])
		e->o.prefix = CS_BYTES(v[K_PREFIX], strlen(v[K_PREFIX]));
	if (v[K_REGEX]) {
		if ((rc = cc_regex(v[K_REGEX], "regex=", NULL)) != CC_OK)
			return rc;
		e->o.row_regex = v[K_REGEX];
	}
	if (v[K_COUNT]) {
		if ((rc = go_parse_int(v[K_COUNT], 0, &n)) < 0)
			return cc_error("bad count %s: %s", cc_qs(v[K_COUNT]), go_num_strerror(rc));
		if (n <= 0)
			return cc_error("bad count %s: must be > 0", cc_qs(v[K_COUNT]));
		e->o.limit = (uint64_t)n;
	}
	if (v[K_CELLS]) {
		if ((rc = go_parse_int(v[K_CELLS], 10, &n)) < 0)
			return cc_error("bad number of cells per column %s: %s", cc_qs(v[K_CELLS]), go_num_strerror(rc));
		if (n <= 0 || n > INT32_MAX)
			return cc_error("bad number of cells per column %s: must be > 0", cc_qs(v[K_CELLS]));
		e->o.cells_per_column = (uint32_t)n;
	}
	if (v[K_COLUMNS]) {
		if ((rc = args_columns(v[K_COLUMNS], &e->specs, &e->nspecs, &err)) < 0) {
			rc = cc_error("%s", err ? err : strerror(-rc));
			free(err);
			return rc;
		}
		e->sels = calloc(e->nspecs, sizeof *e->sels);
		if (!e->sels)
			return cc_error("%s", strerror(ENOMEM));
		for (size_t i = 0; i < e->nspecs; i++)
			if ((rc = regex_sel(e->specs[i].family, &e->sels[i].family_regex)) != CC_OK ||
			    (rc = regex_sel(e->specs[i].qualifier, &e->sels[i].qualifier_regex)) != CC_OK)
				return rc;
		e->o.columns = e->sels;
		e->o.ncolumns = e->nspecs;
	}
	return CC_OK;
}

/* ---- JSON lines --------------------------------------------------------------------------------- */

static void jsonl_row(const cs_row *row)
{
	for (size_t i = 0; i < row->ncells; i++) {
		const cs_cell *c = &row->cells[i];

		putchar('{');
		jo_bytes_field(stdout, "row", row->key.data, row->key.len);
		fputs(",\"family\":", stdout);
		jo_str(stdout, c->family, strlen(c->family));
		putchar(',');
		jo_bytes_field(stdout, "qualifier", c->qualifier.data, c->qualifier.len);
		printf(",\"ts\":%" PRId64 ",", c->ts);
		jo_bytes_field(stdout, "value", c->value.data, c->value.len);
		fputs("}\n", stdout);
	}
}

/* ---- CSV ---------------------------------------------------------------------------------------- */

/* The output order: sorted, but cbt wants the first data column to have a qualifier, so the first
 * column with a non-empty one goes first; if there is none, an empty dummy column "-" leads. */
static int csv_layout(struct exp *e, cs_txn *txn, const char *table)
{
	size_t k = 0;

	if (!e->ncols) {
		cs_table_info *info;
		int rc = cs_table_info_get(txn, table, &info);
		if (rc < 0)
			return cc_store_error(txn, rc, "exporting", table, NULL);
		if (info->nfamilies)
			rc = col_add(e, info->families[0].name, "-", 1);
		cs_table_info_free(info);
		if (rc < 0)
			return cc_error("%s", strerror(-rc));
		if (!e->ncols)
			return CC_OK;
	}
	e->order = malloc(e->ncols * sizeof *e->order);
	e->first = malloc(e->ncols * sizeof *e->first);
	e->count = calloc(e->ncols, sizeof *e->count);
	if (!e->order || !e->first || !e->count)
		return cc_error("%s", strerror(ENOMEM));
	while (k < e->ncols && !e->cols[k].qn)
		k++;
	e->dummy = k == e->ncols;
	if (e->dummy)
		k = 0;
	e->order[0] = k;
	for (size_t i = 0, o = 1; i < e->ncols; i++)
		if (i != k)
			e->order[o++] = i;
	return CC_OK;
}

static void csv_header(struct exp *e)
{
	const char *prev = NULL;

	if (!e->ncols)
		return;
	/* The family row: each family where it starts (again). */
	putchar(',');
	if (e->dummy) {
		csv_put_field(stdout, e->cols[0].fam, strlen(e->cols[0].fam));
		prev = e->cols[0].fam;
		putchar(',');
	}
	for (size_t o = 0; o < e->ncols; o++) {
		const struct col *c = &e->cols[e->order[o]];
		if (o)
			putchar(',');
		if (!prev || strcmp(prev, c->fam))
			csv_put_field(stdout, c->fam, strlen(c->fam));
		prev = c->fam;
	}
	putchar('\n');
	putchar(',');
	if (e->dummy)
		fputs("-,", stdout);
	for (size_t o = 0; o < e->ncols; o++) {
		const struct col *c = &e->cols[e->order[o]];
		if (o)
			putchar(',');
		csv_put_field(stdout, c->q, c->qn);
	}
	putchar('\n');
}

static int cannot_carry(const cs_row *row, const char *what)
{
	return cc_error("row %s: its %s holds \"\\r\\n\", which CSV cannot carry (a CSV reader reads it as "
			"\"\\n\"); use format=jsonl", cc_q(row->key.data, row->key.len), what);
}

static int csv_cell(struct exp *e, const cs_cell *c)
{
	size_t need = c->value.len + 24;
	int n;

	if (!e->value_ts) {
		csv_put_field(stdout, c->value.data, c->value.len);
		return CC_OK;
	}
	if (need > e->scap) {
		char *s = realloc(e->scratch, need);
		if (!s)
			return cc_error("%s", strerror(ENOMEM));
		e->scratch = s;
		e->scap = need;
	}
	if (c->value.len)
		memcpy(e->scratch, c->value.data, c->value.len);
	n = snprintf(e->scratch + c->value.len, 24, "@%" PRId64, c->ts);
	csv_put_field(stdout, e->scratch, c->value.len + (size_t)n);
	if (c->ts % 1000)
		e->coarse++;
	return CC_OK;
}

static int csv_row(struct exp *e, const cs_row *row)
{
	size_t lines = 0;
	int rc;

	if (!csv_carries(row->key.data, row->key.len))
		return cannot_carry(row, "key");
	for (size_t i = 0; i < e->ncols; i++)
		e->count[i] = 0;
	ssize_t k = -1;
	for (size_t i = 0; i < row->ncells; i++) {
		const cs_cell *c = &row->cells[i], *p = i ? &row->cells[i - 1] : NULL;

		if (!p || strcmp(c->family, p->family) || c->qualifier.len != p->qualifier.len ||
		    memcmp(c->qualifier.data, p->qualifier.data, c->qualifier.len)) {
			k = col_find(e, c->family, c->qualifier.data, c->qualifier.len);
			if (k >= 0)
				e->first[k] = i;
		}
		if (k < 0)
			return cc_error("row %s changed between the two scans", cc_q(row->key.data, row->key.len));
		if (!csv_carries(c->value.data, c->value.len))
			return cannot_carry(row, "value in a cell");
		if (++e->count[k] > lines)
			lines = e->count[k];
	}
	if (!e->value_ts && lines > 1)
		lines = 1; /* without timestamps, only the newest version */
	for (size_t l = 0; l < lines; l++) {
		csv_put_field(stdout, row->key.data, row->key.len);
		if (e->dummy)
			putchar(',');
		for (size_t o = 0; o < e->ncols; o++) {
			size_t c = e->order[o];
			putchar(',');
			if (e->count[c] > l && (rc = csv_cell(e, &row->cells[e->first[c] + l])) != CC_OK)
				return rc;
		}
		putchar('\n');
	}
	return CC_OK;
}

/* ---- The command -------------------------------------------------------------------------------- */

static int scan_all(struct exp *e, cs_txn *txn, const char *table, bool keys, int (*fn)(struct exp *, const cs_row *))
{
	cs_read_opts o = e->o;
	const cs_row *row;
	cs_scan *scan;
	int rc, more;

	o.keys_only = keys;
	if ((rc = cs_scan_open(txn, table, &o, &scan)) < 0)
		return cc_store_error(txn, rc, "reading rows", table, NULL);
	rc = CC_OK;
	while (rc == CC_OK && (more = cs_scan_next(scan, &row)) > 0)
		rc = fn(e, row);
	if (rc == CC_OK && more < 0)
		rc = cc_error("reading rows: %s", cc_strerror(more));
	cs_scan_close(scan);
	return rc;
}

static int collect(struct exp *e, const cs_row *row)
{
	for (size_t i = 0; i < row->ncells; i++) {
		const cs_cell *c = &row->cells[i];
		int rc;
		if (!csv_carries(c->qualifier.data, c->qualifier.len))
			return cc_error("qualifier %s of family %s holds \"\\r\\n\", which CSV cannot carry; use format=jsonl",
					cc_q(c->qualifier.data, c->qualifier.len), cc_qs(c->family));
		if ((rc = col_add(e, c->family, c->qualifier.data, c->qualifier.len)) < 0)
			return cc_error("%s", strerror(-rc));
	}
	return CC_OK;
}

static int jsonl_fn(struct exp *e, const cs_row *row)
{
	(void)e;
	jsonl_row(row);
	return CC_OK;
}

int cmd_export(struct cellctl *cc, int argc, char **argv)
{
	struct exp e = { 0 };
	cs_txn *txn;
	int rc;

	if (argc < 1)
		return cc_usage(cc);
	if ((rc = parse_args(cc, &e, argc - 1, argv + 1)) != CC_OK)
		goto out;
	if ((rc = cellctl_begin(cc, &txn)) != CC_OK)
		goto out;
	if (e.jsonl) {
		rc = scan_all(&e, txn, argv[0], false, jsonl_fn);
	} else if ((rc = scan_all(&e, txn, argv[0], true, collect)) == CC_OK &&
		   (rc = csv_layout(&e, txn, argv[0])) == CC_OK) {
		csv_header(&e);
		rc = scan_all(&e, txn, argv[0], false, csv_row);
	}
	cs_txn_abort(txn);
	if (rc == CC_OK && e.coarse) {
		fflush(stdout);
		fprintf(stderr, "cellctl export: warning: %llu cells have timestamps finer than milliseconds, which "
			"cbt import and cellctl import truncate (format=jsonl keeps them)\n", (unsigned long long)e.coarse);
	}
out:
	exp_release(&e);
	return rc;
}
