/* target.c — where a write through the mount lands, and whether it may (see target.h). */
#include "target.h"

#include <errno.h>
#include <string.h>

#include "edit.h"
#include "fileh.h"
#include "ident.h"

static int take_found(void *arg, const char *name, const struct node_id *id, const struct view_attr *a)
{
	struct target_found *f = arg;
	(void)name;
	if (node_id_copy(&f->id, id))
		return -ENOMEM;
	f->a = *a;
	f->ok = true;
	return 0;
}

int target_find(cs_txn *txn, const struct node_id *dir, const char *name, struct target_found *f)
{
	memset(f, 0, sizeof(*f));
	return view_lookup(txn, dir, name, take_found, f);
}

/* A tool's temporary file NAME in family directory DIR (see ident_resolve_new): the column of NAME's own
 * bytes, if it exists. */
static int find_temp(cs_txn *txn, const struct node_id *dir, const char *name, struct target_found *f)
{
	int rc;
	memset(f, 0, sizeof(*f));
	if ((rc = ident_resolve_new(txn, dir, name, false, &f->id)))
		return rc < 0 ? rc : -ENOENT;
	if ((rc = view_getattr(txn, &f->id, &f->a)))
		node_id_free(&f->id);
	else
		f->ok = true;
	return rc;
}

int target_find_any(cs_txn *txn, const struct node_id *dir, const char *name, struct target_found *f)
{
	int rc = target_find(txn, dir, name, f);
	if (rc == -ENOENT && name[0] == '.' && dir->kind == NODE_FAMILY)
		rc = find_temp(txn, dir, name, f);
	return rc;
}

static bool family_known(cs_txn *txn, const char *table, const char *family)
{
	cs_table_info *info;
	bool found = false;
	if (cs_table_info_get(txn, table, &info))
		return false;
	for (size_t i = 0; i < info->nfamilies && !found; i++)
		found = !strcmp(info->families[i].name, family);
	cs_table_info_free(info);
	return found;
}

void target_clash_log(const char *table, const char *family)
{
	fuse_log(FUSE_LOG_ERR, "cellfs: family %s of table %s not made: row keys of the table have a segment "
		 "%s, whose paths would change (cellctl createfamily makes it anyway)\n", family, table, family);
}

int target_clash(cs_txn *txn, const char *table, const char *family)
{
	int rc;

	if (family_known(txn, table, family) || !(rc = edit_family_clash(txn, table, family)))
		return 0;
	if (rc == 1) {
		target_clash_log(table, family);
		rc = -EPERM;
	}
	return rc;
}

int target_family(struct fs *fs, cs_txn *txn, const struct node_id *id)
{
	if (fs->strict_schema && !family_known(txn, id->table, id->family))
		return -EPERM;
	return target_clash(txn, id->table, id->family);
}

int target_version_ts(struct fs *fs, const struct node_id *id)
{
	if (id->kind == NODE_VERSION && id->ts % 1000 && !(cs_store_caps(fs->st) & CS_CAP_TS_MICROS))
		return -EINVAL;
	return 0;
}

int target_versions_only(struct fs *fs, cs_txn *txn, const struct node_id *id)
{
	struct node_id c = *id;
	struct view_attr a;
	c.kind = NODE_COLUMN;
	if (view_getattr(txn, &c, &a) != -ENOENT)
		return 0;
	return pending_col_add(&fs->pending, node_column_ino(id));
}

int target_dir_empty(struct fs *fs, uint64_t ino)
{
	struct fileh_new *nf;
	size_t nn = 0;
	int rc = fileh_new_files(fs, ino, &nf, &nn);
	if (!rc && (nn || pending_has_children(&fs->pending, ino)))
		rc = -ENOTEMPTY; /* (a file being written counts: it is there) */
	fileh_new_files_free(nf, nn);
	return rc;
}
