/* cmd_schema.c — the schema subcommands: createtable, createfamily, deletefamily, deletetable,
 * setgcpolicy and ls.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cbtfmt.h"
#include "cellctl.h"
#include "jsonfmt.h"

/* A family as createtable's families= list and createfamily spell it: "name[:gcpolicy[:type]]". */
struct famspec {
	char *name;
	char *policy; /* NULL: none ("never") */
	cs_value_type type;
};

static void famspec_release(struct famspec *f)
{
	free(f->name);
	free(f->policy);
}

/* Report POLICY (of FAMILY, if not NULL) as invalid, with the store's reason. Returns CC_FAIL. */
static int gc_policy_error(const char *policy, const char *family)
{
	char *why = cs_gc_policy_error(policy);
	const char *what = why ? why : "invalid GC policy";
	int rc;

	if (family)
		rc = cc_error("family %s: %s", cc_qs(family), what);
	else
		rc = cc_error("%s", what);
	free(why);
	return rc;
}

/* Split SPEC on ':' as cbt does and check the name, policy and value type (cbt's third part: an
 * aggregate type, "intsum", "intmin" or "intmax"). Prints the error. */
static int famspec_parse(const char *spec, struct famspec *out)
{
	const char *c1 = strchr(spec, ':');
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	int err_no;

	memset(out, 0, sizeof *out);
	if (c2 && strchr(c2 + 1, ':')) /* cbt drops the policy and type then; refused rather than ignored */
		return cc_error("family %s: too many ':' (want <family>[:<gcpolicy>[:<type>]])", cc_qs(spec));
	out->name = c1 ? strndup(spec, c1 - spec) : strdup(spec);
	out->policy = c1 ? (c2 ? strndup(c1 + 1, c2 - c1 - 1) : strdup(c1 + 1)) : NULL;
	if (!out->name || (c1 && !out->policy)) {
		famspec_release(out);
		return cc_error("%s", strerror(ENOMEM));
	}
	if (cs_check_family_name(out->name) < 0) {
		cc_error("invalid family name %s", cc_qs(out->name));
		goto fail;
	}
	if (out->policy && cs_check_gc_policy(out->policy, NULL) < 0) {
		gc_policy_error(out->policy, out->name);
		goto fail;
	}
	if (c2 && (err_no = cs_value_type_parse(c2 + 1, &out->type)) < 0) {
		if (err_no == -EOPNOTSUPP)
			cc_error("family %s: value type %s is not supported (only intsum, intmin and intmax)",
				 cc_qs(out->name), cc_qs(c2 + 1));
		else
			cc_error("family %s: unknown value type %s (want intsum, intmin or intmax)", cc_qs(out->name),
				 cc_qs(c2 + 1));
		goto fail;
	}
	if (c2 && out->type == CS_TYPE_BYTES) { /* "" names plain families in the store, not in cbt */
		cc_error("family %s: unknown value type \"\" (want intsum, intmin or intmax)", cc_qs(out->name));
		goto fail;
	}
	return CC_OK;
fail:
	famspec_release(out);
	return CC_FAIL;
}

/* Parse a families= list into *OUT (later items replace earlier ones of the same name, as in cbt's
 * map). Prints the error. */
static int famlist_parse(const char *list, struct famspec **out, size_t *nout)
{
	char **items, *err = NULL;
	size_t nitems, n = 0;
	struct famspec *v;
	int rc = args_csv_record(list, &items, &nitems, &err);

	if (rc < 0) {
		rc = cc_error("bad families= list %s: %s", cc_qs(list), err ? err : strerror(-rc));
		free(err);
		return rc;
	}
	v = calloc(nitems ? nitems : 1, sizeof *v);
	if (!v) {
		args_strv_free(items, nitems);
		return cc_error("%s", strerror(ENOMEM));
	}
	rc = CC_OK;
	for (size_t i = 0; i < nitems && rc == CC_OK; i++) {
		struct famspec f;
		size_t k;

		rc = famspec_parse(items[i], &f);
		if (rc != CC_OK)
			break;
		for (k = 0; k < n && strcmp(v[k].name, f.name); k++)
			;
		if (k < n)
			famspec_release(&v[k]);
		else
			n++;
		v[k] = f;
	}
	args_strv_free(items, nitems);
	if (rc != CC_OK) {
		for (size_t i = 0; i < n; i++)
			famspec_release(&v[i]);
		free(v);
		return rc;
	}
	*out = v;
	*nout = n;
	return CC_OK;
}

int cmd_createtable(struct cellctl *cc, int argc, char **argv)
{
	static const char *const valid[] = { "families", "splits", NULL };
	const char *vals[2];
	struct famspec *fams = NULL;
	size_t nfams = 0;
	cs_table_info info = { 0 };
	char *err = NULL;
	cs_txn *txn;
	int rc, err_no;

	if (argc < 1)
		return cc_usage(cc);
	if (cc_args_kv(argc - 1, argv + 1, valid, vals) != CC_OK)
		return CC_FAIL;
	if (cs_check_table_name(argv[0]) < 0)
		return cc_error("invalid table name %s", cc_qs(argv[0]));
	if (vals[1]) { /* splits: checked as cbt checks them, then ignored */
		char **splits;
		size_t nsplits;

		if (args_csv_record(vals[1], &splits, &nsplits, &err) < 0) {
			rc = cc_error("bad splits= list %s: %s", cc_qs(vals[1]), err ? err : strerror(ENOMEM));
			free(err);
			return rc;
		}
		args_strv_free(splits, nsplits);
	}
	if (vals[0] && (rc = famlist_parse(vals[0], &fams, &nfams)) != CC_OK)
		return rc;

	/* Without transactions (Bigtable) the table and all its families in one call, cs_table_create_as()
	 * (one CreateTable), so a failure leaves no table with only some of its families; with them, the
	 * table then each family, in the one transaction (as a local store always made them). */
	if (nfams && !(info.families = calloc(nfams, sizeof(*info.families)))) {
		rc = cc_error("%s", strerror(ENOMEM));
		goto free_fams;
	}
	for (size_t i = 0; i < nfams; i++)
		info.families[i] = (cs_family_info){ .name = fams[i].name, .gc = fams[i].policy, .type = fams[i].type };
	info.name = argv[0];
	info.nfamilies = nfams;
	rc = cellctl_begin(cc, &txn);
	if (rc != CC_OK)
		goto free_fams;
	if (!(cs_store_caps(cc->st) & CS_CAP_TXN)) {
		err_no = cs_table_create_as(txn, &info);
	} else {
		err_no = cs_table_create(txn, argv[0], 0);
		for (size_t i = 0; err_no >= 0 && i < nfams; i++)
			err_no = cs_family_create_typed(txn, argv[0], fams[i].name, fams[i].policy, fams[i].type);
	}
	if (err_no < 0) {
		rc = cc_store_error(txn, err_no, "creating table", argv[0], NULL);
		cs_txn_abort(txn);
	} else {
		rc = cellctl_commit(txn);
	}
free_fams:
	free(info.families);
	for (size_t i = 0; i < nfams; i++)
		famspec_release(&fams[i]);
	free(fams);
	return rc;
}

int cmd_createfamily(struct cellctl *cc, int argc, char **argv)
{
	struct famspec f;
	cs_txn *txn;
	int rc;

	if (argc != 2)
		return cc_usage(cc);
	if (cs_check_table_name(argv[0]) < 0)
		return cc_error("invalid table name %s", cc_qs(argv[0]));
	if ((rc = famspec_parse(argv[1], &f)) != CC_OK)
		return rc;
	if ((rc = cellctl_begin(cc, &txn)) == CC_OK) {
		int err_no = cs_family_create_typed(txn, argv[0], f.name, f.policy, f.type);

		if (err_no < 0) {
			rc = cc_store_error(txn, err_no, "creating column family", argv[0], f.name);
			cs_txn_abort(txn);
		} else {
			rc = cellctl_commit(txn);
		}
	}
	famspec_release(&f);
	return rc;
}

int cmd_deletefamily(struct cellctl *cc, int argc, char **argv)
{
	cs_txn *txn;
	int rc, err_no;

	if (argc != 2)
		return cc_usage(cc);
	if ((rc = cellctl_begin(cc, &txn)) != CC_OK)
		return rc;
	err_no = cs_family_delete(txn, argv[0], argv[1]);
	if (err_no < 0) {
		rc = cc_store_error(txn, err_no, "deleting column family", argv[0], argv[1]);
		cs_txn_abort(txn);
		return rc;
	}
	return cellctl_commit(txn);
}

int cmd_deletetable(struct cellctl *cc, int argc, char **argv)
{
	cs_txn *txn;
	int rc, err_no;

	if (argc != 1)
		return cc_usage(cc);
	if ((rc = cellctl_begin(cc, &txn)) != CC_OK)
		return rc;
	err_no = cs_table_delete(txn, argv[0]);
	if (err_no < 0) {
		rc = cc_store_error(txn, err_no, "deleting table", argv[0], NULL);
		cs_txn_abort(txn);
		return rc;
	}
	return cellctl_commit(txn);
}

int cmd_setgcpolicy(struct cellctl *cc, int argc, char **argv)
{
	char *policy = NULL;
	size_t len = 0;
	FILE *f;
	cs_txn *txn;
	int rc, err_no;

	if (argc < 3)
		return cc_usage(cc);
	if (!strcmp(argv[argc - 1], "force")) /* cbt's flag for replicated clusters */
		argc--;
	/* cbt joins the policy's words with single spaces. */
	f = open_memstream(&policy, &len);
	if (!f)
		return cc_error("%s", strerror(ENOMEM));
	for (int i = 2; i < argc; i++)
		fprintf(f, "%s%s", i > 2 ? " " : "", argv[i]);
	if (fclose(f) != 0) {
		free(policy);
		return cc_error("%s", strerror(ENOMEM));
	}
	if (cs_check_gc_policy(policy, NULL) < 0) {
		rc = gc_policy_error(policy, NULL);
		goto free_policy;
	}
	if ((rc = cellctl_begin(cc, &txn)) != CC_OK)
		goto free_policy;
	err_no = cs_family_set_gc(txn, argv[0], argv[1], policy);
	if (err_no < 0) {
		rc = cc_store_error(txn, err_no, "setting GC policy", argv[0], argv[1]);
		cs_txn_abort(txn);
	} else {
		rc = cellctl_commit(txn);
	}
free_policy:
	free(policy);
	return rc;
}

static int ls_tables(cs_txn *txn, bool json)
{
	char **names;
	size_t n;
	int err_no = cs_table_list(txn, &names, &n);

	if (err_no < 0)
		return cc_error("listing tables: %s", cc_strerror(err_no));
	for (size_t i = 0; i < n; i++)
		if (json)
			jsonfmt_table(stdout, names[i]);
		else
			printf("%s\n", names[i]);
	/* Every table is listed, as cbt lists it (stdout stays cbt's); a name Bigtable refuses (another client
	 * made it on the emulator, which takes any) is also said on stderr: no command here can open it, and
	 * the mount leaves it out. (A warning: cc_error() only prints, the listing succeeds.) */
	for (size_t i = 0; i < n; i++)
		if (cs_check_table_name(names[i]) < 0)
			(void)cc_error("warning: table %s cannot be opened: Bigtable allows no such name "
				       "([_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most 50 bytes)", cc_qs(names[i]));
	cs_strv_free(names, n);
	return CC_OK;
}

/* cbt prints a table's families with text/tabwriter; "Value Type" is an aggregate type's JSON, "{}" for
 * plain families. */
static int ls_families(cs_txn *txn, const char *table, bool json)
{
	cs_table_info *info;
	const char **cells;
	int err_no = cs_table_info_get(txn, table, &info);

	if (err_no < 0)
		return cc_store_error(txn, err_no, "getting table info", table, NULL);
	if (json) {
		for (size_t i = 0; i < info->nfamilies; i++)
			jsonfmt_family(stdout, info->families[i].name, info->families[i].gc,
				       cs_value_type_name(info->families[i].type));
		cs_table_info_free(info);
		return CC_OK;
	}
	cells = calloc(3 * (info->nfamilies + 2), sizeof *cells);
	if (!cells) {
		cs_table_info_free(info);
		return cc_error("%s", strerror(ENOMEM));
	}
	cells[0] = "Family Name";
	cells[1] = "GC Policy";
	cells[2] = "Value Type";
	cells[3] = "-----------";
	cells[4] = "---------";
	cells[5] = "----------";
	for (size_t i = 0; i < info->nfamilies; i++) {
		cells[3 * (i + 2)] = info->families[i].name;
		cells[3 * (i + 2) + 1] = info->families[i].gc_cbt;
		cells[3 * (i + 2) + 2] = cs_value_type_cbt(info->families[i].type);
	}
	cbtfmt_tabwrite(stdout, cells, info->nfamilies + 2, 3);
	free(cells);
	cs_table_info_free(info);
	return CC_OK;
}

int cmd_ls(struct cellctl *cc, int argc, char **argv)
{
	cs_txn *txn;
	int rc;

	if (argc > 1)
		return cc_usage(cc);
	if ((rc = cellctl_begin(cc, &txn)) != CC_OK)
		return rc;
	rc = argc == 0 ? ls_tables(txn, cc->format == CC_FORMAT_JSON)
		       : ls_families(txn, argv[0], cc->format == CC_FORMAT_JSON);
	cs_txn_abort(txn);
	return rc;
}

/* cbt's updatetable changes table properties; the one a local store has is the Key Visualizer's
 * recording (cbt's deletion-protection and change streams are Bigtable's own). */
int cmd_updatetable(struct cellctl *cc, int argc, char **argv)
{
	static const char *const valid[] = { "keyviz", NULL };
	const char *vals[1];
	bool on;
	cs_txn *txn;
	int rc, err_no;

	if (argc < 2)
		return cc_usage(cc);
	if (cc_args_kv(argc - 1, argv + 1, valid, vals) != CC_OK)
		return CC_FAIL;
	if (!strcmp(vals[0], "on"))
		on = true;
	else if (!strcmp(vals[0], "off"))
		on = false;
	else
		return cc_error("bad keyviz value %s (want on or off)", cc_qs(vals[0]));
	if ((rc = cellctl_begin(cc, &txn)) != CC_OK)
		return rc;
	err_no = cs_table_set_keyviz(txn, argv[0], on);
	if (err_no < 0) {
		rc = cc_store_error(txn, err_no, "updating table", argv[0], NULL);
		cs_txn_abort(txn);
		return rc;
	}
	return cellctl_commit(txn);
}
