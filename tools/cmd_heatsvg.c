/* cmd_heatsvg.c — `cellctl keyviz <table> out=FILE.svg`: the Key Visualizer's heatmap of a table
 * (heatsvg.c draws it). Only the out= form: the key-design report of `keyviz <table>` is cmd_keyviz.c's,
 * which hands out= here. */
#include <errno.h>
#include <string.h>

#include "cellctl.h"
#include "heatsvg.h"

int cmd_keyviz_svg(struct cellctl *cc, int argc, char **argv)
{
	static const char *const valid[] = { "out", NULL };
	const char *vals[1];
	struct hs_matrix *m;
	int err_no;

	if (argc < 2)
		return cc_usage(cc);
	if (cc_args_kv(argc - 1, argv + 1, valid, vals) != CC_OK)
		return CC_FAIL;
	if (!*vals[0])
		return cc_error("out= names no file");
	if (cs_check_table_name(argv[0]) < 0)
		return cc_error("table %s not found", cc_qs(argv[0]));
	if (cellctl_open(cc) != CC_OK)
		return CC_FAIL;
	if ((err_no = hs_matrix_build(cc->st, argv[0], 0, &m)) < 0) {
		if (err_no == -ENOENT)
			return cc_error("table %s not found", cc_qs(argv[0]));
		if (err_no == -EOPNOTSUPP)
			return cc_error("keyviz: this store records no accesses (Cloud Bigtable has its own Key Visualizer)");
		return cc_error("reading table %s: %s", cc_qs(argv[0]), strerror(-err_no));
	}
	err_no = hs_matrix_svg(m, argv[0], vals[0]);
	hs_matrix_free(m);
	if (err_no < 0)
		return cc_error("writing %s: %s", cc_qs(vals[0]), strerror(-err_no));
	return CC_OK;
}
