/* cmd_dump.c — dump and restore: an exact, checksummed copy of tables with their schema (the format is
 * the store's, cs_dump()/cs_restore(); store/dump-format.md specifies it). A restore is all or nothing
 * (onto Bigtable, which has no transactions, as nearly as it can be: restore_by_copy()).
 */
#include <errno.h>
#include <ftw.h>
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
	if (argc == 0) { /* every table: but those no command can open (Bigtable's emulator takes any name) */
		char **names;
		size_t n, kept = 0;
		if ((rc = cs_table_list(txn, &names, &n)) < 0) {
			cs_txn_abort(txn);
			return cc_error("listing tables: %s", cc_strerror(rc));
		}
		for (size_t i = 0; i < n; i++) {
			if (!cs_check_table_name(names[i])) {
				names[kept++] = names[i];
				continue;
			}
			(void)cc_error("warning: table %s is not dumped: Bigtable allows no such name "
				       "([_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most 50 bytes)", cc_qs(names[i]));
			free(names[i]);
		}
		if (kept < n && !kept) {
			cs_strv_free(names, kept);
			cs_txn_abort(txn);
			return cc_error("no table can be dumped");
		}
		/* (the same bytes as a dump of all: the tables in name order) */
		rc = cs_dump(txn, (const char *const *)names, kept < n ? kept : 0, write_stdout, NULL, NULL);
		cs_strv_free(names, kept);
	} else {
		rc = cs_dump(txn, (const char *const *)argv, (size_t)argc, write_stdout, NULL, NULL);
	}
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

/* cs_restore()'s error RC (RES, the input IN called NAME) in one line; returns CC_FAIL. */
static int restore_error(int rc, const cs_restore_result *res, const struct input *in, const char *name)
{
	if (rc == -EEXIST)
		return cc_error("table %s already exists (overwrite=true replaces it); nothing was restored",
				cc_qs(res->table));
	if (rc == -EBADMSG || rc == -ENOTSUP)
		return cc_error("%s: %s; nothing was restored", name, res->why);
	if (rc == -EFBIG)
		return cc_error("%s: a value in the frame at offset %llu is over the store's value limit; "
				"nothing was restored", name, (unsigned long long)res->offset);
	if (in->err)
		return cc_error("reading %s: %s; nothing was restored", name, strerror(in->err));
	return cc_error("%s; nothing was restored", cc_strerror(rc));
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path) ? -1 : 0;
}

/* ---- restore onto a store without cs_restore(): Bigtable ------------------------------------------- */

/* A store without CS_CAP_MAINT (Bigtable) has no cs_restore(), and no transactions to make a restore
 * all or nothing. The dump is restored into a temporary local store first (in $TMPDIR: every checksum and
 * count verified, all or nothing, as ever), then moved with `cellctl copy`'s own code (cmd_copy: the
 * same checks, whole milliseconds unless round=ms, the bulk loader). A dump that is bad therefore
 * writes nothing. If the copy fails part-way, the tables it made are deleted again, so nothing is
 * restored; with overwrite=true the tables replaced were deleted before the copy began, and stay
 * deleted: the message says so. */
static int restore_by_copy(struct cellctl *cc, struct input *in, const char *name, const cs_restore_opts *opts,
			   const char *round)
{
	const char *dst = cc->db ? cc->db : getenv("CELLFS_DB");
	const char *tmpdir = getenv("TMPDIR");
	char dir[4096], store[4200], **tables = NULL;
	size_t ntables = 0, nreplaced = 0;
	cs_restore_result res = { 0 };
	cs_store *local = NULL;
	cs_txn *txn = NULL;
	int rc, status = CC_FAIL;

	if (!dst)
		return cc_error("the store has no name to copy to; nothing was restored");
	snprintf(dir, sizeof(dir), "%s/cellctl-restore.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(dir))
		return cc_error("a restore onto %s goes through a temporary local store, and %s cannot be made: %s; "
				"nothing was restored", cc_qs(dst), cc_qs(dir), strerror(errno));
	snprintf(store, sizeof(store), "%s/store", dir);
	if (cc_store_open(store, CS_OPEN_CREATE, &local) != CC_OK)
		goto out;
	if ((rc = cs_restore(local, read_file, in, NULL, &res)) < 0) {
		status = restore_error(rc, &res, in, name);
		goto out;
	}
	if ((rc = cs_txn_begin(local, CS_TXN_RDONLY, &txn)) < 0 || (rc = cs_table_list(txn, &tables, &ntables)) < 0) {
		status = cc_error("reading the restored dump: %s; nothing was restored", strerror(-rc));
		goto out;
	}
	cs_txn_abort(txn);
	txn = NULL;
	cs_store_close(local); /* (cmd_copy opens it again, by name) */
	local = NULL;

	/* the tables that exist: refused, or (overwrite=true) deleted */
	if ((status = cellctl_begin(cc, &txn)) != CC_OK)
		goto out;
	for (size_t i = 0; i < ntables; i++) {
		cs_table_info *info;
		if ((rc = cs_table_info_get(txn, tables[i], &info)) == -ENOENT)
			continue;
		if (rc < 0) {
			status = cc_error("reading the schema of table %s of %s: %s; nothing was restored",
					  cc_qs(tables[i]), cc_qs(dst), cc_strerror(rc));
			goto out;
		}
		cs_table_info_free(info);
		if (!opts->overwrite) {
			status = cc_error("table %s already exists (overwrite=true replaces it); nothing was restored",
					  cc_qs(tables[i]));
			goto out;
		}
		if ((rc = cs_table_delete(txn, tables[i])) < 0) {
			status = cc_error("deleting table %s of %s to replace it: %s; %s", cc_qs(tables[i]), cc_qs(dst),
					  cc_strerror(rc), nreplaced ? "the tables before it in the dump are deleted, "
					  "nothing was restored" : "nothing was restored");
			goto out;
		}
		nreplaced++;
	}
	rc = cs_txn_commit(txn);
	txn = NULL;
	if (rc < 0) {
		status = cc_error("replacing the tables of %s: %s; nothing was restored", cc_qs(dst), cc_strerror(rc));
		goto out;
	}

	{
		char *args[] = { store, (char *)dst, "--quiet", (char *)round, NULL };
		status = cmd_copy(cc, round ? 4 : 3, args);
	}
	if (status != CC_OK) { /* (cmd_copy said why) undo: delete what it made */
		const char *left = NULL;
		size_t ndeleted = 0;
		if (cellctl_begin(cc, &txn) == CC_OK) {
			for (size_t i = 0; i < ntables; i++)
				if ((rc = cs_table_delete(txn, tables[i])) == 0)
					ndeleted++;
				else if (rc != -ENOENT && !left)
					left = tables[i];
			if (cs_txn_commit(txn) < 0 && !left && ntables)
				left = tables[0];
			txn = NULL;
		} else if (ntables) {
			left = tables[0];
		}
		if (left)
			cc_error("the restore onto %s stopped part-way, and the tables it made could not all be deleted "
				 "again (%s is left): delete them, or restore again with overwrite=true", cc_qs(dst),
				 cc_qs(left));
		else if (nreplaced)
			cc_error("the restore onto %s stopped part-way; the tables it made are deleted again, and so are "
				 "the %zu it was to replace (overwrite=true): nothing was restored", cc_qs(dst), nreplaced);
		else if (ndeleted)
			cc_error("the restore onto %s stopped part-way; the tables it made are deleted again: nothing "
				 "was restored", cc_qs(dst));
		else
			cc_error("nothing was restored onto %s", cc_qs(dst));
		goto out;
	}
	printf("restored %llu tables, %llu rows, %llu cells (%llu bytes of values)\n",
	       (unsigned long long)res.stats.tables, (unsigned long long)res.stats.rows,
	       (unsigned long long)res.stats.cells, (unsigned long long)res.stats.value_bytes);
out:
	cs_txn_abort(txn);
	cs_store_close(local);
	cs_strv_free(tables, ntables);
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return status;
}

int cmd_restore(struct cellctl *cc, int argc, char **argv)
{
	cs_restore_opts opts = { 0 };
	cs_restore_result res;
	struct input in = { 0 };
	const char *path = NULL, *name, *round = NULL;
	int rc, status;

	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "overwrite=", 10)) {
			if (go_parse_bool(argv[i] + 10, &opts.overwrite) < 0)
				return cc_error("bad overwrite= value %s: want true or false", cc_qs(argv[i] + 10));
		} else if (!strncmp(argv[i], "round=", 6)) {
			if (strcmp(argv[i] + 6, "ms") && strcmp(argv[i] + 6, "none"))
				return cc_error("round must be ms or none (%s)", cc_qs(argv[i]));
			round = argv[i];
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
	if (!(cs_store_caps(cc->st) & CS_CAP_MAINT)) {
		status = restore_by_copy(cc, &in, name, &opts, round);
		goto out;
	}
	rc = cs_restore(cc->st, read_file, &in, &opts, &res);
	if (rc < 0)
		status = restore_error(rc, &res, &in, name);
	else
		printf("restored %llu tables, %llu rows, %llu cells (%llu bytes of values)\n",
		       (unsigned long long)res.stats.tables, (unsigned long long)res.stats.rows,
		       (unsigned long long)res.stats.cells, (unsigned long long)res.stats.value_bytes);
out:
	if (in.f && in.f != stdin)
		fclose(in.f);
	return status;
}
