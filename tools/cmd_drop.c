/* cmd_drop.c — droprowrange: drop every row under a row-key prefix, or every row of the table, in
 * constant time (cs_drop_prefix), as Bigtable's DropRowRange does. cbt has no such command.
 *
 * Dropping everything must be asked for by name (all=true): an empty or forgotten prefix= is an error,
 * never "all rows".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cellctl.h"

int cmd_droprowrange(struct cellctl *cc, int argc, char **argv)
{
	static const char *const valid[] = { "prefix", "all", NULL };
	const char *vals[2], *prefix;
	bool all = false;
	cs_txn *txn;
	int rc, err_no;

	if (argc < 1)
		return cc_usage(cc);
	if (cc_args_kv(argc - 1, argv + 1, valid, vals) != CC_OK)
		return CC_FAIL;
	prefix = vals[0];
	if (vals[1] && go_parse_bool(vals[1], &all) < 0)
		return cc_error("bad all %s: want true or false", cc_qs(vals[1]));
	if (prefix && all)
		return cc_error("prefix= and all=true may not be given together");
	if (prefix && !*prefix)
		return cc_error("empty prefix= (to drop every row, say all=true)");
	if (!prefix && !all)
		return cc_error("say which rows: prefix=<row-key-prefix>, or all=true for every row");
	if (prefix && strlen(prefix) > CS_MAX_ROW_KEY)
		return cc_error("prefix of %zu bytes is longer than the longest row key (%d bytes)", strlen(prefix),
				CS_MAX_ROW_KEY);
	if ((rc = cellctl_begin(cc, &txn)) != CC_OK)
		return rc;
	err_no = cs_drop_prefix(txn, argv[0], prefix ? CS_BYTES(prefix, strlen(prefix)) : CS_BYTES("", 0));
	if (err_no < 0) {
		rc = cc_store_error(txn, err_no, "dropping rows", argv[0], NULL);
		cs_txn_abort(txn);
		return rc;
	}
	return cellctl_commit(txn);
}
