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

/* addtocell's cell (C, parsed from ARG as cbt's set parses it): an AddToCell of the value, which must be
 * what strconv.ParseInt(val, 0, 64) accepts, at its timestamp (or NOW's). Prints the error. */
static int add_mutation(const char *a, const set_cell *c, int64_t now, cs_mutation *m)
{
	int64_t n, ts;

	if (cc_cell_int(a, c, "addtocell", &n) != CC_OK)
		return CC_FAIL;
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
	return cc_write_cells(cc, argc, argv, "add", add_mutation);
}
