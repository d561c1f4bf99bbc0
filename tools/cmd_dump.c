/* cmd_dump.c — dump and restore: an exact, checksummed copy of tables with their schema (the format is
 * the store's, cs_dump()/cs_restore(); store/dump-format.md specifies it). A restore is all or nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cellctl.h"

static int write_stdout(void *ctx, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, stdout) != n)
		return errno ? -errno : -EIO;
	return 0;
}

int cmd_dump(struct cellctl *cc, int argc, char **argv)
{
	cs_txn *txn;
	int rc, status;

	for (int i = 0; i < argc; i++) {
		if (cs_check_table_name(argv[i]) < 0)
			return cc_error("invalid table name %s", cc_qs(argv[i]));
		for (int j = 0; j < i; j++)
			if (!strcmp(argv[i], argv[j]))
				return cc_error("table %s given twice", cc_qs(argv[i]));
	}
	if (isatty(STDOUT_FILENO))
		return cc_error("a dump is binary: redirect it to a file (cellctl dump > FILE)");
	if ((status = cellctl_begin(cc, &txn)) != CC_OK)
		return status;
	for (int i = 0; i < argc; i++) {
		cs_table_info *info;
		if ((rc = cs_table_info_get(txn, argv[i], &info)) < 0) {
			status = cc_store_error(txn, rc, "reading the schema", argv[i], NULL);
			cs_txn_abort(txn);
			return status;
		}
		cs_table_info_free(info);
	}
	rc = cs_dump(txn, (const char *const *)argv, (size_t)argc, write_stdout, NULL, NULL);
	cs_txn_abort(txn);
	if (rc == -EIO && cs_last_error()) /* (a remote store's: the service's words) */
		return cc_error("reading the store: %s; the dump is incomplete", cs_last_error());
	if (rc == -EIO)
		return cc_error("the store is corrupt (run \"cellctl verify\"); the dump is incomplete");
	if (rc < 0)
		return cc_error("writing the dump: %s; the dump is incomplete", cc_strerror(rc));
	return CC_OK;
}

struct input {
	FILE *f;
	int err;
};

static int read_file(void *ctx, void *p, size_t n, size_t *got)
{
	struct input *in = ctx;
	*got = fread(p, 1, n, in->f);
	if (*got == 0 && ferror(in->f)) {
		in->err = errno ? errno : EIO;
		return -in->err;
	}
	return 0;
}

int cmd_restore(struct cellctl *cc, int argc, char **argv)
{
	cs_restore_opts opts = { 0 };
	cs_restore_result res;
	struct input in = { 0 };
	const char *path = NULL, *name;
	int rc, status;

	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "overwrite=", 10)) {
			if (go_parse_bool(argv[i] + 10, &opts.overwrite) < 0)
				return cc_error("bad overwrite= value %s: want true or false", cc_qs(argv[i] + 10));
		} else if (!path) {
			path = argv[i];
		} else {
			return cc_usage(cc);
		}
	}
	if (!path || !strcmp(path, "-")) {
		if (isatty(STDIN_FILENO))
			return cc_error("no dump given: cellctl restore FILE, or cellctl restore < FILE");
		in.f = stdin;
		name = "standard input";
	} else {
		if (!(in.f = fopen(path, "rb")))
			return cc_error("cannot open %s: %s", cc_qs(path), strerror(errno));
		name = cc_qs(path);
	}
	if ((status = cellctl_open(cc)) != CC_OK)
		goto out;
	rc = cs_restore(cc->st, read_file, &in, &opts, &res);
	if (rc == -EEXIST)
		status = cc_error("table %s already exists (overwrite=true replaces it); nothing was restored",
				  cc_qs(res.table));
	else if (rc == -EBADMSG || rc == -ENOTSUP)
		status = cc_error("%s: %s; nothing was restored", name, res.why);
	else if (rc == -EFBIG)
		status = cc_error("%s: a value in the frame at offset %llu is over the store's value limit; "
				  "nothing was restored", name, (unsigned long long)res.offset);
	else if (rc < 0 && in.err)
		status = cc_error("reading %s: %s; nothing was restored", name, strerror(in.err));
	else if (rc < 0)
		status = cc_error("%s; nothing was restored", cc_strerror(rc));
	else
		printf("restored %llu tables, %llu rows, %llu cells (%llu bytes of values)\n",
		       (unsigned long long)res.stats.tables, (unsigned long long)res.stats.rows,
		       (unsigned long long)res.stats.cells, (unsigned long long)res.stats.value_bytes);
out:
	if (in.f && in.f != stdin)
		fclose(in.f);
	return status;
}
