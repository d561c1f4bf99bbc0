/* cmd_keyviz.c — keyviz: the key-design report of a table (keyviz.h does the analysis): one keys-only
 * scan, the table's statistics when a GC policy limits versions, then a table per depth and the
 * findings, as text or (--format=json) one JSON object on one line. With out=FILE.svg, the heatmap
 * instead (cmd_heatsvg.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbtfmt.h"
#include "cellctl.h"
#include "jsonout.h"
#include "keyviz/keyviz.h"

struct keyviz_args {
	const char *table;
	struct kz_opts kz; /* the thresholds */
	const char *out;   /* out=: draw the heatmap there instead (cmd_heatsvg.c) */
	bool thresholds;   /* some threshold was given */
};

/* A size: decimal digits, optionally followed by K, M or G (KiB, MiB, GiB). */
static int parse_size(const char *key, const char *val, uint64_t *out)
{
	char *end;
	unsigned long long n;
	unsigned shift = 0;

	if (*val < '0' || *val > '9')
		return cc_error("bad %s=%s: want a size in bytes (a number, K, M or G after it for KiB, MiB, GiB)",
				key, cc_qs(val));
	errno = 0;
	n = strtoull(val, &end, 10);
	if (*end && !end[1])
		shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 64;
	if (errno || (*end && (end[1] || shift == 64)) || (shift && n > (UINT64_MAX >> shift)))
		return cc_error("bad %s=%s: want a size in bytes (a number, K, M or G after it for KiB, MiB, GiB)",
				key, cc_qs(val));
	*out = (uint64_t)n << shift;
	return CC_OK;
}

static int arg_row_size(struct keyviz_args *a, const char *key, const char *val)
{
	a->thresholds = true;
	return parse_size(key, val, &a->kz.row_size);
}

static int arg_row_limit(struct keyviz_args *a, const char *key, const char *val)
{
	a->thresholds = true;
	return parse_size(key, val, &a->kz.row_limit);
}

static int arg_cell_size(struct keyviz_args *a, const char *key, const char *val)
{
	a->thresholds = true;
	return parse_size(key, val, &a->kz.cell_size);
}

static int arg_max_families(struct keyviz_args *a, const char *key, const char *val)
{
	int64_t n;
	if (go_parse_int(val, 10, &n) < 0 || n < 0 || n > 100000)
		return cc_error("bad %s=%s: want a number of families from 0 to 100000", key, cc_qs(val));
	a->kz.max_families = (unsigned)n;
	a->thresholds = true;
	return CC_OK;
}

static int arg_out(struct keyviz_args *a, const char *key, const char *val)
{
	if (!*val)
		return cc_error("%s= names no file", key);
	a->out = val;
	return CC_OK;
}

/* keyviz's key=value arguments: one line here per argument (and one in the command's help). */
static const struct {
	const char *key;
	int (*set)(struct keyviz_args *a, const char *key, const char *val);
} keyviz_args[] = {
	{ "row-size", arg_row_size },
	{ "row-limit", arg_row_limit },
	{ "cell-size", arg_cell_size },
	{ "max-families", arg_max_families },
	{ "out", arg_out },
};
#define NARGS (sizeof keyviz_args / sizeof keyviz_args[0])

static int parse_args(struct keyviz_args *a, int argc, char **argv)
{
	const char *valid[NARGS + 1], *vals[NARGS] = { 0 };
	int status;

	for (size_t i = 0; i < NARGS; i++)
		valid[i] = keyviz_args[i].key;
	valid[NARGS] = NULL;
	if ((status = cc_args_kv(argc, argv, valid, vals)) != CC_OK)
		return status;
	for (size_t i = 0; i < NARGS; i++)
		if (vals[i] && (status = keyviz_args[i].set(a, keyviz_args[i].key, vals[i])) != CC_OK)
			return status;
	return CC_OK;
}

/* ---- Text ---------------------------------------------------------------------------------------- */

/* P (N bytes) Go-quoted, at most 32 bytes of it (then "..."), appended to the memstream F. */
static void quoted(FILE *f, const void *p, size_t n)
{
	cbtfmt_quote(f, p, n > 32 ? 32 : n);
	if (n > 32)
		fputs("...", f);
}

static char *depth_samples(const struct kz_depth *d)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < d->nsamples; i++) {
		if (i)
			putc(' ', f);
		quoted(f, d->samples[i].data, d->samples[i].len);
	}
	if (d->distinct > d->nsamples)
		fputs(" ...", f);
	if (fclose(f)) {
		free(s);
		return NULL;
	}
	return s;
}

/* "NAME: TEXT" in lines of at most 100 columns, broken at spaces, the next lines indented by 2. */
static void wrapped(FILE *f, const char *name, const char *text)
{
	size_t col = (size_t)fprintf(f, "%s:", name);

	while (*text) {
		size_t word = strcspn(text, " ");
		if (col + 1 + word > 100 && col > 2) {
			fputs("\n ", f);
			col = 1;
		}
		fprintf(f, " %.*s", (int)word, text);
		col += 1 + word;
		text += word;
		text += strspn(text, " ");
	}
	putc('\n', f);
}

/* CELLS (NROWS x NCOLS, row-major) as columns two spaces apart, widths counted in runes, the last
 * column unpadded. */
static void columns(FILE *f, char *const *cells, size_t nrows, size_t ncols)
{
	size_t w[8] = { 0 };

	for (size_t i = 0; i < nrows * ncols; i++) {
		size_t n = gofmt_rune_count(cells[i], strlen(cells[i]));
		if (n > w[i % ncols])
			w[i % ncols] = n;
	}
	for (size_t r = 0; r < nrows; r++)
		for (size_t c = 0; c < ncols; c++) {
			const char *s = cells[r * ncols + c];
			if (c + 1 == ncols) {
				fprintf(f, "%s\n", s);
				continue;
			}
			fputs(s, f);
			for (size_t k = gofmt_rune_count(s, strlen(s)); k < w[c] + 2; k++)
				putc(' ', f);
		}
}

static int print_text(const char *table, const struct kz_opts *o, const struct kz_report *r, bool unchecked)
{
	const size_t ncols = 5;
	size_t nrows = r->ndepths + 1;
	char **cells = calloc(nrows * ncols, sizeof *cells);
	int status = CC_OK;

	if (!cells)
		return cc_error("%s", strerror(ENOMEM));
	printf("table %s: %llu rows, %llu cells, %llu bytes of values; keys split at %s\n", table,
	       (unsigned long long)r->rows, (unsigned long long)r->cells, (unsigned long long)r->value_bytes,
	       cc_q(&o->delim, 1));
	cells[0] = strdup("depth");
	cells[1] = strdup("rows");
	cells[2] = strdup("distinct");
	cells[3] = strdup("looks like");
	cells[4] = strdup("e.g.");
	for (size_t d = 0; d < r->ndepths; d++) {
		const struct kz_depth *dp = &r->depths[d];
		char **c = &cells[(d + 1) * ncols];
		if (asprintf(&c[0], "%zu", d) < 0)
			c[0] = NULL;
		if (asprintf(&c[1], "%llu", (unsigned long long)dp->rows) < 0)
			c[1] = NULL;
		if (asprintf(&c[2], "%s%llu", dp->distinct_exact ? "" : "~", (unsigned long long)dp->distinct) < 0)
			c[2] = NULL;
		c[3] = strdup(dp->detail);
		c[4] = depth_samples(dp);
	}
	for (size_t i = 0; i < nrows * ncols; i++)
		if (!cells[i]) {
			status = cc_error("%s", strerror(ENOMEM));
			goto out;
		}
	if (r->ndepths)
		columns(stdout, cells, nrows, ncols);
	if (r->deeper_rows)
		printf("%llu rows have more than %d segments; the rest of their keys is not analysed\n",
		       (unsigned long long)r->deeper_rows, KZ_MAX_DEPTH);
	if (r->writes.window)
		printf("newest writes: %llu of the newest %llu cells in the last %llu rows, %llu in the first %llu\n",
		       (unsigned long long)r->writes.in_last, (unsigned long long)r->writes.window,
		       (unsigned long long)r->writes.region, (unsigned long long)r->writes.in_first,
		       (unsigned long long)r->writes.region);
	if (unchecked)
		puts("versions: not checked (this store keeps no count of the cells GC policies collected)");
	if (!r->nfindings) {
		puts("no findings");
		goto out;
	}
	printf("%zu finding%s\n", r->nfindings, r->nfindings == 1 ? "" : "s");
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct kz_finding *f = &r->findings[i];
		putchar('\n');
		wrapped(stdout, kz_rule_name(f->rule), f->message);
		for (size_t k = 0; k < f->nexamples; k++) {
			const struct kz_example *e = &f->examples[k];
			fputs("    ", stdout);
			if (e->row.data)
				quoted(stdout, e->row.data, e->row.len);
			if (e->column)
				printf("%s%s", e->row.data ? " " : "", e->column);
			if (e->note)
				printf("  (%s)", e->note);
			putchar('\n');
		}
	}
out:
	for (size_t i = 0; i < nrows * ncols; i++)
		free(cells[i]);
	free(cells);
	return status;
}

/* ---- JSON ---------------------------------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
	jo_str(f, s, strlen(s));
}

static void print_json(const char *table, const struct kz_opts *o, const struct kz_report *r)
{
	FILE *f = stdout;

	fputs("{\"table\":", f);
	json_str(f, table);
	fprintf(f, ",\"rows\":%llu,\"cells\":%llu,\"value_bytes\":%llu,\"delimiter\":", (unsigned long long)r->rows,
		(unsigned long long)r->cells, (unsigned long long)r->value_bytes);
	jo_str(f, &o->delim, 1);
	fprintf(f, ",\"deeper_rows\":%llu", (unsigned long long)r->deeper_rows);
	fprintf(f, ",\"thresholds\":{\"row_size\":%llu,\"row_limit\":%llu,\"cell_size\":%llu,\"max_families\":%u}",
		(unsigned long long)o->row_size, (unsigned long long)o->row_limit, (unsigned long long)o->cell_size,
		o->max_families);
	fputs(",\"depths\":[", f);
	for (size_t d = 0; d < r->ndepths; d++) {
		const struct kz_depth *dp = &r->depths[d];
		bool first = true;
		fprintf(f, "%s{\"depth\":%zu,\"rows\":%llu,\"distinct\":%llu,\"distinct_exact\":%s,\"kind\":", d ? "," : "",
			d, (unsigned long long)dp->rows, (unsigned long long)dp->distinct,
			dp->distinct_exact ? "true" : "false");
		json_str(f, dp->kind == KZC_NKINDS ? "mixed" : dp->hash ? "hash" : dp->salt ? "salt"
			    : dp->sequence ? "sequence" : kzc_kind_name(dp->kind));
		fputs(",\"detail\":", f);
		json_str(f, dp->detail);
		fprintf(f, ",\"min_len\":%zu,\"max_len\":%zu,\"kinds\":{", dp->min_len, dp->max_len);
		for (int k = 0; k < KZC_NKINDS; k++) {
			if (!dp->kinds[k])
				continue;
			fprintf(f, "%s\"%s\":%llu", first ? "" : ",", kzc_kind_name((enum kzc_kind)k),
				(unsigned long long)dp->kinds[k]);
			first = false;
		}
		fputs("},\"samples\":[", f);
		for (size_t i = 0; i < dp->nsamples; i++) {
			fputs(i ? ",{" : "{", f);
			jo_bytes_field(f, "segment", dp->samples[i].data, dp->samples[i].len);
			putc('}', f);
		}
		fputs("]}", f);
	}
	fprintf(f, "],\"writes\":{\"newest_cells\":%llu,\"region_rows\":%llu,\"in_last_rows\":%llu,"
		"\"in_first_rows\":%llu}",
		(unsigned long long)r->writes.window, (unsigned long long)r->writes.region,
		(unsigned long long)r->writes.in_last, (unsigned long long)r->writes.in_first);
	fprintf(f, ",\"versions_checked\":%s,\"findings\":[", r->have_stats ? "true" : "false");
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct kz_finding *fd = &r->findings[i];
		fputs(i ? ",{\"rule\":" : "{\"rule\":", f);
		json_str(f, kz_rule_name(fd->rule));
		if (fd->depth >= 0)
			fprintf(f, ",\"depth\":%d", fd->depth);
		fputs(",\"message\":", f);
		json_str(f, fd->message);
		fputs(",\"numbers\":{", f);
		for (size_t k = 0; k < fd->nnumbers; k++)
			fprintf(f, "%s\"%s\":%.15g", k ? "," : "", fd->numbers[k].name, fd->numbers[k].value);
		fputs("},\"examples\":[", f);
		for (size_t k = 0; k < fd->nexamples; k++) {
			const struct kz_example *e = &fd->examples[k];
			const char *sep = "";
			fputs(k ? ",{" : "{", f);
			if (e->row.data) {
				jo_bytes_field(f, "row", e->row.data, e->row.len);
				sep = ",";
			}
			if (e->column) {
				fprintf(f, "%s\"column\":", sep);
				json_str(f, e->column);
				sep = ",";
			}
			if (e->note) {
				fprintf(f, "%s\"note\":", sep);
				json_str(f, e->note);
			}
			putc('}', f);
		}
		fputs("]}", f);
	}
	fputs("]}\n", f);
}

/* ---- The command --------------------------------------------------------------------------------- */

int cmd_keyviz(struct cellctl *cc, int argc, char **argv)
{
	struct keyviz_args a = {
		.kz = { .row_size = KZ_DEFAULT_ROW_SIZE, .row_limit = KZ_DEFAULT_ROW_LIMIT,
			.cell_size = KZ_DEFAULT_CELL_SIZE, .max_families = KZ_DEFAULT_MAX_FAMILIES },
	};
	cs_read_opts ro = { .keys_only = true, .unrecorded = true }; /* (not a read of the user's) */
	const struct kz_report *rep;
	cs_table_info *info = NULL;
	cs_scan *scan = NULL;
	struct kz *z = NULL;
	const cs_row *row;
	bool unchecked;
	cs_txn *txn;
	int rc, status;

	if (argc < 1)
		return cc_usage(cc);
	a.table = argv[0];
	if ((status = parse_args(&a, argc - 1, argv + 1)) != CC_OK)
		return status;
	if (a.out && a.thresholds)
		return cc_error("out= draws the heatmap: row-size=, row-limit=, cell-size= and max-families= are the "
				"report's");
	if (a.out)
		return keyviz_heatmap(cc, a.table, a.out);
	if ((status = cellctl_begin(cc, &txn)) != CC_OK)
		return status;
	if ((rc = cs_table_info_get(txn, a.table, &info)) < 0) {
		status = cc_store_error(txn, rc, "reading the table", a.table, NULL);
		goto abort;
	}
	a.kz.delim = info->delim ? info->delim : CS_DEFAULT_DELIM;
	a.kz.info = info;
	if ((rc = kz_new(&a.kz, &z)) < 0 || (rc = cs_scan_open(txn, a.table, &ro, &scan)) < 0)
		goto store_error;
	while ((rc = cs_scan_next(scan, &row)) == 1)
		if ((rc = kz_add_row(z, row)) < 0)
			break;
	cs_scan_close(scan);
	if (rc < 0)
		goto store_error;
	/* the versions rule needs what reads do not return: the cells GC policies collected */
	unchecked = kz_wants_stats(z) && !(cs_store_caps(cc->st) & CS_CAP_MAINT);
	if (kz_wants_stats(z) && !unchecked) {
		cs_table_stats *s;
		if ((rc = cs_table_stats_get(txn, a.table, &s)) < 0)
			goto store_error;
		kz_add_stats(z, s);
		cs_table_stats_free(s);
	}
	if ((rc = kz_finish(z, &rep)) < 0)
		goto store_error;
	if (cc->format == CC_FORMAT_JSON)
		print_json(a.table, &a.kz, rep);
	else
		status = print_text(a.table, &a.kz, rep, unchecked);
	goto abort;
store_error:
	status = cc_store_error(txn, rc, "reading the table", a.table, NULL);
abort:
	kz_free(z);
	cs_table_info_free(info);
	cs_txn_abort(txn);
	return status;
}
