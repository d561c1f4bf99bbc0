/* cmd_read.c — the reading subcommands: lookup, read and count, with cbt's filters.
 *
 * cbt turns `columns=a,b` into an Interleave of filters, which emits a cell once for every selector that
 * matches it; the store returns each cell once, so the selectors are matched again here to print each
 * cell as often as cbt would. cbt's patterns are RE2 over raw bytes and must match whole names; they
 * are compiled here (a refused one is reported naming it, with Go's words) and matched with the store's
 * own matcher (cs_regex_match()), so both agree.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "cbtfmt.h"
#include "cellctl.h"
#include "jsonfmt.h"

/* One half of a columns= selector. */
struct matcher {
	const char *pat; /* as given (RE2); NULL: anything */
	bool literal;    /* no RE2 metacharacter: compare bytes */
	cs_regex *re;    /* otherwise: PAT compiled */
};

struct selector {
	struct matcher fam, qual;
};

/* What lookup and read share: the store's options and the columns= selectors. */
struct readspec {
	cs_read_opts o;
	colspec *specs;
	size_t nspecs;
	struct selector *sels;
	cs_column_sel *cs;
	cs_bytes *quals;
	unsigned *mult; /* per cell of the current row: how many selectors match it */
	size_t mult_cap;
	bool json;            /* --format=json */
	cs_table_info *info;  /* with json: the table's schema (which families are aggregates), or NULL */
	bool stats;           /* include-stats=full: cbt's summary block after the rows */
	uint64_t rows_out, cells_out; /* with stats: rows and cells printed (a cell once per selector) */
	char *last;           /* with stats: the key of the last row printed (LAST_LEN bytes) */
	size_t last_len, last_cap;
};

int cc_regex(const char *pat, const char *what, cs_regex **re)
{
	cs_regex_error e;
	cs_regex *spare;
	int rc = cs_regex_compile(pat, re ? re : &spare, &e);
	const char *frag = pat + e.off;
	bool plain = true;

	if (rc == -ENOMEM)
		return cc_error("%s", strerror(ENOMEM));
	if (rc == 0) {
		if (!re)
			cs_regex_free(spare);
		return CC_OK;
	}
	/* Go's message; the part it names in backquotes, or Go-quoted where it holds what would not print */
	for (size_t i = 0; i < e.len; i++)
		plain &= frag[i] >= 0x20 && frag[i] < 0x7f && frag[i] != '`';
	if (plain)
		return cc_error("bad regex %s in %s: error parsing regexp: %s: `%.*s`", cc_qs(pat), what, e.what,
				(int)e.len, frag);
	return cc_error("bad regex %s in %s: error parsing regexp: %s: %s", cc_qs(pat), what, e.what,
			cc_q(frag, e.len));
}

static int matcher_init(struct matcher *m, const char *pat)
{
	m->pat = pat;
	if (!pat)
		return CC_OK;
	m->literal = !pat[strcspn(pat, "\\.+*?()|[]{}^$")];
	if (m->literal)
		return CC_OK;
	return cc_regex(pat, "columns=", &m->re);
}

/* 1 if M matches the N bytes at P, 0 if not, or -ENOMEM. */
static int matcher_match(const struct matcher *m, const void *p, size_t n)
{
	if (!m->pat)
		return 1;
	if (m->literal)
		return strlen(m->pat) == n && !memcmp(m->pat, p, n);
	return cs_regex_match(m->re, p, n);
}

static void readspec_release(struct readspec *rs)
{
	for (size_t i = 0; rs->sels && i < rs->nspecs; i++) {
		cs_regex_free(rs->sels[i].fam.re);
		cs_regex_free(rs->sels[i].qual.re);
	}
	free(rs->last);
	free(rs->sels);
	free(rs->cs);
	free(rs->quals);
	free(rs->mult);
	cs_table_info_free(rs->info);
	colspecs_free(rs->specs, rs->nspecs);
}

/* Turn a columns= value into store selectors (exact names where the pattern is a literal). With
 * SYNTAX_ONLY, only what cbt checks itself (the selectors' form; their patterns are the server's). */
static int parse_columns(struct readspec *rs, const char *val, bool syntax_only)
{
	char *err = NULL;
	int rc = args_columns(val, &rs->specs, &rs->nspecs, &err);

	if (rc < 0) {
		rc = cc_error("%s", err ? err : strerror(-rc));
		free(err);
		return rc;
	}
	if (syntax_only)
		return CC_OK;
	rs->sels = calloc(rs->nspecs, sizeof *rs->sels);
	rs->cs = calloc(rs->nspecs, sizeof *rs->cs);
	rs->quals = calloc(rs->nspecs, sizeof *rs->quals);
	if (!rs->sels || !rs->cs || !rs->quals)
		return cc_error("%s", strerror(ENOMEM));
	for (size_t i = 0; i < rs->nspecs; i++) {
		struct selector *s = &rs->sels[i];
		cs_column_sel *c = &rs->cs[i];

		if (matcher_init(&s->fam, rs->specs[i].family) != CC_OK ||
		    matcher_init(&s->qual, rs->specs[i].qualifier) != CC_OK)
			return CC_FAIL;
		if (s->fam.pat && s->fam.literal)
			c->family = s->fam.pat;
		else
			c->family_regex = s->fam.pat;
		if (s->qual.pat && s->qual.literal) {
			rs->quals[i] = CS_BYTES(s->qual.pat, strlen(s->qual.pat));
			c->qualifier = &rs->quals[i];
		} else {
			c->qualifier_regex = s->qual.pat;
		}
	}
	rs->o.columns = rs->cs;
	rs->o.ncolumns = rs->nspecs;
	return CC_OK;
}

/* The options lookup and read share. VALS are indexed like common_keys. */
static const char *const common_keys[] = {
	"columns", "cells-per-column", "keys-only", "app-profile", "format-file", "include-stats",
	"authorized-view", "asof",
};
enum {
	K_COLUMNS, K_CELLS, K_KEYS_ONLY, K_APP_PROFILE, K_FORMAT_FILE, K_INCLUDE_STATS, K_AUTH_VIEW,
	K_ASOF, /* not cbt's: the store as it was then (cc_asof()) */
	K_NCOMMON
};

/* With SYNTAX_ONLY (a read that reads nothing, which cbt never sends), only what cbt checks itself:
 * not the patterns, nor cells-per-column > 0, which Bigtable checks. Prints the error. */
static int parse_common(struct readspec *rs, const char *const vals[], bool syntax_only)
{
	static const char *const unsupported[K_NCOMMON] = {
		[K_FORMAT_FILE] = "value formatting files", [K_AUTH_VIEW] = "authorized views",
	};
	const char *v;
	int64_t n;
	int rc;

	for (int k = K_FORMAT_FILE; k < K_NCOMMON; k++)
		if (unsupported[k] && vals[k] && *vals[k])
			return cc_error("%s are not supported (%s=%s)", unsupported[k], common_keys[k], cc_qs(vals[k]));
	if ((v = vals[K_INCLUDE_STATS]) && *v) {
		if (strcmp(v, "full"))
			return cc_error("bad include-stats value %s: not one of the supported stats views (full)", cc_qs(v));
		if (rs->json)
			return cc_error("include-stats=full prints cbt's summary block: not with --format=json");
		rs->stats = true;
	}
	if ((v = vals[K_CELLS]) && *v) {
		int32_t n32;

		if ((rc = go_parse_int(v, 10, &n)) < 0)
			return cc_error("bad number of cells per column %s: %s", cc_qs(v), go_num_strerror(rc));
		n32 = (int32_t)(uint32_t)(uint64_t)n; /* the Go client's int32(n) */
		if (n32 <= 0 && !syntax_only)
			return cc_error("bad number of cells per column %s: must be > 0", cc_qs(v));
		rs->o.cells_per_column = (uint32_t)n32;
	}
	if ((v = vals[K_KEYS_ONLY]) && *v && go_parse_bool(v, &rs->o.keys_only) < 0)
		return cc_error("bad keys-only %s: want true or false", cc_qs(v));
	if ((v = vals[K_COLUMNS]) && *v)
		return parse_columns(rs, v, syntax_only);
	return CC_OK;
}

/* Print ROW: as JSON, each cell once; as cbt, each cell as many times as columns= selectors match it. */
static int print_row(struct readspec *rs, const cs_row *row)
{
	if (rs->stats) {
		if (row->key.len > rs->last_cap) {
			char *k = realloc(rs->last, row->key.len);

			if (!k)
				return cc_error("%s", strerror(ENOMEM));
			rs->last = k;
			rs->last_cap = row->key.len;
		}
		memcpy(rs->last, row->key.data, row->key.len);
		rs->last_len = row->key.len;
		rs->rows_out++;
		rs->cells_out += row->ncells; /* (plus the repeats counted below) */
	}
	if (rs->json) {
		jsonfmt_row(stdout, row, rs->info, rs->o.keys_only);
		return CC_OK;
	}
	if (rs->nspecs < 2) {
		cbtfmt_row(stdout, row, NULL);
		return CC_OK;
	}
	if (row->ncells > rs->mult_cap) {
		unsigned *m = realloc(rs->mult, row->ncells * sizeof *m);

		if (!m)
			return cc_error("%s", strerror(ENOMEM));
		rs->mult = m;
		rs->mult_cap = row->ncells;
	}
	for (size_t i = 0; i < row->ncells; i++) {
		const cs_cell *c = &row->cells[i];

		rs->mult[i] = 0;
		for (size_t k = 0; k < rs->nspecs; k++) {
			int f = matcher_match(&rs->sels[k].fam, c->family, strlen(c->family));
			int q = f > 0 ? matcher_match(&rs->sels[k].qual, c->qualifier.data, c->qualifier.len) : 0;

			if (f < 0 || q < 0)
				return cc_error("%s", strerror(ENOMEM));
			rs->mult[i] += q;
		}
		if (rs->stats && rs->mult[i] > 1)
			rs->cells_out += rs->mult[i] - 1;
	}
	cbtfmt_row(stdout, row, rs->mult);
	return CC_OK;
}

/* Open a scan of TABLE with RS's options. Prints the error. */
static int scan_open(cs_txn *txn, const char *table, struct readspec *rs, cs_scan **scan)
{
	int err_no;

	if (rs->json && cs_table_info_get(txn, table, &rs->info) < 0)
		rs->info = NULL; /* (a missing table is reported below) */
	err_no = cs_scan_open(txn, table, &rs->o, scan);

	if (err_no == -EINVAL)
		return cc_error("bad read options");
	if (err_no < 0)
		return cc_store_error(txn, err_no, "reading rows", table, NULL);
	return CC_OK;
}

/* Print every row SCAN yields; with AT_LEAST_ONE (lookup), an empty row when there is none. */
static int print_scan(struct readspec *rs, cs_scan *scan, bool at_least_one)
{
	const cs_row *row;
	size_t rows = 0;
	int rc = CC_OK, more;

	while (rc == CC_OK && (more = cs_scan_next(scan, &row)) > 0) {
		rc = print_row(rs, row);
		rows++;
	}
	if (rc == CC_OK && more < 0)
		return cc_error("reading rows: %s", cc_strerror(more));
	if (rc == CC_OK && at_least_one && rows == 0 && !rs->json) /* JSON: no row, no line */
		cbtfmt_empty_row(stdout);
	return rc;
}

/* The milliseconds since T0 (CLOCK_MONOTONIC), truncated as Go's Duration.Milliseconds() truncates. */
static int64_t ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* include-stats=full: print cbt's summary block for the read RS has printed from TABLE, which took since
 * T0. Rows and cells seen are counted as the emulator counts them (bttest's ReadRows): every row of the
 * read's range that has cells, with all of its cells, before any filter; with a count= limit reached,
 * up to the last row printed. (Cells a GC policy has collected are not there to be seen; Bigtable itself
 * may count cells it skips or scans twice differently.) Prints the error. */
static int print_stats(cs_txn *txn, const char *table, struct readspec *rs, const struct timespec *t0)
{
	struct cbtfmt_read_stats st = { .rows_returned = rs->rows_out, .cells_returned = rs->cells_out,
					.latency_ms = ms_since(t0) };
	cs_read_opts o = { .row = rs->o.row, .start = rs->o.start, .end = rs->o.end, .prefix = rs->o.prefix,
			   .reversed = rs->o.reversed, .keys_only = true };
	bool stop = rs->o.limit && rs->rows_out >= rs->o.limit;
	const cs_row *row;
	cs_scan *scan;
	int more, err_no;

	if (txn) {
		if ((err_no = cs_scan_open(txn, table, &o, &scan)) < 0)
			return cc_store_error(txn, err_no, "reading rows", table, NULL);
		while ((more = cs_scan_next(scan, &row)) > 0) {
			st.rows_seen++;
			st.cells_seen += row->ncells;
			if (stop && row->key.len == rs->last_len && !memcmp(row->key.data, rs->last, rs->last_len))
				break;
		}
		cs_scan_close(scan);
		if (more < 0)
			return cc_error("reading rows: %s", cc_strerror(more));
	}
	cbtfmt_read_stats(stdout, &st);
	return CC_OK;
}

int cmd_lookup(struct cellctl *cc, int argc, char **argv)
{
	const char *vals[K_NCOMMON + 1];
	const char *valid[K_NCOMMON + 1];
	struct readspec rs = { 0 };
	struct timespec t0;
	cs_bytes key;
	cs_txn *txn;
	cs_scan *scan = NULL;
	int rc;

	if (argc < 2)
		return cc_usage(cc);
	memcpy(valid, common_keys, sizeof common_keys);
	valid[K_NCOMMON] = NULL;
	if (cc_args_kv(argc - 2, argv + 2, valid, vals) != CC_OK || cc_asof(cc, vals[K_ASOF]) != CC_OK)
		return CC_FAIL;
	rs.json = cc->format == CC_FORMAT_JSON;
	if ((rc = parse_common(&rs, vals, false)) != CC_OK)
		goto release;
	key = CS_BYTES(argv[1], strlen(argv[1]));
	rs.o.row = &key;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((rc = cellctl_begin(cc, &txn)) != CC_OK)
		goto release;
	if (key.len == 0 || key.len > CS_MAX_ROW_KEY) {
		/* No row can have this key; cbt prints the empty row all the same, once the table is known. */
		cs_table_info *info;
		int err_no = cs_table_info_get(txn, argv[0], &info);

		if (err_no < 0) {
			rc = cc_store_error(txn, err_no, "reading row", argv[0], NULL);
		} else {
			cs_table_info_free(info);
			if (!rs.json)
				cbtfmt_empty_row(stdout);
			if (rs.stats)
				rc = print_stats(NULL, argv[0], &rs, &t0);
		}
	} else if ((rc = scan_open(txn, argv[0], &rs, &scan)) == CC_OK) {
		rc = print_scan(&rs, scan, true);
		if (rc == CC_OK && rs.stats)
			rc = print_stats(txn, argv[0], &rs, &t0);
	}
	cs_scan_close(scan);
	cs_txn_abort(txn);
release:
	readspec_release(&rs);
	return rc;
}

int cmd_read(struct cellctl *cc, int argc, char **argv)
{
	enum { K_START = K_NCOMMON, K_END, K_PREFIX, K_REGEX, K_COUNT, K_REVERSED, K_LIMIT, K_NREAD };
	const char *valid[K_NREAD + 1];
	const char *vals[K_NREAD];
	struct readspec rs = { 0 };
	struct timespec t0;
	cs_txn *txn;
	cs_scan *scan = NULL;
	const char *v;
	bool none;
	int rc;

	if (argc < 1)
		return cc_usage(cc);
	memcpy(valid, common_keys, sizeof common_keys);
	valid[K_START] = "start";
	valid[K_END] = "end";
	valid[K_PREFIX] = "prefix";
	valid[K_REGEX] = "regex";
	valid[K_COUNT] = "count";
	valid[K_REVERSED] = "reversed";
	valid[K_LIMIT] = "limit";
	valid[K_NREAD] = NULL;
	if (cc_args_kv(argc - 1, argv + 1, valid, vals) != CC_OK)
		return CC_FAIL;
	if (vals[K_LIMIT]) /* cbt's old name for end */
		return cc_error("unknown arg key \"limit\"; did you mean \"end\"?");
	/* As in cbt, an empty value is the same as no argument. */
	for (int k = 0; k < K_NREAD; k++)
		if (vals[k] && !*vals[k])
			vals[k] = NULL;
	if (cc_asof(cc, vals[K_ASOF]) != CC_OK)
		return CC_FAIL;
	if ((vals[K_START] || vals[K_END]) && vals[K_PREFIX])
		return cc_error("\"start\"/\"end\" may not be mixed with \"prefix\"");
	if ((v = vals[K_COUNT])) {
		int64_t n;
		int err_no = go_parse_int(v, 0, &n);

		if (err_no < 0)
			return cc_error("bad count %s: %s", cc_qs(v), go_num_strerror(err_no));
		if (n < 0)
			return cc_error("bad count %s: row limit cannot be negative", cc_qs(v));
		rs.o.limit = (uint64_t)n;
	}
	if ((v = vals[K_REVERSED]) && go_parse_bool(v, &rs.o.reversed) < 0)
		return cc_error("bad reversed %s: want true or false", cc_qs(v));
	/* A read that can return nothing, cbt (the Go client) never sends: an empty range (end= at or before
	 * start=) or count=0. It prints nothing and succeeds whatever the table, the patterns or the store,
	 * once the arguments cbt checks itself are good. */
	none = (vals[K_COUNT] && !rs.o.limit) || (vals[K_END] && strcmp(vals[K_START] ? vals[K_START] : "", vals[K_END]) >= 0);
	rs.json = cc->format == CC_FORMAT_JSON;
	if ((rc = parse_common(&rs, vals, none)) != CC_OK)
		goto release;
	if (none) {
		if (rs.stats) /* cbt: "Stats were requested but not received." */
			rc = cc_error("stats were requested but not received: the read reads nothing (%s)",
				      vals[K_COUNT] && !rs.o.limit ? "count=0" : "its range is empty");
		goto release;
	}
	if ((v = vals[K_START]))
		rs.o.start = CS_BYTES(v, strlen(v));
	if ((v = vals[K_END]))
		rs.o.end = CS_BYTES(v, strlen(v));
	if ((v = vals[K_PREFIX]))
		rs.o.prefix = CS_BYTES(v, strlen(v));
	if ((v = vals[K_REGEX])) {
		if ((rc = cc_regex(v, "regex=", NULL)) != CC_OK)
			goto release;
		rs.o.row_regex = v;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((rc = cellctl_begin(cc, &txn)) != CC_OK)
		goto release;
	if ((rc = scan_open(txn, argv[0], &rs, &scan)) == CC_OK) {
		rc = print_scan(&rs, scan, false);
		if (rc == CC_OK && rs.stats)
			rc = print_stats(txn, argv[0], &rs, &t0);
	}
	cs_scan_close(scan);
	cs_txn_abort(txn);
release:
	readspec_release(&rs);
	return rc;
}

int cmd_count(struct cellctl *cc, int argc, char **argv)
{
	static const char *const valid[] = { "prefix", "asof", NULL };
	const char *vals[2];
	cs_read_opts o = { .keys_only = true };
	const cs_row *row;
	uint64_t n = 0;
	cs_txn *txn;
	cs_scan *scan;
	int rc, more, err_no;

	if (argc < 1)
		return cc_usage(cc);
	if (cc_args_kv(argc - 1, argv + 1, valid, vals) != CC_OK || cc_asof(cc, vals[1]) != CC_OK)
		return CC_FAIL;
	if (vals[0])
		o.prefix = CS_BYTES(vals[0], strlen(vals[0]));
	if ((rc = cellctl_begin(cc, &txn)) != CC_OK)
		return rc;
	if ((err_no = cs_scan_open(txn, argv[0], &o, &scan)) < 0) {
		rc = cc_store_error(txn, err_no, "reading rows", argv[0], NULL);
		cs_txn_abort(txn);
		return rc;
	}
	while ((more = cs_scan_next(scan, &row)) > 0)
		n++;
	if (more < 0)
		rc = cc_error("reading rows: %s", cc_strerror(more));
	else if (cc->format == CC_FORMAT_JSON)
		jsonfmt_count(stdout, n);
	else
		printf("%llu\n", (unsigned long long)n);
	cs_scan_close(scan);
	cs_txn_abort(txn);
	return rc;
}
