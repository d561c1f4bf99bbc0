/* cmd_maint.c — store maintenance: gc (physical clean-up), stats (sizes per table and family), verify
 * (read and check every record) and compact (a compacted copy of the store).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbtfmt.h"
#include "cellctl.h"

int cmd_gc(struct cellctl *cc, int argc, char **argv)
{
	cs_gc_stats st;
	cs_txn *txn;
	int rc, status;

	if (argc > 1)
		return cc_usage(cc);
	if ((status = cellctl_begin(cc, &txn)) != CC_OK)
		return status;
	if ((rc = cs_gc(txn, argc ? argv[0] : NULL, &st)) < 0) {
		status = cc_store_error(txn, rc, "collecting", argc ? argv[0] : "", NULL);
		cs_txn_abort(txn);
		return status;
	}
	if ((status = cellctl_commit(txn)) != CC_OK)
		return status;
	printf("removed %llu cells, freed %llu bytes\n", (unsigned long long)st.cells_removed,
	       (unsigned long long)st.bytes_freed);
	return CC_OK;
}

static void ratio(char *buf, size_t n, uint64_t raw, uint64_t stored)
{
	if (stored)
		snprintf(buf, n, "%.2f", (double)raw / (double)stored);
	else
		snprintf(buf, n, "-");
}

static int stats_table(cs_txn *txn, const char *name)
{
	cs_table_stats *s;
	char r[32];
	int rc = cs_table_stats_get(txn, name, &s);

	if (rc < 0)
		return cc_store_error(txn, rc, "reading the table", name, NULL);
	ratio(r, sizeof(r), s->raw_bytes, s->stored_bytes);
	printf("%s\t-\t%llu\t%llu\t%llu\t%llu\t%llu\t%s\t%llu\t%llu\n", s->name, (unsigned long long)s->rows,
	       (unsigned long long)s->cells, (unsigned long long)s->raw_bytes, (unsigned long long)s->stored_bytes,
	       (unsigned long long)s->key_bytes, r, (unsigned long long)s->garbage_cells,
	       (unsigned long long)s->garbage_bytes);
	for (size_t i = 0; i < s->nfamilies; i++) {
		const cs_family_stats *f = &s->families[i];
		ratio(r, sizeof(r), f->raw_bytes, f->stored_bytes);
		printf("%s\t%s\t-\t%llu\t%llu\t%llu\t%llu\t%s\t-\t-\n", s->name, f->name, (unsigned long long)f->cells,
		       (unsigned long long)f->raw_bytes, (unsigned long long)f->stored_bytes,
		       (unsigned long long)f->key_bytes, r);
	}
	cs_table_stats_free(s);
	return CC_OK;
}

int cmd_stats(struct cellctl *cc, int argc, char **argv)
{
	char **names = NULL;
	size_t n = 0;
	cs_txn *txn;
	int rc, status;

	if (argc > 1)
		return cc_usage(cc);
	if ((status = cellctl_begin(cc, &txn)) != CC_OK)
		return status;
	if (argc) {
		cs_table_info *info;
		if ((rc = cs_table_info_get(txn, argv[0], &info)) < 0) {
			status = cc_store_error(txn, rc, "reading the table", argv[0], NULL);
			cs_txn_abort(txn);
			return status;
		}
		cs_table_info_free(info);
		names = argv;
		n = 1;
	} else if ((rc = cs_table_list(txn, &names, &n)) < 0) {
		cs_txn_abort(txn);
		return cc_error("listing tables: %s", cc_strerror(rc));
	}
	puts("table\tfamily\trows\tcells\traw-bytes\tstored-bytes\tkey-bytes\tratio\tgarbage-cells\tgarbage-bytes");
	for (size_t i = 0; i < n && status == CC_OK; i++)
		status = stats_table(txn, names[i]);
	if (!argc)
		cs_strv_free(names, n);
	cs_txn_abort(txn);
	return status;
}

/* ---- verify ---- */

static void print_problem(void *ctx, const cs_problem *p)
{
	FILE *f = stdout;
	const char *sep = "";

	if (p->table) {
		fprintf(f, "table %s", cc_qs(p->table));
		sep = " ";
	}
	if (p->row) {
		fprintf(f, "%srow %s", sep, cc_q(p->row->data, p->row->len));
		sep = " ";
	}
	if (p->family) {
		size_t fn = strlen(p->family), qn = p->qualifier ? p->qualifier->len : 0;
		char *col = malloc(fn + 1 + qn + 1);
		if (col) {
			memcpy(col, p->family, fn);
			col[fn] = ':';
			if (qn)
				memcpy(col + fn + 1, p->qualifier->data, qn);
		}
		fprintf(f, "%scolumn %s", sep, col ? cc_q(col, p->qualifier ? fn + 1 + qn : fn) : "?");
		free(col);
		sep = " ";
	}
	if (p->has_ts)
		fprintf(f, "%s@%lld", sep, (long long)p->ts);
	fprintf(f, "%s%s\n", p->table || p->row || p->family || p->has_ts ? ": " : "", p->what);
	fflush(f);
	(*(uint64_t *)ctx)++;
}

int cmd_verify(struct cellctl *cc, int argc, char **argv)
{
	cs_verify_stats st;
	uint64_t shown = 0;
	cs_txn *txn;
	int rc, status;

	if (argc)
		return cc_usage(cc);
	/* A damaged page that sends LMDB outside the file faults under the store's guard (installed by
	 * main()): the walk ends there with -EIO, reported as the B-tree's damage, like any other. */
	if ((status = cellctl_begin(cc, &txn)) != CC_OK)
		return status;
	rc = cs_verify(txn, print_problem, &shown, &st);
	cs_txn_abort(txn);
	if (rc < 0)
		return cc_error("%s", cc_strerror(rc));
	if (st.problems)
		return cc_error("%llu problem%s found in %llu records", (unsigned long long)st.problems,
				st.problems == 1 ? "" : "s", (unsigned long long)st.records);
	printf("ok: %llu records, %llu tables, %llu cells, %llu bytes of values", (unsigned long long)st.records,
	       (unsigned long long)st.tables, (unsigned long long)st.cells, (unsigned long long)st.value_bytes);
	if (st.orphans)
		printf(", %llu cells of deleted tables awaiting gc", (unsigned long long)st.orphans);
	putchar('\n');
	return CC_OK;
}

int cmd_compact(struct cellctl *cc, int argc, char **argv)
{
	uint64_t before = 0, after = 0;
	int rc, status;

	if (argc != 1 || !*argv[0])
		return cc_usage(cc);
	if ((status = cellctl_open(cc)) != CC_OK)
		return status;
	if ((rc = cs_store_size(cc->st, &before)) < 0)
		return cc_error("%s", cc_strerror(rc));
	rc = cs_store_compact(cc->st, argv[0], &after);
	if (rc == -EEXIST)
		return cc_error("%s already holds a store", cc_qs(argv[0]));
	if (rc == -ENOTEMPTY)
		return cc_error("%s holds other files", cc_qs(argv[0]));
	if (rc < 0)
		return cc_error("cannot write a copy into %s: %s", cc_qs(argv[0]), cc_strerror(rc));
	printf("wrote %s: %llu bytes (the store: %llu bytes)\n", argv[0], (unsigned long long)after,
	       (unsigned long long)before);
	return CC_OK;
}
