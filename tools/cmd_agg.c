/* cmd_agg.c — addtocell: add numbers to the cells of aggregate families (intsum, intmin, intmax), as
 * cbt's addtocell does. The store merges each input into the cell of the same timestamp; reads show the
 * merged value as Bigtable encodes it, a big-endian int64 in 8 bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cellctl.h"

/* Parse one "family:column=val[@ts]" argument into M (an AddToCell): cbt's set syntax, with a value that
 * strconv.ParseInt(val, 0, 64) accepts. NOW is the time of "no @ts". Prints the error. */
static int parse_add(const char *a, int64_t now, set_cell *c, cs_mutation *m)
{
	char *val;
	int64_t n, ts;
	int err_no = args_set_cell(a, c);

	if (err_no == -ENOMEM)
		return cc_error("%s", strerror(ENOMEM));
	if (err_no < 0)
		return cc_error("bad addtocell arg %s", cc_qs(a));
	if (!(val = strndup(c->value, c->value_len)))
		return cc_error("%s", strerror(ENOMEM));
	err_no = go_parse_int(val, 0, &n);
	if (err_no < 0) {
		cc_error("bad value %s in %s: %s (addtocell takes integers)", cc_qs(val), cc_qs(a),
			 go_num_strerror(err_no));
		free(val);
		return CC_FAIL;
	}
	free(val);
	/* -1 is the Go client's "server time", which Bigtable refuses for AddToCell. */
	if ((c->has_ts && c->ts == -1) || cbt_cell_ts(c, now, &ts) < 0)
		return cc_error("invalid timestamp %lld in %s", (long long)c->ts, cc_qs(a));
	*m = (cs_mutation){
		.op = CS_ADD_TO_CELL,
		.family = c->family,
		.qualifier = CS_BYTES(c->qual, c->qual_len),
		.ts = ts,
		.input = n,
	};
	return CC_OK;
}

int cmd_addtocell(struct cellctl *cc, int argc, char **argv)
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

		if (!strncmp(a, "app-profile=", 12))
			continue; /* routing, meaningless for a local store */
		if (!strncmp(a, "authorized-view=", 16)) {
			rc = cc_error("authorized views are not supported (argument %s)", cc_qs(a));
			break;
		}
		rc = parse_add(a, now, &cells[n], &m[n]);
		if (cells[n].family) /* parsed: release it with the rest */
			args[n++] = a;
	}
	if (rc == CC_OK && n == 0)
		rc = cc_error("nothing to add");
	if (rc == CC_OK)
		rc = cc_mutate_row(cc, argv[0], argv[1], m, n, args);
free_all:
	for (size_t i = 0; cells && i < n; i++)
		set_cell_release(&cells[i]);
	free(cells);
	free(m);
	free(args);
	return rc;
}
