/* cmd_write.c — the row-writing subcommands: set, deleterow, deletecolumn, deleteallrows, and
 * increment (cellctl's: Bigtable's ReadModifyWrite increment, which cbt lacks).
 *
 * Each applies its mutations to one row in one transaction, after every argument has been checked, so a
 * bad argument anywhere writes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cellctl.h"

int cc_check_row_key(const char *row)
{
	size_t n = strlen(row);

	if (n == 0)
		return cc_error("row keys must be non-empty");
	if (n > CS_MAX_ROW_KEY)
		return cc_error("row key of %zu bytes is longer than %d", n, CS_MAX_ROW_KEY);
	return CC_OK;
}

/* Whether M writes the kind of cell family F holds: set writes plain families, addtocell aggregate ones.
 * ARG (if not NULL) is the argument M came from. Prints the error. */
static int check_kind(const cs_family_info *f, const char *table, const cs_mutation *m, const char *arg)
{
	const char *a = arg ? cc_qs(arg) : NULL;

	if (m->op == CS_SET_CELL && f->type != CS_TYPE_BYTES)
		return cc_error("family %s of table %s is an aggregate family (%s): write it with addtocell%s%s%s",
				cc_qs(f->name), cc_qs(table), cs_value_type_name(f->type), a ? " (argument " : "",
				a ? a : "", a ? ")" : "");
	if (m->op == CS_ADD_TO_CELL && f->type == CS_TYPE_BYTES)
		return cc_error("family %s of table %s is not an aggregate family: write it with set%s%s%s",
				cc_qs(f->name), cc_qs(table), a ? " (argument " : "", a ? a : "", a ? ")" : "");
	return CC_OK;
}

/* Whether every family the N mutations M name exists in TABLE and holds the kind of cell each writes;
 * ARGS (if not NULL) are the arguments they came from, for the message. Prints the error (also for a
 * missing table). */
static int check_families(cs_txn *txn, const char *table, const cs_mutation *m, size_t n,
			  const char *const *args)
{
	cs_table_info *info;
	int rc = CC_OK, err_no = cs_table_info_get(txn, table, &info);

	if (err_no < 0)
		return cc_store_error(txn, err_no, "getting table info", table, NULL);
	for (size_t i = 0; i < n && rc == CC_OK; i++) {
		bool found = !m[i].family;

		for (size_t k = 0; k < info->nfamilies && !found; k++)
			if (!strcmp(info->families[k].name, m[i].family)) {
				found = true;
				rc = check_kind(&info->families[k], table, &m[i], args ? args[i] : NULL);
			}
		if (found)
			continue;
		if (args)
			rc = cc_error("family %s not found in table %s (argument %s)", cc_qs(m[i].family),
				      cc_qs(table), cc_qs(args[i]));
		else
			rc = cc_error("family %s not found in table %s", cc_qs(m[i].family), cc_qs(table));
	}
	cs_table_info_free(info);
	return rc;
}

int cc_mutate_row(struct cellctl *cc, const char *table, const char *row, const cs_mutation *m, size_t n,
		  const char *const *args)
{
	cs_txn *txn;
	int rc, err_no;

	if ((rc = cellctl_begin(cc, &txn)) != CC_OK)
		return rc;
	/* Name the argument at fault before anything is written. */
	rc = check_families(txn, table, m, n, args);
	if (rc == CC_OK && (err_no = cs_row_mutate(txn, table, CS_BYTES(row, strlen(row)), m, n)) < 0) {
		switch (err_no) {
		case -ENAMETOOLONG:
			rc = cc_error("row key or qualifier too long (row keys up to %d bytes, qualifiers up to %d)",
				      CS_MAX_ROW_KEY, CS_MAX_QUALIFIER);
			break;
		case -EFBIG:
			rc = cc_error("value larger than the store's limit of %llu bytes",
				      (unsigned long long)cs_store_max_value(cc->st));
			break;
		case -ENOSPC: /* (the file could not grow for the pages: as a commit that fails for want of space) */
			rc = cc_error("the store is full, nothing was written: %s", strerror(ENOSPC));
			break;
		default:
			rc = cc_store_error(txn, err_no, "applying mutation", table, NULL);
		}
	}
	if (rc != CC_OK) {
		cs_txn_abort(txn);
		return rc;
	}
	return cellctl_commit(txn);
}

/* How parsed cells are applied: cc_mutate_row()'s signature. */
typedef int apply_fn(struct cellctl *cc, const char *table, const char *row, const cs_mutation *m, size_t n,
		     const char *const *args);

/* cc_write_cells() with the mutations applied by APPLY. */
static int write_cells(struct cellctl *cc, int argc, char **argv, const char *verb, cc_cell_fn *to_mutation,
		       apply_fn *apply)
{
	set_cell *cells;
	cs_mutation *m;
	const char **args;
	size_t n = 0;
	int64_t now = cs_now_us();
	int rc = CC_OK;

	if (argc < 3)
		return cc_usage(cc);
	if ((rc = cc_check_row_key(argv[1])) != CC_OK)
		return rc;
	cells = calloc(argc, sizeof *cells);
	m = calloc(argc, sizeof *m);
	args = calloc(argc, sizeof *args);
	if (!cells || !m || !args) {
		rc = cc_error("%s", strerror(ENOMEM));
		goto free_all;
	}
	for (int i = 2; i < argc && rc == CC_OK; i++) {
		const char *a = argv[i];
		int err_no;

		if (!strncmp(a, "app-profile=", 12))
			continue; /* routing, meaningless for a local store */
		if (!strncmp(a, "authorized-view=", 16)) {
			rc = cc_error("authorized views are not supported (argument %s)", cc_qs(a));
			break;
		}
		err_no = args_set_cell(a, &cells[n]);
		if (err_no == -ENOMEM) {
			rc = cc_error("%s", strerror(ENOMEM));
		} else if (err_no < 0) {
			rc = cc_error("bad %s arg %s", cc->cmd->name, cc_qs(a));
		} else {
			args[n] = a;
			rc = to_mutation(a, &cells[n], now, &m[n]);
			n++; /* parsed: released with the rest */
		}
	}
	if (rc == CC_OK && n == 0)
		rc = cc_error("nothing to %s", verb);
	if (rc == CC_OK)
		rc = apply(cc, argv[0], argv[1], m, n, args);
free_all:
	for (size_t i = 0; cells && i < n; i++)
		set_cell_release(&cells[i]);
	free(cells);
	free(m);
	free(args);
	return rc;
}

int cc_write_cells(struct cellctl *cc, int argc, char **argv, const char *verb, cc_cell_fn *to_mutation)
{
	return write_cells(cc, argc, argv, verb, to_mutation, cc_mutate_row);
}

/* set's cell: the value as written, at its timestamp (or NOW's). */
static int set_mutation(const char *arg, const set_cell *c, int64_t now, cs_mutation *m)
{
	int64_t ts;

	if (cbt_cell_ts(c, now, &ts) < 0)
		return cc_error("invalid timestamp %lld in %s", (long long)c->ts, cc_qs(arg));
	*m = (cs_mutation){
		.op = CS_SET_CELL,
		.family = c->family,
		.qualifier = CS_BYTES(c->qual, c->qual_len),
		.ts = ts,
		.value = CS_BYTES(c->value, c->value_len),
	};
	return CC_OK;
}

int cmd_set(struct cellctl *cc, int argc, char **argv)
{
	return cc_write_cells(cc, argc, argv, "set", set_mutation);
}

/* cbt takes one optional trailing app-profile=ID and nothing else. */
static bool app_profile_ok(int argc, char **argv, int fixed)
{
	return argc == fixed || (argc == fixed + 1 && !strncmp(argv[fixed], "app-profile=", 12));
}

int cmd_deleterow(struct cellctl *cc, int argc, char **argv)
{
	cs_mutation m = { .op = CS_DELETE_ROW };
	int rc;

	if (!app_profile_ok(argc, argv, 2))
		return cc_usage(cc);
	if ((rc = cc_check_row_key(argv[1])) != CC_OK)
		return rc;
	return cc_mutate_row(cc, argv[0], argv[1], &m, 1, NULL);
}

int cmd_deletecolumn(struct cellctl *cc, int argc, char **argv)
{
	cs_mutation m = { .op = CS_DELETE_COLUMN }; /* every timestamp */
	int rc;

	if (!app_profile_ok(argc, argv, 4))
		return cc_usage(cc);
	if ((rc = cc_check_row_key(argv[1])) != CC_OK)
		return rc;
	m.family = argv[2];
	m.qualifier = CS_BYTES(argv[3], strlen(argv[3]));
	return cc_mutate_row(cc, argv[0], argv[1], &m, 1, NULL);
}

int cmd_deleteallrows(struct cellctl *cc, int argc, char **argv)
{
	cs_txn *txn;
	int rc, err_no;

	if (argc != 1)
		return cc_usage(cc);
	if ((rc = cellctl_begin(cc, &txn)) != CC_OK)
		return rc;
	err_no = cs_drop_prefix(txn, argv[0], CS_BYTES("", 0));
	if (err_no < 0) {
		rc = cc_store_error(txn, err_no, "deleting all rows", argv[0], NULL);
		cs_txn_abort(txn);
		return rc;
	}
	return cellctl_commit(txn);
}

int cc_cell_int(const char *arg, const set_cell *c, const char *cmd, int64_t *n)
{
	char *num = strndup(c->value, c->value_len);
	int err_no;

	if (!num)
		return cc_error("%s", strerror(ENOMEM));
	err_no = go_parse_int(num, 0, n);
	if (err_no < 0)
		cc_error("bad value %s in %s: %s (%s takes integers)", cc_qs(num), cc_qs(arg), go_num_strerror(err_no), cmd);
	free(num);
	return err_no < 0 ? CC_FAIL : CC_OK;
}

/* increment's cell: the delta (a Go integer, base prefixes allowed) in .input; no timestamp. */
static int increment_mutation(const char *arg, const set_cell *c, int64_t now, cs_mutation *m)
{
	int64_t n;

	(void)now;
	if (c->has_ts)
		return cc_error("increment takes no timestamp (argument %s)", cc_qs(arg));
	if (cc_cell_int(arg, c, "increment", &n) != CC_OK)
		return CC_FAIL;
	*m = (cs_mutation){ .op = CS_SET_CELL, .family = c->family, .qualifier = CS_BYTES(c->qual, c->qual_len),
			    .input = n };
	return CC_OK;
}

/* Each of the N increments M (their families checked as set's: plain ones) as a ReadModifyWrite, all in
 * one transaction, so increments from any number of processes count exactly; prints the new values. */
static int increment_row(struct cellctl *cc, const char *table, const char *row, const cs_mutation *m, size_t n,
			 const char *const *args)
{
	int64_t *val = calloc(n, sizeof *val);
	cs_txn *txn;
	int rc, err_no;

	if (!val)
		return cc_error("%s", strerror(ENOMEM));
	if ((rc = cellctl_begin(cc, &txn)) != CC_OK)
		goto free_val;
	rc = check_families(txn, table, m, n, args);
	for (size_t i = 0; i < n && rc == CC_OK; i++) {
		err_no = cs_rmw_increment(txn, table, CS_BYTES(row, strlen(row)), m[i].family, m[i].qualifier,
					  m[i].input, &val[i]);
		if (err_no == -EINVAL)
			rc = cc_error("the newest cell is not an 8-byte big-endian integer (argument %s)", cc_qs(args[i]));
		else if (err_no == -ENAMETOOLONG)
			rc = cc_error("row key or qualifier too long (row keys up to %d bytes, qualifiers up to %d)",
				      CS_MAX_ROW_KEY, CS_MAX_QUALIFIER);
		else if (err_no < 0)
			rc = cc_store_error(txn, err_no, "incrementing", table, NULL);
	}
	if (rc != CC_OK) {
		cs_txn_abort(txn);
		goto free_val;
	}
	if ((rc = cellctl_commit(txn)) == CC_OK)
		for (size_t i = 0; i < n; i++)
			printf("%lld\n", (long long)val[i]);
free_val:
	free(val);
	return rc;
}

/* increment T ROW FAM:COL=DELTA...: each column's newest cell, a big-endian int64 (missing: 0), plus
 * DELTA, written as a new cell (cellctl's: Bigtable's ReadModifyWrite, which cbt lacks). */
int cmd_increment(struct cellctl *cc, int argc, char **argv)
{
	return write_cells(cc, argc, argv, "increment", increment_mutation, increment_row);
}
