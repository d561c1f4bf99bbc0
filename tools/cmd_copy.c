/* cmd_copy.c — cellctl copy SRC DST [TABLE...]: tables with their schema and every version at its exact
 * timestamp, from one store to another, through the public API alone, so any two stores will do.
 *
 * Two passes over one read snapshot of SRC. The first reads keys only and writes nothing: every cell
 * must fit DST (its value limit; whole milliseconds where DST lacks CS_CAP_TS_MICROS, unless round=ms)
 * and every table DST already has must have a compatible schema. The second writes through DST's bulk
 * loader in batches, each one committed transaction. Memory holds one row. Timestamps are explicit, so a
 * cell written again replaces itself (aggregate cells too: cs_bulk_put() stores them as given): a copy
 * killed part-way is finished by running it again, which duplicates nothing.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "cellctl.h"
#include "progress.h"

#define MAX_BATCH_CELLS 100000 /* also Bigtable's limit of mutations in one request */
#define BATCH_BYTES (64u << 20)

struct cp {
	const char *src_name, *dst_name;
	cs_store *src, *dst;
	cs_txn *snap;           /* SRC's read snapshot, for both passes */
	char **tables;          /* the tables to copy, in order */
	size_t ntables;
	bool listed;            /* TABLES came from cs_table_list() (free them) */
	cs_table_info **info;   /* their schemas in SRC */
	bool *exists;           /* ... whether DST has them already */
	bool round_ms;          /* round=ms */
	bool whole_ms;          /* DST keeps whole milliseconds only */
	bool no_txn;            /* DST lacks CS_CAP_TXN: what it acknowledged stays, committed or not */
	uint64_t max_value;     /* DST's value limit */
	uint64_t batch_max;     /* cells a batch */
	uint64_t cells, total;  /* cells so far in this pass; found by the first */
	uint64_t committed;     /* cells in committed batches */
	uint64_t acked;         /* NO_TXN: cells of the batch being written DST holds, in loaders closed */
	uint64_t batches;       /* batches committed */
	int64_t kill_after;     /* test hook: die (SIGKILL) instead of committing batch N + 1; -1: off */
	cs_txn *txn;            /* the batch being written */
	cs_bulk *bulk;          /* ... into this table */
	const char *bulk_table;
	uint64_t batch_cells, batch_bytes;
	struct progress prog;
};

/* ---- Naming a cell in a message ----------------------------------------------------------------- */

/* "family:qualifier" Go-quoted, as verify names a column. */
static const char *column_q(const char *family, cs_bytes q)
{
	size_t fn = strlen(family);
	char *col = malloc(fn + 1 + q.len + 1);
	const char *s;

	if (!col)
		return "?";
	memcpy(col, family, fn);
	col[fn] = ':';
	if (q.len)
		memcpy(col + fn + 1, q.data, q.len);
	s = cc_q(col, fn + 1 + q.len);
	free(col);
	return s;
}

#define CELL_FMT "table %s row %s column %s @%lld"
#define CELL_ARGS(t, r, c) cc_qs(t), cc_q((r)->key.data, (r)->key.len), column_q((c)->family, (c)->qualifier), \
	(long long)(c)->ts

/* ---- Arguments ---------------------------------------------------------------------------------- */

/* SRC DST, then table names and key=value options in any order (a table name has no '='); --quiet
 * anywhere. */
static int parse_args(struct cp *cp, int argc, char **argv, bool *quiet)
{
	static const char *const keys[] = { "round", "batch-size", NULL };
	enum { A_ROUND, A_BATCH, A_N };
	const char *vals[A_N + 1];
	char **kv, **tables;
	int nkv = 0, nt = 0, rc = CC_OK;
	int64_t n;

	kv = calloc((size_t)argc + 1, sizeof *kv);
	tables = calloc((size_t)argc + 1, sizeof *tables);
	if (!kv || !tables) {
		free(kv);
		free(tables);
		return cc_error("%s", strerror(ENOMEM));
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
			*quiet = true;
		else if (strchr(argv[i], '='))
			kv[nkv++] = argv[i];
		else
			tables[nt++] = argv[i];
	}
	cp->src_name = argv[0];
	cp->dst_name = argv[1];
	cp->tables = tables;
	cp->ntables = (size_t)nt;
	if ((rc = cc_args_kv(nkv, kv, keys, vals)) != CC_OK)
		goto out;
	if (vals[A_ROUND] && strcmp(vals[A_ROUND], "ms") && strcmp(vals[A_ROUND], "none")) {
		rc = cc_error("round must be ms or none (round=%s)", cc_qs(vals[A_ROUND]));
		goto out;
	}
	cp->round_ms = vals[A_ROUND] && !strcmp(vals[A_ROUND], "ms");
	cp->batch_max = MAX_BATCH_CELLS;
	if (vals[A_BATCH]) {
		if (go_parse_int(vals[A_BATCH], 10, &n) < 0 || n <= 0 || n > MAX_BATCH_CELLS) {
			rc = cc_error("batch-size must be 1 to %d cells (batch-size=%s)", MAX_BATCH_CELLS,
				      cc_qs(vals[A_BATCH]));
			goto out;
		}
		cp->batch_max = (uint64_t)n;
	}
	for (int i = 0; i < nt; i++) {
		if (cs_check_table_name(tables[i]) < 0) {
			rc = cc_error("invalid table name %s", cc_qs(tables[i]));
			goto out;
		}
		for (int j = 0; j < i; j++)
			if (!strcmp(tables[i], tables[j])) {
				rc = cc_error("table %s given twice", cc_qs(tables[i]));
				goto out;
			}
	}
out:
	free(kv);
	return rc;
}

/* Whether names A and B are one store: the same name, or the same directory. (Two names of one remote
 * store, say with different options, are not recognised: the copy then writes each cell over itself.) */
static bool same_store(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!strcmp(a, b))
		return true;
	return !stat(a, &sa) && !stat(b, &sb) && S_ISDIR(sa.st_mode) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* ---- Checks (nothing written) ------------------------------------------------------------------- */

/* The source tables and their schemas. */
static int read_schemas(struct cp *cp)
{
	int rc;

	if (!cp->ntables) {
		free(cp->tables);
		cp->tables = NULL;
		if ((rc = cs_table_list(cp->snap, &cp->tables, &cp->ntables)) < 0)
			return cc_error("listing the tables of %s: %s", cc_qs(cp->src_name), cc_strerror(rc));
		cp->listed = true;
	}
	cp->info = calloc(cp->ntables + 1, sizeof *cp->info);
	cp->exists = calloc(cp->ntables + 1, sizeof *cp->exists);
	if (!cp->info || !cp->exists)
		return cc_error("%s", strerror(ENOMEM));
	for (size_t i = 0; i < cp->ntables; i++) {
		rc = cs_table_info_get(cp->snap, cp->tables[i], &cp->info[i]);
		if (rc == -ENOENT)
			return cc_error("table %s not found in %s", cc_qs(cp->tables[i]), cc_qs(cp->src_name));
		if (rc < 0)
			return cc_error("reading the schema of table %s: %s", cc_qs(cp->tables[i]), cc_strerror(rc));
	}
	return CC_OK;
}

static const char *type_word(cs_value_type t)
{
	return t == CS_TYPE_BYTES ? "bytes" : cs_value_type_name(t);
}

/* A destination table D that exists can take source table S's cells: the same delimiter, and every
 * family of S with the same GC policy and value type (D may have more). */
static int check_compatible(const struct cp *cp, const cs_table_info *s, const cs_table_info *d)
{
	const char *t = cc_qs(s->name), *dst = cc_qs(cp->dst_name);

	if (s->delim != d->delim)
		return cc_error("table %s of %s has the delimiter %s, the source's has %s; nothing was copied", t, dst,
				cc_q(&d->delim, 1), cc_q(&s->delim, 1));
	for (size_t i = 0; i < s->nfamilies; i++) {
		const cs_family_info *f = &s->families[i], *g = NULL;

		for (size_t j = 0; j < d->nfamilies && !g; j++)
			if (!strcmp(d->families[j].name, f->name))
				g = &d->families[j];
		if (!g)
			return cc_error("table %s of %s has no family %s; nothing was copied", t, dst, cc_qs(f->name));
		if (strcmp(f->gc, g->gc))
			return cc_error("family %s of table %s has the GC policy %s in %s, %s in the source; nothing "
					"was copied", cc_qs(f->name), t, cc_qs(g->gc), dst, cc_qs(f->gc));
		if (f->type != g->type)
			return cc_error("family %s of table %s has the value type %s in %s, %s in the source; nothing "
					"was copied", cc_qs(f->name), t, type_word(g->type), dst, type_word(f->type));
	}
	return CC_OK;
}

static int check_destination(struct cp *cp)
{
	cs_txn *txn;
	int rc, status = CC_OK;

	if ((rc = cs_txn_begin(cp->dst, CS_TXN_RDONLY, &txn)) < 0)
		return cc_error("cannot begin a transaction on %s: %s", cc_qs(cp->dst_name), cc_strerror(rc));
	for (size_t i = 0; i < cp->ntables && status == CC_OK; i++) {
		cs_table_info *d = NULL;

		rc = cs_table_info_get(txn, cp->tables[i], &d);
		if (rc == -ENOENT)
			continue;
		if (rc < 0)
			status = cc_error("reading the schema of table %s of %s: %s", cc_qs(cp->tables[i]),
					  cc_qs(cp->dst_name), cc_strerror(rc));
		else
			status = check_compatible(cp, cp->info[i], d);
		cp->exists[i] = true;
		cs_table_info_free(d);
	}
	cs_txn_abort(txn);
	return status;
}

/* The timestamp cell C gets in the destination. */
static int64_t dest_ts(const struct cp *cp, int64_t ts)
{
	return cp->round_ms ? ts - ts % 1000 : ts;
}

/* The first pass over table T: every cell fits the destination. */
static int check_table(struct cp *cp, const char *t)
{
	const cs_read_opts o = { .keys_only = true };
	const cs_row *row;
	cs_scan *scan;
	int rc, status = CC_OK;

	if ((rc = cs_scan_open(cp->snap, t, &o, &scan)) < 0)
		return cc_error("reading table %s of %s: %s", cc_qs(t), cc_qs(cp->src_name), cc_strerror(rc));
	while (status == CC_OK && (rc = cs_scan_next(scan, &row)) > 0) {
		for (size_t i = 0; i < row->ncells && status == CC_OK; i++) {
			const cs_cell *c = &row->cells[i], *p = i ? c - 1 : NULL;

			if (c->value_len > cp->max_value)
				status = cc_error(CELL_FMT ": a value of %llu bytes is over the limit of %s, %llu bytes; "
						  "nothing was copied", CELL_ARGS(t, row, c), (unsigned long long)c->value_len,
						  cc_qs(cp->dst_name), (unsigned long long)cp->max_value);
			else if (!cp->round_ms && cp->whole_ms && c->ts % 1000)
				status = cc_error(CELL_FMT ": %s keeps whole milliseconds (round=ms rounds timestamps "
						  "down); nothing was copied", CELL_ARGS(t, row, c), cc_qs(cp->dst_name));
			else if (cp->round_ms && p && !strcmp(p->family, c->family) &&
				 p->qualifier.len == c->qualifier.len &&
				 !memcmp(p->qualifier.data, c->qualifier.data, c->qualifier.len) &&
				 dest_ts(cp, p->ts) == dest_ts(cp, c->ts))
				status = cc_error(CELL_FMT " and @%lld: both round to @%lld (round=ms); nothing was copied",
						  CELL_ARGS(t, row, p), (long long)c->ts, (long long)dest_ts(cp, c->ts));
			cp->cells++;
		}
		progress_update(&cp->prog, cp->cells, 0);
	}
	cs_scan_close(scan);
	if (status == CC_OK && rc < 0)
		status = cc_error("reading table %s of %s: %s", cc_qs(t), cc_qs(cp->src_name), cc_strerror(rc));
	return status;
}

/* ---- Writing ------------------------------------------------------------------------------------ */

/* What DST holds of the copy, for an error while writing: the committed batches; and where DST keeps
 * each write (no CS_CAP_TXN, as Bigtable), also what it acknowledged of the batch that failed (more may
 * have arrived unacknowledged: "at least"). */
static const char *written_note(const struct cp *cp)
{
	static char note[160];
	uint64_t n = cp->committed;

	if (cp->no_txn) {
		cs_bulk_stats st = { 0 };
		if (cp->bulk)
			cs_bulk_get_stats(cp->bulk, &st);
		n += cp->acked + st.appended + st.put;
		snprintf(note, sizeof note, "at least %llu cells are copied; running the copy again finishes it",
			 (unsigned long long)n);
		return note;
	}
	if (!n)
		return "no cell was copied";
	snprintf(note, sizeof note, "%llu cells are copied; running the copy again finishes it", (unsigned long long)n);
	return note;
}

/* Close the loader, having handed its cells to DST (cs_bulk_flush()) and counted what DST holds of them. */
static int bulk_end(struct cp *cp)
{
	cs_bulk_stats st = { 0 };
	int rc;

	if (!cp->bulk)
		return 0;
	rc = cs_bulk_flush(cp->bulk);
	if (cp->no_txn) {
		cs_bulk_get_stats(cp->bulk, &st);
		cp->acked += st.appended + st.put;
	}
	cs_bulk_close(cp->bulk);
	cp->bulk = NULL;
	return rc;
}

static int create_tables(struct cp *cp)
{
	cs_txn *txn;
	int rc;

	if ((rc = cs_txn_begin(cp->dst, 0, &txn)) < 0)
		return cc_error("cannot begin a transaction on %s: %s", cc_qs(cp->dst_name), cc_strerror(rc));
	for (size_t i = 0; i < cp->ntables; i++) {
		if (cp->exists[i])
			continue;
		rc = cs_table_create_as(txn, cp->info[i]);
		if (rc == -EEXIST) {
			cs_txn_abort(txn);
			return cc_error("table %s was created in %s meanwhile; nothing was copied", cc_qs(cp->tables[i]),
					cc_qs(cp->dst_name));
		}
		if (rc < 0) {
			cs_txn_abort(txn);
			return cc_error("creating table %s in %s: %s; nothing was copied", cc_qs(cp->tables[i]),
					cc_qs(cp->dst_name), cc_strerror(rc));
		}
	}
	if ((rc = cs_txn_commit(txn)) < 0)
		return cc_error("creating the tables in %s: %s; nothing was copied", cc_qs(cp->dst_name), cc_strerror(rc));
	return CC_OK;
}

static int bulk_open(struct cp *cp, const char *table)
{
	int rc = cs_bulk_open(cp->txn, table, &cp->bulk);

	if (rc < 0)
		return cc_error("writing table %s of %s: %s; %s", cc_qs(table), cc_qs(cp->dst_name),
				rc == -ENOENT ? "it was deleted meanwhile" : cc_strerror(rc), written_note(cp));
	cp->bulk_table = table;
	return CC_OK;
}

static int batch_begin(struct cp *cp)
{
	int rc = cs_txn_begin(cp->dst, 0, &cp->txn);

	if (rc < 0) {
		cp->txn = NULL;
		return cc_error("cannot begin a transaction on %s: %s; %s", cc_qs(cp->dst_name), cc_strerror(rc),
				written_note(cp));
	}
	cp->batch_cells = cp->batch_bytes = 0;
	return CC_OK;
}

static int batch_commit(struct cp *cp)
{
	int rc;

	if (cp->kill_after >= 0 && cp->batches == (uint64_t)cp->kill_after)
		raise(SIGKILL); /* the test hook: killed with a batch written and not committed */
	if ((rc = bulk_end(cp)) < 0) {
		int status = cc_error("writing to %s: %s; %s", cc_qs(cp->dst_name), cc_strerror(rc), written_note(cp));
		cs_txn_abort(cp->txn);
		cp->txn = NULL;
		return status;
	}
	rc = cs_txn_commit(cp->txn);
	cp->txn = NULL;
	if (rc < 0)
		return cc_error("writing to %s: %s; %s", cc_qs(cp->dst_name), cc_strerror(rc), written_note(cp));
	cp->committed = cp->cells;
	cp->acked = 0;
	cp->batches++;
	return CC_OK;
}

static void batch_abort(struct cp *cp)
{
	cs_bulk_close(cp->bulk);
	cs_txn_abort(cp->txn);
	cp->bulk = NULL;
	cp->txn = NULL;
}

static int put(struct cp *cp, const char *t, const cs_row *row, const cs_cell *c)
{
	int rc = cs_bulk_put(cp->bulk, row->key, c->family, c->qualifier, dest_ts(cp, c->ts), c->value);

	if (rc == -ENOENT)
		return cc_error("writing table %s of %s: family %s was deleted meanwhile; %s", cc_qs(t),
				cc_qs(cp->dst_name), cc_qs(c->family), written_note(cp));
	if (rc == -EINVAL || rc == -ENAMETOOLONG || rc == -EFBIG) /* (this cell's fault, not the store's) */
		return cc_error(CELL_FMT ": writing it to %s: %s; %s", CELL_ARGS(t, row, c), cc_qs(cp->dst_name),
				cc_strerror(rc), written_note(cp));
	if (rc < 0) /* (the transaction failed, perhaps sending an earlier batch: cs_bulk_put()) */
		return cc_error("writing to %s: %s; %s", cc_qs(cp->dst_name), cc_strerror(rc), written_note(cp));
	cp->cells++;
	cp->batch_cells++;
	cp->batch_bytes += row->key.len + c->qualifier.len + c->value.len + 32;
	if (cp->batch_cells < cp->batch_max && cp->batch_bytes < BATCH_BYTES)
		return CC_OK;
	if ((rc = batch_commit(cp)) != CC_OK || (rc = batch_begin(cp)) != CC_OK)
		return rc;
	return bulk_open(cp, t);
}

/* The second pass over table T: every cell, through the bulk loader. */
static int copy_table(struct cp *cp, const char *t)
{
	const cs_row *row;
	cs_scan *scan;
	int rc, status;

	if ((status = bulk_open(cp, t)) != CC_OK)
		return status;
	if ((rc = cs_scan_open(cp->snap, t, NULL, &scan)) < 0)
		return cc_error("reading table %s of %s: %s; %s", cc_qs(t), cc_qs(cp->src_name), cc_strerror(rc),
				written_note(cp));
	while (status == CC_OK && (rc = cs_scan_next(scan, &row)) > 0) {
		for (size_t i = 0; i < row->ncells && status == CC_OK; i++)
			status = put(cp, t, row, &row->cells[i]);
		progress_update(&cp->prog, cp->cells, 0);
	}
	cs_scan_close(scan);
	if (status == CC_OK && rc < 0)
		status = cc_error("reading table %s of %s: %s; %s", cc_qs(t), cc_qs(cp->src_name), cc_strerror(rc),
				  written_note(cp));
	if (status != CC_OK) /* (batch_abort() closes the loader) */
		return status;
	if ((rc = bulk_end(cp)) < 0)
		status = cc_error("writing to %s: %s; %s", cc_qs(cp->dst_name), cc_strerror(rc), written_note(cp));
	return status;
}

/* ---- The command -------------------------------------------------------------------------------- */

/* The test hook $CELLCTL_COPY_KILL_AFTER_BATCHES=N: -1 if unset; refused unless a whole number. */
static int kill_hook(struct cp *cp)
{
	const char *v = getenv("CELLCTL_COPY_KILL_AFTER_BATCHES");
	int64_t n;

	cp->kill_after = -1;
	if (!v)
		return CC_OK;
	if (go_parse_int(v, 10, &n) < 0 || n < 0)
		return cc_error("CELLCTL_COPY_KILL_AFTER_BATCHES=%s is not a number of batches", cc_qs(v));
	cp->kill_after = n;
	return CC_OK;
}

int cmd_copy(struct cellctl *cc, int argc, char **argv)
{
	struct cp cp = { 0 };
	bool quiet = false;
	int rc, status;

	if (argc < 2)
		return cc_usage(cc);
	if ((status = parse_args(&cp, argc, argv, &quiet)) != CC_OK || (status = kill_hook(&cp)) != CC_OK)
		goto out;
	if (same_store(cp.src_name, cp.dst_name)) {
		status = cc_error("%s and %s are the same store", cc_qs(cp.src_name), cc_qs(cp.dst_name));
		goto out;
	}
	/* The destination is created as restore creates one: a store named that does not exist yet. */
	if ((status = cc_store_open(cp.src_name, CS_OPEN_RDONLY, &cp.src)) != CC_OK)
		goto out;
	if ((rc = cs_txn_begin(cp.src, CS_TXN_RDONLY, &cp.snap)) < 0) {
		status = cc_error("cannot begin a transaction on %s: %s", cc_qs(cp.src_name), cc_strerror(rc));
		goto out;
	}
	if ((status = read_schemas(&cp)) != CC_OK ||
	    (status = cc_store_open(cp.dst_name, CS_OPEN_CREATE, &cp.dst)) != CC_OK ||
	    (status = check_destination(&cp)) != CC_OK)
		goto out;
	cp.max_value = cs_store_max_value(cp.dst);
	cp.whole_ms = !(cs_store_caps(cp.dst) & CS_CAP_TS_MICROS);
	cp.no_txn = !(cs_store_caps(cp.dst) & CS_CAP_TXN);

	progress_init(&cp.prog, "checking", quiet, 0, 0);
	for (size_t i = 0; i < cp.ntables && status == CC_OK; i++)
		status = check_table(&cp, cp.tables[i]);
	progress_done(&cp.prog, cp.cells, false);
	if (status != CC_OK || (status = create_tables(&cp)) != CC_OK)
		goto out;

	cp.total = cp.cells;
	cp.cells = 0;
	progress_init(&cp.prog, "copy", quiet, 0, cp.total);
	if ((status = batch_begin(&cp)) != CC_OK)
		goto out;
	for (size_t i = 0; i < cp.ntables && status == CC_OK; i++)
		status = copy_table(&cp, cp.tables[i]);
	if (status == CC_OK)
		status = batch_commit(&cp);
	else
		batch_abort(&cp);
	if (status == CC_OK && (rc = cs_store_sync(cp.dst)) < 0)
		status = cc_error("the copy is committed but could not be flushed to %s: %s", cc_qs(cp.dst_name),
				  cc_strerror(rc));
	progress_done(&cp.prog, cp.cells, status == CC_OK);
out:
	cs_txn_abort(cp.snap);
	for (size_t i = 0; cp.info && i < cp.ntables; i++)
		cs_table_info_free(cp.info[i]);
	free(cp.info);
	free(cp.exists);
	if (cp.listed)
		cs_strv_free(cp.tables, cp.ntables);
	else
		free(cp.tables);
	cc_store_close(cp.dst, cp.dst_name);
	cc_store_close(cp.src, cp.src_name);
	return status;
}
