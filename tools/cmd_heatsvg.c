/* cmd_heatsvg.c — `cellctl keyviz <table> out=FILE.svg`: the Key Visualizer's heatmap of a table
 * (heatsvg.c draws it). cmd_keyviz.c parses the arguments and hands out= here. */
#include <errno.h>
#include <string.h>

#include "cellctl.h"
#include "keyviz/heatsvg.h"

int keyviz_heatmap(struct cellctl *cc, const char *table, const char *out)
{
	struct hs_matrix *m;
	int err_no;

	if (cs_check_table_name(table) < 0)
		return cc_error("table %s not found", cc_qs(table));
	if (cellctl_open(cc) != CC_OK)
		return CC_FAIL;
	if ((err_no = hs_matrix_build(cc->st, table, 0, &m)) < 0) {
		if (err_no == -ENOENT)
			return cc_error("table %s not found", cc_qs(table));
		if (err_no == -EOPNOTSUPP)
			return cc_error("keyviz: this store records no accesses (Cloud Bigtable has its own Key Visualizer)");
		return cc_error("reading table %s: %s", cc_qs(table), cc_strerror(err_no));
	}
	err_no = hs_matrix_svg(m, table, out);
	hs_matrix_free(m);
	if (err_no < 0)
		return cc_error("writing %s: %s", cc_qs(out), strerror(-err_no));
	return CC_OK;
}
